import GraniteCapture
import GraniteMedia
import GraniteRecorder
import GraniteSync
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Every processed frame encoded into a video file (`--record FILE`) and/or live segments
/// (`--segments DIR`) in-process (``GraniteRecorder/Recorder``), at its capture time (a dropped
/// frame is a gap). With both, one encoder feeds the two (each packet muxed into each) when they
/// take the same encoder (``GraniteRecorder/Recorder/whyNotShared(_:options:machine:)``).
///
/// It takes the frame's YUV the way the other live outputs do: read from the device straight into
/// the encoder's frame when a GPU chain left it there (`Frame.deviceYUV`), else the bytes the
/// chain made (``Frame/yuv``), else the project's one RGB → YUV conversion
/// (``ColorConversion/yuv(_:layout:into:vectorised:)``) into the encoder's frame. The files open
/// at the first frame (its size); a full disk ends the run (``SinkError/closed(sink:)``) and
/// ``outcomes`` say what was kept. When one of two outputs fails, the run ends as it would with
/// either alone (both usually share the disk that filled): the failed one stays under its partial
/// name, saying what it kept, and the other is ended cleanly (its trailer, the playlist's
/// `#EXT-X-ENDLIST`, the rename) so it plays to its last frame.
///
/// With sound (``addSound(_:)`` before the first frame), captured blocks queue up here from the
/// audio thread (``takeSound(_:)``, which never waits on the encoder) and are encoded on the video
/// thread after each frame: what was captured before the first frame is cut off, what comes after
/// the last frame's end (its time + 1/fps) is left out, so sound and picture start and end together.
package final class RecordSink: FrameSink, @unchecked Sendable {
    // @unchecked: the recorder and the outcome live in `state` (a `Locked`); the sink relay calls from one executor.
    /// The files asked for (a recording, a playlist `DIR/live.m3u8`, or both), fed by one encoder.
    package let paths: [String]
    /// The first of them.
    package var path: String { paths[0] }
    /// The segments' playlist (`DIR/live.m3u8`), when this sink writes segments.
    package var playlist: String? { paths.first { $0.hasSuffix(".m3u8") } }
    /// The encoder chosen at start, and why.
    package let choice: EncoderChoice
    private let options: RecordingOptions
    private let machine: EncoderChoice.Machine
    private struct State {
        var recorder: Recorder?
        var outcomes: [Result<Recorder.Summary, RecorderError>]?
        var deviceReads: UInt64 = 0
        var segmentClosed: (@Sendable (String) -> Void)?
        var sound: AudioFormat?
        var soundSamples = 0
        /// The capture time the sound has reached (nil: the first frame's).
        var soundCursor: Double?
        var soundGapSamples = 0
        var soundCodecs: [String: String] = [:]
        var lastFrameNanos: UInt64?
    }
    private let state = Locked(State())
    /// Sound captured but not encoded yet, and how many samples a full queue dropped.
    private let pendingSound = Locked((blocks: [AudioBlock](), dropped: 0))
    /// The queue's bound: ten seconds of sound (a video thread that stops for longer loses the oldest).
    private static let pendingSeconds = 10
    /// How far (ns) a block's capture time may stray from where the sound has reached before a gap
    /// is filled or an overlap cut: a third of a frame at 30 fps.
    static let soundJitter = 10_000_000.0

    package var name: String {
        paths.map { $0.hasSuffix(".m3u8") ? "segments \($0)" : "recording \($0)" }.joined(separator: " and ")
    }

    /// Checks `path`'s container and picks the encoder (before any frame; throws what does not fit).
    package convenience init(path: String, options: RecordingOptions, machine: EncoderChoice.Machine = .probe()) throws(RecorderError) {
        try self.init(paths: [path], options: options, machine: machine)
    }

    /// One encoder for every one of `paths`: checks their containers and picks the encoder
    /// (before any frame); throws what does not fit, or when they cannot share one.
    package init(paths: [String], options: RecordingOptions, machine: EncoderChoice.Machine = .probe()) throws(RecorderError) {
        guard let first = paths.first else { throw .options("no output to record into") }
        if let why = try Recorder.whyNotShared(paths, options: options, machine: machine) {
            throw .options("one encoder cannot feed \(paths.joined(separator: " and ")): \(why)")
        }
        self.choice = try EncoderChoice.resolve(options, container: try Container(path: first), machine: machine)
        self.paths = paths
        self.options = options
        self.machine = machine
    }

    /// I420 (NV12 for VA-API), unpadded: what the encoder's frame holds.
    package var gpuLayout: YUVLayout? { choice.encoder == .vaapi ? .nv12 : .i420 }
    /// Never RGB: the encoder takes YUV.
    package var readsRGBA: Bool { false }
    /// Yes: a GPU chain's YUV is read straight into the encoder's frame.
    package var readsDeviceYUV: Bool { true }

    /// How each output ended (in ``paths``' order): its summary, or why it stopped (a full disk:
    /// what was kept). Nil while it runs.
    package var outcomes: [Result<Recorder.Summary, RecorderError>]? { state.withLock { $0.outcomes } }
    /// How the first output ended.
    package var outcome: Result<Recorder.Summary, RecorderError>? { outcomes?.first }
    /// Frames read from the device straight into the encoder's frame.
    package var deviceReads: UInt64 { state.withLock { $0.deviceReads } }

    /// For segments: `hook` is called with each file's path as it closes (``Recorder/onSegmentClosed``);
    /// set before the first frame.
    package func notifySegments(_ hook: @escaping @Sendable (String) -> Void) {
        state.withLock { $0.segmentClosed = hook }
    }

    /// One frame's duration at the nominal rate: the sound runs up to the end of the newest frame.
    private var frameNanos: UInt64 { UInt64(1e9 / max(1, options.fps)) }

    /// The recording carries sound in `format` (call before the first frame).
    package func addSound(_ format: AudioFormat) {
        state.withLock { $0.sound = format }
    }

    /// A block of captured sound, queued for the video thread to encode (any thread; never waits on the encoder).
    package func takeSound(_ block: AudioBlock) {
        pendingSound.withLock { pending in
            pending.blocks.append(block)
            var queued = pending.blocks.reduce(0) { $0 + $1.frames }
            while queued > block.sampleRate * RecordSink.pendingSeconds, pending.blocks.count > 1 {
                queued -= pending.blocks[0].frames
                pending.dropped += pending.blocks[0].frames
                pending.blocks.removeFirst()
            }
        }
    }

    /// The sound's format and the first output's encoder (`libopus`, `aac`) once the file is open; nil without sound.
    package var sound: (format: AudioFormat, codec: String)? {
        state.withLock { state in state.sound.flatMap { format in state.soundCodecs[paths[0]].map { (format, $0) } } }
    }

    /// Each output's audio encoder, by path, once the files are open.
    package var soundCodecs: [String: String] { state.withLock { $0.soundCodecs } }

    /// Samples (per channel) of sound encoded (silence for gaps included), of silence put in gaps
    /// in the capture, and dropped by a full queue.
    package var soundCounts: (encoded: Int, gaps: Int, dropped: Int) {
        let (encoded, gaps) = state.withLock { ($0.soundSamples, $0.soundGapSamples) }
        return (encoded, gaps, pendingSound.withLock { $0.dropped })
    }

    /// Encodes the queued sound captured from the first frame on, up to the capture time `until`
    /// (the rest stays queued).
    ///
    /// The sound's timeline starts at the first frame's capture time and runs on by the samples
    /// encoded (the recorder counts them); each block is placed on it by its own capture time: a
    /// block that starts later than the timeline has reached (sound lost on a loaded machine, a
    /// stalled source) is preceded by silence for the gap, one that starts earlier (sound from
    /// before the first frame) is cut. Within ``soundJitter`` the count goes on as it is, except
    /// for the first block, placed to the sample (what it holds from before the first frame cut,
    /// silence before it when it starts later).
    private func encodeSound(_ recorder: Recorder, state: inout State, until: UInt64) throws(RecorderError) {
        guard let sound = state.sound, let first = recorder.firstFrameNanos else { return }
        var blocks = pendingSound.withLock { pending in
            defer { pending.blocks.removeAll() }
            return pending.blocks
        }
        let rate = Double(sound.sampleRate), channels = sound.channels
        func samples(_ nanos: Double) -> Int { max(0, Int((nanos * rate / 1e9).rounded())) }
        /// Encodes what of `buffer` fits before `until`; returns how many samples (per channel) went.
        func append(_ buffer: UnsafeBufferPointer<Float>, state: inout State) throws(RecorderError) -> Int {
            let cursor = state.soundCursor ?? Double(first)
            let count = min(buffer.count / channels, samples(Double(until) - cursor))
            guard count > 0 else { return 0 }
            try recorder.appendAudio(UnsafeBufferPointer(rebasing: buffer[0..<(count * channels)]), timestampNanos: UInt64(cursor))
            state.soundCursor = cursor + Double(count) * 1e9 / rate
            state.soundSamples += count
            return count
        }
        while let block = blocks.first, block.channels == channels, block.sampleRate == sound.sampleRate {
            let cursor = state.soundCursor ?? Double(first)
            let drift = Double(block.timestampNanos) - cursor   // > 0: a gap before the block; < 0: it starts before the cursor
            // The first block lands exactly (cut, or silence before it, to the sample): the sync of
            // the whole run rests on it. Later ones go on by the count within the jitter.
            let starting = state.soundCursor == nil
            let tolerance = starting ? 0 : RecordSink.soundJitter
            var skip = 0
            if drift > tolerance && samples(drift) > 0 {
                let silence = [Float](repeating: 0, count: samples(drift) * channels)
                let went = try silence.withUnsafeBufferPointer { (zeros) throws(RecorderError) in try append(zeros, state: &state) }
                if !starting { state.soundGapSamples += went }
                if went < silence.count / channels { break }   // the gap runs past `until`: the block waits
            } else if drift < -tolerance {
                skip = min(block.frames, samples(-drift))
            }
            let went = skip < block.frames ? try block.samples.withUnsafeBufferPointer { (all) throws(RecorderError) in
                try append(UnsafeBufferPointer(rebasing: all[(skip * channels)...]), state: &state)
            } : 0
            blocks.removeFirst()
            if skip + went < block.frames {
                // The rest lies past `until`: it waits for the next frame.
                let used = skip + went
                blocks.insert(AudioBlock(samples: Array(block.samples[(used * channels)...]),
                                         timestampNanos: UInt64(state.soundCursor ?? Double(first)), sampleRate: block.sampleRate, channels: channels), at: 0)
                break
            }
        }
        blocks = Array(blocks.drop { $0.channels != channels || $0.sampleRate != sound.sampleRate })
        if !blocks.isEmpty { pendingSound.withLock { $0.blocks.insert(contentsOf: blocks, at: 0) } }
    }

    package func write(_ frame: Frame) throws(SinkError) {
        try state.withLock { (state: inout State) throws(SinkError) in
            guard state.outcomes == nil else { throw .closed(sink: name) }
            do throws(RecorderError) {
                if state.recorder == nil {
                    let recorder = try Recorder(paths: paths, width: frame.width, height: frame.height, options: options, audio: state.sound, machine: machine)
                    recorder.onSegmentClosed = state.segmentClosed
                    state.soundCodecs = recorder.audioCodecNames
                    state.recorder = recorder
                }
                let recorder = state.recorder!
                guard recorder.width == frame.width, recorder.height == frame.height else {
                    throw .frame(path: path, reason: "frame \(frame.sequence) is \(frame.width)x\(frame.height), the recording \(recorder.width)x\(recorder.height)")
                }
                var failed: MediaError?
                var fromDevice = false
                let layout = recorder.layout
                try recorder.append(timestampNanos: frame.timestampNanos) { buffer in
                    if let device = frame.deviceYUV, device.read(layout, into: buffer) {
                        fromDevice = true
                    } else if let made = frame.yuv[layout], made.count == buffer.count {
                        made.withUnsafeBytes { buffer.copyMemory(from: $0) }
                    } else {
                        do throws(MediaError) {
                            let rgba = try ColorConversion.rgba(frame.image)
                            ColorConversion.yuv(rgba, layout: layout, into: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                vectorised: ColorConversion.vectorised)
                        } catch { failed = error }
                    }
                }
                if fromDevice { state.deviceReads += 1 }
                if let failed { throw RecorderError.frame(path: path, reason: "frame \(frame.sequence): \(failed)") }
                state.lastFrameNanos = frame.timestampNanos
                try encodeSound(recorder, state: &state, until: frame.timestampNanos + frameNanos)
            } catch {
                // The run ends here. An output that failed (a full disk) stays under its partial
                // name as far as it got; any other is ended cleanly. A failure of the encoder (or
                // the frame) leaves every file as far as it got.
                if let recorder = state.recorder, !recorder.failedPaths.isEmpty {
                    state.outcomes = recorder.finishEach()
                } else {
                    state.recorder?.abandon()
                    state.outcomes = paths.map { _ in .failure(error) }
                }
                state.recorder = nil
                throw .closed(sink: name)
            }
        }
    }

    package func finish() {
        state.withLock { state in
            guard state.outcomes == nil else { return }
            guard let recorder = state.recorder else {
                state.outcomes = paths.map { .failure(.frame(path: $0, reason: "no frame was recorded")) }
                return
            }
            do throws(RecorderError) {
                // The sound up to the end of the last frame (its time and one frame's duration).
                if let last = state.lastFrameNanos, state.sound != nil {
                    let until = last + frameNanos
                    // The sound of the last frame's time arrives a graph cycle or two after it: waited for, briefly.
                    let deadline = monotonicNanos() + 300_000_000
                    while pendingSound.withLock({ ($0.blocks.last?.endNanos ?? 0) < until }), monotonicNanos() < deadline {
                        var pause = timespec(tv_sec: 0, tv_nsec: 10_000_000)
                        nanosleep(&pause, nil)
                    }
                    try encodeSound(recorder, state: &state, until: until)
                }
            } catch {
                // An output that failed on the last sound (its disk filled) says so below, the
                // others end cleanly; a failure of the encoder leaves every file as far as it got.
                if recorder.failedPaths.isEmpty {
                    recorder.abandon()
                    state.outcomes = paths.map { _ in .failure(error) }
                    state.recorder = nil
                    return
                }
            }
            state.outcomes = recorder.finishEach()
            state.recorder = nil
        }
    }
}

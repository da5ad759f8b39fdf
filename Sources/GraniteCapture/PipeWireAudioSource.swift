#if canImport(Glibc)
import Glibc
#endif
import CPipeWire
import GraniteMedia

/// Sound from a PipeWire node (`granite-cam --audio pipewire[:NODE]`): a microphone, a line input,
/// another program's `Audio/Source`.
///
/// ```
///  start: registry ─► the Audio/Source named NODE (id, serial, node.name or description; none named:
///        ``CaptureError/pipeWire(node:detail:)`` listing the sources) ─► pw_stream INPUT, target.object =
///        its serial (no NODE: the session's default source), asking for F32 (or S16) interleaved,
///        1–2 channels ─► waits for the first block (none within `firstBlockTimeout`: ``CaptureError/noFirstFrame``)
///  process (loop thread): every queued buffer, oldest first ─► F32 copy ─► deliver(block)
///        block time = cycle time − delay to the device − (resampler + this and later buffers' samples) / rate;
///        a driver that does not stamp its cycles: ``AudioArrivalClock`` (the least-delayed arrival)
/// ```
/// Nothing is dropped here: a consumer that cannot keep up bounds its own queue.
public final class PipeWireAudioSource: AudioCaptureSource, @unchecked Sendable {
    // @unchecked: the stream's state is used on the loop thread, or with the loop locked.
    /// The node asked for (nil: the default source).
    public let target: String?
    /// How long a linked node may take to send its first block.
    public let firstBlockTimeout: Double
    /// `pipewire:NODE` (or `pipewire`).
    public let name: String
    private var loop: PipeWireLoop?
    private var stream: PipeWireStream?
    private var watch: PipeWireNodeWatch?
    private var deliver: (@Sendable (AudioBlock) -> Void)?
    private var negotiated: (format: UInt32, rate: Int, channels: Int)?
    private var firstArrived = false
    private var failed: CaptureError?
    private var nodeGone = false
    private var delivered = 0
    private var nodeName = "the default source"
    /// Capture times from arrivals, where the graph gives none (reset with each format).
    private var arrivals: AudioArrivalClock?

    public init(target: String?, firstBlockTimeout: Double = PipeWireSource.defaultFirstFrameTimeout) {
        self.target = target
        self.firstBlockTimeout = firstBlockTimeout
        name = target.map { "pipewire:\($0)" } ?? "pipewire"
    }

    /// The sample rate and channels agreed on (after ``start(_:)``).
    public var format: (sampleRate: Int, channels: Int)? {
        guard let loop else { return nil }
        return loop.locked { negotiated.map { ($0.rate, $0.channels) } }
    }

    /// Samples (per channel) delivered so far.
    public var samplesDelivered: Int { loop?.locked { delivered } ?? 0 }

    /// Why the sound stopped while it ran (the node went away, a stream error); nil while it flows.
    public var failure: CaptureError? {
        guard let loop else { return nil }
        return loop.locked { nodeGone ? .disconnected(device: name, detail: "the audio node went away after \(delivered) samples") : failed }
    }

    /// Finds the node, links to it and waits until its first block has been delivered; `deliver`
    /// then gets every block, on the PipeWire loop's thread (it must not block). Throws, naming
    /// the node, when there is no daemon, no such node, or no sound within ``firstBlockTimeout``.
    public func start(_ deliver: @escaping @Sendable (AudioBlock) -> Void) throws(CaptureError) {
        let loop = try PipeWireLoop(client: "granite-cam")
        self.loop = loop
        let sources = try PipeWireDirectory.audioSources(loop: loop)
        var node: PipeWireNode?
        if let target {
            guard let found = sources.first(where: { $0.isNamed(target) }) else {
                throw .pipeWire(node: target, detail: "no such audio source; the daemon has: "
                                + (sources.isEmpty ? "none" : sources.map { "\($0.name) (\($0.id))" }.joined(separator: ", ")))
            }
            node = found
            nodeName = found.name
        } else if sources.isEmpty {
            throw .pipeWire(node: "pipewire", detail: "the daemon has no audio source")
        }
        let started = monotonicNanos()
        try loop.locked { () throws(CaptureError) in
            self.deliver = deliver
            if let node {
                watch = try PipeWireNodeWatch(loop: loop, node: node) { [unowned self] in self.nodeGone = true }
            }
            var properties = [("media.type", "Audio"), ("media.category", "Capture"), ("media.role", "Production"),
                              ("node.name", "granite-cam.audio")]
            if let node { properties.append(("target.object", node.serial ?? String(node.id))) }
            let made = try PipeWireStream(loop: loop, name: "granite-cam-audio", node: name, properties: properties,
                                          data: Unmanaged.passUnretained(self).toOpaque()) { events in
                events.state_changed = { data, _, state, error in
                    let me = Unmanaged<PipeWireAudioSource>.fromOpaque(data!).takeUnretainedValue()
                    if state == PW_STREAM_STATE_ERROR {
                        me.failed = .pipeWire(node: me.name, detail: error.map { String(cString: $0) } ?? "stream error")
                        me.loop?.signal()
                    }
                }
                events.param_changed = { data, id, param in
                    guard id == SPA_PARAM_Format.rawValue else { return }
                    Unmanaged<PipeWireAudioSource>.fromOpaque(data!).takeUnretainedValue().formatChanged(param)
                }
                events.process = { data in
                    Unmanaged<PipeWireAudioSource>.fromOpaque(data!).takeUnretainedValue().process()
                }
            }
            stream = made
            let bytes = 1024
            let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes)
            defer { buffer.deallocate() }
            var params: [UnsafePointer<spa_pod>?] = [cpw_audio_format(buffer, 512, cpw_audio_f32, 0, 0),
                                                    cpw_audio_format(buffer + 512, 512, cpw_audio_s16, 0, 0)]
            guard params.allSatisfy({ $0 != nil }) else { throw .pipeWire(node: name, detail: "cannot build the audio format list") }
            try params.withUnsafeMutableBufferPointer { (all) throws(CaptureError) in
                try made.connect(SPA_DIRECTION_INPUT, flags: [PW_STREAM_FLAG_AUTOCONNECT, PW_STREAM_FLAG_MAP_BUFFERS],
                                 params: all.baseAddress!, count: 2)
            }
            // The first block (or a failure) wakes this wait.
            let wait = FirstFrameWait(since: started, timeout: firstBlockTimeout)
            while !firstArrived, failed == nil, !nodeGone, !wait.isOverdue(now: monotonicNanos()) { _ = loop.wait(seconds: 1) }
        }
        if let failure {
            stop()
            throw failure
        }
        guard loop.locked({ firstArrived }) else {
            let what = loop.locked { negotiated.map { "negotiated \(Self.formatName($0.format)) \($0.rate) Hz, \($0.channels) channel\($0.channels == 1 ? "" : "s")" } }
            stop()
            throw .noFirstFrame(device: name, seconds: firstBlockTimeout,
                                detail: (what ?? "no format agreed") + " from \(nodeName); no sound arrived")
        }
    }

    /// Unlinks and lets go of the connection. Idempotent.
    public func stop() {
        guard let loop else { return }
        loop.locked {
            watch?.close()
            watch = nil
            stream?.destroy()
            stream = nil
            deliver = nil
        }
    }

    deinit { stop() }

    static func formatName(_ format: UInt32) -> String { format == cpw_audio_s16 ? "S16" : format == cpw_audio_f32 ? "F32" : "format \(format)" }

    private func formatChanged(_ param: UnsafePointer<spa_pod>?) {
        var format: UInt32 = 0, rate: UInt32 = 0, channels: UInt32 = 0
        guard let param, cpw_parse_audio_format(param, &format, &rate, &channels) == 0,
              format == cpw_audio_f32 || format == cpw_audio_s16, rate > 0, (1...2).contains(channels) else {
            negotiated = nil
            return
        }
        negotiated = (format, Int(rate), Int(channels))
        arrivals = nil
        // Room for 32 cycles (about 0.7 s at 1024 samples): the loop thread may wake late on a busy
        // machine, and sound not taken in time is lost.
        guard let stream = stream?.pointer else { return }
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        defer { storage.deallocate() }
        var params: [UnsafePointer<spa_pod>?] = [cpw_buffer_count_param(storage, 256, 32, 2, 64)]
        if params[0] != nil { _ = pw_stream_update_params(stream, &params, 1) }
    }

    private func process() {
        guard let stream = stream?.pointer else { return }
        var buffers: [UnsafeMutablePointer<pw_buffer>] = []
        while let next = pw_stream_dequeue_buffer(stream) { buffers.append(next) }
        defer { for buffer in buffers { pw_stream_queue_buffer(stream, buffer) } }
        guard let negotiated, let deliver, !buffers.isEmpty else { return }
        let width = negotiated.format == cpw_audio_s16 ? 2 : 4
        var blocks: [[Float]] = []
        for buffer in buffers {
            var chunk: UInt32 = 0, stride: Int32 = 0, room: UInt32 = 0
            guard let data = cpw_buffer_plane(buffer, 0, &chunk, &stride, &room) else { continue }
            let count = Int(chunk) / width / negotiated.channels * negotiated.channels
            guard count > 0 else { continue }
            blocks.append(width == 4 ? AudioBlock.floats(f32: data, count: count) : AudioBlock.floats(s16: data, count: count))
        }
        guard !blocks.isEmpty else { return }
        // With the graph's time: the newest sample left the device `delay` before this cycle began,
        // behind what the resampler holds; each block starts that many samples earlier than the
        // one after it. Without it (a driver that does not stamp its cycles): from the arrivals.
        var now: Int64 = 0, delay: Int64 = 0, buffered: UInt64 = 0
        let arrival = monotonicNanos()
        var stamped: [AudioBlock] = []
        if cpw_stream_timing(stream, &now, &delay, &buffered) == 0, now > 0 {
            let rate = Double(negotiated.rate)
            var end = Double(now) - Double(max(0, delay)) - Double(buffered) * 1e9 / rate
            for samples in blocks.reversed() {
                let start = end - Double(samples.count / negotiated.channels) * 1e9 / rate
                stamped.insert(AudioBlock(samples: samples, timestampNanos: UInt64(max(0, start)), sampleRate: negotiated.rate,
                                          channels: negotiated.channels), at: 0)
                end = start
            }
        } else {
            var clock = arrivals ?? AudioArrivalClock(rate: negotiated.rate)
            stamped = clock.stamp(blocks, channels: negotiated.channels, arrival: arrival)
            arrivals = clock
        }
        for block in stamped {
            delivered += block.frames
            deliver(block)
        }
        if !firstArrived {
            firstArrived = true
            loop?.signal()
        }
    }
}

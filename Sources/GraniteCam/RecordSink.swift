import GraniteCapture
import GraniteMedia
import GraniteRecorder
import Synchronization

/// Every processed frame encoded into a video file (`--record FILE`) in-process
/// (``GraniteRecorder/Recorder``), at its capture time (a dropped frame is a gap).
///
/// It takes the frame's YUV the way the other live outputs do: read from the device straight into
/// the encoder's frame when a GPU chain left it there (`Frame.deviceYUV`), else the bytes the
/// chain made (``Frame/yuv``), else the project's one RGB → YUV conversion
/// (``ColorConversion/yuv(_:layout:into:vectorised:)``) into the encoder's frame. The file opens
/// at the first frame (its size); a full disk ends the run (``SinkError/closed(sink:)``) and
/// ``outcome`` says what was kept.
package final class RecordSink: FrameSink, @unchecked Sendable {
    // @unchecked: the recorder and the outcome live in `state` (a Mutex); the sink relay calls from one executor.
    /// The file asked for.
    package let path: String
    /// The encoder chosen at start, and why.
    package let choice: EncoderChoice
    private let options: RecordingOptions
    private let machine: EncoderChoice.Machine
    private struct State {
        var recorder: Recorder?
        var outcome: Result<Recorder.Summary, RecorderError>?
        var deviceReads: UInt64 = 0
        var segmentClosed: (@Sendable (String) -> Void)?
    }
    private let state = Mutex(State())

    package var name: String { "recording \(path)" }

    /// Checks `path`'s container and picks the encoder (before any frame; throws what does not fit).
    package init(path: String, options: RecordingOptions, machine: EncoderChoice.Machine = .probe()) throws(RecorderError) {
        let container = try Container(path: path)
        self.choice = try EncoderChoice.resolve(options, container: container, machine: machine)
        self.path = path
        self.options = options
        self.machine = machine
    }

    /// I420 (NV12 for VA-API), unpadded: what the encoder's frame holds.
    package var gpuLayout: YUVLayout? { choice.encoder == .vaapi ? .nv12 : .i420 }
    /// Never RGB: the encoder takes YUV.
    package var readsRGBA: Bool { false }
    /// Yes: a GPU chain's YUV is read straight into the encoder's frame.
    package var readsDeviceYUV: Bool { true }

    /// How the recording ended: its summary, or why it stopped (a full disk: what was kept). Nil while it runs.
    package var outcome: Result<Recorder.Summary, RecorderError>? { state.withLock { $0.outcome } }
    /// Frames read from the device straight into the encoder's frame.
    package var deviceReads: UInt64 { state.withLock { $0.deviceReads } }

    /// For segments: `hook` is called with each file's path as it closes (``Recorder/onSegmentClosed``);
    /// set before the first frame.
    package func notifySegments(_ hook: @escaping @Sendable (String) -> Void) {
        state.withLock { $0.segmentClosed = hook }
    }

    package func write(_ frame: Frame) throws(SinkError) {
        try state.withLock { (state: inout State) throws(SinkError) in
            guard state.outcome == nil else { throw .closed(sink: name) }
            do throws(RecorderError) {
                if state.recorder == nil {
                    let recorder = try Recorder(path: path, width: frame.width, height: frame.height, options: options, machine: machine)
                    recorder.onSegmentClosed = state.segmentClosed
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
            } catch {
                // The file as far as it got stays under its partial name; the run ends here.
                state.recorder?.abandon()
                state.recorder = nil
                state.outcome = .failure(error)
                throw .closed(sink: name)
            }
        }
    }

    package func finish() {
        state.withLock { state in
            guard state.outcome == nil else { return }
            guard let recorder = state.recorder else {
                state.outcome = .failure(.frame(path: path, reason: "no frame was recorded"))
                return
            }
            do throws(RecorderError) { state.outcome = .success(try recorder.finish()) } catch { state.outcome = .failure(error) }
            state.recorder = nil
        }
    }
}

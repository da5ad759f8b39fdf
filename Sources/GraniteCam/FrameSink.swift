import GraniteCapture
import GraniteMedia

/// A live output that takes every processed frame in order: the Y4M pipe to another program,
/// a V4L2 output device (virtual camera). ``SinkRelay`` drives them off the component's executor.
///
/// Unlike the file output (which writes the frames the save policy picks), a sink sees every
/// frame; a slow reader holds frames in flight, so the source drops (newest kept) rather than
/// memory growing.
public protocol FrameSink: AnyObject, Sendable {
    /// What the status and errors call it (`y4m pipe`, `/dev/video10`).
    var name: String { get }
    /// Writes one processed frame. Throws ``SinkError/closed(sink:)`` when the reader went away.
    func write(_ frame: Frame) throws(SinkError)
    /// Flushes and lets go of the output (called once, after the last frame).
    func finish()
    /// The YUV layout it writes, so a GPU chain can convert its result on the device
    /// (``Frame/yuv``); nil (the default) for a sink that takes RGB.
    var gpuLayout: YUVLayout? { get }
    /// Whether it may read ``Frame/image`` as RGB (a sink whose readers can ask for RGB, or for
    /// a layout other than ``gpuLayout``). Default: when it has no ``gpuLayout``. A run whose
    /// sinks all say no (and that writes no files and shows no preview) reads back only YUV.
    var readsRGBA: Bool { get }
    /// Whether it reads ``gpuLayout`` from the device straight into a buffer of its own
    /// (`Frame.deviceYUV`) rather than taking ``Frame/yuv``'s bytes. Default: no.
    var readsDeviceYUV: Bool { get }
}

extension FrameSink {
    public var gpuLayout: YUVLayout? { nil }
    public var readsRGBA: Bool { gpuLayout == nil }
    public var readsDeviceYUV: Bool { false }
}

/// Why a sink could not take a frame.
public enum SinkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The reader went away (a closed pipe: EPIPE); the run ends cleanly.
    case closed(sink: String)
    /// A frame the sink cannot carry (a size change mid-stream, a format it cannot convert).
    case frame(sink: String, sequence: UInt64, reason: String)
    /// The device or descriptor failed.
    case capture(CaptureError)

    public var description: String {
        switch self {
        case let .closed(sink): return "\(sink): the reader went away"
        case let .frame(sink, sequence, reason): return "\(sink): frame \(sequence): \(reason)"
        case let .capture(error): return error.description
        }
    }
}

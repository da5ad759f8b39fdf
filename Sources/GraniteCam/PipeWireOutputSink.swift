import GraniteCapture
import GraniteMedia
import Synchronization

/// Processed frames to a PipeWire camera node (`--pipewire-out NAME`): a virtual camera that
/// Firefox, OBS, GStreamer or anything on the camera portal reads, without a kernel module.
///
/// Each consumer negotiates YUY2, NV12, I420, BGRx or RGBx at the frames' size; the frame is
/// converted straight into the buffer shared with it (``ColorConversion/yuv(_:layout:into:vectorised:)``
/// for YUV, rows copied or red and blue swapped for RGB), or, when a GPU chain made the layout on
/// the device, read from the device's staging straight into the shared buffer
/// (`Frame.deviceYUV`: one copy, no array of ours in between; ``deviceReads`` counts them), or
/// those bytes (``Frame/yuv``) copied in. No consumer, a slow one, or one that
/// renegotiates only skips frames (counted in ``PipeWireOutput/stats``); the run goes on, also when
/// the daemon goes away (one fault on the status line, the other outputs carry on). An odd
/// frame side loses its last column or row (4:2:0 and 4:2:2 need pairs).
public final class PipeWireOutputSink: FrameSink, @unchecked Sendable {
    // @unchecked: `PipeWireOutput` does its own locking; the sink relay calls from one executor.
    private let output: PipeWireOutput
    private let failed = Atomic<Bool>(false)
    private let readFromDevice = Atomic<UInt64>(0)
    private let width: Int
    public var name: String { "pipewire:\(output.name)" }

    /// Publishes the node `description` offering `formats` at `size` (the first frame's size
    /// replaces it if the chain changed it) and `fps`; throws when there is no PipeWire daemon.
    public init(description: String, size: FrameSize, fps: Double,
                formats: [PipeWireVideoFormat] = PipeWireVideoFormat.outputFormats) throws(CaptureError) {
        output = try PipeWireOutput(name: description, size: PipeWireOutputSink.even(size), fps: fps, formats: formats)
        width = PipeWireOutputSink.even(size).width
    }

    /// The first YUV format it offers that a GPU chain makes on the device (YUY2, I420), at its
    /// strides: a consumer that takes it gets the device's bytes copied in, not a conversion.
    public var gpuLayout: YUVLayout? {
        output.formats.lazy.filter { $0 == .yuy2 || $0 == .i420 }.compactMap { $0.yuvLayout(width: self.width) }.first
    }

    /// Always: each consumer negotiates its own format, RGB ones too.
    public var readsRGBA: Bool { true }

    /// Yes: a frame whose YUV a GPU chain left on the device is read straight into the buffer
    /// shared with the consumer, when the consumer took that layout.
    public var readsDeviceYUV: Bool { true }

    /// Frames read from the device straight into a consumer's buffer (`Frame.deviceYUV`).
    public var deviceReads: UInt64 { readFromDevice.load(ordering: .relaxed) }

    /// The node id and what a consumer fixed, for the start-up line (`node 42, formats YUY2, NV12…`).
    public var summary: String {
        "node \(output.nodeID.map(String.init) ?? "?"), offering \(output.formats.map(\.rawValue).joined(separator: ", "))"
    }

    /// Counters of the node (sent, skipped without a consumer, skipped while it was busy).
    public var stats: PipeWireOutput.Stats { output.stats }

    public func write(_ frame: Frame) throws(SinkError) {
        let size = PipeWireOutputSink.even(FrameSize(width: frame.width, height: frame.height))
        // A node that failed (the daemon went away) is reported once; the run and its other outputs go on.
        guard !failed.load(ordering: .relaxed) else { return }
        var cropFailure: MediaError?
        do throws(CaptureError) {
            _ = try output.write(size: size, sequence: frame.sequence, timestampNanos: frame.timestampNanos) { format, buffer in
                // The rgba8 frame cut to even sides, only when the consumer's format needs it.
                let rgba = { () -> Image? in
                    do throws(MediaError) { return try PipeWireOutputSink.crop(frame.image, to: size) } catch {
                        cropFailure = error
                        return nil
                    }
                }
                if PipeWireOutputSink.fill(buffer, format: format, from: frame, size: size, rgba: rgba) {
                    readFromDevice.add(1, ordering: .relaxed)
                }
            }
        } catch {
            failed.store(true, ordering: .relaxed)
            throw .capture(error)
        }
        if let cropFailure { throw .frame(sink: name, sequence: frame.sequence, reason: "\(cropFailure)") }
    }

    public func finish() { output.close() }

    /// `buffer` in `format`, `size` (the frame's sides made even): read from the device when the
    /// frame left that layout there (returns true), else the GPU's bytes when the frame carries
    /// them, else converted from `rgba()` (the frame cropped to `size`; nil: it could not be made,
    /// the buffer is left as it is).
    @discardableResult
    static func fill(_ buffer: UnsafeMutableRawBufferPointer, format: PipeWireVideoFormat, from frame: Frame, size: FrameSize,
                     rgba makeRGBA: () -> Image?) -> Bool {
        let out = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
        if let layout = format.yuvLayout(width: size.width) {
            let whole = size.width == frame.width && size.height == frame.height
            if whole, let device = frame.deviceYUV, device.read(layout, into: buffer) {
                return true
            } else if whole, let made = frame.yuv[layout], made.count == buffer.count {
                made.withUnsafeBytes { buffer.copyMemory(from: $0) }
            } else if let rgba = makeRGBA() {
                ColorConversion.yuv(rgba, layout: layout, into: out, vectorised: ColorConversion.vectorised)
            }
            return false
        }
        guard let rgba = makeRGBA() else { return false }
        rgba.bytes.withUnsafeBytes { source in
            if !format.isBGR {
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[..<buffer.count]))
                return
            }
            // R, G, B, A words (little-endian) with bytes 0 and 2 swapped.
            let pixels = buffer.count / 4
            let from = source.baseAddress!, to = buffer.baseAddress!
            for i in 0..<pixels {
                let p = from.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)
                to.storeBytes(of: (p & 0xFF00_FF00) | ((p & 0xFF) << 16) | ((p >> 16) & 0xFF), toByteOffset: i * 4, as: UInt32.self)
            }
        }
        return false
    }

    /// `size` with odd sides made even (at least 2).
    static func even(_ size: FrameSize) -> FrameSize {
        FrameSize(width: max(2, size.width & ~1), height: max(2, size.height & ~1))
    }

    /// `image` as `rgba8`, cut to `size` (its last column and row dropped when odd).
    static func crop(_ image: Image, to size: FrameSize) throws(MediaError) -> Image {
        let wide = try V4L2OutputSink.crop(image, width: size.width)
        guard wide.height != size.height else { return wide }
        return try Image(width: size.width, height: size.height, format: .rgba8, bytes: Array(wide.bytes[..<(size.width * size.height * 4)]))
    }
}

import GraniteCapture
import GraniteMedia
import Synchronization

/// Processed frames to a PipeWire camera node (`--pipewire-out NAME`): a virtual camera that
/// Firefox, OBS, GStreamer or anything on the camera portal reads, without a kernel module.
///
/// Each consumer negotiates YUY2, NV12, I420, BGRx or RGBx at the frames' size; the frame is
/// converted straight into the buffer shared with it (``ColorConversion/yuv(_:layout:into:vectorised:)``
/// for YUV, rows copied or red and blue swapped for RGB), or, when a GPU chain made the layout on
/// the device (``Frame/yuv``), those bytes are copied in. No consumer, a slow one, or one that
/// renegotiates only skips frames (counted in ``PipeWireOutput/stats``); the run goes on, also when
/// the daemon goes away (one fault on the status line, the other outputs carry on). An odd
/// frame side loses its last column or row (4:2:0 and 4:2:2 need pairs).
public final class PipeWireOutputSink: FrameSink, @unchecked Sendable {
    // @unchecked: `PipeWireOutput` does its own locking; the sink relay calls from one executor.
    private let output: PipeWireOutput
    private let failed = Atomic<Bool>(false)
    public var name: String { "pipewire:\(output.name)" }

    /// Publishes the node `description` offering `formats` at `size` (the first frame's size
    /// replaces it if the chain changed it) and `fps`; throws when there is no PipeWire daemon.
    public init(description: String, size: FrameSize, fps: Double,
                formats: [PipeWireVideoFormat] = PipeWireVideoFormat.outputFormats) throws(CaptureError) {
        output = try PipeWireOutput(name: description, size: PipeWireOutputSink.even(size), fps: fps, formats: formats)
    }

    /// The node id and what a consumer fixed, for the start-up line (`node 42, formats YUY2, NV12…`).
    public var summary: String {
        "node \(output.nodeID.map(String.init) ?? "?"), offering \(output.formats.map(\.rawValue).joined(separator: ", "))"
    }

    /// Counters of the node (sent, skipped without a consumer, skipped while it was busy).
    public var stats: PipeWireOutput.Stats { output.stats }

    public func write(_ frame: Frame) throws(SinkError) {
        let size = PipeWireOutputSink.even(FrameSize(width: frame.width, height: frame.height))
        let rgba: Image
        do {
            rgba = try PipeWireOutputSink.crop(frame.image, to: size)
        } catch {
            throw .frame(sink: name, sequence: frame.sequence, reason: "\(error)")
        }
        // A node that failed (the daemon went away) is reported once; the run and its other outputs go on.
        guard !failed.load(ordering: .relaxed) else { return }
        do {
            _ = try output.write(size: size, sequence: frame.sequence, timestampNanos: frame.timestampNanos) { format, buffer in
                PipeWireOutputSink.fill(buffer, format: format, from: frame, rgba: rgba)
            }
        } catch {
            failed.store(true, ordering: .relaxed)
            throw .capture(error)
        }
    }

    public func finish() { output.close() }

    /// `buffer` in `format`: the GPU's bytes when the frame carries that layout, else converted
    /// from `rgba` (the frame, cropped to even sides).
    static func fill(_ buffer: UnsafeMutableRawBufferPointer, format: PipeWireVideoFormat, from frame: Frame, rgba: Image) {
        let out = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
        if let layout = format.yuvLayout(width: rgba.width) {
            if rgba.width == frame.width, rgba.height == frame.height, let made = frame.yuv[layout], made.count == buffer.count {
                made.withUnsafeBytes { buffer.copyMemory(from: $0) }
            } else {
                ColorConversion.yuv(rgba, layout: layout, into: out, vectorised: ColorConversion.vectorised)
            }
            return
        }
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

import GraniteCapture
import GraniteMedia
import GraniteSync

/// Processed frames to a V4L2 output device (`--v4l2-out /dev/videoN`): a v4l2loopback virtual
/// camera that browsers, Zoom or OBS read, or vivid's output in the tests.
///
/// The device is opened and negotiated when the sink is made (so a wrong node fails before the
/// run starts) and again if the frames turn out another size than asked (a camera that adjusted
/// it). An odd frame width loses its last column (the node is negotiated at an even width).
/// Frames are packed by ``ColorConversion/pack(_:as:bytesPerLine:into:)`` (BT.601 limited range)
/// straight into the device's buffer,
/// or arrive as YUYV/YU12 a GPU chain made on the device (``Frame/yuv``, ``gpuLayout``).
public final class V4L2OutputSink: FrameSink, @unchecked Sendable {
    // @unchecked: `V4L2Output` is not thread-safe; every use is inside `device`'s lock (and the
    // sink relay calls from one executor anyway).
    private let device: Locked<V4L2Output?>
    private let path: String
    private let fps: Double?
    private let preference: [VideoOutputFormat]
    public var name: String { path }

    /// Opens `path` for `size` frames; throws the device's typed error.
    public init(path: String, size: FrameSize, fps: Double?, preference: [VideoOutputFormat] = VideoOutputFormat.allCases) throws(CaptureError) {
        self.path = path
        self.fps = fps
        self.preference = preference
        let opened = try V4L2Output(path: path, size: size, fps: fps, preference: preference)
        device = Locked(opened)
    }

    /// What was negotiated: layout and size (`YUYV 640x480`).
    public var negotiated: String {
        device.withLock { d in d.map { "\($0.format) \($0.size)" } ?? "closed" }
    }

    public func write(_ frame: Frame) throws(SinkError) {
        let even = FrameSize(width: max(2, frame.width & ~1), height: frame.height)
        try device.withLock { (slot: inout V4L2Output?) throws(SinkError) in
            do throws(CaptureError) {
                if slot == nil || slot!.size != even {
                    slot?.close()
                    slot = nil
                    slot = try V4L2Output(path: path, size: even, fps: fps, preference: preference)
                }
            } catch {
                throw .capture(error)
            }
            guard let out = slot else { return }
            guard out.size == even else {
                throw .frame(sink: path, sequence: frame.sequence, reason: "the device takes \(out.size), the frames are \(even)")
            }
            // The GPU chain's bytes as they are, when it made the device's layout.
            if frame.width == even.width, let layout = V4L2OutputSink.layout(out.format, bytesPerLine: out.bytesPerLine),
               let converted = frame.yuv[layout] {
                do throws(CaptureError) { try out.write(converted, timestampNanos: frame.timestampNanos) } catch { throw .capture(error) }
                return
            }
            let image: Image
            do {
                image = try V4L2OutputSink.crop(frame.image, width: even.width)
            } catch {
                throw .frame(sink: path, sequence: frame.sequence, reason: "\(error)")
            }
            do throws(CaptureError) {
                // Converted straight into the device's buffer (no frame-sized copy).
                let count = ColorConversion.packedByteCount(width: image.width, height: image.height, as: out.format,
                                                            bytesPerLine: out.bytesPerLine)
                try out.write(byteCount: count, timestampNanos: frame.timestampNanos) { buffer in
                    if buffer.count == count {
                        ColorConversion.pack(image, as: out.format, bytesPerLine: out.bytesPerLine, into: buffer)
                    } else {   // a device with smaller buffers than the format says: convert, then cut
                        let whole = [UInt8](unsafeUninitializedCapacity: count) { all, n in
                            ColorConversion.pack(image, as: out.format, bytesPerLine: out.bytesPerLine, into: UnsafeMutableRawBufferPointer(all))
                            n = count
                        }
                        whole.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<buffer.count])) }
                    }
                }
            } catch { throw .capture(error) }
        }
    }

    public func finish() {
        device.withLock { slot in
            slot?.close()
            slot = nil
        }
    }

    /// The YUV layout of the negotiated format (YUYV, YU12 with the node's strides), for a GPU
    /// chain to convert into; nil for RGB24/BGR24 (packed on the CPU).
    public var gpuLayout: YUVLayout? {
        device.withLock { d in d.flatMap { V4L2OutputSink.layout($0.format, bytesPerLine: $0.bytesPerLine) } }
    }

    /// The bytes ``ColorConversion/packed(_:as:bytesPerLine:)`` writes for `format`, as a layout.
    static func layout(_ format: VideoOutputFormat, bytesPerLine: Int) -> YUVLayout? {
        switch format {
        case .yuyv: return .yuyv(stride: bytesPerLine)
        case .yu12: return .planar420(lumaStride: bytesPerLine, chromaStride: bytesPerLine / 2)
        case .rgb24, .bgr24: return nil
        }
    }

    /// `image` as `rgba8`, `width` columns wide (drops the odd last column).
    static func crop(_ image: Image, width: Int) throws(MediaError) -> Image {
        let rgba = try ColorConversion.rgba(image)
        guard rgba.width != width else { return rgba }
        var bytes = [UInt8]()
        bytes.reserveCapacity(width * rgba.height * 4)
        for y in 0..<rgba.height {
            bytes += rgba.bytes[(y * rgba.width * 4)..<(y * rgba.width * 4 + width * 4)]
        }
        return try Image(width: width, height: rgba.height, format: .rgba8, bytes: bytes)
    }
}

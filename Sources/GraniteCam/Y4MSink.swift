#if canImport(Glibc)
import Glibc
#endif
import GraniteCapture
import GraniteMedia
import Synchronization

/// YUV4MPEG2 to a file descriptor (standard output for `--pipe y4m`), so
/// `granite-cam … --pipe y4m | ffmpeg -i - out.mp4` records and `| ffplay -` shows.
///
/// ```
///  header  YUV4MPEG2 W640 H480 F30:1 Ip A1:1 C420jpeg XYSCSS=420JPEG XCOLORRANGE=LIMITED\n
///  frame   FRAME\n  Y (W×H)  U  V   (4:2:0: ⌈W/2⌉×⌈H/2⌉ each; 4:4:4: W×H each)
/// ```
/// BT.601 limited range (``ColorConversion/appendPlanarYUV(_:subsampled:to:)``, or the same
/// bytes a GPU chain made on the device, ``Frame/yuv``); 4:2:0 chroma
/// is sited between the luma samples (`C420jpeg`, each chroma sample the mean of a 2×2 block).
/// The header is written with the first frame (its size); a later frame of another size is an
/// error, as Y4M cannot change size. A closed reader (EPIPE; SIGPIPE must be ignored) is
/// ``SinkError/closed(sink:)``.
public final class Y4MSink: FrameSink {
    /// Chroma resolution of the stream.
    public enum Chroma: String, Sendable {
        /// 4:2:0 (`C420jpeg`), what players and encoders take by default.
        case s420 = "420"
        /// 4:4:4 (`C444`), full chroma.
        case s444 = "444"
    }

    private let fd: Int32
    private let chroma: Chroma
    private let fps: Double?
    private let size = Mutex<(width: Int, height: Int)?>(nil)
    public let name: String

    /// A sink writing to `fd` (not closed by ``finish()``) at `fps` (stated in the header).
    public init(fd: Int32 = 1, chroma: Chroma = .s420, fps: Double?, name: String = "y4m pipe") {
        self.fd = fd
        self.chroma = chroma
        self.fps = fps
        self.name = name
    }

    /// The stream header for a `width`×`height` stream.
    public func header(width: Int, height: Int) -> String {
        let rate = fps.flatMap { FrameInterval(fps: $0) }.map { "F\($0.denominator):\($0.numerator)" } ?? "F30:1"
        let colorTag = chroma == .s420 ? "C420jpeg XYSCSS=420JPEG" : "C444 XYSCSS=444"
        return "YUV4MPEG2 W\(width) H\(height) \(rate) Ip A1:1 \(colorTag) XCOLORRANGE=LIMITED\n"
    }

    public func write(_ frame: Frame) throws(SinkError) {
        let w = frame.width, h = frame.height
        var bytes: [UInt8] = []
        let first: Bool = try size.withLock { (known: inout (width: Int, height: Int)?) throws(SinkError) -> Bool in
            if let known {
                guard known == (w, h) else {
                    throw .frame(sink: name, sequence: frame.sequence,
                                 reason: "size changed from \(known.width)x\(known.height) to \(w)x\(h); a Y4M stream has one size")
                }
                return false
            }
            known = (w, h)
            return true
        }
        if first { bytes += Array(header(width: w, height: h).utf8) }
        bytes += Array("FRAME\n".utf8)
        do {
            if let converted = frame.yuv[layout] {
                bytes += converted
            } else {
                try ColorConversion.appendPlanarYUV(frame.image, subsampled: chroma == .s420, to: &bytes)
            }
        } catch {
            throw .frame(sink: name, sequence: frame.sequence, reason: "\(error)")
        }
        try writeAll(bytes)
    }

    public func finish() {}

    /// Unpadded planes: 4:2:0 or 4:4:4.
    public var gpuLayout: YUVLayout? { layout }

    private var layout: YUVLayout { chroma == .s420 ? .i420 : .planar444 }

    private func writeAll(_ bytes: [UInt8]) throws(SinkError) {
        var offset = 0
        while offset < bytes.count {
            do {
                let n = try systemCall("write", device: name) {
                    bytes.withUnsafeBytes { raw in Int32(truncatingIfNeeded: Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)) }
                }
                offset += Int(n)
            } catch let .systemCall(_, _, code) where code == EPIPE {
                throw .closed(sink: name)
            } catch let .systemCall(_, _, code) where code == EAGAIN {
                var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&pfd, 1, 1000)
            } catch {
                throw .capture(error)
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import GraniteCapture
import GraniteMedia
import GraniteSync

/// YUV4MPEG2 to a file descriptor (standard output for `--pipe y4m`), so
/// `granite-cam … --pipe y4m | ffmpeg -i - out.mp4` records and `| ffplay -` shows.
///
/// ```
///  header  YUV4MPEG2 W640 H480 F30:1 Ip A1:1 C420jpeg XYSCSS=420JPEG XCOLORRANGE=LIMITED\n
///  frame   FRAME\n  Y (W×H)  U  V   (4:2:0: ⌈W/2⌉×⌈H/2⌉ each; 4:4:4: W×H each)
/// ```
/// BT.601 limited range (``ColorConversion/planarYUV(_:subsampled:into:lumaStride:chromaStride:)``, or the same
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
    /// The stream's size once the header is out, and the planes buffer the CPU conversion
    /// reuses frame after frame (no allocation, no zero fill per frame).
    private struct State {
        var size: (width: Int, height: Int)?
        var planes: [UInt8] = []
    }
    private let state = Locked(State())
    public let name: String

    /// What the sink asks of a pipe: 1 MiB (Linux's default `pipe-max-size`) instead of 64 KiB,
    /// so a 720p 4:2:0 frame (1.4 MB) crosses in two writes instead of 22 (each one a wake-up
    /// of the reader). A refusal (an older kernel, a lower limit) leaves the pipe as it is.
    static let pipeBytes: Int32 = 1 << 20

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
        try state.withLock { (state: inout State) throws(SinkError) in
            var prefix = "FRAME\n"
            if let known = state.size {
                guard known == (w, h) else {
                    throw .frame(sink: name, sequence: frame.sequence,
                                 reason: "size changed from \(known.width)x\(known.height) to \(w)x\(h); a Y4M stream has one size")
                }
            } else {
                state.size = (w, h)
                prefix = header(width: w, height: h) + prefix
                Y4MSink.widenPipe(fd)
            }
            let head = Array(prefix.utf8)
            // A GPU chain's bytes go out as they are; otherwise convert into the reused buffer.
            var failure: SinkError?
            if let converted = frame.yuv[layout] {
                converted.withUnsafeBytes { body in
                    do throws(SinkError) { try writeAll(head, body) } catch { failure = error }
                }
                if let failure { throw failure }
                return
            }
            let rgba: Image
            do { rgba = try ColorConversion.rgba(frame.image) } catch {
                throw .frame(sink: name, sequence: frame.sequence, reason: "\(error)")
            }
            let count = layout.byteCount(width: w, height: h)
            if state.planes.count != count { state.planes = [UInt8](repeating: 0, count: count) }
            state.planes.withUnsafeMutableBytes { planes in
                ColorConversion.yuv(rgba, layout: layout, into: planes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                    vectorised: ColorConversion.vectorised)
                do throws(SinkError) { try writeAll(head, UnsafeRawBufferPointer(planes)) } catch { failure = error }
            }
            if let failure { throw failure }
        }
    }

    public func finish() {}

    /// Unpadded planes: 4:2:0 or 4:4:4.
    public var gpuLayout: YUVLayout? { layout }

    private var layout: YUVLayout { chroma == .s420 ? .i420 : .planar444 }

    /// `head` then `body` with one `writev` a round (a short write carries on where it stopped).
    private func writeAll(_ head: [UInt8], _ body: UnsafeRawBufferPointer) throws(SinkError) {
        let total = head.count + body.count
        var offset = 0
        while offset < total {
            do {
                let n = try systemCall("write", device: name) {
                    head.withUnsafeBytes { headBytes in
                        var parts: [iovec] = []
                        if offset < head.count {
                            parts.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: headBytes.baseAddress! + offset),
                                               iov_len: head.count - offset))
                        }
                        let bodyOffset = max(0, offset - head.count)
                        if body.count > bodyOffset {
                            parts.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress! + bodyOffset),
                                               iov_len: body.count - bodyOffset))
                        }
                        return Int32(truncatingIfNeeded: writev(fd, parts, Int32(parts.count)))
                    }
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

    /// Asks a pipe for ``pipeBytes`` of buffer (`F_SETPIPE_SZ`); anything else is left alone.
    static func widenPipe(_ fd: Int32) {
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else { return }
        let setPipeSize: Int32 = 1031   // F_SETPIPE_SZ (Linux's F_LINUX_SPECIFIC_BASE + 7)
        _ = fcntl(fd, setPipeSize, pipeBytes)
    }
}

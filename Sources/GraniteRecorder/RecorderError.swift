import CFFmpeg

/// Why a recording could not start, take a frame or end; each case names the file or encoder.
public enum RecorderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The options do not fit together (`--encoder vp9` into `.mp4`, an unknown extension).
    case options(String)
    /// The encoder is not there or would not open (`libx264`, `h264_nvenc`: why).
    case encoder(name: String, reason: String)
    /// A libav* call failed: the call, the file, FFmpeg's message.
    case library(call: String, path: String, code: Int32, message: String)
    /// The disk filled (or the file hit its size limit): what was kept, and where.
    case diskFull(path: String, kept: String)
    /// A frame the recording cannot take (another size than the first frame's).
    case frame(path: String, reason: String)
    /// FFmpeg's libraries, opened when a recording starts, are not there: the library that did not
    /// load (`libavcodec.so.59`), the Debian package that has it (`libavcodec59`), the loader's message.
    case ffmpegMissing(library: String, package: String, reason: String)

    public var description: String {
        switch self {
        case let .options(message): return "recording: \(message)"
        case let .encoder(name, reason): return "encoder \(name): \(reason)"
        case let .library(call, path, _, message): return "\(path): \(call): \(message)"
        case let .diskFull(path, kept): return "\(path): the disk is full (or the file size limit was reached); \(kept)"
        case let .frame(path, reason): return "\(path): \(reason)"
        case let .ffmpegMissing(library, package, reason):
            return "recording needs FFmpeg's \(library), which did not load (\(reason)); install the package \(package)"
        }
    }
}

/// FFmpeg's text for an `AVERROR` code.
func ffmpegMessage(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    return buffer.withUnsafeMutableBufferPointer { String(cString: cff_error_string(code, $0.baseAddress!, $0.count)) }
}

/// The one place a libav* status is checked: a negative result becomes ``RecorderError/library(call:path:code:message:)``
/// (ENOSPC and EFBIG: ``RecorderError/diskFull(path:kept:)`` with `kept` from the caller).
@discardableResult
func ffmpeg(_ call: String, path: String, kept: () -> String = { "" }, _ body: () -> Int32) throws(RecorderError) -> Int32 {
    let result = body()
    guard result < 0 else { return result }
    if result == cff_averror(ENOSPC) || result == cff_averror(EFBIG) || result == cff_averror(EDQUOT) {
        throw .diskFull(path: path, kept: kept())
    }
    throw .library(call: call, path: path, code: result, message: ffmpegMessage(result))
}

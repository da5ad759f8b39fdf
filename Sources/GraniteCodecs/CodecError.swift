/// What went wrong in a codec, by phase, naming the file and the problem.
///
/// `path` is the file the bytes came from or go to (`"(memory)"` when there is none).
public enum CodecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The header could not be read: not an image, unknown format, bad size, or over the pixel limit.
    case header(path: String, reason: String)
    /// The header was fine but the pixel data was corrupt or truncated.
    case decode(path: String, reason: String)
    /// The image could not be encoded (unsupported pixel format, bad parameter, library failure).
    case encode(path: String, reason: String)
    /// Reading or writing the file failed; `errno` is the system's code (0 when none).
    case io(path: String, operation: String, errno: Int32)

    /// The phase the error belongs to: `header`, `decode`, `encode` or `io`.
    public var phase: String {
        switch self {
        case .header: return "header"
        case .decode: return "decode"
        case .encode: return "encode"
        case .io: return "io"
        }
    }

    /// The file the error is about.
    public var path: String {
        switch self {
        case let .header(path, _), let .decode(path, _), let .encode(path, _), let .io(path, _, _):
            return path
        }
    }

    /// The problem, without the path.
    public var reason: String {
        switch self {
        case let .header(_, reason), let .decode(_, reason), let .encode(_, reason):
            return reason
        case let .io(_, operation, code):
            return code == 0 ? "\(operation) failed" : "\(operation) failed: \(systemErrorText(code)) (errno \(code))"
        }
    }

    public var description: String { "\(path): \(phase) error: \(reason)" }
}

/// Errors about image geometry and layout, before any codec or device is involved.
public enum MediaError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidSize(width: Int, height: Int)
    case byteCountMismatch(format: PixelFormat, width: Int, height: Int, expected: Int, actual: Int)
    case unsupportedFormat(PixelFormat, operation: String)

    public var description: String {
        switch self {
        case let .invalidSize(w, h):
            return "invalid image size \(w)x\(h): both sides must be positive"
        case let .byteCountMismatch(format, w, h, expected, actual):
            return "a \(w)x\(h) \(format) image needs \(expected) bytes, got \(actual)"
        case let .unsupportedFormat(format, operation):
            return "\(operation) does not support pixel format \(format)"
        }
    }
}

import GraniteCapture

/// What can go wrong in a `granite-cam` run, naming the file or source.
public enum CamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The source could not start or gave up.
    case capture(CaptureError)
    /// The output folder cannot be created or written.
    case output(path: String, call: String, errno: Int32)
    /// A stage failed on a frame.
    case stage(name: String, sequence: UInt64, message: String)
    /// An option combination that cannot work.
    case invalidOptions(String)

    public var description: String {
        switch self {
        case let .capture(error): return error.description
        case let .output(path, call, code): return "\(path): \(call) failed: \(CaptureError.message(for: code)) (errno \(code))"
        case let .stage(name, sequence, message): return "stage \(name) failed on frame \(sequence): \(message)"
        case let .invalidOptions(message): return message
        }
    }
}

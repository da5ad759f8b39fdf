/// Why a batch could not run (per-image problems are `ConvertOutcome.failed`, not errors).
public enum ConvertError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An option or filter spec could not be understood.
    case badOption(option: String, value: String, reason: String)
    /// An INPUT operand does not exist or cannot be read.
    case inputMissing(path: String, reason: String)
    /// The output folder or manifest could not be created or written.
    case output(path: String, reason: String)

    public var description: String {
        switch self {
        case let .badOption(option, value, reason): return "\(option) '\(value)': \(reason)"
        case let .inputMissing(path, reason): return "\(path): \(reason)"
        case let .output(path, reason): return "\(path): \(reason)"
        }
    }

    /// The process exit status the CLI uses for this error (64 usage, 66 no input, 1 output failure).
    public var exitCode: Int32 {
        switch self {
        case .badOption: return ConvertExitCode.usage
        case .inputMissing: return ConvertExitCode.noInput
        case .output: return ConvertExitCode.fatal
        }
    }
}

/// The exit statuses of `granite convert`.
public enum ConvertExitCode {
    /// Every input was converted or was already done.
    public static let success: Int32 = 0
    /// The batch could not run at all (output folder or manifest not writable).
    public static let fatal: Int32 = 1
    /// Some inputs failed (each reported with its path and reason); the others were converted.
    public static let partialFailure: Int32 = 2
    /// Bad command line (unknown option, bad resize or filter spec).
    public static let usage: Int32 = 64
    /// An INPUT operand does not exist.
    public static let noInput: Int32 = 66
}

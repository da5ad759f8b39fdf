/// Errors from loading, planning and running a model, each naming the file, node or input at fault.
public enum MLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The model file could not be read.
    case unreadableFile(path: String, reason: String)
    /// The file is not a well-formed ONNX model.
    case malformedModel(path: String, reason: String)
    /// A node uses an operator (or an operator variant) that GraniteML does not implement.
    case unsupportedOp(node: String, op: String, reason: String)
    /// A node's attributes or inputs are inconsistent (bad shapes, missing inputs, bad values).
    case invalidNode(node: String, op: String, reason: String)
    /// An input the model needs was not given.
    case missingInput(name: String)
    /// An input was given that the model does not have.
    case unknownInput(name: String, known: [String])
    /// An input's shape does not match the model's declared shape.
    case inputShapeMismatch(name: String, expected: String, actual: [Int])
    /// An input's element type does not match the model's declared type.
    case inputTypeMismatch(name: String, expected: Tensor.ElementType, actual: Tensor.ElementType)
    /// A tensor's value count does not match its shape.
    case tensorSizeMismatch(shape: [Int], count: Int)
    /// No model file was found along the search path.
    case modelNotFound(name: String, searched: [String])
    /// A model file's SHA-256 is not the one its description records (a damaged or different file).
    case modelHashMismatch(path: String, expected: String, actual: String)
    /// A model description (JSON in `Models/`) is invalid.
    case invalidDescription(path: String, reason: String)
    /// An image cannot be used as model input.
    case unsupportedImage(reason: String)
    /// The model's output is not what its description promised.
    case unexpectedOutput(reason: String)
    /// The device a backend runs the model on failed (`device` names it).
    case deviceFailed(device: String, reason: String)

    public var description: String {
        switch self {
        case let .unreadableFile(path, reason): return "cannot read model \(path): \(reason)"
        case let .malformedModel(path, reason): return "malformed ONNX model \(path): \(reason)"
        case let .unsupportedOp(node, op, reason): return "node '\(node)': unsupported op \(op): \(reason)"
        case let .invalidNode(node, op, reason): return "node '\(node)' (\(op)): \(reason)"
        case let .missingInput(name): return "missing model input '\(name)'"
        case let .unknownInput(name, known): return "unknown model input '\(name)' (the model has \(known.joined(separator: ", ")))"
        case let .inputShapeMismatch(name, expected, actual):
            return "input '\(name)' has shape \(actual), the model expects \(expected)"
        case let .inputTypeMismatch(name, expected, actual):
            return "input '\(name)' has element type \(actual), the model expects \(expected)"
        case let .tensorSizeMismatch(shape, count): return "a tensor of shape \(shape) needs \(shape.reduce(1, *)) values, got \(count)"
        case let .modelNotFound(name, searched):
            return "model '\(name)' not found; searched: \(searched.joined(separator: ", ")). "
                + "Put \(name) in one of those folders, name it with --model PATH, or list its folder in GRANITE_MODEL_PATH "
                + "(scripts/install puts the default model in PREFIX/share/granite/models)"
        case let .modelHashMismatch(path, expected, actual):
            return "model \(path) has SHA-256 \(actual), its description expects \(expected): the file is damaged or another model; "
                + "fetch it again, or give a model of your own a description (NAME.json beside it) without that hash"
        case let .invalidDescription(path, reason): return "invalid model description \(path): \(reason)"
        case let .unsupportedImage(reason): return "unsupported image: \(reason)"
        case let .unexpectedOutput(reason): return "unexpected model output: \(reason)"
        case let .deviceFailed(device, reason): return "\(device): \(reason)"
        }
    }
}

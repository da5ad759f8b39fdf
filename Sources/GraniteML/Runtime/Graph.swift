/// An ONNX node's attribute value.
package enum Attribute: Sendable, Equatable {
    case int(Int)
    case ints([Int])
    case float(Float)
    case floats([Float])
    case string(String)
    case strings([String])
    case tensor(Tensor)
}

/// One operator application in the graph.
package struct Node: Sendable {
    package var name: String
    package var op: String
    package var domain: String
    /// Input value names; "" marks an omitted optional input.
    package var inputs: [String]
    package var outputs: [String]
    package var attributes: [String: Attribute]
    /// Element-wise steps fused onto output 0 at load (activations, quantise-dequantise pairs).
    package var epilogue: [Epilogue] = []
    /// Integer operands of a Conv whose input and weights are quantised (set by the optimizer;
    /// the Conv then runs on int8 kernels, see ``QuantizedConv``).
    var quantized: QuantizedConv?

    package func int(_ key: String, _ fallback: Int) -> Int {
        if case let .int(v)? = attributes[key] { return v }
        return fallback
    }

    package func ints(_ key: String) -> [Int]? {
        if case let .ints(v)? = attributes[key] { return v }
        return nil
    }

    package func float(_ key: String, _ fallback: Float) -> Float {
        if case let .float(v)? = attributes[key] { return v }
        return fallback
    }

    package func floats(_ key: String) -> [Float]? {
        if case let .floats(v)? = attributes[key] { return v }
        return nil
    }

    package func string(_ key: String, _ fallback: String) -> String {
        if case let .string(v)? = attributes[key] { return v }
        return fallback
    }

    /// An error about this node.
    package func invalid(_ reason: String) -> MLError { .invalidNode(node: name, op: op, reason: reason) }

    /// An "unsupported variant" error about this node.
    package func unsupported(_ reason: String) -> MLError { .unsupportedOp(node: name, op: op, reason: reason) }
}

/// A graph input or output as the model declares it: a name, a type and a shape whose
/// dimensions may be symbolic (nil).
public struct ValueInfo: Sendable, Equatable, CustomStringConvertible {
    /// The value's name in the graph.
    public let name: String
    /// The declared element type.
    public let elementType: Tensor.ElementType
    /// Declared dimensions; nil where the model leaves one free (batch size, image size).
    public let dimensions: [Int?]

    public var description: String {
        "[" + dimensions.map { $0.map(String.init) ?? "?" }.joined(separator: ", ") + "] \(elementType)"
    }

    /// True when `shape` fits the declared dimensions.
    func accepts(_ shape: [Int]) -> Bool {
        guard shape.count == dimensions.count else { return false }
        return zip(shape, dimensions).allSatisfy { $1 == nil || $0 == $1! }
    }
}

/// A parsed model: nodes in topological order, constants (initializers and Constant nodes,
/// after load-time folding) and the declared inputs and outputs.
struct Graph: Sendable {
    var nodes: [Node]
    var constants: [String: Tensor]
    var inputs: [ValueInfo]
    var outputs: [ValueInfo]
    /// The default-domain opset version.
    var opset: Int
    /// Where the model came from (for error messages).
    var path: String
    /// The integer source of constants folded from DequantizeLinear (weights, biases).
    var quantized: [String: QuantizedConstant] = [:]

    /// How many nodes read each value, plus one for each graph output.
    func useCounts() -> [String: Int] {
        var uses: [String: Int] = [:]
        for node in nodes { for input in node.inputs where !input.isEmpty { uses[input, default: 0] += 1 } }
        for output in outputs { uses[output.name, default: 0] += 1 }
        return uses
    }
}

/// What an op builder sees of one input: its shape and type, and its value when it is constant.
package struct OpInput {
    package let shape: [Int]
    package let type: Tensor.ElementType
    package let constant: Tensor?

    package var count: Int { shape.reduce(1, *) }
}

/// Pointers a kernel reads and writes, fixed when a plan is bound to its arena.
struct KernelIO {
    /// One per node input; nil for an omitted optional input.
    let inputs: [UnsafePointer<Float>?]
    let outputs: [UnsafeMutablePointer<Float>]
    /// Scratch space of the size the kernel asked for (im2col columns and such).
    let scratch: UnsafeMutablePointer<Float>
    let threads: Int

    /// The `i`th input, which the builder checked is present.
    package func input(_ i: Int) -> UnsafePointer<Float> { inputs[i]! }
}

/// A kernel: reads its inputs and writes its outputs; never allocates.
typealias Kernel = (KernelIO) -> Void

/// One output of a kernel, as planned.
struct OutputSpec {
    let shape: [Int]
    let type: Tensor.ElementType
}

/// What an op builder produces: a kernel with its output shapes, or values it could compute
/// once at load (shape arithmetic, constant subgraphs).
enum Prepared {
    case kernel(outputs: [OutputSpec], scratch: Int, run: Kernel)
    case constant([Tensor])

    /// A kernel with one output and no scratch.
    static func single(_ shape: [Int], _ type: Tensor.ElementType = .float32, scratch: Int = 0, _ run: @escaping Kernel) -> Prepared {
        .kernel(outputs: [OutputSpec(shape: shape, type: type)], scratch: scratch, run: run)
    }
}

/// The node and its inputs, with helpers that turn a missing or non-constant input into a
/// typed error naming the node.
package struct BuildContext {
    package let node: Node
    package let inputs: [OpInput?]
    package let opset: Int
    /// Worker threads the kernel will run with (1 when folding constants at load).
    var threads: Int = 1
    /// The most elements one output (or scratch) may have: the model's memory limit in floats.
    var maxElements: Int = Model.defaultMemoryLimit / MemoryLayout<Float>.size

    /// A required input.
    package func input(_ i: Int) throws(MLError) -> OpInput {
        guard i < inputs.count, let value = inputs[i] else { throw node.invalid("input \(i) is required") }
        return value
    }

    /// An optional input, nil when omitted.
    package func optional(_ i: Int) -> OpInput? { i < inputs.count ? inputs[i] : nil }

    /// A required input that must be constant (weights, shapes, scales).
    package func constant(_ i: Int) throws(MLError) -> Tensor {
        let value = try input(i)
        guard let tensor = value.constant else {
            throw node.unsupported("input \(i) ('\(node.inputs[i])') must be a constant")
        }
        return tensor
    }

    /// An optional input that, when present, must be constant.
    package func optionalConstant(_ i: Int) throws(MLError) -> Tensor? {
        guard optional(i) != nil else { return nil }
        return try constant(i)
    }

    /// `shape` checked as the shape of a new value: no negative extent, and an element count
    /// that neither overflows nor passes the memory limit. Ops call it before they allocate
    /// anything sized by an output; the planner checks every output again.
    @discardableResult
    func outputShape(_ shape: [Int]) throws(MLError) -> [Int] {
        guard let count = Tensor.elementCount(shape), count <= maxElements else {
            throw invalid("an output of shape \(shape) needs more than the memory limit of \(maxElements * MemoryLayout<Float>.size) bytes")
        }
        return shape
    }

    /// A built kernel's outputs and scratch, checked as ``outputShape(_:)`` checks one shape.
    func check(_ outputs: [OutputSpec], scratch: Int) throws(MLError) {
        for spec in outputs { try outputShape(spec.shape) }
        guard scratch >= 0, scratch <= maxElements else {
            throw invalid("scratch of \(scratch) floats needs more than the memory limit of \(maxElements * MemoryLayout<Float>.size) bytes")
        }
    }

    package func invalid(_ reason: String) -> MLError { node.invalid(reason) }
    package func unsupported(_ reason: String) -> MLError { node.unsupported(reason) }
}

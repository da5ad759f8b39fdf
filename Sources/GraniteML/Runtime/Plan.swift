import Dispatch

/// A model compiled for one set of input shapes: every activation placed in one preallocated
/// arena, every kernel bound to its pointers. Running it allocates nothing but the outputs.
///
/// ```
///  inputs ─copy─► arena ─► step ─► step ─► … ─► arena ─copy─► output tensors
///                  ▲ slots reused once a value's last reader has run (liveness, first fit)
/// ```
/// Not thread-safe on its own: ``Model`` keeps plans inside its mutex and runs one at a time,
/// which is what makes the unchecked conformance sound.
final class Plan: @unchecked Sendable {
    struct Step {
        let node: String
        let op: String
        let run: Kernel
        let io: KernelIO
    }

    struct Slot {
        let pointer: UnsafeMutablePointer<Float>
        let shape: [Int]
        let type: Tensor.ElementType
        var count: Int { shape.reduce(1, *) }
    }

    let inputShapes: [String: [Int]]
    let steps: [Step]
    let inputs: [String: Slot]
    /// Outputs in the model's order; a constant output has no slot.
    let outputs: [(name: String, slot: Slot?, constant: Tensor?)]
    let arenaFloats: Int
    private let arena: UnsafeMutablePointer<Float>
    private let pool: UnsafeMutablePointer<Float>

    init(inputShapes: [String: [Int]], steps: [Step], inputs: [String: Slot],
         outputs: [(name: String, slot: Slot?, constant: Tensor?)], arena: UnsafeMutablePointer<Float>,
         arenaFloats: Int, pool: UnsafeMutablePointer<Float>) {
        self.inputShapes = inputShapes
        self.steps = steps
        self.inputs = inputs
        self.outputs = outputs
        self.arena = arena
        self.arenaFloats = arenaFloats
        self.pool = pool
    }

    deinit {
        arena.deallocate()
        pool.deallocate()
    }

    /// Runs every step on the values already copied into the input slots.
    func execute() {
        for step in steps { step.run(step.io) }
    }

    /// Runs every step, timing each (for profiles); returns (node, op, nanoseconds) per step.
    func executeTimed() -> [(node: String, op: String, nanos: UInt64)] {
        steps.map { step in
            let start = DispatchTime.now().uptimeNanoseconds
            step.run(step.io)
            return (step.node, step.op, DispatchTime.now().uptimeNanoseconds - start)
        }
    }

    /// Copies `tensor` into the input slot `name` (checked by the caller).
    func load(_ name: String, _ tensor: Tensor) {
        let slot = inputs[name]!
        tensor.values.withUnsafeBufferPointer { slot.pointer.update(from: $0.baseAddress!, count: $0.count) }
    }

    /// Reads the outputs out of the arena.
    func results() -> [String: Tensor] {
        var result: [String: Tensor] = [:]
        for output in outputs {
            if let constant = output.constant {
                result[output.name] = constant
            } else if let slot = output.slot {
                let values = Array(UnsafeBufferPointer(start: slot.pointer, count: slot.count))
                result[output.name] = try? Tensor(shape: slot.shape, values: values, elementType: slot.type)
            }
        }
        return result
    }
}

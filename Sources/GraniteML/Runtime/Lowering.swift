/// A graph lowered for concrete input shapes: every value's shape inferred, what is constant
/// folded, and the steps left to run in order, each with the op builder's view of its inputs.
/// The CPU ``Planner`` binds it to an arena of pointers; other backends (GraniteMLVulkan)
/// record it as GPU dispatches, so both run the same optimised graph.
///
/// ```
///  Graph (optimised) ─lower(input shapes)─► steps [node, inputs: constant | activation id, outputs]
///                                              ├─► Planner: arena offsets (place), kernels bound ─► Plan
///                                              └─► a GPU backend: buffers, shaders, one submission
/// ```
package struct Lowering {
    /// Where a step's input comes from.
    package enum Value {
        case constant(Tensor)
        case activation(Int)
    }

    /// A value computed at run time.
    package struct Activation {
        package let shape: [Int]
        package let type: Tensor.ElementType
        /// The step that defines it (-1 for a graph input) and the last that reads it.
        package let defined: Int
        package var lastUse: Int
        /// Its place in an arena, in floats (set by ``Lowering/place(_:)``).
        package var offset = 0
        /// Floats it takes in an arena: its elements rounded up to 16 (64-byte alignment).
        package var size: Int { (max(shape.reduce(1, *), 1) + 15) & ~15 }
    }

    /// One node left to run.
    package struct Step {
        package let node: Node
        /// What the op builder saw (shapes, constants, opset): backends read attributes through it.
        package let context: BuildContext
        /// The CPU kernel, without the node's epilogue.
        let run: Kernel
        package let inputs: [Value?]
        /// Activation ids of the outputs.
        package let outputs: [Int]
        let outputSpecs: [OutputSpec]
        let scratch: Int

        /// Runs the CPU kernel (no epilogue) on `inputs` given as tensors (nil for an omitted
        /// input): how a backend learns where a data-movement op takes each value from.
        package func evaluate(_ inputs: [Tensor?]) -> [Tensor] {
            let operands = zip(context.inputs, inputs).map { declared, given in
                declared.map { OpInput(shape: $0.shape, type: $0.type, constant: given ?? $0.constant) }
            }
            return Planner.fold(run, operands: operands, outputs: outputSpecs, scratch: scratch)
        }
    }

    package var activations: [Activation]
    /// Graph inputs by name, as activation ids.
    package var inputs: [String: Int]
    package var steps: [Step]
    /// Graph outputs in the model's order.
    package var outputs: [(name: String, value: Value)]

    /// Gives each activation an arena offset so that values alive at the same time never
    /// overlap; largest first, lowest free offset. Returns the arena size in floats.
    package static func place(_ activations: inout [Activation]) -> Int {
        let order = activations.indices.sorted { activations[$0].size > activations[$1].size }
        var placed: [Int] = []
        var total = 0
        for id in order {
            let a = activations[id]
            let clashes = placed.filter { other in
                let b = activations[other]
                return a.defined <= b.lastUse && b.defined <= a.lastUse
            }.map { (activations[$0].offset, activations[$0].offset + activations[$0].size) }.sorted { $0.0 < $1.0 }
            var offset = 0
            for (start, end) in clashes {
                if offset + a.size <= start { break }
                offset = max(offset, end)
            }
            activations[id].offset = offset
            total = max(total, offset + a.size)
            placed.append(id)
        }
        return total
    }
}

extension Planner {
    /// Infers shapes, folds constant steps and lists the rest; errors name the node whose
    /// shapes or attributes do not work.
    func lower(inputShapes: [String: [Int]]) throws(MLError) -> Lowering {
        var values: [String: Lowering.Value] = [:]
        for (name, tensor) in graph.constants { values[name] = .constant(tensor) }
        var activations: [Lowering.Activation] = []
        var inputIDs: [String: Int] = [:]
        let maxFloats = memoryLimit / MemoryLayout<Float>.size
        for info in graph.inputs {
            guard let shape = inputShapes[info.name] else { throw .missingInput(name: info.name) }
            guard let count = Tensor.elementCount(shape), count <= maxFloats else {
                throw .malformedModel(path: graph.path, reason: "input '\(info.name)' of shape \(shape) needs more than the memory limit of \(memoryLimit) bytes")
            }
            inputIDs[info.name] = activations.count
            values[info.name] = .activation(activations.count)
            activations.append(Lowering.Activation(shape: shape, type: info.elementType, defined: -1, lastUse: -1))
        }
        var steps: [Lowering.Step] = []
        for node in graph.nodes {
            var operands: [OpInput?] = []
            var refs: [Lowering.Value?] = []
            for name in node.inputs {
                if name.isEmpty { operands.append(nil); refs.append(nil); continue }
                guard let value = values[name] else {
                    throw .malformedModel(path: graph.path, reason: "node '\(node.name)' (\(node.op)) reads '\(name)', which nothing produces")
                }
                refs.append(value)
                switch value {
                case let .constant(t): operands.append(OpInput(shape: t.shape, type: t.elementType, constant: t))
                case let .activation(id):
                    operands.append(OpInput(shape: activations[id].shape, type: activations[id].type, constant: nil))
                }
            }
            let context = BuildContext(node: node, inputs: operands, opset: graph.opset, threads: threads, maxElements: maxFloats)
            switch try Ops.build(context) {
            case let .constant(tensors):
                for (name, tensor) in zip(node.outputs, tensors) where !name.isEmpty { values[name] = .constant(tensor) }
            case let .kernel(outputs, scratch, run):
                guard outputs.count >= node.outputs.filter({ !$0.isEmpty }).count else {
                    throw node.unsupported("only \(outputs.count) output(s) are produced")
                }
                try context.check(outputs, scratch: scratch)
                if operands.allSatisfy({ $0 == nil || $0!.constant != nil }) {
                    let folded = Self.fold(Ops.withEpilogue(node, run, outputs: outputs), operands: operands, outputs: outputs, scratch: scratch)
                    for (name, tensor) in zip(node.outputs, folded) where !name.isEmpty { values[name] = .constant(tensor) }
                    continue
                }
                var ids: [Int] = []
                for (k, spec) in outputs.enumerated() {
                    let id = activations.count
                    activations.append(Lowering.Activation(shape: spec.shape, type: spec.type, defined: steps.count, lastUse: steps.count))
                    ids.append(id)
                    if k < node.outputs.count, !node.outputs[k].isEmpty { values[node.outputs[k]] = .activation(id) }
                }
                for case let .activation(id)? in refs { activations[id].lastUse = steps.count }
                steps.append(Lowering.Step(node: node, context: context, run: run, inputs: refs, outputs: ids,
                                           outputSpecs: outputs, scratch: scratch))
            }
        }
        var outputs: [(name: String, value: Lowering.Value)] = []
        for output in graph.outputs {
            guard let value = values[output.name] else {
                throw .malformedModel(path: graph.path, reason: "graph output '\(output.name)' is never produced")
            }
            if case let .activation(id) = value { activations[id].lastUse = Int.max }
            outputs.append((output.name, value))
        }
        for id in inputIDs.values { activations[id].lastUse = max(activations[id].lastUse, 0) }
        return Lowering(activations: activations, inputs: inputIDs, steps: steps, outputs: outputs)
    }
}

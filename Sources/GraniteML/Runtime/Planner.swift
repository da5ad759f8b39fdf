/// Compiles a ``Graph`` for concrete input shapes: infers every value's shape, folds what is
/// constant, places activations in a shared arena by liveness and binds each kernel.
struct Planner {
    let graph: Graph
    let threads: Int
    /// Bytes the plan may allocate (``Model/memoryLimit``).
    let memoryLimit: Int

    private enum Value {
        case constant(Tensor)
        case activation(Int)
    }

    private struct Activation {
        let shape: [Int]
        let type: Tensor.ElementType
        let defined: Int
        var lastUse: Int
        var offset = 0
        var size: Int { (max(shape.reduce(1, *), 1) + 15) & ~15 }
    }

    private struct PendingStep {
        let node: Node
        let run: Kernel
        let inputs: [Value?]
        let outputs: [Int]
        let scratch: Int
    }

    /// Builds the plan; errors name the node whose shapes or attributes do not work.
    func plan(inputShapes: [String: [Int]]) throws(MLError) -> Plan {
        var values: [String: Value] = [:]
        for (name, tensor) in graph.constants { values[name] = .constant(tensor) }
        var activations: [Activation] = []
        var inputIDs: [String: Int] = [:]
        let maxFloats = memoryLimit / MemoryLayout<Float>.size
        for info in graph.inputs {
            guard let shape = inputShapes[info.name] else { throw .missingInput(name: info.name) }
            guard let count = Tensor.elementCount(shape), count <= maxFloats else {
                throw .malformedModel(path: graph.path, reason: "input '\(info.name)' of shape \(shape) needs more than the memory limit of \(memoryLimit) bytes")
            }
            inputIDs[info.name] = activations.count
            values[info.name] = .activation(activations.count)
            activations.append(Activation(shape: shape, type: info.elementType, defined: -1, lastUse: -1))
        }
        var pending: [PendingStep] = []
        for node in graph.nodes {
            var operands: [OpInput?] = []
            var refs: [Value?] = []
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
                let kernel = Ops.withEpilogue(node, run, outputs: outputs)
                if operands.allSatisfy({ $0 == nil || $0!.constant != nil }) {
                    let folded = Self.fold(kernel, operands: operands, outputs: outputs, scratch: scratch)
                    for (name, tensor) in zip(node.outputs, folded) where !name.isEmpty { values[name] = .constant(tensor) }
                    continue
                }
                var ids: [Int] = []
                for (k, spec) in outputs.enumerated() {
                    let id = activations.count
                    activations.append(Activation(shape: spec.shape, type: spec.type, defined: pending.count, lastUse: pending.count))
                    ids.append(id)
                    if k < node.outputs.count, !node.outputs[k].isEmpty { values[node.outputs[k]] = .activation(id) }
                }
                for case let .activation(id)? in refs { activations[id].lastUse = pending.count }
                pending.append(PendingStep(node: node, run: kernel, inputs: refs, outputs: ids, scratch: scratch))
            }
        }
        for output in graph.outputs {
            guard let value = values[output.name] else {
                throw .malformedModel(path: graph.path, reason: "graph output '\(output.name)' is never produced")
            }
            if case let .activation(id) = value { activations[id].lastUse = Int.max }
        }
        for id in inputIDs.values { activations[id].lastUse = max(activations[id].lastUse, 0) }

        let arenaSize = Self.place(&activations)
        let scratchSize = pending.map(\.scratch).max() ?? 0
        guard arenaSize + scratchSize <= maxFloats else {
            throw .malformedModel(path: graph.path, reason: "the activations need \((arenaSize + scratchSize) * 4) bytes, more than the memory limit of \(memoryLimit) bytes")
        }
        let arena = UnsafeMutablePointer<Float>.allocate(capacity: arenaSize + scratchSize + 16)
        arena.initialize(repeating: 0, count: arenaSize + scratchSize + 16)
        let scratch = arena + arenaSize

        // Constants that kernels read at run time (the other operand of an Add, say) go to one pool.
        var poolOffsets: [String: Int] = [:]
        var poolValues: [Float] = []
        for step in pending {
            for (k, ref) in step.inputs.enumerated() {
                if case let .constant(t)? = ref, poolOffsets[step.node.inputs[k]] == nil {
                    poolOffsets[step.node.inputs[k]] = poolValues.count
                    poolValues += t.values
                    poolValues += [Float](repeating: 0, count: (16 - poolValues.count % 16) % 16)
                }
            }
        }
        let pool = UnsafeMutablePointer<Float>.allocate(capacity: max(poolValues.count, 1))
        poolValues.withUnsafeBufferPointer { pool.initialize(from: $0.baseAddress!, count: $0.count) }

        let steps = pending.map { step in
            let inputs: [UnsafePointer<Float>?] = step.inputs.enumerated().map { k, ref in
                switch ref {
                case nil: return nil
                case .constant?: return UnsafePointer(pool + poolOffsets[step.node.inputs[k]]!)
                case let .activation(id)?: return UnsafePointer(arena + activations[id].offset)
                }
            }
            let outputs = step.outputs.map { arena + activations[$0].offset }
            let io = KernelIO(inputs: inputs, outputs: outputs, scratch: scratch, threads: threads)
            return Plan.Step(node: step.node.name, op: Self.label(step.node, step.inputs), run: step.run, io: io)
        }
        func slot(_ id: Int) -> Plan.Slot {
            Plan.Slot(pointer: arena + activations[id].offset, shape: activations[id].shape, type: activations[id].type)
        }
        let outputs: [(name: String, slot: Plan.Slot?, constant: Tensor?)] = graph.outputs.map { output in
            switch values[output.name]! {
            case let .constant(t): return (output.name, nil, t)
            case let .activation(id): return (output.name, slot(id), nil)
            }
        }
        return Plan(inputShapes: inputShapes, steps: steps, inputs: inputIDs.mapValues(slot), outputs: outputs,
                    arena: arena, arenaFloats: arenaSize + scratchSize, pool: pool)
    }

    /// The op name, with the convolution flavour for profiles (`Conv/depthwise3x3s2`).
    private static func label(_ node: Node, _ inputs: [Value?]) -> String {
        guard node.op == "Conv", inputs.count > 1, case let .constant(w)? = inputs[1], w.shape.count == 4 else { return node.op }
        let group = node.int("group", 1)
        let stride = node.ints("strides")?.first ?? 1
        let kind = group > 1 && w.shape[1] == 1 ? "depthwise" : (w.shape[2] * w.shape[3] == 1 && stride == 1 ? "pointwise" : "im2col")
        return "Conv/\(node.quantized != nil && kind != "im2col" ? "int8-" : "")\(kind)\(w.shape[2])x\(w.shape[3])s\(stride)"
    }

    /// Gives each activation an arena offset so that values alive at the same time never
    /// overlap; largest first, lowest free offset. Returns the arena size in floats.
    private static func place(_ activations: inout [Activation]) -> Int {
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

    /// Runs a kernel whose inputs are all constant, once, at load or plan time.
    static func fold(_ run: Kernel, operands: [OpInput?], outputs: [OutputSpec], scratch: Int) -> [Tensor] {
        func buffer(_ values: [Float]?, count: Int) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: max(count, 1))
            p.initialize(repeating: 0, count: max(count, 1))
            values?.withUnsafeBufferPointer { if $0.count > 0 { p.update(from: $0.baseAddress!, count: $0.count) } }
            return p
        }
        let ins = operands.map { $0.map { buffer($0.constant?.values, count: $0.count) } }
        let outs = outputs.map { buffer(nil, count: $0.shape.reduce(1, *)) }
        let scratchBuffer = buffer(nil, count: scratch)
        defer {
            ins.forEach { $0?.deallocate() }
            outs.forEach { $0.deallocate() }
            scratchBuffer.deallocate()
        }
        run(KernelIO(inputs: ins.map { $0.map { UnsafePointer($0) } }, outputs: outs, scratch: scratchBuffer, threads: 1))
        return zip(outputs, outs).map { spec, p in
            let values = Array(UnsafeBufferPointer(start: p, count: spec.shape.reduce(1, *)))
            if spec.type.isInteger {
                return (try? Tensor(shape: spec.shape, integers: values.map { Int64(max(min($0, 9.0e18), -9.0e18)) }, elementType: spec.type))!
            }
            return (try? Tensor(shape: spec.shape, values: values, elementType: spec.type))!
        }
    }
}

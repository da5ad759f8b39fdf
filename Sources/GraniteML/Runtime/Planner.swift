/// Compiles a ``Graph`` for concrete input shapes: infers every value's shape, folds what is
/// constant, places activations in a shared arena by liveness and binds each kernel.
struct Planner {
    let graph: Graph
    let threads: Int
    /// Bytes the plan may allocate (``Model/memoryLimit``).
    let memoryLimit: Int

    /// Builds the plan; errors name the node whose shapes or attributes do not work.
    func plan(inputShapes: [String: [Int]]) throws(MLError) -> Plan {
        var lowered = try lower(inputShapes: inputShapes)
        let pending = lowered.steps
        let inputIDs = lowered.inputs
        let maxFloats = memoryLimit / MemoryLayout<Float>.size
        let arenaSize = Lowering.place(&lowered.activations)
        let activations = lowered.activations
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
            let run = Ops.withEpilogue(step.node, step.run, outputs: step.outputSpecs)
            let inputs: [UnsafePointer<Float>?] = step.inputs.enumerated().map { k, ref in
                switch ref {
                case nil: return nil
                case .constant?: return UnsafePointer(pool + poolOffsets[step.node.inputs[k]]!)
                case let .activation(id)?: return UnsafePointer(arena + activations[id].offset)
                }
            }
            let outputs = step.outputs.map { arena + activations[$0].offset }
            let io = KernelIO(inputs: inputs, outputs: outputs, scratch: scratch, threads: threads)
            return Plan.Step(node: step.node.name, op: Self.label(step.node, step.inputs), run: run, io: io)
        }
        func slot(_ id: Int) -> Plan.Slot {
            Plan.Slot(pointer: arena + activations[id].offset, shape: activations[id].shape, type: activations[id].type)
        }
        let outputs: [(name: String, slot: Plan.Slot?, constant: Tensor?)] = lowered.outputs.map { output in
            switch output.value {
            case let .constant(t): return (output.name, nil, t)
            case let .activation(id): return (output.name, slot(id), nil)
            }
        }
        return Plan(inputShapes: inputShapes, steps: steps, inputs: inputIDs.mapValues(slot), outputs: outputs,
                    arena: arena, arenaFloats: arenaSize + scratchSize, pool: pool)
    }

    /// The op name, with the convolution flavour for profiles (`Conv/depthwise3x3s2`).
    private static func label(_ node: Node, _ inputs: [Lowering.Value?]) -> String {
        guard node.op == "Conv", inputs.count > 1, case let .constant(w)? = inputs[1], w.shape.count == 4 else { return node.op }
        let group = node.int("group", 1)
        let stride = node.ints("strides")?.first ?? 1
        let kind = group > 1 && w.shape[1] == 1 ? "depthwise" : (w.shape[2] * w.shape[3] == 1 && stride == 1 ? "pointwise" : "im2col")
        return "Conv/\(node.quantized != nil && kind != "im2col" ? "int8-" : "")\(kind)\(w.shape[2])x\(w.shape[3])s\(stride)"
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

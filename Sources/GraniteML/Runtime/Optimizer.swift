/// Load-time rewrites of a ``Graph``: constant folding (DequantizeLinear of weights, shape
/// arithmetic on constants), per-channel affine steps (BatchNormalization, constant Mul and
/// Add) folded into the Conv or ConvTranspose before them, HardSwish spelled as the ops exporters
/// use for it, and activations and quantise-dequantise pairs fused onto the node that produces their input.
enum Optimizer {
    /// The rewritten graph; constants folded here obey `memoryLimit` (bytes) as plans do.
    static func optimize(_ graph: Graph, memoryLimit: Int = Model.defaultMemoryLimit) throws(MLError) -> Graph {
        var g = try foldConstants(expandHardSwish(poolTransposedMeans(graph)), maxElements: memoryLimit / MemoryLayout<Float>.size)
        g = try foldChannelAffines(g)
        g = fuseEpilogues(g)
        g = foldPadsIntoConvs(g)
        g = dropRepeatedFakeQuants(g)
        g = QuantizedConv.mark(g)
        return g
    }

    /// Rewrites each `HardSwish(x)` (x · clamp(x/6 + 1/2, 0, 1)) as `Add(x, 3)` clipped to 0…6,
    /// `Mul(x, ·)` and `Div(·, 6)`: the form PyTorch exports spell it in, which ``fuseEpilogues(_:)``
    /// turns into a `gatedClip` and a scalar step on x's producer, so every backend runs it with
    /// the steps it already has. The same values up to float rounding (a few ulp).
    static func expandHardSwish(_ graph: Graph) -> Graph {
        guard graph.nodes.contains(where: { $0.op == "HardSwish" }) else { return graph }
        var g = graph
        func constant(_ name: String, _ value: Float) -> String {
            var unique = name, k = 0
            while g.constants[unique] != nil || g.inputs.contains(where: { $0.name == unique }) { k += 1; unique = "\(name)_\(k)" }
            g.constants[unique] = try! Tensor(shape: [], values: [value])
            return unique
        }
        let three = constant("granite_hardswish_3", 3), six = constant("granite_hardswish_6", 6)
        var nodes: [Node] = []
        for node in g.nodes {
            guard node.op == "HardSwish", node.domain.isEmpty || node.domain == "ai.onnx",
                  node.inputs.count == 1, node.outputs.count == 1 else { nodes.append(node); continue }
            let x = node.inputs[0], gate = node.outputs[0] + "/granite_gate", product = node.outputs[0] + "/granite_product"
            var add = Node(name: node.name + "/add", op: "Add", domain: "", inputs: [x, three], outputs: [gate], attributes: [:])
            add.epilogue = [.clip(lo: 0, hi: 6)]
            nodes.append(add)
            nodes.append(Node(name: node.name + "/mul", op: "Mul", domain: "", inputs: [x, gate], outputs: [product], attributes: [:]))
            nodes.append(Node(name: node.name + "/div", op: "Div", domain: "", inputs: [product, six], outputs: node.outputs, attributes: [:]))
        }
        g.nodes = nodes
        return g
    }

    /// Rewrites a ReduceMean over axes 1 and 2 of a 4-D value (the spatial mean of an NHWC
    /// value, as tf2onnx writes a TFLite MEAN) as a `GlobalAveragePool`, an op every backend has:
    /// `Transpose(GlobalAveragePool(x), [0, 2, 3, 1])` when the value is `Transpose(x, [0, 2, 3, 1])`,
    /// else with a Transpose to NCHW before the pool. The value is known to be 4-D when it comes
    /// from a 4-axis Transpose through element-wise ops. The same sums.
    static func poolTransposedMeans(_ graph: Graph) -> Graph {
        guard graph.nodes.contains(where: { $0.op == "ReduceMean" }) else { return graph }
        var g = graph
        var producer: [String: Node] = [:]
        for node in g.nodes { for o in node.outputs { producer[o] = node } }
        let elementwise: Set<String> = ["HardSwish", "Relu", "Sigmoid", "HardSigmoid", "LeakyRelu", "Clip"]
        func fourAxes(_ value: String) -> Bool {
            var v = value
            while let p = producer[v] {
                if p.op == "Transpose" { return p.ints("perm")?.count == 4 }
                guard elementwise.contains(p.op), let first = p.inputs.first else { return false }
                v = first
            }
            return false
        }
        let uses = g.useCounts(), graphOutputs = Set(g.outputs.map(\.name))
        var nodes: [Node] = [], dropped = Set<String>()
        for node in g.nodes {
            guard node.op == "ReduceMean", node.domain.isEmpty || node.domain == "ai.onnx", node.inputs.count == 1,
                  node.outputs.count == 1, g.opset < 18, let axes = node.ints("axes"), Set(axes.map { $0 < 0 ? $0 + 4 : $0 }) == [1, 2],
                  node.int("keepdims", 1) == 1, fourAxes(node.inputs[0]) else { nodes.append(node); continue }
            let nchw: String
            if let t = producer[node.inputs[0]], t.op == "Transpose", t.ints("perm") == [0, 2, 3, 1] {
                nchw = t.inputs[0]
                if uses[node.inputs[0]] == 1, !graphOutputs.contains(node.inputs[0]) { dropped.insert(node.inputs[0]) }
            } else {
                nchw = node.outputs[0] + "/granite_nchw"
                nodes.append(Node(name: node.name + "/nchw", op: "Transpose", domain: "", inputs: [node.inputs[0]], outputs: [nchw],
                                  attributes: ["perm": .ints([0, 3, 1, 2])]))
            }
            let pooled = node.outputs[0] + "/granite_pooled"
            nodes.append(Node(name: node.name + "/pool", op: "GlobalAveragePool", domain: "", inputs: [nchw], outputs: [pooled], attributes: [:]))
            nodes.append(Node(name: node.name + "/nhwc", op: "Transpose", domain: "", inputs: [pooled], outputs: node.outputs,
                              attributes: ["perm": .ints([0, 2, 3, 1])]))
        }
        g.nodes = nodes.filter { !($0.op == "Transpose" && $0.outputs.count == 1 && dropped.contains($0.outputs[0])) }
        return g
    }

    /// Evaluates, once, every node whose inputs are all constant.
    static func foldConstants(_ graph: Graph, maxElements: Int) throws(MLError) -> Graph {
        var g = graph
        var kept: [Node] = []
        for node in g.nodes {
            let inputs = node.inputs.map { $0.isEmpty ? nil : g.constants[$0] }
            let allConstant = zip(node.inputs, inputs).allSatisfy { $0.isEmpty || $1 != nil }
            guard allConstant, !node.inputs.isEmpty else { kept.append(node); continue }
            let operands = inputs.map { $0.map { OpInput(shape: $0.shape, type: $0.elementType, constant: $0) } }
            let context = BuildContext(node: node, inputs: operands, opset: g.opset, maxElements: maxElements)
            QuantizedConv.record(node, inputs, into: &g)
            switch try Ops.build(context) {
            case let .constant(tensors):
                for (name, t) in zip(node.outputs, tensors) where !name.isEmpty { g.constants[name] = t }
            case let .kernel(outputs, scratch, run):
                try context.check(outputs, scratch: scratch)
                let folded = Planner.fold(Ops.withEpilogue(node, run, outputs: outputs), operands: operands, outputs: outputs, scratch: scratch)
                for (name, t) in zip(node.outputs, folded) where !name.isEmpty { g.constants[name] = t }
            }
        }
        g.nodes = kept
        return g
    }

    /// Folds a per-output-channel affine step that directly follows a Conv or ConvTranspose (its
    /// only reader) into the convolution's weights and bias: BatchNormalization, and a Mul or Add
    /// with a constant holding one value per channel or one for all (exporters keep biases and
    /// learnable scales apart). Convolutions on dequantised integer weights are left as they
    /// are, so the int8 kernels still recognise them.
    static func foldChannelAffines(_ graph: Graph) throws(MLError) -> Graph {
        var g = graph
        let uses = g.useCounts()
        var producer: [String: Int] = [:]
        for (i, node) in g.nodes.enumerated() { for o in node.outputs { producer[o] = i } }
        var removed = Set<Int>()
        for (i, step) in g.nodes.enumerated() where ["BatchNormalization", "Add", "Mul"].contains(step.op) && step.outputs.count == 1 {
            let data = step.op == "BatchNormalization" ? step.inputs.first : step.inputs.first { g.constants[$0] == nil }
            guard let data, let p = producer[data], uses[data] == 1, ["Conv", "ConvTranspose"].contains(g.nodes[p].op),
                  g.nodes[p].inputs.count >= 2, g.quantized[g.nodes[p].inputs[1]] == nil,
                  let w = g.constants[g.nodes[p].inputs[1]], w.shape.count == 4, !w.elementType.isInteger,
                  let (a, b) = try channelAffine(step, data: data, channels: convChannels(g.nodes[p], w), g) else { continue }
            var conv = g.nodes[p]
            let m = a.count
            var weights = w.values
            if a.contains(where: { $0 != 1 }) {
                if conv.op == "Conv" {
                    let per = w.count / m
                    for oc in 0..<m { for j in 0..<per { weights[oc * per + j] *= a[oc] } }
                } else {
                    // [cin, m / group, kh, kw]: input channel ci of group ci / (cin / group) feeds outputs of that group.
                    let (cin, mg, area) = (w.shape[0], w.shape[1], w.shape[2] * w.shape[3])
                    let group = conv.int("group", 1), cg = cin / max(group, 1)
                    for ci in 0..<cin { for j in 0..<mg { for t in 0..<area { weights[(ci * mg + j) * area + t] *= a[(ci / cg) * mg + j] } } }
                }
            }
            let oldBias = conv.inputs.count > 2 && !conv.inputs[2].isEmpty ? g.constants[conv.inputs[2]]?.values : nil
            let bias = (0..<m).map { (oldBias?[$0] ?? 0) * a[$0] + b[$0] }
            let wName = "\(conv.name)::\(step.name)::weights", bName = "\(conv.name)::\(step.name)::bias"
            g.constants[wName] = try Tensor(shape: w.shape, values: weights)
            g.constants[bName] = try Tensor(shape: [m], values: bias)
            conv.inputs = [conv.inputs[0], wName, bName]
            conv.outputs = step.outputs
            g.nodes[p] = conv
            producer[step.outputs[0]] = p
            removed.insert(i)
        }
        g.nodes = g.nodes.enumerated().filter { !removed.contains($0.offset) }.map(\.element)
        return g
    }

    /// Output channels of a Conv or ConvTranspose with weights `w`.
    private static func convChannels(_ conv: Node, _ w: Tensor) -> Int {
        conv.op == "Conv" ? w.shape[0] : w.shape[1] * conv.int("group", 1)
    }

    /// `step` as y = a[c]·x + b[c] over `channels` channels, or nil when it is not one.
    private static func channelAffine(_ step: Node, data: String, channels m: Int, _ g: Graph) throws(MLError) -> ([Float], [Float])? {
        if step.op == "BatchNormalization" {
            guard step.inputs.dropFirst().allSatisfy({ g.constants[$0] != nil }) else { return nil }
            let operands = step.inputs.map { name in g.constants[name].map { OpInput(shape: $0.shape, type: $0.elementType, constant: $0) } }
            let (a, b) = try Linear.batchNormAffine(BuildContext(node: step, inputs: operands, opset: g.opset))
            return a.count == m ? (a, b) : nil
        }
        guard step.inputs.count == 2, let other = step.inputs.first(where: { $0 != data }), let c = g.constants[other],
              !c.elementType.isInteger, c.shape.count <= 4,
              c.count == 1 || (c.count == m && (c.shape == [1, m, 1, 1] || c.shape == [m, 1, 1])) else { return nil }
        let values = c.count == 1 ? [Float](repeating: c.values[0], count: m) : c.values
        let ones = [Float](repeating: 1, count: m), zeros = [Float](repeating: 0, count: m)
        return step.op == "Add" ? (ones, values) : (values, zeros)
    }

    /// Ops whose float output may take an epilogue.
    private static let fusable: Set<String> = [
        "Conv", "ConvTranspose", "Add", "Sub", "Mul", "Div", "Resize", "Upsample", "Pad", "BatchNormalization",
        "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool", "Concat", "Relu", "Clip", "LeakyRelu",
        "Sigmoid", "HardSigmoid",
    ]

    /// Moves activations and QuantizeLinear → DequantizeLinear pairs onto their producer.
    static func fuseEpilogues(_ graph: Graph) -> Graph {
        var g = graph
        var isFloat: [String: Bool] = [:]
        for input in g.inputs { isFloat[input.name] = !input.elementType.isInteger }
        for (name, t) in g.constants { isFloat[name] = !t.elementType.isInteger }
        for node in g.nodes {
            let float: Bool
            switch node.op {
            case "QuantizeLinear", "Shape": float = false
            case "Cast": float = node.int("to", 1) == 1
            case "DequantizeLinear", "Conv", "ConvTranspose", "Gemm", "MatMul", "BatchNormalization", "Softmax": float = true
            default: float = node.inputs.first.flatMap { isFloat[$0] } ?? true
            }
            for o in node.outputs { isFloat[o] = float }
        }
        var changed = true
        while changed {
            changed = false
            let uses = g.useCounts()
            var consumer: [String: Int] = [:]
            for (i, node) in g.nodes.enumerated() { for input in node.inputs where !input.isEmpty { consumer[input] = i } }
            let graphOutputs = Set(g.outputs.map(\.name))
            for (i, producer) in g.nodes.enumerated() where fusable.contains(producer.op) && producer.outputs.count == 1 {
                let value = producer.outputs[0]
                guard isFloat[value] == true, !graphOutputs.contains(value) else { continue }
                if uses[value] == 2, let (step, newOutput, drop) = gated(value, g, uses: uses, graphOutputs: graphOutputs) {
                    g.nodes[i].epilogue.append(step)
                    g.nodes[i].outputs = [newOutput]
                    isFloat[newOutput] = true
                    g.nodes = g.nodes.enumerated().filter { !drop.contains($0.offset) }.map(\.element)
                    changed = true
                    break
                }
                guard uses[value] == 1, let j = consumer[value] else { continue }
                let next = g.nodes[j]
                if let op = Epilogue.ScalarOp(next.op), next.inputs.count == 2, next.inputs.contains(value),
                   let other = next.inputs.first(where: { $0 != value }), let c = g.constants[other], c.count == 1,
                   !c.elementType.isInteger, next.outputs.count == 1 {
                    g.nodes[i].epilogue.append(.scalar(op: op, value: c.values[0], constantFirst: next.inputs[0] == other))
                    g.nodes[i].outputs = next.outputs
                    isFloat[next.outputs[0]] = true
                    g.nodes.remove(at: j)
                    changed = true
                    break
                }
                guard next.inputs.first == value else { continue }
                var removal = [j]
                var step: Epilogue?
                var newOutput = next.outputs.first ?? value
                switch next.op {
                case "Relu": step = .relu
                case "Sigmoid": step = .sigmoid
                case "LeakyRelu": step = .leakyRelu(alpha: next.float("alpha", 0.01))
                case "HardSigmoid": step = .hardSigmoid(alpha: next.float("alpha", 0.2), beta: next.float("beta", 0.5))
                case "Clip":
                    if g.opset < 11 || next.inputs.count == 1 {
                        step = .clip(lo: next.float("min", -.greatestFiniteMagnitude), hi: next.float("max", .greatestFiniteMagnitude))
                    } else if next.inputs.dropFirst().allSatisfy({ $0.isEmpty || g.constants[$0] != nil }) {
                        // An empty bound tensor counts as no bound.
                        let lo = next.inputs.count > 1 && !next.inputs[1].isEmpty ? g.constants[next.inputs[1]]!.values.first : nil
                        let hi = next.inputs.count > 2 && !next.inputs[2].isEmpty ? g.constants[next.inputs[2]]!.values.first : nil
                        step = .clip(lo: lo ?? -.greatestFiniteMagnitude, hi: hi ?? .greatestFiniteMagnitude)
                    }
                case "QuantizeLinear":
                    guard let q = next.outputs.first, uses[q] == 1, !graphOutputs.contains(q), let k = consumer[q],
                          g.nodes[k].op == "DequantizeLinear", let dequantized = g.nodes[k].outputs.first,
                          let pair = fakeQuant(next, g.nodes[k], g) else { break }
                    step = pair
                    removal.append(k)
                    newOutput = dequantized
                default: break
                }
                guard let step else { continue }
                g.nodes[i].epilogue.append(step)
                g.nodes[i].outputs = [newOutput]
                isFloat[newOutput] = true
                let drop = Set(removal)
                g.nodes = g.nodes.enumerated().filter { !drop.contains($0.offset) }.map(\.element)
                changed = true
                break
            }
        }
        return g
    }

    /// Finds `Mul(v, Add(v, c) with a fused Clip)` (HardSwish's body) on a value read twice.
    private static func gated(_ v: String, _ g: Graph, uses: [String: Int], graphOutputs: Set<String>)
        -> (Epilogue, String, Set<Int>)? {
        let readers = g.nodes.indices.filter { g.nodes[$0].inputs.contains(v) }
        guard readers.count == 2 else { return nil }
        for (a, m) in [(readers[0], readers[1]), (readers[1], readers[0])] {
            let add = g.nodes[a], mul = g.nodes[m]
            guard add.op == "Add", add.inputs.count == 2, add.inputs[0] == v, let c = g.constants[add.inputs[1]], c.count == 1,
                  add.epilogue.count == 1, case let .clip(lo, hi) = add.epilogue[0],
                  let gate = add.outputs.first, uses[gate] == 1, !graphOutputs.contains(gate),
                  mul.op == "Mul", Set(mul.inputs) == [v, gate], mul.outputs.count == 1 else { continue }
            return (.gatedClip(add: c.values[0], lo: lo, hi: hi), mul.outputs[0], [a, m])
        }
        return nil
    }

    /// Moves a zero constant Pad of the spatial axes into the Conv that reads it. Also when the
    /// Pad carries a fake-quantisation step equal to the one its input already went through:
    /// zero quantises to zero and on-grid values are unchanged, so the step is a no-op there.
    static func foldPadsIntoConvs(_ graph: Graph) -> Graph {
        var g = graph
        let uses = g.useCounts()
        var producer: [String: Int] = [:]
        for (i, node) in g.nodes.enumerated() { for o in node.outputs { producer[o] = i } }
        var removed = Set<Int>()
        for (j, conv) in g.nodes.enumerated() where conv.op == "Conv" && conv.string("auto_pad", "NOTSET") == "NOTSET" {
            guard let i = producer[conv.inputs[0]], g.nodes[i].op == "Pad", uses[conv.inputs[0]] == 1 else { continue }
            let pad = g.nodes[i]
            guard pad.string("mode", "constant") == "constant", g.opset >= 11, pad.inputs.count >= 2,
                  let pads = g.constants[pad.inputs[1]]?.intValues, pads.count == 8,
                  pads[0] == 0, pads[1] == 0, pads[4] == 0, pads[5] == 0, pads.allSatisfy({ $0 >= 0 }) else { continue }
            if pad.inputs.count > 2, !pad.inputs[2].isEmpty, g.constants[pad.inputs[2]]?.values.first != 0 { continue }
            if pad.inputs.count > 3, !pad.inputs[3].isEmpty { continue }
            if !pad.epilogue.isEmpty {
                guard pad.epilogue.count == 1, case .fakeQuant = pad.epilogue[0], let k = producer[pad.inputs[0]],
                      g.nodes[k].epilogue.last == pad.epilogue[0] else { continue }
            }
            let old = conv.ints("pads") ?? [0, 0, 0, 0]
            guard old.count == 4 else { continue }
            var folded = conv
            folded.attributes["pads"] = .ints([old[0] + pads[2], old[1] + pads[3], old[2] + pads[6], old[3] + pads[7]])
            folded.inputs[0] = pad.inputs[0]
            g.nodes[j] = folded
            removed.insert(i)
        }
        g.nodes = g.nodes.enumerated().filter { !removed.contains($0.offset) }.map(\.element)
        return g
    }

    /// Drops a fake-quantisation step from ops that only move values (nearest Resize, MaxPool,
    /// Concat, Transpose, Reshape...) when every input already went through the same step:
    /// values on the grid stay on it, so the step would change nothing.
    static func dropRepeatedFakeQuants(_ graph: Graph) -> Graph {
        var g = graph
        var producer: [String: Int] = [:]
        for (i, node) in g.nodes.enumerated() { for o in node.outputs { producer[o] = i } }
        let moving: Set<String> = ["MaxPool", "Concat", "Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"]
        for (i, node) in g.nodes.enumerated() where node.epilogue.count == 1 {
            guard case let .fakeQuant(scale, zero, lo, hi) = node.epilogue[0] else { continue }
            let nearest = (node.op == "Resize" || node.op == "Upsample") && node.string("mode", "nearest") == "nearest"
            guard nearest || moving.contains(node.op), node.op != "MaxPool" || node.outputs.count == 1 else { continue }
            let data = node.op == "Concat" ? node.inputs : Array(node.inputs.prefix(1))
            let onGrid = !data.isEmpty && data.allSatisfy { name in
                guard let p = producer[name], p != i else { return false }
                guard let grid = g.nodes[p].epilogue.last?.grid else { return false }
                return grid == (scale, zero, lo, hi)
            }
            if onGrid { g.nodes[i].epilogue = [.onGrid(scale: scale, zeroPoint: zero, lo: lo, hi: hi)] }
        }
        return g
    }

    /// The fake-quantisation step of a Q → DQ pair with the same per-tensor scale and zero point.
    private static func fakeQuant(_ q: Node, _ dq: Node, _ g: Graph) -> Epilogue? {
        guard q.inputs.count >= 2, dq.inputs.count >= 2,
              let qs = g.constants[q.inputs[1]], let ds = g.constants[dq.inputs[1]], qs.count == 1, ds.values == qs.values else { return nil }
        let qz = q.inputs.count > 2 && !q.inputs[2].isEmpty ? g.constants[q.inputs[2]] : nil
        let dz = dq.inputs.count > 2 && !dq.inputs[2].isEmpty ? g.constants[dq.inputs[2]] : nil
        if q.inputs.count > 2 && !q.inputs[2].isEmpty && qz == nil { return nil }
        if dq.inputs.count > 2 && !dq.inputs[2].isEmpty && dz == nil { return nil }
        let type = qz?.elementType ?? .uint8
        guard (qz?.values ?? [0]) == (dz?.values ?? [0]), let range = type.range, type == .uint8 || type == .int8 else { return nil }
        return .fakeQuant(scale: qs.values[0], zeroPoint: qz?.values.first ?? 0, lo: range.lowerBound, hi: range.upperBound)
    }
}

import GraniteML

/// Turns a ``Lowering`` into dispatches: one or a few per step, reading the same attributes
/// through the same helpers as the CPU kernels (``ConvGeometry``, `Resize.geometry`,
/// `Quantization.Parameters`...), with every constant gathered into one ``ConstantPool``.
///
/// Data-movement ops (Transpose, Pad, Concat, Slice, Gather, nearest Resize, Reshape and its
/// kin) are not re-implemented: the CPU kernel runs once at load on inputs that hold their own
/// indices, and what comes out is the index map the `gather` kernel follows.
struct DispatchBuilder {
    let lowering: Lowering
    var constants = ConstantPool()
    var dispatches: [MLDispatch] = []
    /// The device's `fma()` rounds twice: float convolutions whose output is quantised emulate
    /// the single rounding (``FusedMultiplyAdd``).
    let emulateFMA: Bool

    init(lowering: Lowering, emulateFMA: Bool = false) {
        self.lowering = lowering
        self.emulateFMA = emulateFMA
    }

    /// Where an operand is: in the constants (flag 1) or the arena (0), at an offset in floats.
    private mutating func operand(_ step: Lowering.Step, _ k: Int) throws(MLError) -> (flag: Int, offset: Int) {
        switch step.inputs[k] {
        case let .activation(id)?: return (0, lowering.activations[id].offset)
        case let .constant(t)?: return (1, constants.add(t, name: step.node.inputs[k]))
        case nil: throw step.node.invalid("input \(k) is required")
        }
    }

    private func activation(_ step: Lowering.Step, _ k: Int) throws(MLError) -> Lowering.Activation {
        guard k < step.inputs.count, case let .activation(id)? = step.inputs[k] else {
            throw step.node.unsupported("the Vulkan backend needs input \(k) computed at run time")
        }
        return lowering.activations[id]
    }

    private func output(_ step: Lowering.Step) -> Lowering.Activation { lowering.activations[step.outputs[0]] }

    mutating func build() throws(MLError) {
        for step in lowering.steps {
            let node = step.node
            guard step.outputs.count == 1 else { throw node.unsupported("the Vulkan backend runs nodes of one output") }
            switch node.op {
            case "Conv": try conv(step)
            case "ConvTranspose": try convTranspose(step)
            case "Softmax": try softmax(step)
            case "Add", "Sub", "Mul", "Div": try binary(step)
            case "Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid": try unary(step)
            case "BatchNormalization": try batchNorm(step)
            case "QuantizeLinear", "DequantizeLinear": try quantization(step)
            case "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool": try pool(step)
            case "MatMul", "Gemm": try matmul(step)
            case "Resize", "Upsample":
                if case let .linear(outShape, rows, columns) = try Resize.geometry(step.context) {
                    try bilinear(step, outShape: outShape, rows: rows, columns: columns)
                } else {
                    try gather(step)
                }
            case "Transpose", "Pad", "Concat", "Slice", "Gather", "Reshape", "Flatten", "Identity", "Squeeze", "Unsqueeze":
                try gather(step)
            case "Cast":
                guard output(step).type == .float32, try activation(step, 0).type == .float32 else {
                    throw node.unsupported("the Vulkan backend casts float to float only")
                }
                try gather(step)
            default:
                throw node.unsupported("the Vulkan backend has no kernel for it")
            }
        }
    }

    // MARK: Convolution

    /// The tiled kernels' tiles (conv_tiled.glsl, conv_depthwise.comp): output channels per
    /// workgroup of conv_pointwise and conv_dense (`BLOCK`), and pixels per invocation in all
    /// three (`PIXELS`; 64 invocations a workgroup).
    static let tileChannels = 8, tilePixels = 4

    /// The convolution kernels, by shape: depthwise (group = C = M) runs `conv_depthwise`, a 1×1
    /// group-1 convolution without padding `conv_pointwise`, any other group-1 one `conv_dense`,
    /// and the rest (grouped, not depthwise) `conv`, the general direct convolution, as do float
    /// depthwise convolutions whose output is quantised (their sums must be the CPU's, tap by
    /// tap). All four take the same push constants (conv.comp's list).
    private mutating func conv(_ step: Lowering.Step) throws(MLError) {
        let c = step.context
        let x = try activation(step, 0)
        let w = try c.constant(1)
        guard x.shape.count == 4, w.shape.count == 4 else { throw c.unsupported("only 2-D convolution (4-D input and weights)") }
        let g = try ConvGeometry(c, input: [x.shape[2], x.shape[3]], kernel: [w.shape[2], w.shape[3]])
        let out = output(step)
        let group = c.node.int("group", 1)
        let (n, channels, m, oh, ow) = (out.shape[0], x.shape[1], out.shape[1], out.shape[2], out.shape[3])
        let form = Conv.integerForm(c)
        // Float depthwise convolutions whose output is quantised keep conv.comp: its sums are the
        // CPU's, tap by tap in the same order and rounding, so a value on a quantisation tie rounds
        // alike (conv_tiled.glsl's group-1 sums are too).
        let depthwise = group == channels && m == channels && w.shape[1] == 1
        let kernel: MLDispatch.Kernel = if depthwise && form == nil && quantises(c.node) {
            .conv
        } else if depthwise {
            .convDepthwise
        } else if group == 1 && g.kernel == [1, 1] && g.padBegin == [0, 0] && g.padEnd == [0, 0] {
            .convPointwise
        } else if group == 1 {
            .convDense
        } else {
            .conv
        }
        // The weights as the kernel reads them: conv's as floats (int8: the centred integers as
        // floats), the tiled kernels' int8 weights as int32 bits, conv_pointwise's and
        // conv_dense's in blocks.
        var weights: Int
        switch (kernel, form) {
        case (.convPointwise, _), (.convDense, _):
            let values = form.map { $0.weights.map { Float(bitPattern: UInt32(bitPattern: $0)) } } ?? w.values
            weights = constants.add(Self.channelBlocks(values, outputs: m, perOutput: w.shape[1...].reduce(1, *)))
        case let (.convDepthwise, form?): weights = constants.add(ints: form.weights.map { Int($0) })
        case let (_, form?): weights = constants.add(form.weights.map { Float($0) })
        case (_, nil): weights = constants.add(w, name: c.node.inputs[1])
        }
        var bias: Int, quantised = [0, 0, 0, 0, 0, 0]
        if let form {
            // Where GraniteML's CPU runtime runs int8 kernels, the same integers (see conv.comp).
            bias = constants.add(ints: form.bias.map { Int($0) })
            quantised = [1, constants.add(form.scales), bits(form.inverseInputScale), bits(form.lo), bits(form.hi), bits(form.outScale)]
        } else {
            bias = try c.optionalConstant(2).map { constants.add($0, name: c.node.inputs[2]) } ?? -1
        }
        let epilogue = constants.add(epilogue: c.node.epilogue)
        let push = [x.offset, out.offset, weights, bias, epilogue.offset, epilogue.count,
                    channels, x.shape[2], x.shape[3], m, oh, ow, g.kernel[0], g.kernel[1],
                    g.strides[0], g.strides[1], g.padBegin[0], g.padBegin[1], g.dilations[0], g.dilations[1], group] + quantised
            + [emulateFMA && quantises(c.node) ? 1 : 0]
        let tiles = (oh * ow + 64 * Self.tilePixels - 1) / (64 * Self.tilePixels)
        let groups = switch kernel {
        case .convDepthwise: (tiles, m, n)
        case .convPointwise, .convDense: (tiles, (m + Self.tileChannels - 1) / Self.tileChannels, n)
        default: ((oh * ow + 63) / 64, group * ((m / group + 3) / 4), n)
        }
        dispatches.append(MLDispatch(kernel, node: c.node.name, push: push, groups: groups))
    }

    /// [M][C][KH][KW] weights in conv_tiled.glsl's order: block of `tileChannels` output
    /// channels, input channel, tap, then the block's channels (zeros past `outputs`).
    static func channelBlocks(_ weights: [Float], outputs: Int, perOutput: Int) -> [Float] {
        let block = tileChannels
        let blocks = (outputs + block - 1) / block
        var laid = [Float](repeating: 0, count: blocks * perOutput * block)
        for m in 0..<outputs {
            let (b, j) = m.quotientAndRemainder(dividingBy: block)
            for k in 0..<perOutput { laid[(b * perOutput + k) * block + j] = weights[m * perOutput + k] }
        }
        return laid
    }

    /// Whether `node`'s output is rounded onto a quantisation grid, where an ulp can decide a
    /// tie (elsewhere a float sum rounded twice a tap is close enough, and faster).
    private func quantises(_ node: Node) -> Bool {
        node.epilogue.contains { if case .fakeQuant = $0 { true } else { false } }
    }

    private mutating func convTranspose(_ step: Lowering.Step) throws(MLError) {
        let c = step.context
        let x = try activation(step, 0)
        let w = try c.constant(1)
        guard x.shape.count == 4, w.shape.count == 4 else { throw c.unsupported("only 2-D transposed convolution") }
        let g = try ConvTranspose.geometry(c, input: [x.shape[2], x.shape[3]], kernel: [w.shape[2], w.shape[3]])
        let out = output(step)
        let weights = constants.add(w, name: c.node.inputs[1])
        let bias = try c.optionalConstant(2).map { constants.add($0, name: c.node.inputs[2]) } ?? -1
        let epilogue = constants.add(epilogue: c.node.epilogue)
        let push = [x.offset, out.offset, weights, bias, epilogue.offset, epilogue.count,
                    x.shape[1], x.shape[2], x.shape[3], out.shape[1], out.shape[2], out.shape[3], w.shape[2], w.shape[3],
                    g.strides[0], g.strides[1], g.pads[0], g.pads[1], g.dilations[0], g.dilations[1], c.node.int("group", 1), x.shape[0]]
        dispatches.append(MLDispatch(.convtranspose, node: c.node.name, push: push, count: out.shape.reduce(1, *)))
    }

    private mutating func softmax(_ step: Lowering.Step) throws(MLError) {
        let x = try activation(step, 0)
        let (outer, length, inner) = try Linear.softmaxExtent(step.context)
        let epilogue = constants.add(epilogue: step.node.epilogue)
        let push = [x.offset, output(step).offset, outer * inner, length, max(inner, 1), epilogue.offset, epilogue.count]
        dispatches.append(MLDispatch(.softmax, node: step.node.name, push: push, count: outer * inner))
    }

    // MARK: Element-wise

    private mutating func binary(_ step: Lowering.Step) throws(MLError) {
        let c = step.context
        let a = try c.input(0), b = try c.input(1)
        guard let bc = Broadcast(a.shape, b.shape), bc.shape.count <= 6 else {
            throw c.unsupported("shapes \(a.shape) and \(b.shape) do not broadcast within rank 6")
        }
        let (fa, oa) = try operand(step, 0), (fb, ob) = try operand(step, 1)
        let op = ["Add": 1, "Sub": 2, "Mul": 3, "Div": 4][c.node.op]!
        try elementwise(step, op: op, a: (fa, oa), b: (fb, ob), dims: bc.shape, aStrides: bc.aStrides, bStrides: bc.bStrides,
                        epilogue: c.node.epilogue)
    }

    private mutating func unary(_ step: Lowering.Step) throws(MLError) {
        let x = try activation(step, 0)
        let steps = [try Elementwise.activation(step.context)] + step.node.epilogue
        let strides = Self.rowMajor(x.shape)
        try elementwise(step, op: 0, a: (0, x.offset), b: (0, x.offset), dims: x.shape, aStrides: strides, bStrides: strides, epilogue: steps)
    }

    private mutating func elementwise(_ step: Lowering.Step, op: Int, a: (Int, Int), b: (Int, Int), dims: [Int],
                                      aStrides: [Int], bStrides: [Int], epilogue steps: [Epilogue]) throws(MLError) {
        guard dims.count <= 6 else { throw step.node.unsupported("rank \(dims.count) (the Vulkan backend takes up to 6)") }
        let pad = 6 - dims.count
        let out = output(step)
        let epilogue = constants.add(epilogue: steps)
        let total = dims.reduce(1, *)
        let push = [a.1, b.1, out.offset, epilogue.offset, epilogue.count, op, total, a.0, b.0]
            + [Int](repeating: 1, count: pad) + dims
            + [Int](repeating: 0, count: pad) + aStrides
            + [Int](repeating: 0, count: pad) + bStrides
        dispatches.append(MLDispatch(.binary, node: step.node.name, push: push, count: total))
    }

    static func rowMajor(_ shape: [Int]) -> [Int] {
        var strides = [Int](repeating: 1, count: shape.count)
        var s = 1
        for i in stride(from: shape.count - 1, through: 0, by: -1) { strides[i] = s; s *= shape[i] }
        return strides
    }

    // MARK: Per-channel steps

    private mutating func batchNorm(_ step: Lowering.Step) throws(MLError) {
        let x = try activation(step, 0)
        let (a, b) = try Linear.batchNormAffine(step.context)
        guard x.shape.count >= 2, x.shape[1] == a.count else { throw step.node.invalid("input \(x.shape) does not have \(a.count) channels") }
        channel(step, x: x, a: a, b: b, inner: x.shape[2...].reduce(1, *), mode: 0, range: 0...0)
    }

    private mutating func quantization(_ step: Lowering.Step) throws(MLError) {
        let x = try activation(step, 0)
        let p = try Quantization.Parameters(step.context, shape: x.shape)
        if step.node.op == "DequantizeLinear" {
            channel(step, x: x, a: p.scales, b: p.zeroPoints, inner: p.inner, mode: 2, range: 0...0)
        } else {
            guard let range = output(step).type.range else { throw step.node.unsupported("quantising to \(output(step).type)") }
            channel(step, x: x, a: p.scales, b: p.zeroPoints, inner: p.inner, mode: 1, range: range)
        }
    }

    private mutating func channel(_ step: Lowering.Step, x: Lowering.Activation, a: [Float], b: [Float], inner: Int, mode: Int,
                                  range: ClosedRange<Float>) {
        let out = output(step)
        let ta = constants.add(a), tb = constants.add(b)
        let epilogue = constants.add(epilogue: step.node.epilogue)
        let total = x.shape.reduce(1, *)
        let push = [x.offset, out.offset, ta, tb, total, max(inner, 1), max(a.count, 1), mode, bits(range.lowerBound), bits(range.upperBound),
                    epilogue.offset, epilogue.count]
        dispatches.append(MLDispatch(.channel, node: step.node.name, push: push, count: total))
    }

    // MARK: Pooling, resizing, matrices

    private mutating func pool(_ step: Lowering.Step) throws(MLError) {
        let c = step.context
        let x = try activation(step, 0)
        guard x.shape.count == 4 else { throw c.unsupported("only 4-D (NCHW) input") }
        let out = output(step)
        let (h, w) = (x.shape[2], x.shape[3])
        let global = c.node.op.hasPrefix("Global")
        let isMax = c.node.op.hasSuffix("MaxPool")
        var window = (kernel: [h, w], strides: [1, 1], dilations: [1, 1], begin: [0, 0], end: [0, 0])
        if !global {
            guard let kernel = c.node.ints("kernel_shape") else { throw c.invalid("kernel_shape is required") }
            let g = try ConvGeometry(c, input: [h, w], kernel: kernel)
            window = (g.kernel, g.strides, g.dilations, g.padBegin, g.padEnd)
        }
        let epilogue = constants.add(epilogue: c.node.epilogue)
        let planes = x.shape[0] * x.shape[1]
        let push = [x.offset, out.offset, planes, h, w, out.shape[2], out.shape[3], window.kernel[0], window.kernel[1],
                    window.strides[0], window.strides[1], window.begin[0], window.begin[1], window.dilations[0], window.dilations[1],
                    window.end[0], window.end[1], isMax ? 1 : 0, c.node.int("count_include_pad", 0) != 0 ? 1 : 0,
                    epilogue.offset, epilogue.count]
        dispatches.append(MLDispatch(.pool, node: c.node.name, push: push, count: planes * out.shape[2] * out.shape[3]))
    }

    private mutating func bilinear(_ step: Lowering.Step, outShape: [Int], rows: Resize.Taps, columns: Resize.Taps) throws(MLError) {
        let x = try activation(step, 0)
        let rank = x.shape.count
        let (h, w) = (x.shape[rank - 2], x.shape[rank - 1])
        let (oh, ow) = (outShape[rank - 2], outShape[rank - 1])
        let planes = x.shape.reduce(1, *) / max(h * w, 1)
        // One contiguous table: row lo, hi (ints), t, then column lo, hi, t (see bilinear.comp).
        var packed: [Float] = (rows.lo + rows.hi).map { Float(bitPattern: UInt32(bitPattern: Int32($0))) } + rows.t
        packed += (columns.lo + columns.hi).map { Float(bitPattern: UInt32(bitPattern: Int32($0))) } + columns.t
        let table = constants.add(packed)
        let epilogue = constants.add(epilogue: step.node.epilogue)
        let out = output(step)
        let push = [x.offset, out.offset, planes, h, w, oh, ow, table, epilogue.offset, epilogue.count]
        dispatches.append(MLDispatch(.bilinear, node: step.node.name, push: push, count: planes * oh * ow))
    }

    private mutating func matmul(_ step: Lowering.Step) throws(MLError) {
        let c = step.context
        var a = try c.input(0).shape, b = try c.input(1).shape
        let out = output(step)
        let (fa, oa) = try operand(step, 0), (fb, ob) = try operand(step, 1)
        let epilogue = constants.add(epilogue: c.node.epilogue)
        if c.node.op == "Gemm" {
            guard a.count == 2, b.count == 2 else { throw c.invalid("A and B must be 2-D, got \(a) and \(b)") }
            let transA = c.node.int("transA", 0) != 0, transB = c.node.int("transB", 0) != 0
            let (m, k) = transA ? (a[1], a[0]) : (a[0], a[1])
            let n = transB ? b[0] : b[1]
            let (ai, ak) = transA ? (1, a[1]) : (a[1], 1)
            let (bk, bj) = transB ? (1, b[1]) : (b[1], 1)
            var cOperand = (flag: 0, offset: -1), cStrides = (0, 0)
            let beta = c.node.float("beta", 1)
            if let cShape = c.optional(2)?.shape, beta != 0 {
                let padded = [Int](repeating: 1, count: max(0, 2 - cShape.count)) + cShape.suffix(2)
                cOperand = try operand(step, 2)
                cStrides = (padded[0] == 1 ? 0 : padded[1], padded[1] == 1 ? 0 : 1)
            }
            let pairs = constants.add(ints: [0, 0])
            let push = [oa, ob, out.offset, m, n, k, ai, ak, bk, bj, pairs, fa, fb, cOperand.offset, cOperand.flag,
                        cStrides.0, cStrides.1, bits(c.node.float("alpha", 1)), bits(beta), epilogue.offset, epilogue.count]
            dispatches.append(MLDispatch(.matmul, node: c.node.name, push: push, groups: ((n + 7) / 8, (m + 7) / 8, 1)))
            return
        }
        if a.count == 1 { a = [1] + a }
        if b.count == 1 { b = b + [1] }
        guard a.count >= 2, b.count >= 2, a[a.count - 1] == b[b.count - 2],
              let batch = Broadcast(Array(a.dropLast(2)), Array(b.dropLast(2))) else {
            throw c.invalid("shapes \(a) and \(b) cannot be multiplied")
        }
        let (m, k, n) = (a[a.count - 2], a[a.count - 1], b[b.count - 1])
        var pairs: [Int] = []
        batch.forEachRun { _, ai, bi, run, sa, sb in for i in 0..<run { pairs += [(ai + i * sa) * m * k, (bi + i * sb) * k * n] } }
        let table = constants.add(ints: pairs)
        let push = [oa, ob, out.offset, m, n, k, k, 1, n, 1, table, fa, fb, -1, 0, 0, 0, bits(1), bits(0), epilogue.offset, epilogue.count]
        dispatches.append(MLDispatch(.matmul, node: c.node.name, push: push, groups: ((n + 7) / 8, (m + 7) / 8, pairs.count / 2)))
    }

    // MARK: Data movement

    /// Values below this are exact in a Float, so an index survives the CPU kernel unrounded.
    private static let exactIndices = 1 << 24

    private mutating func gather(_ step: Lowering.Step) throws(MLError) {
        let node = step.node
        // Probe inputs: activation k holds base_k + index + shift; constants stay (shapes, pads).
        var bases: [Int] = []
        var total = 0
        for ref in step.inputs {
            bases.append(total)
            if case let .activation(id)? = ref { total += lowering.activations[id].shape.reduce(1, *) }
        }
        guard total + 2 < Self.exactIndices else {
            throw node.unsupported("the Vulkan backend maps data movement of at most \(Self.exactIndices) values")
        }
        func probe(_ shift: Int) throws(MLError) -> [Float] {
            var tensors: [Tensor?] = []
            for (k, ref) in step.inputs.enumerated() {
                guard case let .activation(id)? = ref else { tensors.append(nil); continue }
                let a = lowering.activations[id]
                let count = a.shape.reduce(1, *)
                tensors.append(try Tensor(shape: a.shape, values: (0..<count).map { Float(bases[k] + $0 + shift) }))
            }
            return step.evaluate(tensors)[0].values
        }
        let first = try probe(1), second = try probe(2)
        var fill: Float?
        var maps: [[Int]] = step.inputs.map { _ in [Int](repeating: -1, count: first.count) }
        for i in first.indices {
            if first[i] == second[i] {
                // Not from an input: the op's constant (Pad's value).
                if let fill, fill != first[i] { throw node.unsupported("constant values that vary along the output") }
                fill = first[i]
                continue
            }
            let global = Int(first[i]) - 1
            guard let k = bases.indices.last(where: { bases[$0] <= global && step.inputs[$0].isActivation }) else {
                throw node.invalid("the index map points outside the inputs")
            }
            maps[k][i] = global - bases[k]
        }
        let out = output(step)
        let epilogue = constants.add(epilogue: node.epilogue)
        var wroteFill = false
        for (k, ref) in step.inputs.enumerated() {
            guard case let .activation(id)? = ref else { continue }
            let map = constants.add(ints: maps[k])
            let push = [lowering.activations[id].offset, out.offset, map, first.count, bits(fill ?? 0), wroteFill ? 1 : 0,
                        epilogue.offset, epilogue.count, 0]
            wroteFill = true
            dispatches.append(MLDispatch(.gather, node: node.name, push: push, count: first.count))
        }
    }
}

extension Optional where Wrapped == Lowering.Value {
    var isActivation: Bool {
        if case .activation? = self { return true }
        return false
    }
}

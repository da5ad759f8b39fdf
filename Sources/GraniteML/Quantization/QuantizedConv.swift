/// The integer source of a constant that a DequantizeLinear turned into floats at load:
/// ONNX Runtime runs such weights and biases as integers, and so can GraniteML.
struct QuantizedConstant: Sendable {
    let shape: [Int]
    let type: Tensor.ElementType
    let integers: [Int64]
    let scales: [Float]
    let zeroPoints: [Int64]
    /// The quantisation axis (normalised); meaningless with one scale.
    let axis: Int
}

/// What a Conv needs to run on int8 kernels, found at load when its input is the output of a
/// fake-quantisation step (a Q → DQ pair fused onto the producer) and its weights (and bias,
/// if any) are dequantised integer constants — the QDQ pattern ONNX Runtime turns into
/// QLinearConv.
///
/// ```
///  producer ─fakeQuant(sx, zx)─► Conv(W = DQ(int8, sw[m]), B = DQ(int32, sx·sw[m])) ─relu/clip─► fakeQuant(sy, zy)
///  becomes   u8 = q − lo ─► Σ u8·s8 in int32 ─► rint(clamp((acc + bias)·sx·sw[m]/sy)) · sy
/// ```
struct QuantizedConv: Sendable {
    /// Scale of the input's quantisation grid.
    let inputScale: Float
    /// Added to a centred input value (q − zero point) to bring it into 0...255.
    let inputOffset: Int
    /// Centred weights (q − zero point), in the weight tensor's layout.
    let weights: [Int32]
    /// One weight scale per output channel.
    let weightScales: [Float]
    /// The int32 bias, when the bias is a dequantised int32 with zero point 0; nil otherwise
    /// (no bias, or a float one, which then forces float output).
    let bias: [Int32]?

    /// Marks every Conv of `graph` that fits the pattern (and that ONNX Runtime would fuse).
    static func mark(_ graph: Graph) -> Graph {
        var g = graph
        var producer: [String: Int] = [:]
        for (i, node) in g.nodes.enumerated() { for o in node.outputs { producer[o] = i } }
        let uses = g.useCounts()
        for (j, conv) in g.nodes.enumerated() where conv.op == "Conv" && conv.inputs.count >= 2 {
            guard let p = producer[conv.inputs[0]], let (scale, zero, lo, hi) = g.nodes[p].epilogue.last?.grid,
                  hi - lo <= 255, let w = g.quantized[conv.inputs[1]], w.shape.count == 4, w.shape[0] > 0 else { continue }
            let m = w.shape[0]
            guard w.scales.count == 1 || (w.scales.count == m && w.axis == 0) else { continue }
            let per = w.integers.count / m
            var weights = [Int32](repeating: 0, count: w.integers.count)
            for i in weights.indices {
                let zp = w.zeroPoints[w.scales.count == 1 ? 0 : i / per]
                weights[i] = Int32(clamping: w.integers[i] - zp)
            }
            var bias: [Int32]?
            if conv.inputs.count > 2, !conv.inputs[2].isEmpty, let b = g.quantized[conv.inputs[2]],
               b.type == .int32, b.integers.count == m, b.zeroPoints.allSatisfy({ $0 == 0 }) {
                bias = b.integers.map { Int32(clamping: $0) }
            }
            // ONNX Runtime fuses DQ → Conv → Q into QLinearConv only when the quantised output has
            // one reader; otherwise it runs a float Conv (and the float kernels emulate that).
            // Following the same choice makes the outputs agree exactly, not just within a step.
            if uses[conv.outputs[0]] != 1 { continue }
            g.nodes[j].quantized = QuantizedConv(
                inputScale: scale, inputOffset: Int(zero - lo), weights: weights,
                weightScales: w.scales.count == 1 ? [Float](repeating: w.scales[0], count: m) : w.scales, bias: bias)
        }
        return g
    }

    /// Records the integer source of a DequantizeLinear whose inputs are all constant.
    static func record(_ node: Node, _ inputs: [Tensor?], into g: inout Graph) {
        guard node.op == "DequantizeLinear", node.outputs.count == 1, inputs.count >= 2,
              let x = inputs[0], x.elementType.isInteger, let ints = x.integers, let scale = inputs[1] else { return }
        let zero = inputs.count > 2 ? inputs[2] : nil
        let zeroPoints = zero?.integers ?? [Int64](repeating: 0, count: scale.count)
        guard zeroPoints.count == scale.count else { return }
        let rank = x.shape.count
        var axis = node.int("axis", 1)
        if axis < 0 { axis += rank }
        g.quantized[node.outputs[0]] = QuantizedConstant(
            shape: x.shape, type: x.elementType, integers: ints, scales: scale.values, zeroPoints: zeroPoints, axis: axis)
    }
}

/// The operator table: which ops GraniteML runs, and the builder for each.
enum Ops {
    /// Default-domain ops with a kernel (Constant is read by the loader).
    static let supported: Set<String> = [
        "Conv", "ConvTranspose", "Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid",
        "Add", "Sub", "Mul", "Div", "BatchNormalization", "GlobalAveragePool", "GlobalMaxPool", "MaxPool",
        "AveragePool", "Resize", "Upsample", "Pad", "Concat", "Transpose", "Reshape", "Flatten", "Slice",
        "Softmax", "MatMul", "Gemm", "QuantizeLinear", "DequantizeLinear", "Constant",
        "Identity", "Cast", "Shape", "Gather", "Squeeze", "Unsqueeze",
        "ReduceMean", "HardSwish",  // HardSwish rewritten as Add, Clip, Mul and Div by the optimizer (Optimizer.expandHardSwish)
    ]

    /// Ops whose builders apply the node's epilogue themselves (per channel, in cache).
    static let ownEpilogue: Set<String> = ["Conv", "ConvTranspose"]

    /// Builds the kernel (or the folded constants) for one node.
    static func build(_ c: BuildContext) throws(MLError) -> Prepared {
        guard c.node.domain.isEmpty || c.node.domain == "ai.onnx" else {
            throw c.unsupported("domain '\(c.node.domain)' is not supported")
        }
        if let input = c.inputs.compactMap({ $0 }).first(where: { $0.shape.count > RowIndex.maxRank }) {
            throw c.unsupported("tensors of rank \(input.shape.count) (at most \(RowIndex.maxRank))")
        }
        switch c.node.op {
        case "Conv": return try Conv.build(c)
        case "ConvTranspose": return try ConvTranspose.build(c)
        case "Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid": return try Elementwise.unary(c)
        case "Add", "Sub", "Mul", "Div": return try Elementwise.binary(c)
        case "BatchNormalization": return try Linear.batchNorm(c)
        case "GlobalAveragePool", "GlobalMaxPool", "MaxPool", "AveragePool": return try Pool.build(c)
        case "Resize", "Upsample": return try Resize.build(c)
        case "Pad": return try Pad.build(c)
        case "Concat": return try Indexing.concat(c)
        case "Slice": return try Indexing.slice(c)
        case "Gather": return try Indexing.gatherOp(c)
        case "Transpose": return try Transpose.build(c)
        case "Reshape", "Flatten", "Identity", "Cast", "Shape", "Squeeze", "Unsqueeze": return try ShapeOps.build(c)
        case "ReduceMean": return try Reduce.build(c)
        case "Softmax": return try Linear.softmax(c)
        case "MatMul": return try Linear.matmul(c)
        case "Gemm": return try Linear.gemm(c)
        case "QuantizeLinear": return try Quantization.quantize(c)
        case "DequantizeLinear": return try Quantization.dequantize(c)
        default: throw c.unsupported("no kernel for this op")
        }
    }

    /// Wraps `run` so that it applies the node's epilogue to output 0, unless the op does so itself.
    static func withEpilogue(_ node: Node, _ run: @escaping Kernel, outputs: [OutputSpec]) -> Kernel {
        guard !node.epilogue.isEmpty, !ownEpilogue.contains(node.op), let first = outputs.first else { return run }
        let epilogue = KernelEpilogue(node.epilogue)
        let count = first.shape.reduce(1, *)
        return { io in
            run(io)
            epilogue.apply(io.outputs[0], count)
        }
    }
}

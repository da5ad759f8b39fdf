/// ReduceMean over any axes (opset < 18: the `axes` attribute; 18 on: a constant second input),
/// `keepdims` and `noop_with_empty_axes` as ONNX says. Summed in Float, as ONNX Runtime's CPU
/// kernel does.
enum Reduce {
    static func build(_ c: BuildContext) throws(MLError) -> Prepared {
        let x = try c.input(0)
        let rank = x.shape.count
        let given = try c.opset >= 18 ? c.optionalConstant(1)?.intValues : c.node.ints("axes")
        let keep = c.node.int("keepdims", 1) != 0
        var axes: [Int]
        if let given, !given.isEmpty {
            axes = given.map { $0 < 0 ? $0 + rank : $0 }
            guard axes.allSatisfy({ (0..<rank).contains($0) }), Set(axes).count == axes.count else {
                throw c.invalid("axes \(given) out of range for shape \(x.shape)")
            }
        } else if c.node.int("noop_with_empty_axes", 0) != 0 {
            return .single(x.shape) { io in io.outputs[0].update(from: io.input(0), count: x.count) }
        } else {
            axes = Array(0..<rank)
        }
        let reduced = Set(axes)
        let kept = x.shape.enumerated().map { reduced.contains($0.offset) ? 1 : $0.element }
        let outShape = keep ? kept : x.shape.enumerated().filter { !reduced.contains($0.offset) }.map(\.element)
        // Each input element's output offset: the kept coordinates in the kept shape's strides.
        var outStrides = [Int](repeating: 0, count: rank)
        var step = 1
        for a in stride(from: rank - 1, through: 0, by: -1) where !reduced.contains(a) {
            outStrides[a] = step
            step *= x.shape[a]
        }
        let shape = x.shape, n = x.count, outCount = kept.reduce(1, *)
        let divisor = Float(axes.reduce(1) { $0 * x.shape[$1] })
        return .single(outShape) { io in
            let s = io.input(0), d = io.outputs[0]
            d.initialize(repeating: 0, count: outCount)
            var coords = [Int](repeating: 0, count: rank)
            var o = 0
            for i in 0..<n {
                d[o] += s[i]
                // Next coordinate, carrying from the last axis.
                var a = rank - 1
                while a >= 0 {
                    coords[a] += 1
                    o += outStrides[a]
                    if coords[a] < shape[a] { break }
                    o -= outStrides[a] * coords[a]
                    coords[a] = 0
                    a -= 1
                }
            }
            if divisor > 0 { for j in 0..<outCount { d[j] /= divisor } }
        }
    }
}

import Foundation

/// MatMul, Gemm, Softmax and stand-alone BatchNormalization.
package enum Linear {
    static func matmul(_ c: BuildContext) throws(MLError) -> Prepared {
        var a = try c.input(0).shape, b = try c.input(1).shape
        let aVector = a.count == 1, bVector = b.count == 1
        if aVector { a = [1] + a }
        if bVector { b = b + [1] }
        guard a.count >= 2, b.count >= 2, a[a.count - 1] == b[b.count - 2],
              let batch = Broadcast(Array(a.dropLast(2)), Array(b.dropLast(2))) else {
            throw c.invalid("shapes \(try c.input(0).shape) and \(try c.input(1).shape) cannot be multiplied")
        }
        let (m, k, n) = (a[a.count - 2], a[a.count - 1], b[b.count - 1])
        var outShape = batch.shape + [m, n]
        if aVector { outShape.remove(at: outShape.count - 2) }
        if bVector { outShape.removeLast() }
        var pairs: [(Int, Int)] = []
        batch.forEachRun { _, ai, bi, run, sa, sb in for i in 0..<run { pairs.append(((ai + i * sa) * m * k, (bi + i * sb) * k * n)) } }
        return .single(outShape) { io in
            let x = io.input(0), y = io.input(1), out = io.outputs[0]
            // GraniteML's GEMM: the same bits at every instruction-set level (``Gemm``).
            for (i, (ao, bo)) in pairs.enumerated() {
                Gemm.multiply(m: m, n: n, k: k, x + ao, lda: k, y + bo, ldb: n, out + i * m * n, ldc: n, threads: io.threads)
            }
        }
    }

    static func gemm(_ c: BuildContext) throws(MLError) -> Prepared {
        let a = try c.input(0).shape, b = try c.input(1).shape
        guard a.count == 2, b.count == 2 else { throw c.invalid("A and B must be 2-D, got \(a) and \(b)") }
        let transA = c.node.int("transA", 0) != 0, transB = c.node.int("transB", 0) != 0
        let alpha = c.node.float("alpha", 1), beta = c.node.float("beta", 1)
        let (m, k) = transA ? (a[1], a[0]) : (a[0], a[1])
        let (k2, n) = transB ? (b[1], b[0]) : (b[0], b[1])
        guard k == k2 else { throw c.invalid("inner dimensions \(k) and \(k2) differ") }
        let cShape = c.optional(2)?.shape
        if let cShape, Broadcast(cShape, [m, n])?.shape != [m, n] { throw c.invalid("C \(cShape) does not broadcast to [\(m), \(n)]") }
        let cBroadcast = cShape.flatMap { Broadcast($0, [m, n]) }
        // GraniteML's GEMM (the same bits at every instruction-set level, ``Gemm``) on A and B
        // made row-major in scratch where transposed; then alpha and beta·C, element by element.
        let scratch = (transA ? m * k : 0) + (transB ? k * n : 0)
        return .single([m, n], scratch: scratch) { io in
            let out = io.outputs[0]
            var a = io.input(0), b = io.input(1)
            if transA {
                let t = io.scratch
                for i in 0..<m { for j in 0..<k { t[i * k + j] = a[j * m + i] } }
                a = UnsafePointer(t)
            }
            if transB {
                let t = io.scratch + (transA ? m * k : 0)
                for i in 0..<k { for j in 0..<n { t[i * n + j] = b[j * k + i] } }
                b = UnsafePointer(t)
            }
            Gemm.multiply(m: m, n: n, k: k, a, lda: k, b, ldb: n, out, ldc: n, threads: io.threads)
            if alpha != 1 { for i in 0..<(m * n) { out[i] = alpha * out[i] } }
            if let cb = cBroadcast, let cp = io.inputs[2], beta != 0 {
                cb.forEachRun { o, ai, _, run, sa, _ in
                    for i in 0..<run { out[o + i] = out[o + i] + beta * cp[ai + i * sa] }
                }
            }
        }
    }

    /// Softmax's rows: `outer` × `inner` of them, `length` values each, `inner` apart.
    package static func softmaxExtent(_ c: BuildContext) throws(MLError) -> (outer: Int, length: Int, inner: Int) {
        let x = try c.input(0)
        let rank = x.shape.count
        let axis = ShapeOps.normalise(c.node.int("axis", c.opset >= 13 ? -1 : 1), rank, clampTo: false)
        guard rank >= 1 else { throw c.invalid("input is a scalar; Softmax needs a tensor of rank 1 or more") }
        guard axis >= 0, axis < rank else { throw c.invalid("axis out of range for \(x.shape)") }
        // Before opset 13 the input is coerced to 2-D at `axis`; from 13 on it is one axis.
        return c.opset >= 13
            ? (x.shape[..<axis].reduce(1, *), x.shape[axis], x.shape[(axis + 1)...].reduce(1, *))
            : (x.shape[..<axis].reduce(1, *), x.shape[axis...].reduce(1, *), 1)
    }

    static func softmax(_ c: BuildContext) throws(MLError) -> Prepared {
        let x = try c.input(0)
        let (outer, length, inner) = try softmaxExtent(c)
        return .single(x.shape) { io in
            let s = io.input(0), d = io.outputs[0]
            for o in 0..<outer {
                for i in 0..<inner {
                    let base = o * length * inner + i
                    var peak = -Float.infinity
                    for j in 0..<length { peak = max(peak, s[base + j * inner]) }
                    var sum: Float = 0
                    for j in 0..<length { let e = expf(s[base + j * inner] - peak); d[base + j * inner] = e; sum += e }
                    for j in 0..<length { d[base + j * inner] /= sum }
                }
            }
        }
    }

    /// The per-channel affine form `y = x * a + b` of an inference BatchNormalization.
    package static func batchNormAffine(_ c: BuildContext) throws(MLError) -> (a: [Float], b: [Float]) {
        let scale = try c.constant(1).values, bias = try c.constant(2).values
        let mean = try c.constant(3).values, variance = try c.constant(4).values
        let channels = scale.count
        guard bias.count == channels, mean.count == channels, variance.count == channels else {
            throw c.invalid("scale, B, mean and var must have one value per channel")
        }
        if c.node.int("training_mode", 0) != 0 { throw c.unsupported("training_mode") }
        let epsilon = c.node.float("epsilon", 1e-5)
        let a = (0..<channels).map { scale[$0] / (variance[$0] + epsilon).squareRoot() }
        let b = (0..<channels).map { bias[$0] - mean[$0] * a[$0] }
        return (a, b)
    }

    static func batchNorm(_ c: BuildContext) throws(MLError) -> Prepared {
        let x = try c.input(0)
        let (a, b) = try batchNormAffine(c)
        guard x.shape.count >= 2, x.shape[1] == a.count else { throw c.invalid("input \(x.shape) does not have \(a.count) channels") }
        let plane = x.shape[2...].reduce(1, *)
        let planes = x.shape[0] * x.shape[1]
        return .single(x.shape) { io in
            let s = io.input(0), d = io.outputs[0]
            for p in 0..<planes {
                let ch = p % a.count
                for i in 0..<plane { d[p * plane + i] = s[p * plane + i] * a[ch] + b[ch] }
            }
        }
    }
}

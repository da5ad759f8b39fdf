/// Transpose with any permutation, copying along the output's last axis.
enum Transpose {
    static func build(_ c: BuildContext) throws(MLError) -> Prepared {
        let x = try c.input(0)
        let rank = x.shape.count
        let perm = c.node.ints("perm") ?? Array((0..<rank).reversed())
        guard perm.count == rank, Set(perm) == Set(0..<rank) else { throw c.invalid("perm \(perm) does not fit rank \(rank)") }
        let outShape = perm.map { x.shape[$0] }
        var inStrides = [Int](repeating: 1, count: rank)
        if rank > 1 { for a in stride(from: rank - 2, through: 0, by: -1) { inStrides[a] = inStrides[a + 1] * x.shape[a + 1] } }
        let strides = perm.map { inStrides[$0] }
        let total = x.count
        guard rank > 0, total > 0 else { return .single(outShape, x.type) { io in if total > 0 { io.outputs[0][0] = io.input(0)[0] } } }
        let inner = outShape[rank - 1], innerStride = strides[rank - 1]
        let outer = total / inner
        return .single(outShape, x.type) { io in
            let src = io.input(0), out = io.outputs[0]
            var index = RowIndex()
            var base = 0
            for row in 0..<outer {
                let d = out + row * inner
                for i in 0..<inner { d[i] = src[base + i * innerStride] }
                var a = rank - 2
                while a >= 0 {
                    index[a] += 1
                    base += strides[a]
                    if index[a] < outShape[a] { break }
                    base -= strides[a] * outShape[a]
                    index[a] = 0
                    a -= 1
                }
            }
        }
    }
}

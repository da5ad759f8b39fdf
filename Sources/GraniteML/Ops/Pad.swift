/// Pad in constant, edge and reflect modes, any rank (negative pads crop).
enum Pad {
    static func build(_ c: BuildContext) throws(MLError) -> Prepared {
        let x = try c.input(0)
        let rank = x.shape.count
        let pads: [Int]
        var value: Float = 0
        if c.opset < 11 {
            guard let p = c.node.ints("pads") ?? c.node.ints("paddings") else { throw c.invalid("pads are required") }
            pads = p
            value = c.node.float("value", 0)
        } else {
            let raw = try c.constant(1).intValues
            if let v = try c.optionalConstant(2), v.count > 0 { value = v.values[0] }
            if let axes = try c.optionalConstant(3)?.intValues.map({ ShapeOps.normalise($0, rank, clampTo: false) }) {
                var full = [Int](repeating: 0, count: 2 * rank)
                for (k, a) in axes.enumerated() where a >= 0 && a < rank {
                    full[a] = raw[k]
                    full[a + rank] = raw[k + axes.count]
                }
                pads = full
            } else {
                pads = raw
            }
        }
        guard pads.count == 2 * rank else { throw c.invalid("pads \(pads) do not fit rank \(rank)") }
        let mode = c.node.string("mode", "constant")
        guard ["constant", "edge", "reflect"].contains(mode) else { throw c.unsupported("mode \(mode)") }
        var outShape: [Int] = []
        for a in 0..<rank {
            let (grown, o1) = x.shape[a].addingReportingOverflow(pads[a])
            let (extent, o2) = grown.addingReportingOverflow(pads[a + rank])
            guard !o1, !o2 else { throw c.invalid("pads \(pads) overflow the shape \(x.shape)") }
            outShape.append(extent)
        }
        guard outShape.allSatisfy({ $0 >= 0 }) else { throw c.invalid("pads \(pads) crop \(x.shape) below zero") }
        try c.outputShape(outShape)
        if mode == "reflect", (0..<rank).contains(where: { (pads[$0] > 0 || pads[$0 + rank] > 0) && x.shape[$0] < 2 }) {
            throw c.invalid("reflect padding needs at least 2 values on each padded axis")
        }
        // Constant padding: trailing axes without pads merge into the one before (NHWC images
        // padded in H and W become rows of W·C values copied at memory speed).
        var xs = x.shape, ps = pads, r = rank
        while mode == "constant", r > 1, ps[r - 1] == 0, ps[2 * r - 1] == 0 {
            let k = xs.removeLast()
            var begin = Array(ps[0..<r].dropLast()), end = Array(ps[r...].dropLast())
            r -= 1
            xs[r - 1] *= k
            begin[r - 1] *= k
            end[r - 1] *= k
            ps = begin + end
        }
        let os = (0..<r).map { xs[$0] + ps[$0] + ps[$0 + r] }
        // Per axis, the input index each output index reads, or -1 for the constant.
        let maps: [[Int]] = (0..<r).map { a in
            let n = xs[a]
            return (0..<os[a]).map { o in
                var i = o - ps[a]
                if i >= 0 && i < n { return i }
                switch mode {
                case "edge": return min(max(i, 0), n - 1)
                case "reflect":
                    let period = 2 * (n - 1)
                    i = ((i % period) + period) % period
                    return i < n ? i : period - i
                default: return -1
                }
            }
        }
        var strides = [Int](repeating: 1, count: r)
        if r > 1 { for a in stride(from: r - 2, through: 0, by: -1) { strides[a] = strides[a + 1] * xs[a + 1] } }
        let total = outShape.reduce(1, *)
        return .single(outShape, x.type) { io in
            guard total > 0, r > 0 else { return }
            let src = io.input(0), out = io.outputs[0]
            let inner = os[r - 1], last = maps[r - 1]
            // The run of the last axis that maps straight onto the input.
            let lo = max(ps[r - 1], 0), hi = min(inner, ps[r - 1] + xs[r - 1])
            var index = RowIndex()
            for row in 0..<(total / inner) {
                let d = out + row * inner
                var base = 0
                var outside = false
                for a in 0..<(r - 1) {
                    let m = maps[a][index[a]]
                    if m < 0 { outside = true; break }
                    base += m * strides[a]
                }
                if outside {
                    d.update(repeating: value, count: inner)
                } else if mode == "constant" {
                    if lo > 0 { d.update(repeating: value, count: min(lo, inner)) }
                    if hi > lo { (d + lo).update(from: src + base + (lo - ps[r - 1]), count: hi - lo) }
                    if hi < inner { (d + max(hi, 0)).update(repeating: value, count: inner - max(hi, 0)) }
                } else {
                    for i in 0..<inner { d[i] = src[base + last[i]] }
                }
                advanceRow(&index, os)
            }
        }
    }
}

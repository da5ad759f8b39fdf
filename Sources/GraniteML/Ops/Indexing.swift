/// Concat, Slice and Gather.
enum Indexing {
    static func concat(_ c: BuildContext) throws(MLError) -> Prepared {
        let parts = try c.inputs.indices.map { i throws(MLError) in try c.input(i) }
        guard let first = parts.first else { throw c.invalid("needs at least one input") }
        let rank = first.shape.count
        guard let rawAxis = c.node.attributes["axis"].flatMap({ if case let .int(v) = $0 { v } else { nil } }) else {
            throw c.invalid("axis is required")
        }
        let axis = ShapeOps.normalise(rawAxis, rank, clampTo: false)
        guard axis >= 0, axis < rank else { throw c.invalid("axis \(rawAxis) out of range for rank \(rank)") }
        for p in parts where p.shape.count != rank || (0..<rank).contains(where: { $0 != axis && p.shape[$0] != first.shape[$0] }) {
            throw c.invalid("input shapes \(parts.map(\.shape)) do not agree off axis \(axis)")
        }
        var outShape = first.shape
        outShape[axis] = parts.map { $0.shape[axis] }.reduce(0, +)
        let outer = first.shape[..<axis].reduce(1, *)
        let chunks = parts.map { $0.shape[axis...].reduce(1, *) }
        let row = chunks.reduce(0, +)
        return .single(outShape, first.type) { io in
            let out = io.outputs[0]
            var offset = 0
            for (k, chunk) in chunks.enumerated() {
                let src = io.input(k)
                for o in 0..<outer where chunk > 0 { (out + o * row + offset).update(from: src + o * chunk, count: chunk) }
                offset += chunk
            }
        }
    }

    static func slice(_ c: BuildContext) throws(MLError) -> Prepared {
        let x = try c.input(0)
        let rank = x.shape.count
        let starts: [Int], ends: [Int], axesIn: [Int]?, stepsIn: [Int]?
        if c.opset < 10 {
            guard let s = c.node.ints("starts"), let e = c.node.ints("ends") else { throw c.invalid("starts and ends are required") }
            (starts, ends, axesIn, stepsIn) = (s, e, c.node.ints("axes"), nil)
        } else {
            (starts, ends) = (try c.constant(1).intValues, try c.constant(2).intValues)
            (axesIn, stepsIn) = (try c.optionalConstant(3)?.intValues, try c.optionalConstant(4)?.intValues)
        }
        let axes = (axesIn ?? Array(0..<starts.count)).map { ShapeOps.normalise($0, rank, clampTo: false) }
        let steps = stepsIn ?? [Int](repeating: 1, count: starts.count)
        guard ends.count == starts.count, axes.count == starts.count, steps.count == starts.count,
              axes.allSatisfy({ $0 >= 0 && $0 < rank }), Set(axes).count == axes.count, !steps.contains(0) else {
            throw c.invalid("starts \(starts), ends \(ends), axes \(axesIn ?? []), steps \(steps) do not fit shape \(x.shape)")
        }
        var begin = [Int](repeating: 0, count: rank)
        var step = [Int](repeating: 1, count: rank)
        var outShape = x.shape
        for (k, a) in axes.enumerated() {
            let dim = x.shape[a]
            let s = steps[k]
            var b = starts[k] < 0 ? starts[k] + dim : starts[k]
            var e = ends[k] < 0 ? ends[k] + dim : ends[k]
            if s > 0 {
                b = min(max(b, 0), dim); e = min(max(e, 0), dim)
                outShape[a] = e > b ? (e - b + s - 1) / s : 0
            } else {
                b = min(max(b, -1), dim - 1); e = min(max(e, -1), dim - 1)
                outShape[a] = b > e ? (b - e - s - 1) / -s : 0
            }
            begin[a] = b
            step[a] = s
        }
        return gather(x, outShape: outShape) { a, i in begin[a] + i * step[a] }
    }

    static func gatherOp(_ c: BuildContext) throws(MLError) -> Prepared {
        let x = try c.input(0)
        let indices = try c.constant(1)
        let rank = x.shape.count
        let axis = ShapeOps.normalise(c.node.int("axis", 0), rank, clampTo: false)
        guard axis >= 0, axis < rank else { throw c.invalid("axis out of range") }
        let dim = x.shape[axis]
        let idx = indices.intValues.map { $0 < 0 ? $0 + dim : $0 }
        guard idx.allSatisfy({ $0 >= 0 && $0 < dim }) else { throw c.invalid("indices out of range for axis of size \(dim)") }
        // Flatten the indices into the gathered axis, then reshape.
        let outShape = Array(x.shape[..<axis]) + indices.shape + Array(x.shape[(axis + 1)...])
        var flatShape = x.shape
        flatShape[axis] = idx.count
        let inner = gather(x, outShape: flatShape) { a, i in a == axis ? idx[i] : i }
        guard case let .kernel(_, scratch, run) = inner else { return inner }
        return .kernel(outputs: [OutputSpec(shape: outShape, type: x.type)], scratch: scratch, run: run)
    }

    /// Copies `x` into `outShape` where output index i on axis a reads input index map(a, i).
    private static func gather(_ x: OpInput, outShape: [Int], map: (Int, Int) -> Int) -> Prepared {
        let rank = x.shape.count
        var strides = [Int](repeating: 1, count: rank)
        if rank > 1 { for a in stride(from: rank - 2, through: 0, by: -1) { strides[a] = strides[a + 1] * x.shape[a + 1] } }
        let offsets: [[Int]] = (0..<rank).map { a in (0..<outShape[a]).map { map(a, $0) * strides[a] } }
        let total = outShape.reduce(1, *)
        return .single(outShape, x.type) { io in
            guard total > 0 else { return }
            let src = io.input(0), out = io.outputs[0]
            if rank == 0 { out[0] = src[0]; return }
            let inner = outShape[rank - 1], last = offsets[rank - 1]
            var index = RowIndex()
            for row in 0..<(total / inner) {
                var base = 0
                for a in 0..<(rank - 1) { base += offsets[a][index[a]] }
                let d = out + row * inner
                for i in 0..<inner { d[i] = src[base + last[i]] }
                advanceRow(&index, outShape)
            }
        }
    }
}

import CGraniteKernels
import Foundation

/// Resize (opsets 10–19) and Upsample: nearest (all four rounding modes) on any axes, linear
/// on the last two; coordinate modes half_pixel, pytorch_half_pixel, align_corners,
/// asymmetric and tf_half_pixel_for_nn, with ONNX Runtime's clamping.
package enum Resize {
    /// Where each output value reads from: per axis, the input index (nearest), or for the
    /// last two axes the two taps and the weight of the second (linear). Shared by the CPU
    /// kernels below and GPU backends.
    package enum Geometry {
        case nearest(outShape: [Int], maps: [[Int]])
        case linear(outShape: [Int], rows: Taps, columns: Taps)
    }

    /// The taps of a linear resize along one axis: output `o` is `in[lo[o]]·(1 − t[o]) + in[hi[o]]·t[o]`.
    package typealias Taps = (lo: [Int], hi: [Int], t: [Float])

    static func build(_ c: BuildContext) throws(MLError) -> Prepared {
        let x = try c.input(0)
        switch try geometry(c) {
        case let .nearest(outShape, maps): return nearest(x.shape, outShape, maps, type: x.type)
        case let .linear(outShape, rows, columns): return bilinear(x.shape, outShape, rows, columns, type: x.type)
        }
    }

    /// Reads the node's scales or sizes and modes into a ``Geometry``.
    package static func geometry(_ c: BuildContext) throws(MLError) -> Geometry {
        let x = try c.input(0)
        let node = c.node
        let rank = x.shape.count
        let legacy = node.op == "Upsample" || c.opset < 11
        var scales: [Float]?
        var sizes: [Int]?
        if node.op == "Upsample" {
            scales = try c.optionalConstant(1)?.values ?? node.floats("scales")
        } else if c.opset < 11 {
            scales = try c.constant(1).values
        } else {
            if let s = try c.optionalConstant(2), s.count > 0 { scales = s.values }
            if let z = try c.optionalConstant(3), z.count > 0 { sizes = z.intValues }
        }
        if let axes = node.ints("axes"), axes != Array(0..<rank) { throw c.unsupported("the axes attribute") }
        if node.int("antialias", 0) != 0 { throw c.unsupported("antialias") }
        let outShape: [Int]
        var axisScale: [Float]
        if let sizes {
            guard sizes.count == rank else { throw c.invalid("sizes has \(sizes.count) values for rank \(rank)") }
            if node.string("keep_aspect_ratio_policy", "stretch") != "stretch" { throw c.unsupported("keep_aspect_ratio_policy") }
            outShape = sizes
            axisScale = (0..<rank).map { Float(sizes[$0]) / Float(max(x.shape[$0], 1)) }
        } else if let scales {
            guard scales.count == rank, scales.allSatisfy({ $0 > 0 }) else { throw c.invalid("scales \(scales) do not fit rank \(rank)") }
            let extents = (0..<rank).map { Double(x.shape[$0]) * Double(scales[$0]) }
            guard extents.allSatisfy({ $0.isFinite && $0 < Double(1 << 48) }) else {
                throw c.invalid("scales \(scales) make an output too large for \(x.shape)")
            }
            outShape = extents.map { Int(Float($0)) }
            axisScale = scales
        } else {
            throw c.invalid("one of scales and sizes is required")
        }
        guard outShape.allSatisfy({ $0 > 0 }) else { throw c.invalid("output shape \(outShape) is empty") }
        try c.outputShape(outShape)
        let mode = node.string("mode", "nearest")
        let coordinate = legacy ? "asymmetric" : node.string("coordinate_transformation_mode", "half_pixel")
        let nearestMode = legacy ? "simple" : node.string("nearest_mode", "round_prefer_floor")
        guard ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"].contains(coordinate) else {
            throw c.unsupported("coordinate_transformation_mode \(coordinate)")
        }
        func source(_ o: Int, _ a: Int) -> Float {
            let scale = axisScale[a], inLen = Float(x.shape[a]), outLen = Float(outShape[a])
            switch coordinate {
            case "half_pixel": return (Float(o) + 0.5) / scale - 0.5
            case "pytorch_half_pixel": return outLen > 1 ? (Float(o) + 0.5) / scale - 0.5 : 0
            case "align_corners": return outLen == 1 ? 0 : Float(o) * (inLen - 1) / (outLen - 1)
            case "tf_half_pixel_for_nn": return (Float(o) + 0.5) / scale
            default: return Float(o) / scale
            }
        }
        switch mode {
        case "nearest":
            guard ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"].contains(nearestMode) else {
                throw c.unsupported("nearest_mode \(nearestMode)")
            }
            let maps: [[Int]] = (0..<rank).map { a in
                (0..<outShape[a]).map { o in
                    let s = source(o, a)
                    var i: Int
                    switch nearestMode {
                    case "round_prefer_ceil": i = Int((s).rounded(.toNearestOrAwayFromZero))
                    case "floor": i = Int(floorf(s))
                    case "ceil": i = Int(ceilf(s))
                    case "simple": i = axisScale[a] < 1 ? Int(ceilf(s)) : Int(s)
                    default: i = s == floorf(s) + 0.5 ? Int(floorf(s)) : Int(s.rounded(.toNearestOrAwayFromZero))
                    }
                    return min(max(i, 0), x.shape[a] - 1)
                }
            }
            return .nearest(outShape: outShape, maps: maps)
        case "linear":
            guard rank >= 2, (0..<(rank - 2)).allSatisfy({ outShape[$0] == x.shape[$0] }) else {
                throw c.unsupported("linear resize of axes other than the last two")
            }
            let taps: [Taps] = [rank - 2, rank - 1].map { a in
                var lo: [Int] = [], hi: [Int] = [], t: [Float] = []
                for o in 0..<outShape[a] {
                    let s = min(max(source(o, a), 0), Float(x.shape[a] - 1))
                    let i = Int(s)
                    lo.append(i); hi.append(min(i + 1, x.shape[a] - 1)); t.append(s - Float(i))
                }
                return (lo, hi, t)
            }
            return .linear(outShape: outShape, rows: taps[0], columns: taps[1])
        default:
            throw c.unsupported("mode \(mode)")
        }
    }

    private static func nearest(_ inShape: [Int], _ outShape: [Int], _ maps: [[Int]], type: Tensor.ElementType) -> Prepared {
        let rank = inShape.count
        if let upsample = integerUpsample(inShape, outShape, maps, type: type) { return upsample }
        var inStrides = [Int](repeating: 1, count: rank)
        for a in stride(from: rank - 2, through: 0, by: -1) { inStrides[a] = inStrides[a + 1] * inShape[a + 1] }
        let inner = outShape[rank - 1]
        let outer = outShape.reduce(1, *) / inner
        let lastMap = maps[rank - 1]
        return .single(outShape, type) { io in
            let src = io.input(0), out = io.outputs[0]
            var index = RowIndex()
            var previous = -1
            for row in 0..<outer {
                var base = 0
                for a in 0..<(rank - 1) { base += maps[a][index[a]] * inStrides[a] }
                let d = out + row * inner, s = src + base
                if base == previous {
                    // Upscaling repeats source rows: copy the row just written.
                    d.update(from: d - inner, count: inner)
                } else {
                    for i in 0..<inner { d[i] = s[lastMap[i]] }
                }
                previous = base
                advanceRow(&index, outShape)
            }
        }
    }

    /// Nearest upscaling of the last two axes by whole factors where output (y, x) reads input
    /// (y / fy, x / fx) — the common "upsample ×2": row copies at memory speed (C kernel).
    private static func integerUpsample(_ inShape: [Int], _ outShape: [Int], _ maps: [[Int]], type: Tensor.ElementType) -> Prepared? {
        let rank = inShape.count
        guard rank >= 2, (0..<(rank - 2)).allSatisfy({ inShape[$0] == outShape[$0] }) else { return nil }
        let (h, w) = (inShape[rank - 2], inShape[rank - 1])
        guard h > 0, w > 0, outShape[rank - 2] % h == 0, outShape[rank - 1] % w == 0 else { return nil }
        let (fy, fx) = (outShape[rank - 2] / h, outShape[rank - 1] / w)
        guard maps[rank - 2].enumerated().allSatisfy({ $0.element == $0.offset / fy }),
              maps[rank - 1].enumerated().allSatisfy({ $0.element == $0.offset / fx }) else { return nil }
        let planes = inShape.reduce(1, *) / (h * w)
        let level = Int32(KernelLevel.current)
        return .single(outShape, type) { io in
            let src = io.input(0), out = io.outputs[0]
            parallelFor(planes, threads: planes * h * w * fy * fx >= 1 << 16 ? io.threads : 1) { range in
                gk_upsample_nearest(level, src + range.lowerBound * h * w, Int32(range.count), Int32(h), Int32(w),
                                    Int32(fy), Int32(fx), out + range.lowerBound * h * w * fy * fx)
            }
        }
    }

    private static func bilinear(_ inShape: [Int], _ outShape: [Int], _ ys: (lo: [Int], hi: [Int], t: [Float]),
                                 _ xs: (lo: [Int], hi: [Int], t: [Float]), type: Tensor.ElementType) -> Prepared {
        let rank = inShape.count
        let (h, w) = (inShape[rank - 2], inShape[rank - 1])
        let (oh, ow) = (outShape[rank - 2], outShape[rank - 1])
        let planes = inShape.reduce(1, *) / (h * w)
        return .single(outShape, type) { io in
            let src = io.input(0), out = io.outputs[0]
            parallelFor(planes, threads: io.threads) { range in
                for p in range {
                    let s = src + p * h * w, d = out + p * oh * ow
                    for y in 0..<oh {
                        let r0 = s + ys.lo[y] * w, r1 = s + ys.hi[y] * w
                        let ty = ys.t[y]
                        for xo in 0..<ow {
                            let tx = xs.t[xo], x0 = xs.lo[xo], x1 = xs.hi[xo]
                            let top = r0[x0] * (1 - tx) + r0[x1] * tx
                            let bottom = r1[x0] * (1 - tx) + r1[x1] * tx
                            d[y * ow + xo] = top * (1 - ty) + bottom * ty
                        }
                    }
                }
            }
        }
    }
}

import CBLAS

/// Conv: pointwise convolutions straight into `cblas_sgemm`, depthwise ones with a direct
/// kernel, the rest through im2col + `cblas_sgemm`; bias and the fused epilogue are applied
/// per output channel while it is still in cache.
enum Conv {
    static func build(_ c: BuildContext) throws(MLError) -> Prepared {
        let x = try c.input(0)
        let w = try c.constant(1)
        let bias = try c.optionalConstant(2)
        guard x.shape.count == 4 else { throw c.unsupported("only 2-D convolution (4-D input) is supported, got input \(x.shape)") }
        guard w.shape.count == 4 else { throw c.invalid("weights must be 4-D, got \(w.shape)") }
        let (n, ch, h, wd) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3])
        let m = w.shape[0]
        let group = c.node.int("group", 1)
        guard group > 0, ch % group == 0, m % group == 0, w.shape[1] == ch / group else {
            throw c.invalid("input channels \(ch), weights \(w.shape) and group \(group) do not agree")
        }
        if let k = c.node.ints("kernel_shape"), k != [w.shape[2], w.shape[3]] {
            throw c.invalid("kernel_shape \(k) does not match weights \(w.shape)")
        }
        if let bias, bias.count != m { throw c.invalid("bias has \(bias.count) values for \(m) output channels") }
        let g = try ConvGeometry(c, input: [h, wd], kernel: [w.shape[2], w.shape[3]])
        let oh = g.output(h, axis: 0), ow = g.output(wd, axis: 1)
        guard oh > 0, ow > 0 else { throw c.invalid("output would be empty (input \(x.shape), kernel \(g.kernel))") }
        let weights = w.values
        let biasValues = bias?.values ?? [Float](repeating: 0, count: m)
        let epilogue = c.node.epilogue
        let cg = ch / group, mg = m / group
        let kArea = g.kernel[0] * g.kernel[1]
        let plane = oh * ow
        let outShape = [n, m, oh, ow]

        if group == ch && m == ch {
            return .single(outShape) { io in
                weights.withUnsafeBufferPointer { wp in
                    depthwise(io.input(0), wp.baseAddress!, biasValues, io.outputs[0], n: n, c: ch, h: h, w: wd,
                              oh: oh, ow: ow, g: g, epilogue: epilogue, threads: io.threads)
                }
            }
        }
        let pointwise = kArea == 1 && g.strides == [1, 1] && g.padBegin == [0, 0] && g.padEnd == [0, 0]
        let scratch = pointwise ? 0 : cg * kArea * plane
        return .single(outShape, scratch: scratch) { io in
            let input = io.input(0), out = io.outputs[0]
            weights.withUnsafeBufferPointer { wp in
                for b in 0..<n {
                    for gi in 0..<group {
                        let src = input + (b * ch + gi * cg) * h * wd
                        let dst = out + (b * m + gi * mg) * plane
                        let cols: UnsafePointer<Float>
                        if pointwise {
                            cols = src
                        } else {
                            im2col(src, io.scratch, c: cg, h: h, w: wd, oh: oh, ow: ow, g: g, threads: io.threads)
                            cols = UnsafePointer(io.scratch)
                        }
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Int32(mg), Int32(plane), Int32(cg * kArea),
                                    1, wp.baseAddress! + gi * mg * cg * kArea, Int32(cg * kArea), cols, Int32(plane),
                                    0, dst, Int32(plane))
                    }
                    finish(out + b * m * plane, biasValues, channels: m, plane: plane, epilogue: epilogue, threads: io.threads)
                }
            }
        }
    }

    /// Adds the bias and applies the epilogue, one output channel at a time.
    static func finish(_ out: UnsafeMutablePointer<Float>, _ bias: [Float], channels: Int, plane: Int,
                       epilogue: [Epilogue], threads: Int) {
        parallelFor(channels, threads: plane * channels >= 16384 ? threads : 1) { range in
            for ch in range {
                let p = out + ch * plane
                let b = bias[ch]
                if b != 0 { for i in 0..<plane { p[i] += b } }
                Epilogue.apply(epilogue, p, plane)
            }
        }
    }

    /// Unfolds the input windows into a (channels·kh·kw) × (oh·ow) matrix.
    static func im2col(_ src: UnsafePointer<Float>, _ cols: UnsafeMutablePointer<Float>, c: Int, h: Int, w: Int,
                       oh: Int, ow: Int, g: ConvGeometry, threads: Int) {
        let (kh, kw) = (g.kernel[0], g.kernel[1])
        let (sh, sw) = (g.strides[0], g.strides[1])
        let (dh, dw) = (g.dilations[0], g.dilations[1])
        let (pt, pl) = (g.padBegin[0], g.padBegin[1])
        parallelFor(c * kh * kw, threads: c * kh * kw * oh * ow >= 65536 ? threads : 1) { rows in
            for row in rows {
                let ch = row / (kh * kw), ki = (row / kw) % kh, kj = row % kw
                let plane = src + ch * h * w
                let dst = cols + row * oh * ow
                let off = kj * dw - pl
                let lo = off >= 0 ? 0 : (-off + sw - 1) / sw
                let hi = min(ow, w - 1 - off < 0 ? 0 : (w - 1 - off) / sw + 1)
                for y in 0..<oh {
                    let iy = y * sh - pt + ki * dh
                    let d = dst + y * ow
                    if iy < 0 || iy >= h || lo >= hi {
                        d.update(repeating: 0, count: ow)
                        continue
                    }
                    let s = plane + iy * w
                    if lo > 0 { d.update(repeating: 0, count: lo) }
                    if sw == 1 {
                        (d + lo).update(from: s + lo + off, count: hi - lo)
                    } else {
                        for x in lo..<hi { d[x] = s[x * sw + off] }
                    }
                    if hi < ow { (d + hi).update(repeating: 0, count: ow - hi) }
                }
            }
        }
    }

    /// One filter per channel, accumulated row by row so the inner loop is contiguous for stride 1.
    static func depthwise(_ input: UnsafePointer<Float>, _ weights: UnsafePointer<Float>, _ bias: [Float],
                          _ out: UnsafeMutablePointer<Float>, n: Int, c: Int, h: Int, w: Int, oh: Int, ow: Int,
                          g: ConvGeometry, epilogue: [Epilogue], threads: Int) {
        let (kh, kw) = (g.kernel[0], g.kernel[1])
        let (sh, sw) = (g.strides[0], g.strides[1])
        let (dh, dw) = (g.dilations[0], g.dilations[1])
        let (pt, pl) = (g.padBegin[0], g.padBegin[1])
        parallelFor(n * c, threads: c * oh * ow >= 16384 ? threads : 1) { planes in
            for p in planes {
                let ch = p % c
                let src = input + p * h * w
                let dst = out + p * oh * ow
                let k = weights + ch * kh * kw
                for y in 0..<oh {
                    let row = dst + y * ow
                    row.update(repeating: bias[ch], count: ow)
                    for ki in 0..<kh {
                        let iy = y * sh - pt + ki * dh
                        if iy < 0 || iy >= h { continue }
                        let s = src + iy * w
                        for kj in 0..<kw {
                            let wv = k[ki * kw + kj]
                            let off = kj * dw - pl
                            let lo = off >= 0 ? 0 : (-off + sw - 1) / sw
                            let hi = min(ow, w - 1 - off < 0 ? 0 : (w - 1 - off) / sw + 1)
                            if lo >= hi { continue }
                            if sw == 1 {
                                let sp = s + off
                                for x in lo..<hi { row[x] += wv * sp[x] }
                            } else {
                                for x in lo..<hi { row[x] += wv * s[x * sw + off] }
                            }
                        }
                    }
                }
                Epilogue.apply(epilogue, dst, oh * ow)
            }
        }
    }
}

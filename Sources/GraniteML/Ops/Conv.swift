import CGraniteKernels

/// Conv: pointwise convolutions straight into a GEMM (``Gemm``), depthwise ones with a direct
/// kernel, the rest through GraniteML's GEMM reading im2col tiles from the input; bias and the fused epilogue (``KernelEpilogue``)
/// are applied inside the C kernels block by block, or per output channel while it is still
/// in cache.
package enum Conv {
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
        try c.outputShape([n, m, oh, ow])
        let weights = w.values
        let biasValues = bias?.values ?? [Float](repeating: 0, count: m)
        let epilogue = KernelEpilogue(c.node.epilogue)
        let cg = ch / group, mg = m / group
        let kArea = g.kernel[0] * g.kernel[1]
        let plane = oh * ow
        let outShape = [n, m, oh, ow]
        if let q = c.node.quantized,
           let prepared = quantized(c, q, input: x.shape, weights: w.shape, bias: bias, g: g, group: group, outShape: outShape) {
            return prepared
        }

        if group == ch && m == ch && g.dilations == [1, 1] && kArea <= 64 {
            // The vectorised C kernel (float mode: scale 1, bias as the shift).
            let tables = RequantTables(bias: [Int32](repeating: 0, count: m), scale: [Float](repeating: 1, count: m),
                                       shift: biasValues, requant: nil)
            return depthwise(c, input: x.shape, kernels: KernelWeights(weights), kernel: [w.shape[2], w.shape[3]], tables: tables,
                             inverseScale: 0, g: g, outShape: outShape, epilogue: epilogue, level: KernelLevel.current)
        }
        if group == ch && m == ch {
            return .single(outShape) { io in
                weights.withUnsafeBufferPointer { wp in
                    depthwise(io.input(0), wp.baseAddress!, biasValues, io.outputs[0], n: n, c: ch, h: h, w: wd,
                              oh: oh, ow: ow, g: g, epilogue: epilogue, threads: io.threads)
                }
            }
        }
        let biasStore = KernelWeights(biasValues)
        let pointwise = kArea == 1 && g.strides == [1, 1] && g.padBegin == [0, 0] && g.padEnd == [0, 0]
        // GraniteML's own GEMM: the im2col matrix is never stored, its tiles are read straight
        // from the input.
        let level = Int32(KernelLevel.current)
        return .single(outShape) { io in
            let input = io.input(0), out = io.outputs[0]
            weights.withUnsafeBufferPointer { wp in
                for b in 0..<n {
                    for gi in 0..<group {
                        let src = input + (b * ch + gi * cg) * h * wd
                        let dst = out + (b * m + gi * mg) * plane
                        let a = wp.baseAddress! + gi * mg * cg * kArea
                        let groupBias = UnsafePointer(biasStore.pointer + gi * mg)
                        if pointwise {
                            Gemm.multiply(m: mg, n: plane, k: cg, a, lda: cg, src, ldb: plane, dst, ldc: plane,
                                          threads: io.threads, bias: groupBias, epilogue: epilogue)
                            continue
                        }
                        var geometry = gk_conv_geometry(
                            input: src, channels: Int32(cg), h: Int32(h), w: Int32(wd), kh: Int32(g.kernel[0]),
                            kw: Int32(g.kernel[1]), sh: Int32(g.strides[0]), sw: Int32(g.strides[1]),
                            dh: Int32(g.dilations[0]), dw: Int32(g.dilations[1]), pt: Int32(g.padBegin[0]),
                            pl: Int32(g.padBegin[1]), ow: Int32(ow))
                        withUnsafePointer(to: &geometry) { gp in
                            parallelColumns(plane, work: mg * plane * cg * kArea, threshold: 1 << 21, threads: io.threads) { cols in
                                gk_sgemm_conv(level, Int32(mg), a, Int32(cg * kArea), gp, dst, Int32(plane), Int32(cols.lowerBound),
                                              Int32(cols.upperBound), groupBias, epilogue.pointer)
                                epilogue.finish(dst, rows: mg, ldc: plane, columns: cols)
                            }
                        }
                    }
                }
            }
        }
    }

    /// One filter per channel, accumulated row by row so the inner loop is contiguous for stride 1.
    static func depthwise(_ input: UnsafePointer<Float>, _ weights: UnsafePointer<Float>, _ bias: [Float],
                          _ out: UnsafeMutablePointer<Float>, n: Int, c: Int, h: Int, w: Int, oh: Int, ow: Int,
                          g: ConvGeometry, epilogue: KernelEpilogue, threads: Int) {
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
                // Output columns whose every tap is inside the row: the unchecked fast path.
                let xa = min(ow, (pl + sw - 1) / sw)
                let xb = max(xa, min(ow, (w - 1 - ((kw - 1) * dw - pl)) / sw + 1))
                for y in 0..<oh {
                    let row = dst + y * ow
                    row.update(repeating: bias[ch], count: ow)
                    for ki in 0..<kh {
                        let iy = y * sh - pt + ki * dh
                        if iy < 0 || iy >= h { continue }
                        let s = src + iy * w
                        let kr = k + ki * kw
                        if dw == 1 && xb > xa {
                            let base = s - pl
                            if kw == 3 {
                                let (k0, k1, k2) = (kr[0], kr[1], kr[2])
                                if sw == 1 {
                                    for x in xa..<xb { let p = base + x; row[x] += k0 * p[0] + k1 * p[1] + k2 * p[2] }
                                } else {
                                    for x in xa..<xb { let p = base + x * sw; row[x] += k0 * p[0] + k1 * p[1] + k2 * p[2] }
                                }
                            } else if kw == 5 {
                                let (k0, k1, k2, k3, k4) = (kr[0], kr[1], kr[2], kr[3], kr[4])
                                if sw == 1 {
                                    for x in xa..<xb {
                                        let p = base + x
                                        row[x] += k0 * p[0] + k1 * p[1] + k2 * p[2] + k3 * p[3] + k4 * p[4]
                                    }
                                } else {
                                    for x in xa..<xb {
                                        let p = base + x * sw
                                        row[x] += k0 * p[0] + k1 * p[1] + k2 * p[2] + k3 * p[3] + k4 * p[4]
                                    }
                                }
                            } else {
                                for x in xa..<xb {
                                    let p = base + x * sw
                                    var acc: Float = 0
                                    for kj in 0..<kw { acc += kr[kj] * p[kj] }
                                    row[x] += acc
                                }
                            }
                        }
                        // The border columns (and everything when dilated), tap by tap with bounds.
                        for kj in 0..<kw {
                            let wv = kr[kj]
                            let off = kj * dw - pl
                            let lo = off >= 0 ? 0 : (-off + sw - 1) / sw
                            let hi = min(ow, w - 1 - off < 0 ? 0 : (w - 1 - off) / sw + 1)
                            if lo >= hi { continue }
                            if dw == 1 && xb > xa {
                                for x in stride(from: lo, to: min(hi, xa), by: 1) { row[x] += wv * s[x * sw + off] }
                                for x in stride(from: max(lo, xb), to: hi, by: 1) { row[x] += wv * s[x * sw + off] }
                            } else {
                                for x in lo..<hi { row[x] += wv * s[x * sw + off] }
                            }
                        }
                    }
                }
                epilogue.apply(dst, oh * ow)
            }
        }
    }
}

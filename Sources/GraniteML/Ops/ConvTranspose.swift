import CGraniteKernels

/// ConvTranspose: a GEMM of the transposed weights with the input, then col2im scatters the
/// columns into the output. The 2×2, stride-2 kind without padding (a segmentation head's
/// upsampling) runs in one C kernel on AVX-512: its windows do not overlap, so each GEMM tile
/// goes straight to its place in the output with bias and epilogue applied.
package enum ConvTranspose {
    static func build(_ c: BuildContext) throws(MLError) -> Prepared {
        let x = try c.input(0)
        let w = try c.constant(1)
        let bias = try c.optionalConstant(2)
        guard x.shape.count == 4, w.shape.count == 4 else {
            throw c.unsupported("only 2-D transposed convolution is supported (input \(x.shape), weights \(w.shape))")
        }
        let (n, ch, h, wd) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3])
        let group = c.node.int("group", 1)
        guard group > 0, w.shape[0] == ch, ch % group == 0 else {
            throw c.invalid("input channels \(ch), weights \(w.shape) and group \(group) do not agree")
        }
        let mg = w.shape[1], m = mg * group, cg = ch / group
        if let bias, bias.count != m { throw c.invalid("bias has \(bias.count) values for \(m) output channels") }
        let kernel = [w.shape[2], w.shape[3]]
        let geometry = try Self.geometry(c, input: [h, wd], kernel: kernel)
        let (strides, dilations, pads) = (geometry.strides, geometry.dilations, geometry.pads)
        let (oh, ow) = (geometry.output[0], geometry.output[1])
        guard oh > 0, ow > 0 else { throw c.invalid("output would be empty") }
        try c.outputShape([n, m, oh, ow])
        // Weights are [cg, mg·kh·kw] per group; transposed once here so the GEMM reads them row-major.
        var weights = [Float](repeating: 0, count: w.count)
        let per = mg * kernel[0] * kernel[1]
        for gi in 0..<group {
            for r in 0..<per {
                for ci in 0..<cg { weights[gi * cg * per + r * cg + ci] = w.values[gi * cg * per + ci * per + r] }
            }
        }
        let biasValues = bias?.values ?? [Float](repeating: 0, count: m)
        let epilogue = KernelEpilogue(c.node.epilogue)
        let kArea = kernel[0] * kernel[1]
        let rows = mg * kArea
        let plane = h * wd
        let level = Int32(KernelLevel.current)
        if kernel == [2, 2], strides == [2, 2], dilations == [1, 1], pads == [0, 0, 0, 0], oh == 2 * h, ow == 2 * wd,
           gk_deconv2x2_fits(level, Int32(cg), Int32(wd)) != 0 {
            // Rows (oc, ki, kj): each output channel's bias for its four rows.
            let rowBias = KernelWeights((0..<(m * kArea)).map { biasValues[$0 / kArea] })
            return .single([n, m, oh, ow]) { io in
                let src = io.input(0), out = io.outputs[0]
                weights.withUnsafeBufferPointer { wp in
                    for b in 0..<n {
                        for gi in 0..<group {
                            let x = src + (b * ch + gi * cg) * plane, y = out + (b * m + gi * mg) * oh * ow
                            let a = wp.baseAddress! + gi * cg * rows
                            parallelColumns(plane, work: rows * plane * cg, threshold: 1 << 20, threads: io.threads) { cols in
                                gk_deconv2x2(level, Int32(rows), Int32(cg), a, Int32(cg), x, Int32(h), Int32(wd), y,
                                             Int32(cols.lowerBound), Int32(cols.upperBound), rowBias.pointer + gi * rows,
                                             epilogue.pointer)
                            }
                        }
                    }
                }
                epilogue.applyRest(out, n * m * oh * ow, threads: io.threads)
            }
        }
        return .single([n, m, oh, ow], scratch: rows * plane) { io in
            let src = io.input(0), out = io.outputs[0]
            weights.withUnsafeBufferPointer { wp in
                for b in 0..<n {
                    for gi in 0..<group {
                        Gemm.multiply(m: rows, n: plane, k: cg, wp.baseAddress! + gi * cg * rows, lda: cg,
                                      src + (b * ch + gi * cg) * plane, ldb: plane, io.scratch, ldc: plane, threads: io.threads)
                        let dst = out + (b * m + gi * mg) * oh * ow
                        parallelFor(mg, threads: io.threads) { channels in
                            for oc in channels {
                                let o = dst + oc * oh * ow
                                o.update(repeating: biasValues[gi * mg + oc], count: oh * ow)
                                for ki in 0..<kernel[0] {
                                    for kj in 0..<kernel[1] {
                                        let col = io.scratch + ((oc * kernel[0] + ki) * kernel[1] + kj) * plane
                                        for iy in 0..<h {
                                            let y = iy * strides[0] - pads[0] + ki * dilations[0]
                                            if y < 0 || y >= oh { continue }
                                            let orow = o + y * ow, crow = col + iy * wd
                                            for ix in 0..<wd {
                                                let xx = ix * strides[1] - pads[1] + kj * dilations[1]
                                                if xx >= 0 && xx < ow { orow[xx] += crow[ix] }
                                            }
                                        }
                                    }
                                }
                                epilogue.apply(o, oh * ow)
                            }
                        }
                    }
                }
            }
        }
    }

    /// Strides, dilations, the pads actually applied (begin then end, after auto_pad and
    /// output_shape) and the output size of a 2-D transposed convolution; shared with GPU backends.
    package struct Geometry {
        package let strides: [Int]
        package let dilations: [Int]
        package let pads: [Int]
        package let output: [Int]
    }

    package static func geometry(_ c: BuildContext, input: [Int], kernel: [Int]) throws(MLError) -> Geometry {
        let strides = c.node.ints("strides") ?? [1, 1]
        let dilations = c.node.ints("dilations") ?? [1, 1]
        var pads = c.node.ints("pads") ?? [0, 0, 0, 0]
        let outputPadding = c.node.ints("output_padding") ?? [0, 0]
        guard strides.count == 2, dilations.count == 2, pads.count == 4, outputPadding.count == 2,
              strides.allSatisfy({ $0 > 0 }), dilations.allSatisfy({ $0 > 0 }) else {
            throw c.unsupported("only 2-D windows with positive strides are supported")
        }
        guard ConvGeometry.bounded(strides + dilations + pads + outputPadding + (c.node.ints("output_shape") ?? [])) else {
            throw c.invalid("strides, dilations, pads or output sizes past \(ConvGeometry.attributeLimit)")
        }
        let autoPad = c.node.string("auto_pad", "NOTSET")
        func full(_ a: Int) -> Int {
            let span: Int = strides[a] * (input[a] - 1)
            let extent: Int = (kernel[a] - 1) * dilations[a] + 1
            return span + outputPadding[a] + extent
        }
        var outSize: [Int] = [full(0) - pads[0] - pads[2], full(1) - pads[1] - pads[3]]
        if let requested = c.node.ints("output_shape") ?? (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER" ? input.enumerated().map { $1 * strides[$0] } : nil) {
            let spatial = Array(requested.suffix(2))
            for a in 0..<2 {
                // ONNX Runtime clamps the total at zero: a larger output_shape leaves the tail unwritten (bias).
                let total = max(full(a) - spatial[a], 0)
                pads[a] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2
                pads[a + 2] = total - pads[a]
            }
            outSize = spatial
        }
        return Geometry(strides: strides, dilations: dilations, pads: pads, output: outSize)
    }
}

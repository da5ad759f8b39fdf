import CGraniteKernels

/// MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool over the two spatial axes (the
/// global ones in C, planes split across threads).
enum Pool {
    static func build(_ c: BuildContext) throws(MLError) -> Prepared {
        let x = try c.input(0)
        guard x.shape.count == 4 else { throw c.unsupported("only 4-D (NCHW) input is supported, got \(x.shape)") }
        let (n, ch, h, w) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3])
        let op = c.node.op
        if op == "GlobalAveragePool" || op == "GlobalMaxPool" {
            let average = op == "GlobalAveragePool"
            let area = h * w
            let level = Int32(KernelLevel.current)
            return .single([n, ch, 1, 1]) { io in
                let src = io.input(0), out = io.outputs[0]
                parallelFor(n * ch, threads: n * ch * area >= 65536 ? io.threads : 1) { planes in
                    gk_global_pool(level, src + planes.lowerBound * area, planes.count, area, average ? 1 : 0,
                                   out + planes.lowerBound)
                }
            }
        }
        guard let kernel = c.node.ints("kernel_shape") else { throw c.invalid("kernel_shape is required") }
        if c.node.outputs.count > 1, !c.node.outputs[1].isEmpty { throw c.unsupported("the Indices output is not supported") }
        if c.node.int("storage_order", 0) != 0 { throw c.unsupported("storage_order 1") }
        let g = try ConvGeometry(c, input: [h, w], kernel: kernel)
        let ceilMode = c.node.int("ceil_mode", 0) != 0
        let oh = g.output(h, axis: 0, ceil: ceilMode), ow = g.output(w, axis: 1, ceil: ceilMode)
        guard oh > 0, ow > 0 else { throw c.invalid("output would be empty") }
        try c.outputShape([n, ch, oh, ow])
        let isMax = op == "MaxPool"
        let includePad = c.node.int("count_include_pad", 0) != 0
        return .single([n, ch, oh, ow]) { io in
            let src = io.input(0), out = io.outputs[0]
            parallelFor(n * ch, threads: io.threads) { planes in
                for p in planes {
                    let s = src + p * h * w
                    let d = out + p * oh * ow
                    for y in 0..<oh {
                        for xo in 0..<ow {
                            var acc: Float = isMax ? -Float.infinity : 0
                            var count = 0
                            let y0 = y * g.strides[0] - g.padBegin[0], x0 = xo * g.strides[1] - g.padBegin[1]
                            for ki in 0..<g.kernel[0] {
                                let iy = y0 + ki * g.dilations[0]
                                // The padded extent (for count_include_pad) stops at the end padding.
                                if iy >= h + g.padEnd[0] { break }
                                for kj in 0..<g.kernel[1] {
                                    let ix = x0 + kj * g.dilations[1]
                                    if ix >= w + g.padEnd[1] { break }
                                    if iy < 0 || iy >= h || ix < 0 || ix >= w {
                                        count += includePad ? 1 : 0
                                        continue
                                    }
                                    let v = s[iy * w + ix]
                                    if isMax { acc = max(acc, v) } else { acc += v }
                                    count += 1
                                }
                            }
                            d[y * ow + xo] = isMax ? acc : (count > 0 ? acc / Float(count) : 0)
                        }
                    }
                }
            }
        }
    }
}

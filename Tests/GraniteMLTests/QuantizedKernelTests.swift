import CGraniteKernels
import XCTest
@testable import GraniteML

/// The C kernels of the int8 path (CGraniteKernels) against straightforward Swift references
/// with exact integer sums, at every instruction-set level this CPU has: the portable C build
/// always, AVX2 and AVX-512 VNNI where present. Results must match bit for bit.
final class QuantizedKernelTests: XCTestCase {
    private var levels: [Int] { KernelTestSupport.levels(for: "QuantizedKernelTests") }
    private typealias Numbers = KernelTestSupport.Numbers

    private func requant(_ acc: Int64, _ bias: Int32, _ scale: Float, lo: Float, hi: Float, out: Float) -> Float {
        let v = Float(Int32(truncatingIfNeeded: acc) &+ bias) * scale
        return min(max(v, lo), hi).rounded(.toNearestOrEven) * out
    }

    private struct GemmCase {
        let m: Int, k: Int, n: Int
        /// Input u8 = centred + offset.
        let offset: Int
        let input: (inout Numbers, Int) -> Int
        let weight: (inout Numbers, Int) -> Int
        let scale: Float
        let lo: Float, hi: Float
    }

    func testQuantizedGemmMatchesExactReference() {
        let random: (inout Numbers, Int) -> Int = { r, _ in r.next(0...255) }
        let randomW: (inout Numbers, Int) -> Int = { r, _ in r.next(-128...127) }
        let cases = [
            // Odd sizes everywhere, zero point 128 (uint8 activations), ties at scale 0.5.
            GemmCase(m: 5, k: 7, n: 13, offset: 128, input: random, weight: randomW, scale: 0.5, lo: -128, hi: 127),
            GemmCase(m: 17, k: 250, n: 33, offset: 37, input: random, weight: randomW, scale: 0.0007, lo: -37, hi: 218),
            GemmCase(m: 64, k: 32, n: 1000, offset: 0, input: random, weight: randomW, scale: 0.001, lo: 0, hi: 255),
            GemmCase(m: 3, k: 1, n: 70, offset: 200, input: random, weight: randomW, scale: 1, lo: -200, hi: 55),
            // Saturation edges: 255 × 127 and 255 × −128 pairs overflow int16 (VPMADDUBSW); long k.
            GemmCase(m: 6, k: 1027, n: 40, offset: 0, input: { _, _ in 255 }, weight: { _, i in i % 2 == 0 ? 127 : -128 },
                     scale: 1e-4, lo: -128, hi: 127),
            GemmCase(m: 4, k: 515, n: 17, offset: 5, input: { _, _ in 255 }, weight: { _, _ in 127 },
                     scale: 3e-5, lo: -5, hi: 250),
        ]
        for (index, t) in cases.enumerated() {
            var r = Numbers(state: UInt64(index + 1))
            let sx: Float = 0.02
            let u = (0..<(t.k * t.n)).map { t.input(&r, $0) }
            let x = u.map { Float($0 - t.offset) * sx }
            let w = (0..<(t.m * t.k)).map { Int8(t.weight(&r, $0)) }
            let bias = (0..<t.m).map { _ in Int32(r.next(-20000...20000)) }
            let scales = (0..<t.m).map { t.scale * Float(1 + $0 % 3) }
            var expected = [Float](repeating: 0, count: t.m * t.n)
            for i in 0..<t.m {
                for j in 0..<t.n {
                    var acc: Int64 = 0
                    for c in 0..<t.k { acc += Int64(u[c * t.n + j] - t.offset) * Int64(w[i * t.k + c]) }
                    expected[i * t.n + j] = requant(acc, bias[i], scales[i], lo: t.lo, hi: t.hi, out: 0.25)
                }
            }
            var packedA = [Int8](repeating: 0, count: gk_qgemm_packed_a_size(Int32(t.m), Int32(t.k)))
            var sums = [Int32](repeating: 0, count: t.m)
            gk_qgemm_pack_a(w, Int32(t.m), Int32(t.k), &packedA, &sums)
            let adjusted = (0..<t.m).map { bias[$0] - Int32(t.offset) * sums[$0] }
            let tables = RequantTables(bias: adjusted, scale: scales, shift: nil,
                                       requant: .init(lo: t.lo, hi: t.hi, outScale: 0.25))
            for level in levels {
                var packedB = [UInt8](repeating: 0, count: gk_qgemm_packed_b_size(Int32(t.k), Int32(t.n)))
                var out = [Float](repeating: .nan, count: t.m * t.n)
                let panels = Int32((t.n + 15) / 16)
                gk_qgemm_pack_b(Int32(level), x, Int32(t.n), Int32(t.k), Int32(t.n), 0, panels, 1 / sx, Int32(t.offset), &packedB)
                // Split rows and columns as the threaded caller does.
                let mh = Int32(t.m / 2 / 4 * 4), nh = Int32(t.n / 2 / 16 * 16)
                for (m0, m1, n0, n1) in [(0, mh, 0, nh), (mh, Int32(t.m), 0, nh), (0, Int32(t.m), nh, Int32(t.n))] {
                    gk_qgemm(Int32(level), packedA, packedB, Int32(t.m), Int32(t.k), Int32(t.n), m0, m1, n0, n1,
                             tables.pointer, &out, Int32(t.n))
                }
                let bad = zip(out, expected).filter { $0 != $1 }.count
                XCTAssertEqual(bad, 0, "case \(index) (\(t.m)×\(t.k)×\(t.n)) level \(level): \(bad) mismatches")
            }
        }
    }

    func testQuantizedGemmFloatOutput() {
        let (m, k, n) = (9, 20, 21)
        var r = Numbers(state: 7)
        let u = (0..<(k * n)).map { _ in r.next(0...255) }
        let w = (0..<(m * k)).map { _ in Int8(r.next(-128...127)) }
        var packedA = [Int8](repeating: 0, count: gk_qgemm_packed_a_size(Int32(m), Int32(k)))
        var sums = [Int32](repeating: 0, count: m)
        gk_qgemm_pack_a(w, Int32(m), Int32(k), &packedA, &sums)
        let shift = (0..<m).map { Float($0) - 4.5 }
        let tables = RequantTables(bias: sums.map { -10 * $0 }, scale: [Float](repeating: 0.125, count: m), shift: shift, requant: nil)
        for level in levels {
            var packedB = [UInt8](repeating: 0, count: gk_qgemm_packed_b_size(Int32(k), Int32(n)))
            gk_qgemm_pack_b(Int32(level), u.map { Float($0 - 10) }, Int32(n), Int32(k), Int32(n), 0, Int32((n + 15) / 16), 1, 10, &packedB)
            var out = [Float](repeating: .nan, count: m * n)
            gk_qgemm(Int32(level), packedA, packedB, Int32(m), Int32(k), Int32(n), 0, Int32(m), 0, Int32(n), tables.pointer, &out, Int32(n))
            for i in 0..<m {
                for j in 0..<n {
                    var acc = 0
                    for c in 0..<k { acc += (u[c * n + j] - 10) * Int(w[i * k + c]) }
                    XCTAssertEqual(out[i * n + j], Float(acc) * 0.125 + shift[i], "level \(level) at \(i),\(j)")
                }
            }
        }
    }

    func testDepthwiseMatchesExactReference() {
        // (h, w, kh, kw, sh, sw, pt, pl, pb, pr)
        let cases = [
            (11, 13, 3, 3, 1, 1, 1, 1, 1, 1), (17, 9, 5, 5, 1, 1, 2, 2, 2, 2), (15, 16, 3, 3, 2, 2, 0, 0, 1, 1),
            (7, 7, 5, 5, 2, 2, 2, 2, 2, 2), (40, 70, 3, 3, 2, 2, 1, 1, 1, 1), (5, 6, 1, 3, 1, 3, 0, 2, 0, 0),
            (9, 45, 3, 5, 2, 1, 0, 3, 2, 0),
        ]
        for (index, t) in cases.enumerated() {
            let (h, w, kh, kw, sh, sw) = (t.0, t.1, t.2, t.3, t.4, t.5)
            let (pt, pl, pb, pr) = (t.6, t.7, t.8, t.9)
            let oh = (h + pt + pb - kh) / sh + 1, ow = (w + pl + pr - kw) / sw + 1
            var r = Numbers(state: UInt64(100 + index))
            let sx: Float = 0.013
            let zero = index % 2 == 0 ? 128 : 0
            let centred = (0..<(h * w)).map { _ in r.next(0...255) - zero }
            let x = centred.map { Float($0) * sx }
            // Centred weights of a uint8 weight with a zero point reach ±255.
            let kernel = (0..<(kh * kw)).map { _ in Float(r.next(-255...255)) }
            let bias = Int32(r.next(-5000...5000))
            let (lo, hi): (Float, Float) = (Float(-zero), Float(255 - zero))
            let tables = RequantTables(bias: [bias], scale: [0.0011], shift: nil, requant: .init(lo: lo, hi: hi, outScale: 0.5))
            var expected = [Float](repeating: 0, count: oh * ow)
            for y in 0..<oh {
                for xo in 0..<ow {
                    var acc: Int64 = 0
                    for i in 0..<kh {
                        for j in 0..<kw {
                            let iy = y * sh - pt + i, ix = xo * sw - pl + j
                            guard iy >= 0, iy < h, ix >= 0, ix < w else { continue }
                            acc += Int64(centred[iy * w + ix]) * Int64(kernel[i * kw + j])
                        }
                    }
                    expected[y * ow + xo] = requant(acc, bias, 0.0011, lo: lo, hi: hi, out: 0.5)
                }
            }
            let per = gk_dw_scratch(Int32(h), Int32(w), Int32(kh), Int32(kw), Int32(sh), Int32(sw), Int32(pt), Int32(pl),
                                    Int32(oh), Int32(ow))
            for level in levels {
                var scratch = [Float](repeating: .nan, count: per)
                var out = [Float](repeating: .nan, count: oh * ow)
                gk_depthwise(Int32(level), x, Int32(h), Int32(w), 1 / sx, kernel, Int32(kh), Int32(kw), Int32(sh), Int32(sw),
                             Int32(pt), Int32(pl), Int32(oh), Int32(ow), tables.pointer, 0, nil, &scratch, &out)
                let bad = zip(out, expected).filter { $0 != $1 }.count
                XCTAssertEqual(bad, 0, "case \(index) \(t) level \(level): \(bad) of \(oh * ow) differ")
            }
        }
    }

    /// Every float kernel (GEMM, convolution GEMM, 2×2 transposed convolution, depthwise) gives the
    /// same bits at every level this CPU has, and they are those of the order ONNX Runtime's SGEMM
    /// sums in: the products in order (input channel, kernel row, column), one fused multiply-add
    /// each (`addingProduct`), in blocks of 128 from zero whose sums are then added, then bias and
    /// epilogue (depthwise: one chain). Full-mantissa inputs, so a product rounded apart from its
    /// sum, or another order, would show. K up to 600 (several blocks, several 256-wide chunks).
    func testFloatKernelsGiveOneAnswerAtEveryLevel() {
        var r = Numbers(state: 4242)
        func values(_ n: Int) -> [Float] { (0..<n).map { _ in Float(r.next(-1_000_000...1_000_000)) / 999_983 } }
        func bits(_ v: [Float]) -> [UInt32] { v.map(\.bitPattern) }
        // ONNX Runtime's SGEMM sum: blocks of 128 products, each from zero by fused multiply-adds,
        // the blocks' sums added in order (checked against ORT 1.23.2's MatMul and 1×1 Conv).
        func ortSum(_ count: Int, _ term: (Int) -> (Float, Float)) -> Float {
            var total: Float = 0
            for start in stride(from: 0, to: count, by: 128) {
                var block: Float = 0
                for p in start..<min(start + 128, count) { let (x, y) = term(p); block = block.addingProduct(x, y) }
                total = start == 0 ? block : total + block
            }
            return total
        }
        // GEMM with bias and an epilogue, K across several 256 chunks, split columns.
        for (m, n, k) in [(7, 33, 5), (13, 70, 300), (24, 129, 600), (1, 200, 17)] {
            let a = values(m * k), b = values(k * n), bias = values(m)
            var expected = [Float](repeating: 0, count: m * n)
            for i in 0..<m {
                for j in 0..<n {
                    let acc = ortSum(k) { (a[i * k + $0], b[$0 * n + j]) }
                    expected[i * n + j] = max(acc + bias[i], 0)
                }
            }
            let relu = KernelEpilogue([.relu])
            for level in levels {
                var c = [Float](repeating: .nan, count: m * n)
                let split = Int32(n / 2 / 16 * 16)
                gk_sgemm(Int32(level), Int32(m), Int32(k), a, Int32(k), b, Int32(n), &c, Int32(n), 0, split, bias, relu.pointer)
                gk_sgemm(Int32(level), Int32(m), Int32(k), a, Int32(k), b, Int32(n), &c, Int32(n), split, Int32(n), bias, relu.pointer)
                XCTAssertEqual(bits(c), bits(expected), "gemm \(m)×\(n)×\(k) level \(level)")
            }
        }
        // Convolutions from the input (strides 1 and 2, pads, a 5×5 window, K over 256).
        for (ch, h, w, kk, st, pad, m) in [(3, 20, 37, 3, 1, 1, 8), (40, 12, 33, 3, 2, 1, 5), (2, 16, 16, 5, 1, 2, 3), (20, 10, 32, 3, 1, 1, 4)] {
            let oh = (h + 2 * pad - kk) / st + 1, ow = (w + 2 * pad - kk) / st + 1
            let input = values(ch * h * w), weights = values(m * ch * kk * kk)
            var expected = [Float](repeating: 0, count: m * oh * ow)
            for o in 0..<m {
                for y in 0..<oh {
                    for x in 0..<ow {
                        // Products in (channel, kernel row, column) order.
                        expected[(o * oh + y) * ow + x] = ortSum(ch * kk * kk) { q in
                            let (c, i, j) = (q / (kk * kk), q / kk % kk, q % kk)
                            let iy = y * st - pad + i, ix = x * st - pad + j
                            let v = iy >= 0 && iy < h && ix >= 0 && ix < w ? input[(c * h + iy) * w + ix] : 0
                            return (weights[o * ch * kk * kk + q], v)
                        }
                    }
                }
            }
            for level in levels {
                var c = [Float](repeating: .nan, count: m * oh * ow)
                input.withUnsafeBufferPointer { ip in
                    var g = gk_conv_geometry(input: ip.baseAddress, channels: Int32(ch), h: Int32(h), w: Int32(w), kh: Int32(kk),
                                             kw: Int32(kk), sh: Int32(st), sw: Int32(st), dh: 1, dw: 1, pt: Int32(pad), pl: Int32(pad),
                                             ow: Int32(ow))
                    gk_sgemm_conv(Int32(level), Int32(m), weights, Int32(ch * kk * kk), &g, &c, Int32(oh * ow), 0, Int32(oh * ow), nil, nil)
                }
                XCTAssertEqual(bits(c), bits(expected), "conv \(ch)×\(h)×\(w) k\(kk) s\(st) level \(level)")
            }
        }
        // A 2×2, stride-2 transposed convolution: rows (oc, ki, kj), one output each.
        do {
            let (k, oc, h, w) = (40, 5, 6, 16)
            let rows = 4 * oc
            let a = values(rows * k), input = values(k * h * w), bias = values(rows)
            var expected = [Float](repeating: 0, count: oc * 4 * h * w)
            for row in 0..<rows {
                for p in 0..<(h * w) {
                    let acc = ortSum(k) { (a[row * k + $0], input[$0 * h * w + p]) }
                    let (o, ki, kj) = (row >> 2, (row >> 1) & 1, row & 1)
                    expected[o * 4 * h * w + (2 * (p / w) + ki) * 2 * w + 2 * (p % w) + kj] = acc + bias[row]
                }
            }
            for level in levels {
                var c = [Float](repeating: .nan, count: expected.count)
                gk_deconv2x2(Int32(level), Int32(rows), Int32(k), a, Int32(k), input, Int32(h), Int32(w), &c, 0, Int32(h * w), bias, nil)
                XCTAssertEqual(bits(c), bits(expected), "2×2 transposed convolution level \(level)")
            }
        }
        // Float depthwise (the quantised one sums exact integers): taps in order, fused, then the bias.
        for (h, w, kk, st) in [(19, 45, 3, 1), (20, 33, 3, 2), (15, 70, 5, 1)] {
            let pad = kk / 2
            let oh = (h + 2 * pad - kk) / st + 1, ow = (w + 2 * pad - kk) / st + 1
            let input = values(h * w), kernel = values(kk * kk), shift = values(1)
            var expected = [Float](repeating: 0, count: oh * ow)
            for y in 0..<oh {
                for x in 0..<ow {
                    var acc: Float = 0
                    for i in 0..<kk {
                        for j in 0..<kk {
                            let iy = y * st - pad + i, ix = x * st - pad + j
                            acc = acc.addingProduct(kernel[i * kk + j], iy >= 0 && iy < h && ix >= 0 && ix < w ? input[iy * w + ix] : 0)
                        }
                    }
                    expected[y * ow + x] = acc + shift[0]
                }
            }
            let tables = RequantTables(bias: [0], scale: [1], shift: shift, requant: nil)
            for level in levels {
                var scratch = [Float](repeating: 0, count: gk_dw_scratch(Int32(h), Int32(w), Int32(kk), Int32(kk), Int32(st), Int32(st),
                                                                         Int32(pad), Int32(pad), Int32(oh), Int32(ow)))
                var c = [Float](repeating: .nan, count: oh * ow)
                gk_depthwise(Int32(level), input, Int32(h), Int32(w), 0, kernel, Int32(kk), Int32(kk), Int32(st), Int32(st), Int32(pad),
                             Int32(pad), Int32(oh), Int32(ow), tables.pointer, 0, nil, &scratch, &c)
                XCTAssertEqual(bits(c), bits(expected), "depthwise \(h)×\(w) k\(kk) s\(st) level \(level)")
            }
        }
    }

    /// The float GEMM (every level) against a
    /// double-precision reference, odd sizes, column ranges and K beyond one 256 chunk; up to 12
    /// rows B is read in place, above that packed.
    func testFloatGemmMatchesReference() {
        for (index, (m, n, k)) in [(1, 1, 1), (7, 33, 5), (13, 70, 300), (24, 129, 600), (6, 64, 256), (12, 77, 300),
                                  (5, 40, 1000)].enumerated() {
            var r = Numbers(state: UInt64(50 + index))
            let a = (0..<(m * k)).map { _ in Float(r.next(-100...100)) / 64 }
            let b = (0..<(k * n)).map { _ in Float(r.next(-100...100)) / 64 }
            var expected = [Float](repeating: 0, count: m * n)
            for i in 0..<m {
                for j in 0..<n {
                    var s = 0.0
                    for p in 0..<k { s += Double(a[i * k + p]) * Double(b[p * n + j]) }
                    expected[i * n + j] = Float(s)
                }
            }
            for level in levels {
                var c = [Float](repeating: .nan, count: m * n)
                let split = Int32(n / 2 / 16 * 16)
                gk_sgemm(Int32(level), Int32(m), Int32(k), a, Int32(k), b, Int32(n), &c, Int32(n), 0, split, nil, nil)
                gk_sgemm(Int32(level), Int32(m), Int32(k), a, Int32(k), b, Int32(n), &c, Int32(n), split, Int32(n), nil, nil)
                let worst = zip(c, expected).map { abs($0 - $1) }.max() ?? .nan
                XCTAssertLessThan(worst, 1e-3, "\(m)×\(n)×\(k) level \(level)")
            }
        }
    }

    /// GEMM over the im2col matrix read straight from the input vs a nested-loop reference:
    /// strides, dilation, asymmetric pads, several channels, K over one 256 chunk.
    func testConvolutionGemmMatchesReference() {
        // (channels, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, m)
        // The first four pack tiles; the rest read the input directly (AVX-512): output rows of
        // 16·k columns, rows of other widths (vectors spanning two rows), stride 2.
        let cases = [(3, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5), (30, 13, 10, 3, 3, 2, 2, 1, 1, 1, 0, 1, 1, 7),
                     (4, 12, 12, 3, 2, 1, 2, 2, 1, 2, 0, 2, 1, 13), (2, 70, 5, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 6),
                     (3, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 13), (30, 9, 48, 3, 3, 2, 1, 1, 1, 1, 1, 0, 1, 7),
                     (2, 11, 33, 5, 5, 1, 1, 2, 1, 4, 2, 4, 2, 8), (5, 6, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 24),
                     (3, 13, 17, 2, 3, 1, 1, 1, 2, 0, 0, 1, 3, 6), (3, 9, 64, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 16),
                     (2, 8, 65, 3, 3, 2, 2, 1, 1, 0, 1, 1, 0, 5), (1, 5, 31, 7, 7, 1, 2, 1, 1, 3, 3, 3, 3, 3)]
        for (index, t) in cases.enumerated() {
            let (ch, h, w, kh, kw, sh, sw, dh, dw) = (t.0, t.1, t.2, t.3, t.4, t.5, t.6, t.7, t.8)
            let (pt, pl, pb, pr, m) = (t.9, t.10, t.11, t.12, t.13)
            let oh = (h + pt + pb - (kh - 1) * dh - 1) / sh + 1, ow = (w + pl + pr - (kw - 1) * dw - 1) / sw + 1
            let k = ch * kh * kw
            var r = Numbers(state: UInt64(70 + index))
            let input = (0..<(ch * h * w)).map { _ in Float(r.next(-100...100)) / 64 }
            let a = (0..<(m * k)).map { _ in Float(r.next(-100...100)) / 64 }
            var expected = [Float](repeating: 0, count: m * oh * ow)
            for i in 0..<m {
                for p in 0..<(oh * ow) {
                    var s = 0.0
                    for row in 0..<k {
                        let c = row / (kh * kw), ki = (row / kw) % kh, kj = row % kw
                        let iy = (p / ow) * sh - pt + ki * dh, ix = (p % ow) * sw - pl + kj * dw
                        guard iy >= 0, iy < h, ix >= 0, ix < w else { continue }
                        s += Double(a[i * k + row]) * Double(input[(c * h + iy) * w + ix])
                    }
                    expected[i * oh * ow + p] = Float(s)
                }
            }
            for level in levels {
                var out = [Float](repeating: .nan, count: m * oh * ow)
                input.withUnsafeBufferPointer { ip in
                    var g = gk_conv_geometry(input: ip.baseAddress, channels: Int32(ch), h: Int32(h), w: Int32(w), kh: Int32(kh),
                                             kw: Int32(kw), sh: Int32(sh), sw: Int32(sw), dh: Int32(dh), dw: Int32(dw),
                                             pt: Int32(pt), pl: Int32(pl), ow: Int32(ow))
                    let split = Int32(oh * ow / 2 / 16 * 16)
                    gk_sgemm_conv(Int32(level), Int32(m), a, Int32(k), &g, &out, Int32(oh * ow), 0, split, nil, nil)
                    gk_sgemm_conv(Int32(level), Int32(m), a, Int32(k), &g, &out, Int32(oh * ow), split, Int32(oh * ow), nil, nil)
                }
                let worst = zip(out, expected).map { abs($0 - $1) }.max() ?? .nan
                XCTAssertLessThan(worst, 1e-3, "case \(index) level \(level)")
            }
        }
    }

    /// The 2×2 stride-2 transposed convolution kernel (GEMM tiles interleaved into the output, bias
    /// and a Relu epilogue) against a double-precision reference, split in two column ranges;
    /// rows of 20 pixels and k over 256 take the reference build at every level.
    func testTwoByTwoTransposedConvolution() {
        for (index, (cout, k, h, w)) in [(2, 5, 3, 16), (1, 24, 5, 32), (3, 7, 2, 20), (1, 260, 2, 16)].enumerated() {
            var r = Numbers(state: UInt64(90 + index))
            let m = cout * 4
            let a = (0..<(m * k)).map { _ in Float(r.next(-100...100)) / 64 }
            let input = (0..<(k * h * w)).map { _ in Float(r.next(-100...100)) / 64 }
            let bias = (0..<m).map { Float($0 / 4) - 0.5 }
            var expected = [Float](repeating: 0, count: cout * 4 * h * w)
            for row in 0..<m {
                let (oc, ki, kj) = (row / 4, (row / 2) % 2, row % 2)
                for p in 0..<(h * w) {
                    var s = 0.0
                    for c in 0..<k { s += Double(a[row * k + c]) * Double(input[c * h * w + p]) }
                    expected[oc * 4 * h * w + (2 * (p / w) + ki) * 2 * w + 2 * (p % w) + kj] = max(Float(s) + bias[row], 0)
                }
            }
            let relu = KernelEpilogue([.relu])
            for level in levels {
                var out = [Float](repeating: .nan, count: expected.count)
                let split = Int32(h * w / 2 / 16 * 16)
                for (lo, hi) in [(Int32(0), split), (split, Int32(h * w))] {
                    gk_deconv2x2(Int32(level), Int32(m), Int32(k), a, Int32(k), input, Int32(h), Int32(w), &out, lo, hi, bias,
                                 relu.pointer)
                }
                let worst = zip(out, expected).map { abs($0 - $1) }.max() ?? .nan
                XCTAssertLessThan(worst, 1e-3, "\(cout)×\(k) \(h)×\(w) level \(level)")
            }
        }
    }

    /// Global average and max pooling against double sums, odd plane sizes, the same bits at
    /// every level.
    func testGlobalPooling() {
        for (planes, area) in [(1, 1), (3, 15), (2, 16), (5, 17), (4, 400), (2, 25601)] {
            var r = Numbers(state: UInt64(planes * 1000 + area))
            let src = (0..<(planes * area)).map { _ in Float(r.next(-1000...1000)) / 37 }
            var results: [[Float]] = []
            for level in levels {
                var mean = [Float](repeating: .nan, count: planes), peak = mean
                gk_global_pool(Int32(level), src, planes, area, 1, &mean)
                gk_global_pool(Int32(level), src, planes, area, 0, &peak)
                for p in 0..<planes {
                    let plane = src[(p * area)..<((p + 1) * area)]
                    let exact = plane.reduce(0.0) { $0 + Double($1) } / Double(area)
                    XCTAssertEqual(Double(mean[p]), exact, accuracy: 1e-5 * max(1, abs(exact)), "\(planes)×\(area) level \(level)")
                    XCTAssertEqual(peak[p], plane.max())
                }
                results.append(mean + peak)
            }
            XCTAssertTrue(results.allSatisfy { $0.map(\.bitPattern) == results[0].map(\.bitPattern) }, "levels agree")
        }
    }

    func testNearestUpsampling() {
        for (planes, h, w, fy, fx) in [(3, 5, 7, 2, 2), (2, 4, 3, 3, 1), (1, 1, 9, 1, 2), (2, 3, 3, 2, 3)] {
            let src = (0..<(planes * h * w)).map { Float($0) * 0.5 - 3 }
            var expected: [Float] = []
            for p in 0..<planes { for y in 0..<(h * fy) { for x in 0..<(w * fx) { expected.append(src[p * h * w + (y / fy) * w + x / fx]) } } }
            for level in levels {
                var out = [Float](repeating: .nan, count: expected.count)
                gk_upsample_nearest(Int32(level), src, Int32(planes), Int32(h), Int32(w), Int32(fy), Int32(fx), &out)
                XCTAssertEqual(out, expected, "\(planes)×\(h)×\(w) by \(fy)×\(fx) level \(level)")
            }
        }
    }

    func testRequantBoundsFromEpilogue() throws {
        let fq = Epilogue.fakeQuant(scale: 0.5, zeroPoint: -128, lo: -128, hi: 127)
        XCTAssertEqual(Conv.Requant([fq]), .init(lo: 0, hi: 255, outScale: 0.5))
        // Relu and Clip that the quantisation range already implies: fused (as ONNX Runtime does).
        XCTAssertEqual(Conv.Requant([.relu, fq]), .init(lo: 0, hi: 255, outScale: 0.5))
        let relu6 = Epilogue.clip(lo: 0, hi: 6)
        XCTAssertEqual(Conv.Requant([relu6, .fakeQuant(scale: 0.02, zeroPoint: -128, lo: -128, hi: 127)]),
                       .init(lo: 0, hi: 255, outScale: 0.02))
        // Ones that cut the range: ORT keeps a float Conv there, and so does GraniteML.
        XCTAssertNil(Conv.Requant([.relu, .fakeQuant(scale: 0.5, zeroPoint: 10, lo: 0, hi: 255)]))
        XCTAssertNil(Conv.Requant([relu6, .fakeQuant(scale: 0.1, zeroPoint: -128, lo: -128, hi: 127)]))
        XCTAssertNil(Conv.Requant([.sigmoid, fq]), "other activations keep the float path")
        XCTAssertNil(Conv.Requant([.relu]))
    }
}

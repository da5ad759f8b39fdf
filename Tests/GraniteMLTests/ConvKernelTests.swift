import XCTest
@testable import GraniteML

/// Conv and ConvTranspose kernels (depthwise fast path, blocked im2col, pointwise, grouped,
/// transposed) against a plain nested-loop reference in double precision, on odd sizes, and
/// the affine steps folded into them at load.
final class ConvKernelTests: XCTestCase {
    struct Geometry {
        var cin = 13, cout = 13, h = 17, w = 19, k = 3, stride = 1, dilation = 1, group = 13
        var pads = [1, 1, 1, 1]
    }

    /// The textbook definition of a 2-D convolution.
    static func reference(_ x: [Float], _ wt: [Float], _ b: [Float], _ g: Geometry) -> (shape: [Int], values: [Float]) {
        let ext = (g.k - 1) * g.dilation + 1
        let oh = (g.h + g.pads[0] + g.pads[2] - ext) / g.stride + 1
        let ow = (g.w + g.pads[1] + g.pads[3] - ext) / g.stride + 1
        let cg = g.cin / g.group, mg = g.cout / g.group
        var out = [Float](repeating: 0, count: g.cout * oh * ow)
        for m in 0..<g.cout {
            let gi = m / mg
            for y in 0..<oh {
                for xo in 0..<ow {
                    var acc = Double(b[m])
                    for c in 0..<cg {
                        for ki in 0..<g.k {
                            for kj in 0..<g.k {
                                let iy = y * g.stride - g.pads[0] + ki * g.dilation
                                let ix = xo * g.stride - g.pads[1] + kj * g.dilation
                                guard iy >= 0, iy < g.h, ix >= 0, ix < g.w else { continue }
                                acc += Double(x[((gi * cg + c) * g.h + iy) * g.w + ix]) * Double(wt[((m * cg + c) * g.k + ki) * g.k + kj])
                            }
                        }
                    }
                    out[(m * oh + y) * ow + xo] = Float(acc)
                }
            }
        }
        return ([1, g.cout, oh, ow], out)
    }

    private func check(_ g: Geometry, file: StaticString = #filePath, line: UInt = #line) throws {
        let x = TestModels.values(g.cin * g.h * g.w, seed: 1)
        let wt = TestModels.values(g.cout * (g.cin / g.group) * g.k * g.k, seed: 2)
        let b = TestModels.values(g.cout, seed: 3)
        let data = try TestModels.oneNode(
            op: "Conv", inputShape: [1, g.cin, g.h, g.w],
            initializers: [("w", [g.cout, g.cin / g.group, g.k, g.k], wt), ("b", [g.cout], b)],
            attributes: [TestModels.ints("strides", [g.stride, g.stride]), TestModels.ints("pads", g.pads),
                         TestModels.ints("dilations", [g.dilation, g.dilation]), TestModels.int("group", g.group)])
        let model = try Model(data: data, threads: 2)
        let y = try XCTUnwrap(try model.run(["x": try Tensor(shape: [1, g.cin, g.h, g.w], values: x)])["y"])
        let expected = Self.reference(x, wt, b, g)
        XCTAssertEqual(y.shape, expected.shape, "\(g)", file: file, line: line)
        let worst = zip(y.values, expected.values).map { abs($0 - $1) }.max() ?? .infinity
        XCTAssertLessThan(worst, 1e-4, "\(g)", file: file, line: line)
    }

    func testDepthwiseFastPathAndBorders() throws {
        for (k, stride, dilation, pads) in [(3, 1, 1, [1, 1, 1, 1]), (3, 2, 1, [1, 0, 0, 1]), (5, 1, 1, [2, 2, 2, 2]),
                                            (5, 2, 1, [2, 2, 2, 2]), (3, 1, 2, [2, 2, 2, 2]), (7, 1, 1, [3, 3, 3, 3]),
                                            (3, 2, 1, [0, 0, 0, 0])] {
            try check(Geometry(k: k, stride: stride, dilation: dilation, pads: pads))
        }
    }

    func testIm2colPointwiseAndGrouped() throws {
        try check(Geometry(cin: 5, cout: 7, h: 31, w: 29, k: 3, stride: 2, group: 1, pads: [1, 1, 1, 1]))
        try check(Geometry(cin: 6, cout: 9, h: 13, w: 11, k: 3, stride: 1, group: 3, pads: [1, 2, 0, 1]))
        try check(Geometry(cin: 7, cout: 5, h: 9, w: 15, k: 1, stride: 1, group: 1, pads: [0, 0, 0, 0]))
        // Tall enough that im2col runs in several row blocks.
        try check(Geometry(cin: 96, cout: 8, h: 127, w: 33, k: 3, stride: 1, group: 1, pads: [1, 1, 1, 1]))
    }

    /// The scatter definition of a transposed convolution (no bias), in double precision.
    static func transposed(_ x: [Float], _ wt: [Float], cin: Int, cout: Int, h: Int, w: Int, k: Int, s: Int, p: Int,
                           oh: Int, ow: Int) -> [Double] {
        var out = [Double](repeating: 0, count: cout * oh * ow)
        for c in 0..<cin { for m in 0..<cout { for iy in 0..<h { for ix in 0..<w { for ki in 0..<k { for kj in 0..<k {
            let oy = iy * s - p + ki, ox = ix * s - p + kj
            guard oy >= 0, oy < oh, ox >= 0, ox < ow else { continue }
            out[(m * oh + oy) * ow + ox] += Double(x[(c * h + iy) * w + ix]) * Double(wt[((c * cout + m) * k + ki) * k + kj])
        } } } } } }
        return out
    }

    func testConvTransposeMatchesScatterDefinition() throws {
        let (cin, cout, h, w, k, s, p) = (5, 3, 7, 9, 3, 2, 1)
        let x = TestModels.values(cin * h * w, seed: 4), wt = TestModels.values(cin * cout * k * k, seed: 5)
        let data = try TestModels.oneNode(op: "ConvTranspose", inputShape: [1, cin, h, w], initializers: [("w", [cin, cout, k, k], wt)],
                                          attributes: [TestModels.ints("strides", [s, s]), TestModels.ints("pads", [p, p, p, p]),
                                                       TestModels.ints("output_padding", [1, 1])])
        let y = try XCTUnwrap(try Model(data: data, threads: 1).run(["x": try Tensor(shape: [1, cin, h, w], values: x)])["y"])
        let oh = s * (h - 1) + 1 + k - 2 * p, ow = s * (w - 1) + 1 + k - 2 * p
        XCTAssertEqual(y.shape, [1, cout, oh, ow])
        let expected = Self.transposed(x, wt, cin: cin, cout: cout, h: h, w: w, k: k, s: s, p: p, oh: oh, ow: ow)
        let worst = zip(y.values, expected).map { abs(Double($0) - $1) }.max() ?? .infinity
        XCTAssertLessThan(worst, 1e-4)
    }

    /// A segmentation head's upsampling: 2×2 stride-2 ConvTranspose, then a per-channel Add (the
    /// exported bias), BatchNormalization and Relu, all folded into the one kernel. Rows of 32
    /// pixels take the AVX-512 kernel, rows of 20 the GEMM + scatter path; both threaded.
    func testTwoByTwoConvTransposeWithFoldedBiasAndBatchNorm() throws {
        for (cin, cout, h, w, threads) in [(5, 3, 3, 32, 1), (24, 1, 4, 48, 2), (6, 4, 5, 20, 2)] {
            let x = TestModels.values(cin * h * w, seed: 6), wt = TestModels.values(cin * cout * 4, seed: 7)
            let add = TestModels.values(cout, seed: 8)
            let (scale, shift) = (TestModels.values(cout, seed: 9), TestModels.values(cout, seed: 10))
            let (mean, variance) = (TestModels.values(cout, seed: 11), TestModels.values(cout, seed: 12).map { $0 * $0 + 0.5 })
            let data = try TestModels.chain(inputShape: [1, cin, h, w], [
                .init(op: "ConvTranspose", initializers: [("w", [cin, cout, 2, 2], wt)],
                      attributes: [TestModels.ints("kernel_shape", [2, 2]), TestModels.ints("strides", [2, 2])]),
                .init(op: "Add", initializers: [("b", [1, cout, 1, 1], add)]),
                .init(op: "BatchNormalization", initializers: [("scale", [cout], scale), ("shift", [cout], shift),
                                                               ("mean", [cout], mean), ("var", [cout], variance)]),
                .init(op: "Relu"),
            ])
            let model = try Model(data: data, threads: threads)
            XCTAssertEqual(model.plannedOps, ["ConvTranspose+1"], "Add and BatchNormalization folded, Relu fused")
            let y = try XCTUnwrap(try model.run(["x": try Tensor(shape: [1, cin, h, w], values: x)])["y"])
            XCTAssertEqual(y.shape, [1, cout, 2 * h, 2 * w])
            var expected = Self.transposed(x, wt, cin: cin, cout: cout, h: h, w: w, k: 2, s: 2, p: 0, oh: 2 * h, ow: 2 * w)
            for i in expected.indices {
                let c = i / (4 * h * w)
                let bn = (expected[i] + Double(add[c]) - Double(mean[c])) / (Double(variance[c]) + 1e-5).squareRoot()
                expected[i] = max(bn * Double(scale[c]) + Double(shift[c]), 0)
            }
            let worst = zip(y.values, expected).map { abs(Double($0) - $1) }.max() ?? .infinity
            XCTAssertLessThan(worst, 1e-4, "\(cin)→\(cout) \(h)×\(w)")
        }
    }

    /// A learnable scale and bias after a Conv (constant Mul by a scalar, Add per channel) fold
    /// into its weights and bias; an Add of a non-constant does not.
    func testConvFoldsConstantMulAndAdd() throws {
        let g = Geometry(cin: 4, cout: 6, h: 9, w: 11, k: 3, stride: 1, group: 1, pads: [1, 1, 1, 1])
        let x = TestModels.values(g.cin * g.h * g.w, seed: 13), wt = TestModels.values(g.cout * g.cin * 9, seed: 14)
        let b = TestModels.values(g.cout, seed: 15), add = TestModels.values(g.cout, seed: 16)
        let data = try TestModels.chain(inputShape: [1, g.cin, g.h, g.w], [
            .init(op: "Conv", initializers: [("w", [g.cout, g.cin, 3, 3], wt), ("b", [g.cout], b)],
                  attributes: [TestModels.ints("pads", g.pads)]),
            .init(op: "Mul", initializers: [("s", [1], [1.75])]),
            .init(op: "Add", initializers: [("a", [g.cout, 1, 1], add)]),
        ])
        let model = try Model(data: data, threads: 1)
        XCTAssertEqual(model.plannedOps, ["Conv"])
        let y = try XCTUnwrap(try model.run(["x": try Tensor(shape: [1, g.cin, g.h, g.w], values: x)])["y"])
        let reference = Self.reference(x, wt, b, g)
        let plane = g.h * g.w
        let expected = reference.values.enumerated().map { Double($1) * 1.75 + Double(add[$0 / plane]) }
        let worst = zip(y.values, expected).map { abs(Double($0) - $1) }.max() ?? .infinity
        XCTAssertLessThan(worst, 1e-4)
    }
}

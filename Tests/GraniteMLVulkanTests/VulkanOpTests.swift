import GraniteGPU
import XCTest
@testable import GraniteML
@testable import GraniteMLVulkan

/// Every op of the Vulkan backend against GraniteML's CPU runtime, on seeded random inputs at
/// odd sizes. Tolerance: |GPU − CPU| ≤ 1e-4 · max(1, max |CPU|) (float sums in another order).
final class VulkanOpTests: XCTestCase {
    static let tolerance: Float = 1e-4

    /// Runs `builder`'s graph on the CPU and on the GPU with random inputs of `shapes`; returns the GPU model.
    @discardableResult
    private func compare(_ builder: GraphBuilder, _ shapes: [String: [Int]], seed: UInt64 = 1,
                         file: StaticString = #filePath, line: UInt = #line) throws -> VulkanModel {
        let gpu = try GPUTest.context()
        let model = try builder.model()
        var random = SeededValues(seed: seed)
        var feeds: [String: Tensor] = [:]
        for (name, shape) in shapes.sorted(by: { $0.key < $1.key }) {
            feeds[name] = try Tensor(shape: shape, values: random.next(shape.reduce(1, *)))
        }
        let expected = try model.run(feeds)
        let vulkan = try VulkanModel(model: model, context: gpu)
        XCTAssertGreaterThan(vulkan.dispatchCount, 0, "nothing ran on the GPU", file: file, line: line)
        let actual = try vulkan.run(feeds)
        for (name, e) in expected {
            let a = try XCTUnwrap(actual[name], file: file, line: line)
            XCTAssertEqual(a.shape, e.shape, name, file: file, line: line)
            let scale = max(1, e.values.map(abs).max() ?? 0)
            let worst = zip(a.values, e.values).map { abs($0 - $1) }.max() ?? 0
            XCTAssertLessThanOrEqual(worst, Self.tolerance * scale, "\(name): max |GPU − CPU| \(worst) of \(scale)", file: file, line: line)
        }
        // A second run on the same recording gives the same answer (nothing left over in the arena).
        let again = try vulkan.run(feeds)
        for (name, a) in actual { XCTAssertEqual(again[name]?.values, a.values, "\(name) on a second run", file: file, line: line) }
        return vulkan
    }

    /// A Conv (and `then`) against the CPU; `kernel`: the conv kernel the dispatch must use.
    private func conv(_ x: [Int], weights w: [Int], attributes: [Onnx_AttributeProto], bias: Bool = true, then: String? = nil,
                      seed: UInt64 = 2, kernel: MLDispatch.Kernel? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        var g = GraphBuilder()
        g.input("x", x)
        var random = SeededValues(seed: seed)
        g.constant("w", w, random.next(w.reduce(1, *)))
        if bias { g.constant("b", [w[0]], random.next(w[0])) }
        g.node("Conv", ["x", "w"] + (bias ? ["b"] : []), [then == nil ? "y" : "c"], attributes)
        if let then {
            if then == "Clip" {
                g.constant("lo", [], [0]); g.constant("hi", [], [0.5])
                g.node("Clip", ["c", "lo", "hi"], ["y"])
            } else {
                g.node(then, ["c"], ["y"])
            }
        }
        g.output("y")
        let vulkan = try compare(g, ["x": x], file: file, line: line)
        if let kernel { XCTAssertEqual(vulkan.dispatches.first?.kernel, kernel, "\(x) * \(w)", file: file, line: line) }
    }

    func testConvolutions() throws {
        try conv([1, 3, 13, 17], weights: [5, 3, 3, 3], attributes: [Attr.ints("pads", [1, 1, 1, 1])], then: "Relu")
        try conv([2, 4, 11, 9], weights: [6, 2, 3, 1], attributes: [Attr.int("group", 2), Attr.ints("strides", [2, 1]), Attr.ints("pads", [1, 0, 2, 0])])
        try conv([1, 7, 19, 13], weights: [7, 1, 3, 3], attributes: [Attr.int("group", 7), Attr.ints("strides", [2, 2]),
                                                                      Attr.ints("pads", [2, 2, 2, 2]), Attr.ints("dilations", [2, 2])], then: "Clip")
        try conv([1, 9, 7, 5], weights: [13, 9, 1, 1], attributes: [], bias: false, then: "Sigmoid")
        try conv([1, 3, 12, 12], weights: [4, 3, 5, 5], attributes: [Attr.string("auto_pad", "SAME_UPPER"), Attr.ints("strides", [2, 2])])
    }

    /// The tiled kernels' edges: output channels not a multiple of their block of 8,
    /// pixels not a multiple of the 64-invocation workgroup (nor of its 4 a lane), batches,
    /// strides, padding, dilation, and a grouped shape that stays on the general kernel.
    func testTiledConvolutions() throws {
        try conv([2, 5, 7, 9], weights: [21, 5, 1, 1], attributes: [], then: "Relu", kernel: .convPointwise)
        try conv([1, 19, 5, 13], weights: [16, 19, 1, 1], attributes: [], bias: false, kernel: .convPointwise)
        try conv([1, 6, 9, 11], weights: [3, 6, 1, 1], attributes: [Attr.ints("strides", [2, 2])], then: "Clip", kernel: .convPointwise)
        try conv([1, 4, 6, 7], weights: [5, 4, 1, 1], attributes: [Attr.ints("pads", [1, 0, 0, 1])], kernel: .convDense)
        try conv([2, 3, 9, 10], weights: [7, 3, 3, 3], attributes: [Attr.ints("pads", [1, 1, 1, 1])], then: "Relu", kernel: .convDense)
        try conv([1, 5, 11, 13], weights: [9, 5, 3, 2], attributes: [Attr.ints("strides", [2, 3]), Attr.ints("pads", [0, 1, 2, 1]),
                                                                     Attr.ints("dilations", [2, 1])], kernel: .convDense)
        try conv([1, 5, 13, 11], weights: [5, 1, 3, 3], attributes: [Attr.int("group", 5), Attr.ints("strides", [2, 2]), Attr.ints("pads", [1, 1, 1, 1])],
                 then: "Relu", kernel: .convDepthwise)
        try conv([2, 3, 10, 9], weights: [3, 1, 5, 5], attributes: [Attr.int("group", 3), Attr.ints("pads", [2, 1, 2, 3]), Attr.ints("dilations", [1, 2])],
                 bias: false, kernel: .convDepthwise)
        try conv([1, 67, 3, 2], weights: [67, 1, 3, 3], attributes: [Attr.int("group", 67), Attr.ints("pads", [1, 1, 1, 1])], kernel: .convDepthwise)
        try conv([1, 6, 8, 8], weights: [12, 1, 3, 3], attributes: [Attr.int("group", 6), Attr.ints("pads", [1, 1, 1, 1])], kernel: .conv)
    }

    /// A QDQ convolution as FastDepth's (Relu → Q → DQ → Conv with int8 weights and int32 bias →
    /// Relu → Q → DQ): the CPU runs it on its int8 kernels, the GPU must give the same values to
    /// the bit, on the tiled kernels' edges.
    private func int8Conv(_ x: [Int], weights w: [Int], attributes: [Onnx_AttributeProto], kernel: MLDispatch.Kernel,
                          file: StaticString = #filePath, line: UInt = #line) throws {
        var g = GraphBuilder()
        var random = SeededValues(seed: 3)
        let m = w[0], sx: Float = 0.02, sy: Float = 0.05
        let ws = random.next(m).map { 0.002 + 0.004 * abs($0) }
        g.input("x", x)
        g.node("Relu", ["x"], ["r"])
        g.constant("sx", [], [sx]); g.integers("zx", [], [0], type: 2)
        g.node("QuantizeLinear", ["r", "sx", "zx"], ["rq"])
        g.node("DequantizeLinear", ["rq", "sx", "zx"], ["rd"])
        g.integers("wq", w, random.next(w.reduce(1, *)).map { Int(($0 * 127).rounded()) }, type: 3)
        g.constant("ws", [m], ws); g.integers("wz", [m], [Int](repeating: 0, count: m), type: 3)
        g.node("DequantizeLinear", ["wq", "ws", "wz"], ["w"], [Attr.int("axis", 0)])
        g.integers("bq", [m], random.next(m).map { Int(($0 * 2000).rounded()) }, type: 6)
        g.constant("bs", [m], ws.map { $0 * sx })
        g.node("DequantizeLinear", ["bq", "bs"], ["b"], [Attr.int("axis", 0)])
        g.node("Conv", ["rd", "w", "b"], ["c"], attributes)
        g.node("Relu", ["c"], ["cr"])
        g.constant("sy", [], [sy]); g.integers("zy", [], [0], type: 2)
        g.node("QuantizeLinear", ["cr", "sy", "zy"], ["cq"])
        g.node("DequantizeLinear", ["cq", "sy", "zy"], ["y"])
        g.output("y")
        let model = try g.model()
        XCTAssertEqual(model.quantizedConvs, 1, "the CPU should run the Conv on its int8 kernels", file: file, line: line)
        var inputs = SeededValues(seed: 4)
        let feeds = ["x": try Tensor(shape: x, values: inputs.next(x.reduce(1, *)).map { $0 * 4 })]
        let vulkan = try VulkanModel(model: model, context: try GPUTest.context())
        let conv = try XCTUnwrap(vulkan.dispatches.first { $0.node.contains("conv") }, file: file, line: line)
        XCTAssertEqual(conv.kernel, kernel, file: file, line: line)
        XCTAssertEqual(conv.push[21], 1, "the dispatch should run the int8 form", file: file, line: line)
        let expected = try XCTUnwrap(try model.run(feeds)["y"], file: file, line: line)
        let actual = try XCTUnwrap(try vulkan.run(feeds)["y"], file: file, line: line)
        XCTAssertEqual(actual.shape, expected.shape, file: file, line: line)
        XCTAssertEqual(actual.values, expected.values, "\(x) * \(w): int8 should agree bit for bit", file: file, line: line)
        XCTAssertGreaterThan(Set(expected.values).count, 4, "the test should span several output levels", file: file, line: line)
    }

    func testInt8TiledConvolutionsAreTheCPUsIntegers() throws {
        try int8Conv([1, 37, 9, 7], weights: [21, 37, 1, 1], attributes: [], kernel: .convPointwise)
        try int8Conv([2, 8, 5, 5], weights: [40, 8, 1, 1], attributes: [], kernel: .convPointwise)
        // A long sum: 600 input channels.
        try int8Conv([1, 600, 5, 3], weights: [6, 600, 1, 1], attributes: [], kernel: .convPointwise)
        try int8Conv([1, 11, 13, 9], weights: [11, 1, 3, 3], attributes: [Attr.int("group", 11), Attr.ints("strides", [2, 2]),
                                                                         Attr.ints("pads", [1, 1, 1, 1])], kernel: .convDepthwise)
        try int8Conv([1, 6, 12, 10], weights: [6, 1, 5, 5], attributes: [Attr.int("group", 6), Attr.ints("pads", [2, 2, 2, 2])],
                     kernel: .convDepthwise)
    }

    func testBroadcastArithmetic() throws {
        for op in ["Add", "Sub", "Mul", "Div"] {
            var g = GraphBuilder()
            g.input("a", [2, 3, 7, 9])
            g.input("b", op == "Div" ? [1, 3, 1, 9] : [1, 1, 7, 9])
            g.node(op, ["a", "b"], ["y"])
            g.output("y")
            try compare(g, ["a": [2, 3, 7, 9], "b": op == "Div" ? [1, 3, 1, 9] : [1, 1, 7, 9]], seed: 3)
        }
        // A constant operand and a fused activation.
        var g = GraphBuilder()
        g.input("a", [1, 5, 3, 11])
        var random = SeededValues(seed: 4)
        g.constant("k", [5, 1, 1], random.next(5))
        g.node("Mul", ["a", "k"], ["m"])
        g.node("LeakyRelu", ["m"], ["y"], [Attr.float("alpha", 0.1)])
        g.output("y")
        try compare(g, ["a": [1, 5, 3, 11]])
    }

    func testActivationsOnTheirOwn() throws {
        for op in ["Relu", "Sigmoid", "HardSigmoid", "LeakyRelu"] {
            var g = GraphBuilder()
            g.input("x", [3, 127])
            g.node(op, ["x"], ["y"])
            g.output("y")
            try compare(g, ["x": [3, 127]])
        }
    }

    func testDataMovement() throws {
        var g = GraphBuilder()
        g.input("a", [1, 3, 5, 7]); g.input("b", [1, 2, 5, 7])
        g.node("Concat", ["a", "b"], ["c"], [Attr.int("axis", 1)])
        g.node("Transpose", ["c"], ["t"], [Attr.ints("perm", [0, 2, 3, 1])])
        g.integers("shape", [2], [5, -1])
        g.node("Reshape", ["t", "shape"], ["y"])
        g.output("y")
        try compare(g, ["a": [1, 3, 5, 7], "b": [1, 2, 5, 7]])

        for mode in ["constant", "reflect", "edge"] {
            var p = GraphBuilder()
            p.input("x", [1, 2, 9, 13])
            p.integers("pads", [8], [0, 0, 2, 1, 0, 0, 1, 3])
            p.constant("value", [], [0.5])
            p.node("Pad", ["x", "pads"] + (mode == "constant" ? ["value"] : []), ["y"], [Attr.string("mode", mode)])
            p.output("y")
            try compare(p, ["x": [1, 2, 9, 13]])
        }

        var s = GraphBuilder()
        s.input("x", [2, 6, 11])
        s.integers("starts", [2], [1, 2]); s.integers("ends", [2], [5, 11]); s.integers("axes", [2], [1, 2]); s.integers("steps", [2], [2, 3])
        s.node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])
        s.output("y")
        try compare(s, ["x": [2, 6, 11]])
    }

    func testResizeModes() throws {
        let cases: [(String, String, String?)] = [
            ("nearest", "asymmetric", "floor"), ("nearest", "half_pixel", "round_prefer_floor"),
            ("linear", "align_corners", nil), ("linear", "half_pixel", nil), ("linear", "pytorch_half_pixel", nil),
        ]
        for (mode, coordinates, nearest) in cases {
            var g = GraphBuilder()
            g.input("x", [1, 3, 7, 11])
            g.integers("sizes", [4], [1, 3, 17, 23])
            g.node("Resize", ["x", "", "", "sizes"], ["y"], [Attr.string("mode", mode), Attr.string("coordinate_transformation_mode", coordinates)]
                + (nearest.map { [Attr.string("nearest_mode", $0)] } ?? []))
            g.output("y")
            try compare(g, ["x": [1, 3, 7, 11]])
        }
    }

    func testPooling() throws {
        var g = GraphBuilder()
        g.input("x", [1, 4, 13, 11])
        g.node("MaxPool", ["x"], ["m"], [Attr.ints("kernel_shape", [3, 3]), Attr.ints("strides", [2, 2]), Attr.ints("pads", [1, 1, 1, 1])])
        g.node("AveragePool", ["m"], ["a"], [Attr.ints("kernel_shape", [2, 3]), Attr.ints("pads", [0, 1, 1, 1]), Attr.int("ceil_mode", 1)])
        g.node("GlobalAveragePool", ["a"], ["y"])
        g.output("a"); g.output("y")
        try compare(g, ["x": [1, 4, 13, 11]])
    }

    func testMatrices() throws {
        var g = GraphBuilder()
        g.input("a", [7, 13])
        var random = SeededValues(seed: 9)
        g.constant("w", [5, 13], random.next(65)); g.constant("c", [5], random.next(5))
        g.node("Gemm", ["a", "w", "c"], ["y"], [Attr.int("transB", 1), Attr.float("alpha", 0.5), Attr.float("beta", 2)])
        g.output("y")
        try compare(g, ["a": [7, 13]])

        var m = GraphBuilder()
        m.input("a", [2, 3, 5, 9]); m.input("b", [3, 9, 4])
        m.node("MatMul", ["a", "b"], ["y"])
        m.output("y")
        try compare(m, ["a": [2, 3, 5, 9], "b": [3, 9, 4]])
    }

    func testQuantiseAndDequantise() throws {
        var g = GraphBuilder()
        g.input("x", [1, 3, 5, 7])
        g.constant("s", [3], [0.01, 0.02, 0.05])
        g.integers("z", [3], [128, 100, 0], type: 2)
        g.node("QuantizeLinear", ["x", "s", "z"], ["q"], [Attr.int("axis", 1)])
        g.node("DequantizeLinear", ["q", "s", "z"], ["y"], [Attr.int("axis", 1)])
        g.output("q"); g.output("y")
        try compare(g, ["x": [1, 3, 5, 7]])
    }

    /// A float convolution whose output is quantised sums its taps as fused multiply-adds, each
    /// rounded once (as GraniteML's CPU GEMM and ONNX Runtime's do), whatever the device's `fma()`
    /// does (lavapipe's rounds twice; then conv.comp emulates it): checked against Swift's
    /// `addingProduct` chain, exactly. Pixel 0 is built to tell the two apart: its taps
    /// (1 + 2⁻¹²)·(1 + 2⁻¹²) and (1 + 2⁻¹²)·−(1 + 2⁻¹²) sum to −2⁻²⁴ rounded once, 0 rounded twice,
    /// and the bias 1.5·2⁻²⁰ on a grid of 2⁻²⁰ makes that one quantisation step (1.4375 → 1, 1.5 → 2).
    func testQuantisedFloatConvolutionRoundsEachTapOnce() throws {
        let gpu = try GPUTest.context()
        let (c, m, h, w) = (16, 5, 9, 11)
        let scale = Float(1) / Float(1 << 20), one = 1 + Float(1) / Float(1 << 12)
        var random = SeededValues(seed: 21)
        var weights = random.next(m * c).map { $0 / 1024 }
        weights[0] = one; weights[1] = -one
        for k in 2..<c { weights[k] = 0 }
        let bias = [1.5 * scale] + random.next(m - 1).map { $0 / 16_384 }
        var x = random.next(c * h * w).map { $0 / 64 }
        x[0] = one; x[h * w] = one
        var g = GraphBuilder()
        g.input("x", [1, c, h, w])
        g.constant("w", [m, c, 1, 1], weights)
        g.constant("b", [m], bias)
        g.constant("s", [], [scale])
        g.integers("z", [], [0], type: 3)
        g.node("Conv", ["x", "w", "b"], ["c"])
        g.node("QuantizeLinear", ["c", "s", "z"], ["q"])
        g.node("DequantizeLinear", ["q", "s", "z"], ["y"])
        g.output("y")
        let vulkan = try VulkanModel(model: try g.model(), context: gpu)
        XCTAssertEqual(vulkan.dispatchCount, 1, "the quantisation should be the convolution's epilogue")
        let got = try XCTUnwrap(try vulkan.run(["x": try Tensor(shape: [1, c, h, w], values: x)])["y"]).values
        var expected: [Float] = []
        for o in 0..<m {
            for p in 0..<(h * w) {
                var sum: Float = 0
                for k in 0..<c { sum = sum.addingProduct(x[k * h * w + p], weights[o * c + k]) }
                expected.append(min(max((((sum + bias[o]) / scale)).rounded(.toNearestOrEven), -128), 127) * scale)
            }
        }
        XCTAssertEqual(got[0], scale, "pixel 0 rounded twice would be 2 steps")
        XCTAssertEqual(got, expected)
        XCTAssertGreaterThan(Set(expected).count, 50, "the outputs should spread over the grid")
        print("float taps on \(gpu.deviceName): fma() \(try FusedMultiplyAdd.roundsTwice(on: gpu) ? "rounds twice, emulated" : "rounds once")")
    }

    func testTransposedConvolutions() throws {
        let cases: [([Int], [Int], [Onnx_AttributeProto])] = [
            ([1, 3, 7, 9], [3, 4, 2, 2], [Attr.ints("strides", [2, 2])]),
            ([2, 4, 5, 6], [4, 3, 3, 3], [Attr.int("group", 2), Attr.ints("strides", [2, 1]), Attr.ints("pads", [1, 0, 1, 1]),
                                          Attr.ints("output_padding", [1, 0])]),
            ([1, 2, 6, 5], [2, 5, 3, 2], [Attr.ints("dilations", [2, 1]), Attr.string("auto_pad", "SAME_UPPER"), Attr.ints("strides", [2, 2])]),
        ]
        for (x, w, attributes) in cases {
            var g = GraphBuilder()
            g.input("x", x)
            var random = SeededValues(seed: 11)
            let m = w[1] * (attributes.first { $0.name == "group" }.map { Int($0.i) } ?? 1)
            g.constant("w", w, random.next(w.reduce(1, *)))
            g.constant("b", [m], random.next(m))
            g.node("ConvTranspose", ["x", "w", "b"], ["c"], attributes)
            g.node("Relu", ["c"], ["y"])
            g.output("y")
            try compare(g, ["x": x])
        }
    }

    func testSoftmax() throws {
        for (opset, shape, axis) in [(13, [2, 5, 7], 1), (13, [3, 129], -1), (11, [2, 3, 4, 5], 2)] {
            var g = GraphBuilder()
            g.opset = opset
            g.input("x", shape)
            g.node("Softmax", ["x"], ["y"], [Attr.int("axis", axis)])
            g.output("y")
            try compare(g, ["x": shape])
        }
    }

    func testUnsupportedOpNamesTheNode() throws {
        let gpu = try GPUTest.context()
        var g = GraphBuilder()
        g.input("x", [2, 5])
        g.node("Cast", ["x"], ["y"], name: "the_cast", [Attr.int("to", 7)])
        g.output("y")
        XCTAssertThrowsError(try VulkanModel(model: try g.model(), context: gpu)) { error in
            guard case let MLError.unsupportedOp(node, op, reason)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertEqual(node, "the_cast")
            XCTAssertEqual(op, "Cast")
            XCTAssertTrue(reason.contains("Vulkan"), reason)
        }
    }
}

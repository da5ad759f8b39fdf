import Foundation
import XCTest
import SwiftProtobuf
@testable import GraniteML

/// Bad models and bad inputs give typed errors that name the node, op or input.
final class ModelErrorTests: XCTestCase {
    private func model(op: String, domain: String = "", inputShape: [Int] = [1, 2, 4, 4],
                       extraInputs: [(String, [Int], [Float])] = []) throws -> Data {
        try TestModels.oneNode(op: op, domain: domain, inputShape: inputShape, initializers: extraInputs)
    }

    func testUnsupportedOpNamesNodeAndOp() throws {
        XCTAssertThrowsError(try Model(data: try model(op: "LSTM"), name: "lstm.onnx")) { error in
            guard case let .unsupportedOp(node, op, _)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertEqual(node, "the_node")
            XCTAssertEqual(op, "LSTM")
        }
        XCTAssertThrowsError(try Model(data: try model(op: "Relu", domain: "com.example"))) { error in
            guard case let .unsupportedOp(_, op, _)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertEqual(op, "com.example.Relu")
        }
    }

    func testMalformedFileIsATypedError() throws {
        XCTAssertThrowsError(try Model(data: Data([0x08, 0x96, 0x01, 0xFF, 0xFF, 0x12]), name: "junk.onnx")) { error in
            guard case let .malformedModel(path, _)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "junk.onnx")
        }
        XCTAssertThrowsError(try Model(path: "/nonexistent/model.onnx")) { error in
            guard case .unreadableFile(path: "/nonexistent/model.onnx", _)? = error as? MLError else { return XCTFail("\(error)") }
        }
        // A truncated real model.
        let real = try Data(contentsOf: URL(fileURLWithPath: try TestEnvironment.model("ppocr-mobile-v2-cls.onnx")))
        XCTAssertThrowsError(try Model(data: real.prefix(real.count / 2), name: "half.onnx")) { error in
            XCTAssertNotNil(error as? MLError, "\(error)")
        }
    }

    /// Shapes are untrusted: dimensions whose product overflows, or a plan past the memory
    /// limit, are typed errors at load (found while fuzzing the loader, Fuzzers/fuzz-onnx).
    func testShapesBeyondMemoryAreTypedErrors() throws {
        let huge = try model(op: "Add", extraInputs: [("b", [1 << 40, 1 << 40], [])])
        XCTAssertThrowsError(try Model(data: huge, name: "huge.onnx")) { error in
            guard case let .malformedModel(path, reason)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "huge.onnx")
            XCTAssertTrue(reason.contains("initializer 'b'") && reason.contains("more elements"), reason)
        }
        let wide = try model(op: "Relu", inputShape: [1, 3, 100_000, 100_000])
        XCTAssertThrowsError(try Model(data: wide, name: "wide.onnx", threads: 1)) { error in
            guard case let .malformedModel(_, reason)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("input 'x'") && reason.contains("memory limit"), reason)
        }
        // An output inferred past the limit names its node; a plan past it names the model.
        let upscale = try model(op: "Resize", inputShape: [1, 2, 64, 64],
                                extraInputs: [("roi", [0], []), ("scales", [4], [1, 1, 1000, 1000])])
        XCTAssertThrowsError(try Model(data: upscale, threads: 1)) { error in
            guard case let .invalidNode(node, op, reason)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertEqual(node, "the_node")
            XCTAssertEqual(op, "Resize")
            XCTAssertTrue(reason.contains("memory limit"), reason)
        }
        let small = try model(op: "Relu", inputShape: [1, 2, 64, 64])
        XCTAssertThrowsError(try Model(data: small, threads: 1, memoryLimit: 40 << 10)) { error in
            guard case let .malformedModel(_, reason)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("activations") && reason.contains("memory limit"), reason)
        }
        XCTAssertNoThrow(try Model(data: small, threads: 1, memoryLimit: 1 << 20))
    }

    /// Found by Fuzzers/fuzz-onnx: ONNX's concat node test with its first input declared twice
    /// trapped (duplicate dictionary key) while planning; now a typed error at load.
    func testDuplicateGraphInputIsATypedError() throws {
        let data = try XCTUnwrap(Data(base64Encoded: """
            CAcSDGJhY2tlbmQtdGVzdDqUAQotCgZ2YWx1ZTAKBnZhbHVlMRIGb3V0cHV0IgZDb25jYXQqCwoEYXhpcxgAoAECEhV0ZXN0X2NvbmNhdF8y\
            ZF9heGlzXzBaGAoGdmFsdWUwEg4KDAgBEggKAggCCgIIAloYCgZ2YWx1ZTASDgoMCAESCAoCCAIKAggCYhgKBm91dHB1dBIOCgwIARIICgII\
            BAoCCAJCBAoAEA0=
            """))
        XCTAssertThrowsError(try Model(data: data, name: "dup.onnx", threads: 1)) { error in
            XCTAssertEqual(error as? MLError, .malformedModel(path: "dup.onnx", reason: "graph input 'value0' is declared twice"))
        }
    }

    /// Found by Fuzzers/fuzz-onnx: FastDepth's first layers with one pad of 2^56 made Pad build
    /// per-axis index maps of that length (a 2^56-element allocation) before any size check.
    /// The input is the fuzzer's, kept as a seed of the fuzz tier too.
    func testPadFarPastMemoryIsATypedError() throws {
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fuzzers/Seeds/onnx/crash-pad-huge.onnx")
        XCTAssertThrowsError(try Model(data: try Data(contentsOf: seed), name: "pad.onnx", threads: 1)) { error in
            guard case let .invalidNode(_, op, reason)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertEqual(op, "Pad")
            XCTAssertTrue(reason.contains("memory limit"), reason)
        }
        // Pads whose sum overflows an Int.
        let overflowing = try model(op: "Pad", extraInputs: [("pads", [8], [0, 0, 0, 9e18, 0, 0, 0, 9e18])])
        XCTAssertThrowsError(try Model(data: overflowing, threads: 1)) { error in
            guard case let .invalidNode(_, "Pad", reason)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("overflow"), reason)
        }
    }

    /// Found by Fuzzers/fuzz-onnx: a Conv whose pads were mutated to ~2^62 overflowed the output
    /// plane (oh × ow) and trapped; window attributes are now bounded and outputs checked.
    func testConvWithHugePadsIsATypedError() throws {
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fuzzers/Seeds/onnx/crash-conv-huge-pads.onnx")
        XCTAssertThrowsError(try Model(data: try Data(contentsOf: seed), name: "conv.onnx", threads: 1)) { error in
            guard case let .invalidNode(_, op, _)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertEqual(op, "Conv")
        }
        let wide = try model(op: "Conv", extraInputs: [("w", [2, 2, 1, 1], [1, 0, 0, 1])])
        for pads in [[0, 0, 1 << 40, 1 << 40], [0, 0, 1 << 20, 1 << 20]] {
            var proto = try Onnx_ModelProto(serializedBytes: wide)
            proto.graph.node[0].attribute = [TestModels.ints("pads", pads)]
            XCTAssertThrowsError(try Model(data: try proto.serializedData(), threads: 1)) { error in
                guard case .invalidNode(_, "Conv", _)? = error as? MLError else { return XCTFail("\(error)") }
            }
        }
        // Resize scales that no shape can hold.
        for scale: Float in [.infinity, 1e30] {
            let resize = try model(op: "Resize", extraInputs: [("roi", [0], []), ("scales", [4], [1, 1, scale, 1])])
            XCTAssertThrowsError(try Model(data: resize, threads: 1)) { error in
                guard case .invalidNode(_, "Resize", _)? = error as? MLError else { return XCTFail("\(error)") }
            }
        }
    }

    /// Found by Fuzzers/fuzz-onnx: a QuantizeLinear whose output list was cut to nothing made
    /// the epilogue fusion index past the end; a node without outputs is now refused at load.
    func testNodeWithoutOutputsIsATypedError() throws {
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fuzzers/Seeds/onnx/crash-quantize-without-output.onnx")
        XCTAssertThrowsError(try Model(data: try Data(contentsOf: seed), name: "q.onnx", threads: 1)) { error in
            guard case let .invalidNode(_, op, reason)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertEqual(op, "QuantizeLinear")
            XCTAssertEqual(reason, "the node has no outputs")
        }
    }

    /// Found by Fuzzers/fuzz-onnx: a Softmax over a scalar (a Gather with a scalar index feeding
    /// it) indexed past its empty shape; now a typed error naming the node.
    func testSoftmaxOfAScalarIsATypedError() throws {
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fuzzers/Seeds/onnx/crash-softmax-scalar.onnx")
        XCTAssertThrowsError(try Model(data: try Data(contentsOf: seed), name: "softmax.onnx", threads: 1)) { error in
            guard case let .invalidNode(_, "Softmax", reason)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("scalar"), reason)
        }
    }

    /// Found by Fuzzers/fuzz-onnx: a Reshape target shape whose known dimensions multiply past
    /// Int.max trapped; now "cannot reshape".
    func testReshapeToAnOverflowingShapeIsATypedError() throws {
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fuzzers/Seeds/onnx/crash-reshape-overflow.onnx")
        XCTAssertThrowsError(try Model(data: try Data(contentsOf: seed), name: "reshape.onnx", threads: 1)) { error in
            guard case let .invalidNode(_, "Reshape", reason)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.hasPrefix("cannot reshape"), reason)
        }
        for spec: [Float] in [[4e9, 4e9, 4e9, -1], [4e9, 4e9, 4e9, 4e9]] {
            let reshape = try model(op: "Reshape", extraInputs: [("shape", [4], spec)])
            XCTAssertThrowsError(try Model(data: reshape, threads: 1)) { error in
                guard case let .invalidNode(_, "Reshape", reason)? = error as? MLError else { return XCTFail("\(error)") }
                XCTAssertTrue(reason.hasPrefix("cannot reshape"), reason)
            }
        }
    }

    func testBadAttributesFailAtLoadNamingTheNode() throws {
        // Weights for 3 input channels on a 2-channel input: shape inference fails at load.
        let data = try model(op: "Conv", extraInputs: [("w", [4, 3, 3, 3], [Float](repeating: 0.1, count: 108))])
        XCTAssertThrowsError(try Model(data: data)) { error in
            guard case let .invalidNode(node, op, reason)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertEqual(node, "the_node")
            XCTAssertEqual(op, "Conv")
            XCTAssertTrue(reason.contains("channels"), reason)
        }
    }

    func testWrongInputShapeTypeAndName() throws {
        let m = try Model(data: try model(op: "Relu"))
        XCTAssertThrowsError(try m.run(["x": try Tensor(shape: [1, 2, 4, 5], values: .init(repeating: 0, count: 40))])) { error in
            guard case .inputShapeMismatch(name: "x", _, actual: [1, 2, 4, 5])? = error as? MLError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try m.run(["x": try Tensor(shape: [1, 2, 4, 4], uint8: .init(repeating: 0, count: 32))])) { error in
            XCTAssertEqual(error as? MLError, .inputTypeMismatch(name: "x", expected: .float32, actual: .uint8))
        }
        XCTAssertThrowsError(try m.run([:])) { error in XCTAssertEqual(error as? MLError, .missingInput(name: "x")) }
        XCTAssertThrowsError(try m.run(["z": try Tensor(shape: [1], values: [0])])) { error in
            XCTAssertEqual(error as? MLError, .unknownInput(name: "z", known: ["x"]))
        }
        let ok = try m.run(["x": try Tensor(shape: [1, 2, 4, 4], values: (0..<32).map { Float($0) - 16 })])
        XCTAssertEqual(ok["y"]?.values, (0..<32).map { max(Float($0) - 16, 0) })
    }

    func testTensorsRejectBadSizesAndNeverTrapOnOddValues() throws {
        XCTAssertThrowsError(try Tensor(shape: [2, 3], values: [1, 2, 3])) { error in
            XCTAssertEqual(error as? MLError, .tensorSizeMismatch(shape: [2, 3], count: 3))
        }
        let odd = try Tensor(shape: [3], values: [.nan, .infinity, -1e30], elementType: .int64)
        XCTAssertEqual(odd.integers?.count, 3)
    }

    func testFusionAndFoldingHappenAtLoad() throws {
        // ppocr det: BatchNormalization folded into Conv; activations fused as epilogues.
        let det = try Model(path: try TestEnvironment.model("ppocr-v4-det.onnx"), threads: 1)
        XCTAssertFalse(det.plannedOps.contains("BatchNormalization"), "\(det.plannedOps)")
        XCTAssertTrue(det.plannedOps.contains { $0.hasPrefix("Conv+") })
        // fastdepth: every weight DequantizeLinear folded, Q→DQ pairs fused.
        let depth = try Model(path: try TestEnvironment.model("fastdepth-224-int8.onnx"), threads: 1)
        XCTAssertLessThan(depth.plannedOps.filter { $0 == "DequantizeLinear" }.count, 5, "\(depth.plannedOps)")
        XCTAssertTrue(depth.plannedOps.allSatisfy { $0 != "Clip" }, "\(depth.plannedOps)")
    }

    func testArenaIsReusedNotGrownPerRun() throws {
        let m = try Model(path: try TestEnvironment.model("ppocr-mobile-v2-cls.onnx"), threads: 1)
        let shapes = ["x": [1, 3, 48, 192]]
        let size = try m.arenaSize(for: shapes)
        let x = try Tensor(shape: [1, 3, 48, 192], values: (0..<(3 * 48 * 192)).map { Float($0 % 255) / 127.5 - 1 })
        let first = try m.run(["x": x])
        let second = try m.run(["x": x])
        XCTAssertEqual(first, second)
        XCTAssertEqual(try m.arenaSize(for: shapes), size)
        // Liveness reuse: the arena is far smaller than all activations together would be.
        XCTAssertLessThan(size, 3 * 48 * 192 * 40)
    }
}

import Foundation
import SwiftProtobuf
import XCTest
@testable import GraniteML

/// Every supported op against the ONNX node tests shipped by Debian's `libonnx-testdata`
/// (model.onnx plus TensorProto inputs and expected outputs, from the ONNX project).
///
/// A case either matches (|a − e| ≤ 1e-4 + 1e-3·|e|), or is one of the refusals listed in
/// `expectedRefusals`, refused with a typed `unsupportedOp`/`malformedModel` error that says what
/// the list says (a variant GraniteML leaves out: float16 data, cubic resize, 3-D pooling...). Any
/// other refusal fails, as does a listed case that now passes (the list must shrink with it), a
/// wrong number, or a crash-free run with the wrong shape.
final class NodeConformanceTests: XCTestCase {
    static let dataDirectory = URL(fileURLWithPath: "/usr/share/libonnx-testdata/data/node")

    /// Test-case name prefixes for each supported op.
    static let prefixes: [String: [String]] = [
        "Conv": ["test_conv_", "test_basic_conv_"], "ConvTranspose": ["test_convtranspose"], "Relu": ["test_relu"],
        "LeakyRelu": ["test_leakyrelu"], "Clip": ["test_clip"], "Sigmoid": ["test_sigmoid"],
        "HardSigmoid": ["test_hardsigmoid"], "Add": ["test_add"], "Sub": ["test_sub"], "Mul": ["test_mul"],
        "Div": ["test_div"], "BatchNormalization": ["test_batchnorm_"], "GlobalAveragePool": ["test_globalaveragepool"],
        "GlobalMaxPool": ["test_globalmaxpool"], "MaxPool": ["test_maxpool_"], "AveragePool": ["test_averagepool_"],
        "Resize": ["test_resize_"], "Upsample": ["test_upsample_"], "Pad": ["test_constant_pad", "test_edge_pad", "test_reflect_pad"],
        "Concat": ["test_concat_"], "Transpose": ["test_transpose_"], "Reshape": ["test_reshape_"],
        "Flatten": ["test_flatten_"], "Slice": ["test_slice"], "Softmax": ["test_softmax_"], "MatMul": ["test_matmul_"],
        "Gemm": ["test_gemm_"], "QuantizeLinear": ["test_quantizelinear"], "DequantizeLinear": ["test_dequantizelinear"],
        "Constant": ["test_constant$"], "Identity": ["test_identity"], "Cast": ["test_cast_"], "Shape": ["test_shape"],
        "Gather": ["test_gather_0", "test_gather_1", "test_gather_negative"], "Squeeze": ["test_squeeze"],
        "Unsqueeze": ["test_unsqueeze"], "HardSwish": ["test_hardswish"],
        "ReduceMean": ["test_reduce_mean_"],
    ]

    /// Cases where the ONNX 1.12 reference output and ONNX Runtime (the project's anchor) disagree;
    /// GraniteML follows ONNX Runtime. Checked by hand with onnxruntime 1.23.2.
    static let divergences: [String: String] = [
        "test_resize_downsample_scales_linear_align_corners":
            "the reference divides by the unfloored resized length (input × scale); ONNX Runtime uses the output size",
    ]

    /// Every case GraniteML refuses, by name, with a phrase its error must contain. Reviewed by
    /// hand: each is a variant outside what GraniteML supports, not a bug.
    static let expectedRefusals: [String: String] = [
        "test_averagepool_1d_default": "only 4-D (NCHW) input is supported",  // 1-D and 3-D pooling
        "test_averagepool_3d_default": "only 4-D (NCHW) input is supported",  // 1-D and 3-D pooling
        "test_batchnorm_epsilon_training_mode": "training_mode",  // training mode
        "test_batchnorm_example_training_mode": "training_mode",  // training mode
        "test_cast_BFLOAT16_to_FLOAT": "unsupported element type 16",  // bfloat16 data
        "test_cast_DOUBLE_to_FLOAT16": "unsupported element type 10",  // float16 data
        "test_cast_FLOAT16_to_DOUBLE": "unsupported element type 10",  // float16 data
        "test_cast_FLOAT16_to_FLOAT": "unsupported element type 10",  // float16 data
        "test_cast_FLOAT_to_BFLOAT16": "unsupported element type 16",  // bfloat16 data
        "test_cast_FLOAT_to_FLOAT16": "unsupported element type 10",  // float16 data
        "test_cast_FLOAT_to_STRING": "unsupported element type 8",  // string data
        "test_cast_STRING_to_FLOAT": "unsupported element type 8",  // string data
        "test_convtranspose_1d": "only 2-D transposed convolution is supported",  // 1-D and 3-D transposed convolution
        "test_convtranspose_3d": "only 2-D transposed convolution is supported",  // 1-D and 3-D transposed convolution
        "test_identity_opt": "is not a tensor",  // optional and sequence values
        "test_identity_sequence": "is not a tensor",  // optional and sequence values
        "test_maxpool_1d_default": "only 4-D (NCHW) input is supported",  // 1-D and 3-D pooling
        "test_maxpool_3d_default": "only 4-D (NCHW) input is supported",  // 1-D and 3-D pooling
        "test_maxpool_with_argmax_2d_precomputed_pads": "the Indices output is not supported",  // MaxPool's indices output
        "test_maxpool_with_argmax_2d_precomputed_strides": "the Indices output is not supported",  // MaxPool's indices output
        "test_resize_downsample_scales_cubic": "mode cubic",  // cubic resize
        "test_resize_downsample_scales_cubic_A_n0p5_exclude_outside": "mode cubic",  // cubic resize
        "test_resize_downsample_scales_cubic_align_corners": "mode cubic",  // cubic resize
        "test_resize_downsample_sizes_cubic": "mode cubic",  // cubic resize
        "test_resize_tf_crop_and_resize": "coordinate_transformation_mode tf_crop_and_resize",  // crop-and-resize
        "test_resize_upsample_scales_cubic": "mode cubic",  // cubic resize
        "test_resize_upsample_scales_cubic_A_n0p5_exclude_outside": "mode cubic",  // cubic resize
        "test_resize_upsample_scales_cubic_align_corners": "mode cubic",  // cubic resize
        "test_resize_upsample_scales_cubic_asymmetric": "mode cubic",  // cubic resize
        "test_resize_upsample_sizes_cubic": "mode cubic",  // cubic resize
    ]

    enum Outcome: Equatable {
        case passed
        case refused(String)
        case failed(String)
    }

    func testEverySupportedOpPassesItsNodeTests() throws {
        guard FileManager.default.fileExists(atPath: Self.dataDirectory.path) else {
            try TestEnvironment.unavailable("\(Self.dataDirectory.path) is missing (apt-get install libonnx-testdata)")
        }
        let all = try FileManager.default.contentsOfDirectory(atPath: Self.dataDirectory.path).sorted()
        var report: [String: [String: Outcome]] = [:]
        for (op, prefixes) in Self.prefixes.sorted(by: { $0.key < $1.key }) {
            let cases = all.filter { name in
                !name.hasSuffix("_expanded") && prefixes.contains { $0.hasSuffix("$") ? name == String($0.dropLast()) : name.hasPrefix($0) }
            }
            for name in cases where Self.divergences[name] == nil { report[op, default: [:]][name] = run(name) }
        }
        var failures: [String] = []
        var refusedNames: Set<String> = []
        for (op, cases) in report.sorted(by: { $0.key < $1.key }) {
            let passed = cases.values.filter { $0 == .passed }.count
            print("\(op): \(passed)/\(cases.count) node tests pass")
            for (name, outcome) in cases.sorted(by: { $0.key < $1.key }) {
                switch outcome {
                case .passed: break
                case let .refused(why):
                    refusedNames.insert(name)
                    print("  refused \(name): \(why)")
                    guard let expected = Self.expectedRefusals[name] else {
                        failures.append("\(name): refused, and not in expectedRefusals: \(why)"); continue
                    }
                    if !why.contains(expected) { failures.append("\(name): refused for another reason than \"\(expected)\": \(why)") }
                case let .failed(why): failures.append("\(name): \(why)")
                }
            }
            XCTAssertGreaterThan(passed, 0, "no node test passes for \(op)")
        }
        for name in Self.expectedRefusals.keys.sorted() where !refusedNames.contains(name) {
            let found = report.values.contains { $0[name] != nil }
            failures.append(found ? "\(name): listed in expectedRefusals but passes now: remove it from the list"
                                  : "\(name): listed in expectedRefusals but no such node test was run")
        }
        for name in Self.divergences.keys.sorted() where !all.contains(name) {
            failures.append("\(name): listed in divergences but not in \(Self.dataDirectory.path)")
        }
        for op in Ops.supported { XCTAssertNotNil(report[op], "no node tests found for \(op)") }
        XCTAssertEqual(failures, [], "wrong results or unexpected refusals")
    }

    /// Runs one node test: the first input is fed at run time, the rest are bound as constants.
    func run(_ name: String) -> Outcome {
        let dir = Self.dataDirectory.appendingPathComponent(name)
        let modelPath = dir.appendingPathComponent("model.onnx").path
        let set = dir.appendingPathComponent("test_data_set_0")
        do {
            let graph = try OnnxLoader.load(path: modelPath)
            var inputs: [Tensor] = []
            for i in graph.inputs.indices { inputs.append(try tensor(set.appendingPathComponent("input_\(i).pb"))) }
            var binding: [String: Tensor] = [:]
            for (info, t) in zip(graph.inputs, inputs).dropFirst() { binding[info.name] = t }
            let model = try Model(path: modelPath, binding: binding)
            var feeds: [String: Tensor] = [:]
            if let first = graph.inputs.first { feeds[first.name] = inputs[0] }
            let outputs = try model.run(feeds)
            for (k, info) in graph.outputs.enumerated() {
                let expected = try tensor(set.appendingPathComponent("output_\(k).pb"))
                guard let actual = outputs[info.name] else { return .failed("output \(info.name) missing") }
                guard actual.shape == expected.shape else { return .failed("shape \(actual.shape), expected \(expected.shape)") }
                for (i, (a, e)) in zip(actual.values, expected.values).enumerated() {
                    let ok = (a.isNaN && e.isNaN) || a == e || abs(a - e) <= 1e-4 + 1e-3 * abs(e)
                    if !ok { return .failed("output \(k)[\(i)] = \(a), expected \(e)") }
                }
            }
            return .passed
        } catch let error as MLError {
            switch error {
            case .unsupportedOp, .malformedModel: return .refused(error.description)
            default: return .failed(error.description)
            }
        } catch {
            return .failed("\(error)")
        }
    }

    private func tensor(_ url: URL) throws -> Tensor {
        let proto = try Onnx_TensorProto(serializedBytes: Data(contentsOf: url))
        return try OnnxLoader.tensor(from: proto, path: url.path, what: "test tensor")
    }
}

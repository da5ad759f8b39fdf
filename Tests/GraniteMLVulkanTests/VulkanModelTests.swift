import Foundation
import GraniteGPU
import GraniteTesting
import XCTest
@testable import GraniteML
@testable import GraniteMLVulkan

/// Whole networks on the Vulkan backend against ONNX Runtime's outputs (the fixtures
/// scripts/tiers/pre-ml.sh writes): the MiDaS v2.1 small replica in both exports (Pearson
/// correlation ≥ 0.9999, the largest difference printed) and the shipped int8 FastDepth, on a
/// synthetic scene and on a photograph, which the GPU and the CPU runtime both compute exactly
/// as ONNX Runtime does (see testFastDepthInt8MatchesONNXRuntime).
final class VulkanModelTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = root.appendingPathComponent(".build-ml-fixtures")

    /// ONNX Runtime's inputs and outputs for `name` (CASE.json and its binaries).
    private func fixture(_ name: String) throws -> (model: String, inputs: [String: Tensor], outputs: [String: Tensor], exactInt8: Bool) {
        struct Entry: Decodable { let name: String; let shape: [Int]; let dtype: String; let file: String }
        struct Manifest: Decodable {
            let model: String; let inputs: [Entry]; let outputs: [Entry]
            let exact_int8: Bool?  // ONNX Runtime's int8 GEMM summed exactly where it ran (VNNI)
        }
        let json = Self.fixtures.appendingPathComponent("\(name).json")
        guard let data = try? Data(contentsOf: json) else { try Prerequisite.unmet("fixture \(json.path) is missing: run scripts/tiers/pre-ml.sh") }
        let manifest = try JSONDecoder().decode(Manifest.self, from: data)
        func read(_ entries: [Entry]) throws -> [String: Tensor] {
            var result: [String: Tensor] = [:]
            for e in entries {
                let bytes = [UInt8](try Data(contentsOf: Self.fixtures.appendingPathComponent(e.file)))
                result[e.name] = e.dtype == "uint8"
                    ? try Tensor(shape: e.shape, uint8: bytes)
                    : try Tensor(shape: e.shape, values: bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) })
            }
            return result
        }
        let local = Self.root.appendingPathComponent("Models/\(manifest.model)")
        let path = FileManager.default.fileExists(atPath: local.path) ? local.path : Self.fixtures.appendingPathComponent("models/\(manifest.model)").path
        return (path, try read(manifest.inputs), try read(manifest.outputs), manifest.exact_int8 ?? false)
    }

    static func pearson(_ a: [Float], _ b: [Float]) -> Double {
        let n = Double(a.count)
        let ma = a.reduce(0.0) { $0 + Double($1) } / n, mb = b.reduce(0.0) { $0 + Double($1) } / n
        var sab = 0.0, saa = 0.0, sbb = 0.0
        for (x, y) in zip(a, b) { let dx = Double(x) - ma, dy = Double(y) - mb; sab += dx * dy; saa += dx * dx; sbb += dy * dy }
        return sab / (saa * sbb).squareRoot()
    }

    @discardableResult
    private func assertMatchesONNXRuntime(_ name: String, pearson minimum: Double = 0.9999) throws -> (got: [Float], expected: [Float]) {
        let gpu = try GPUTest.context()
        let f = try fixture(name)
        let model = try Model(path: f.model, threads: 2)
        let vulkan = try VulkanModel(model: model, context: gpu)
        let start = Date()
        let actual = try vulkan.run(f.inputs)
        let seconds = Date().timeIntervalSince(start)
        var compared: ([Float], [Float]) = ([], [])
        for (output, expected) in f.outputs {
            let got = try XCTUnwrap(actual[output])
            XCTAssertEqual(got.shape, expected.shape)
            let r = Self.pearson(got.values, expected.values)
            let worst = zip(got.values, expected.values).map { abs($0 - $1) }.max() ?? .infinity
            let range = (expected.values.max() ?? 0) - (expected.values.min() ?? 0)
            print("\(name) on \(gpu.deviceName): Pearson \(r), max |GPU − ORT| \(worst) of range \(range), "
                  + "\(vulkan.dispatchCount) dispatches, first run \(Int(seconds * 1000)) ms")
            XCTAssertGreaterThanOrEqual(r, minimum, "\(name): Pearson correlation with ONNX Runtime")
            XCTAssertGreaterThan(range, 1, "the reference should not be flat")
            compared = (got.values, expected.values)
        }
        return compared
    }

    /// Agreement of `got` with `expected`: Pearson correlation, largest difference, share equal.
    static func agreement(_ got: [Float], _ expected: [Float]) -> (pearson: Double, worst: Float, exact: Double) {
        let diffs = zip(got, expected).map { abs($0 - $1) }
        return (pearson(got, expected), diffs.max() ?? .infinity, Double(diffs.filter { $0 == 0 }.count) / Double(max(diffs.count, 1)))
    }

    /// FastDepth's output is 8-bit (here 13 to 16 levels), so one value that rounds the other way
    /// early on moves whole regions a step. Its int8 convolutions run the integers ONNX Runtime's
    /// QLinearConv runs; its four float convolutions (those ORT leaves unfused, their output read
    /// twice) sum their taps as ORT's SGEMM does, one fused multiply-add each (on lavapipe emulated,
    /// ``FusedMultiplyAdd``), as the CPU's kernels do at every level, so where ORT's int8 GEMM is
    /// exact (VNNI, the fixture says) the GPU, the CPU runtime and ORT agree on every value.
    /// Elsewhere ORT's AVX2 kernel saturates 16-bit sums: the bound is then ≥ 99.5% within one
    /// step, none beyond two.
    func testFastDepthInt8MatchesONNXRuntime() throws {
        for name in ["fastdepth-224", "fastdepth-224-photo"] {
            let f = try fixture(name)
            let exact = f.exactInt8
            let (gpu, ort) = try assertMatchesONNXRuntime(name, pearson: exact ? 0.9999 : 0.98)
            let output = try XCTUnwrap(f.outputs.keys.first)
            let cpu = try XCTUnwrap(try Model(path: f.model, threads: 2).run(f.inputs)[output]).values
            for (backend, values) in [("GPU", gpu), ("CPU", cpu)] {
                let a = Self.agreement(values, ort)
                print("\(name): \(backend) against ONNX Runtime: Pearson \(a.pearson), max error \(a.worst) steps, "
                      + "\(String(format: "%.2f", a.exact * 100))% exact")
            }
            if exact {
                XCTAssertEqual(gpu, ort, "\(name): the GPU should compute ONNX Runtime's very depth map")
                XCTAssertEqual(cpu, ort, "\(name): the CPU runtime should compute ONNX Runtime's very depth map")
            } else {
                let steps = zip(gpu, ort).map { abs($0 - $1) }
                XCTAssertGreaterThanOrEqual(Double(steps.filter { $0 <= 1 }.count) / Double(steps.count), 0.995, name)
                XCTAssertLessThanOrEqual(steps.max() ?? .infinity, 2, name)
            }
            XCTAssertGreaterThan(Set(ort).count, 10, "\(name): a flat depth map means the network did nothing")
        }
    }

    /// Each step of FastDepth on the GPU against the CPU kernel of the same step fed the GPU's own
    /// inputs: every step agrees bit for bit (the float convolutions too, their taps summed as the
    /// CPU's GEMM sums them at every level).
    func testFastDepthEveryStepMatchesTheCPUKernel() throws {
        let gpu = try GPUTest.context()
        let f = try fixture("fastdepth-224")
        let model = try Model(path: f.model, threads: 2)
        let vulkan = try VulkanModel(model: model, context: gpu, keepingActivations: true)
        _ = try vulkan.run(f.inputs)
        let lowering = try XCTUnwrap(vulkan.lowering)
        var integerConvs = 0, differing = 0
        for step in lowering.steps {
            let inputs: [Tensor?] = try step.inputs.map { ref in
                guard case let .activation(id)? = ref else { return nil }
                return try Tensor(shape: lowering.activations[id].shape, values: vulkan.activation(id))
            }
            var cpu = step.evaluate(inputs)[0].values
            if step.node.op != "Conv" { cpu.withUnsafeMutableBufferPointer { Epilogue.apply(step.node.epilogue, $0.baseAddress!, $0.count) } }
            let got = try vulkan.activation(step.outputs[0])
            let diffs = zip(cpu, got).map { abs($0 - $1) }
            let integer = Conv.integerForm(step.context) != nil
            integerConvs += integer ? 1 : 0
            if integer { XCTAssertEqual(diffs.max(), 0, "\(step.node.name): the int8 convolution should agree bit for bit") }
            differing += diffs.filter { $0 > 0 }.count
            XCTAssertLessThanOrEqual(diffs.max() ?? 0, 0.01, "\(step.node.op) \(step.node.name)")
        }
        print("fastdepth-224 step by step: \(lowering.steps.count) steps, \(integerConvs) int8 convolutions, \(differing) values differ")
        XCTAssertGreaterThanOrEqual(integerConvs, 30, "the int8 convolutions should run in integers")
        XCTAssertEqual(differing, 0)
    }
    /// MediaPipe's selfie segmentation, both variants (HardSwish, AveragePool, GlobalAveragePool
    /// from ReduceMean, bilinear Resize, ConvTranspose), on photographs with and without people:
    /// the GPU's person probability within 1e-4 of ONNX Runtime's, the same >0.5 mask.
    func testSelfieSegmentationMatchesONNXRuntime() throws {
        let gpu = try GPUTest.context()
        for name in ["selfie-256-astronaut", "selfie-256-Bridge_by_Sander_Klootwijk", "selfie-landscape-camera",
                     "selfie-landscape-Kleiber_by_Lukas_Baubkus"] {
            let f = try fixture(name)
            let vulkan = try VulkanModel(model: try Model(path: f.model, threads: 2), context: gpu)
            let actual = try vulkan.run(f.inputs)
            for (output, expected) in f.outputs {
                let got = try XCTUnwrap(actual[output])
                XCTAssertEqual(got.shape, expected.shape)
                let worst = zip(got.values, expected.values).map { abs($0 - $1) }.max() ?? .infinity
                let flipped = zip(got.values, expected.values).filter { ($0 > 0.5) != ($1 > 0.5) }.count
                print("\(name) on \(gpu.deviceName): max |GPU − ORT| \(worst), \(flipped) mask pixels differ, \(vulkan.dispatchCount) dispatches")
                XCTAssertLessThanOrEqual(worst, 1e-4, name)
                XCTAssertLessThanOrEqual(flipped, 2, name)
            }
        }
    }

    func testMidasReplicaOpset9MatchesONNXRuntime() throws { try assertMatchesONNXRuntime("midas-small-replica-opset9") }
    func testMidasReplicaOpset13MatchesONNXRuntime() throws { try assertMatchesONNXRuntime("midas-small-replica-opset13") }

    /// `auto` keeps the CPU runtime on a CPU device (lavapipe) and takes the GPU on a real one;
    /// `cpu` never touches the device; `gpu` runs the Vulkan backend whatever the device.
    func testDeviceChoice() throws {
        let gpu = try GPUTest.context()
        let f = try fixture("fastdepth-224")
        let model = try Model(path: f.model, threads: 1)
        XCTAssertNil(try InferenceDevice.cpu.backend())
        let forced = try XCTUnwrap(try InferenceDevice.gpu.backend { gpu })
        XCTAssertTrue(try forced(model) is VulkanModel)
        let auto = try InferenceDevice.auto.backend { gpu }
        XCTAssertEqual(auto != nil, InferenceDevice.autoUsesGPU(gpu.deviceKind), "auto on a \(gpu.deviceKind)")
        XCTAssertFalse(InferenceDevice.autoUsesGPU(.cpu))
        XCTAssertTrue(InferenceDevice.autoUsesGPU(.discrete))
        XCTAssertTrue(InferenceDevice.autoUsesGPU(.integrated))
    }
}

import GraniteMedia
import XCTest
@testable import GraniteML

/// MiDaS v2.1 small's architecture (EfficientNet-Lite3 + fusion decoder, seeded random weights)
/// exported both ways users get it — MiDaS's own opset-9 export that normalises inside the
/// graph, and today's torch export at opset 13 — against ONNX Runtime
/// (scripts/ml/make_midas_replica.py). The trained file cannot be fetched here.
final class MidasReplicaTests: XCTestCase {
    private func replica(_ opset: Int) throws -> (path: String, fixture: Fixture) {
        let fixture = try Fixture.load("midas-small-replica-opset\(opset)")
        return (TestEnvironment.fixturesDirectory.appendingPathComponent("models/\(fixture.model)").path, fixture)
    }

    private func assertMatchesReference(_ opset: Int, threads: Int) throws -> Model {
        let (path, fixture) = try replica(opset)
        let model = try Model(path: path, threads: threads)
        let actual = try XCTUnwrap(try model.run(fixture.inputs)["depth"])
        let expected = try XCTUnwrap(fixture.outputs["depth"])
        XCTAssertEqual(actual.shape, [1, 256, 256])
        XCTAssertEqual(actual.shape, expected.shape)
        let range = (expected.values.max() ?? 0) - (expected.values.min() ?? 0)
        XCTAssertGreaterThan(range, 1, "the reference should not be flat")
        let worst = zip(actual.values, expected.values).map { abs($0 - $1) }.max() ?? .infinity
        print("midas replica opset \(opset), \(threads) thread(s): max |diff| \(worst) of range \(range)")
        XCTAssertLessThanOrEqual(worst / range, 1e-3)
        return model
    }

    /// MiDaS's own export: Sub/Div preprocessing, Upsample, Clip/Pad attributes, BatchNorm nodes.
    func testOpset9ExportMatchesONNXRuntime() throws {
        let model = try assertMatchesReference(9, threads: 1)
        let inside = try XCTUnwrap(model.inputNormalization, "the graph's own mean/std step should be found")
        XCTAssertTrue(inside.matches(ModelDescription.midasSmall.input))
    }

    /// Today's torch export: Resize (align_corners and half_pixel, one with sizes from Shape), folded BatchNorm.
    func testOpset13ExportMatchesONNXRuntimeTwoThreads() throws {
        let model = try assertMatchesReference(13, threads: 2)
        XCTAssertNil(model.inputNormalization)
    }

    /// The built-in MiDaS description normalises with ImageNet mean/std: on a graph that does
    /// so itself the estimator must only scale pixels to 0...1, on the other it must normalise.
    func testDepthEstimatorNormalisesOnce() throws {
        var bytes = [UInt8](repeating: 0, count: 256 * 256 * 3)
        for i in 0..<bytes.count { bytes[i] = UInt8((i * 7 + (i / 768) * 3) % 256) }
        let image = try Image(width: 256, height: 256, format: .rgb24, bytes: bytes)
        for opset in [9, 13] {
            let (path, _) = try replica(opset)
            let estimator = try DepthEstimator(modelPath: path, description: .midasSmall, threads: 1)
            XCTAssertEqual(estimator.normalizesInside, opset == 9)
            let map = try estimator.estimate(image)
            XCTAssertEqual(map.meaning, .inverseDepth)
            // What the model should have been fed, built here from the description by hand.
            let d = ModelDescription.midasSmall.input
            var x = [Float](repeating: 0, count: 3 * 256 * 256)
            for c in 0..<3 {
                for p in 0..<(256 * 256) {
                    let v = Float(bytes[p * 3 + c]) * d.pixelScale
                    x[c * 256 * 256 + p] = opset == 9 ? v : (v - d.mean[c]) / d.std[c]
                }
            }
            let direct = try Model(path: path, threads: 1).run(["input": try Tensor(shape: [1, 3, 256, 256], values: x)])
            let expected = try XCTUnwrap(direct["depth"]).values
            let worst = zip(map.values, expected).map { abs($0 - $1) }.max() ?? .infinity
            XCTAssertLessThanOrEqual(worst, 1e-4 * max(expected.max() ?? 1, 1), "opset \(opset)")
        }
    }
}

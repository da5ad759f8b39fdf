import Foundation
import GraniteMedia
import XCTest
@testable import GraniteML

/// MediaPipe's selfie segmentation (Models/) in GraniteML against ONNX Runtime on the same
/// inputs: real photographs with people (scikit-image's astronaut and cameraman) and without
/// (two lomiri wallpapers), both variants (fixtures from scripts/ml/make_fixtures.py --segment).
///
/// Bound: max |GraniteML − ONNX Runtime| ≤ 1e-4 of the probability. ONNX Runtime on these very
/// files is within 2.1e-4 of MediaPipe's own TFLite runtime on the same photos (measured at
/// conversion, Models/README.md), so GraniteML is within 3.1e-4 of the original runtime.
final class SegmentationTests: XCTestCase {
    static let photos: [(stem: String, person: Bool)] = [
        ("astronaut", true), ("camera", true), ("Bridge_by_Sander_Klootwijk", false), ("Kleiber_by_Lukas_Baubkus", false),
    ]

    private func compare(_ fixtureName: String, person: Bool, threads: Int = 1) throws {
        let fixture = try Fixture.load(fixtureName)
        let model = try Model(path: try TestEnvironment.model(fixture.model), threads: threads)
        let outputs = try model.run(fixture.inputs)
        let name = model.outputs[0].name
        let actual = try XCTUnwrap(outputs[name]), expected = try XCTUnwrap(fixture.outputs[name])
        XCTAssertEqual(actual.shape, expected.shape, fixtureName)
        var worst: Float = 0, agree = 0, people = 0
        for (a, e) in zip(actual.values, expected.values) {
            worst = max(worst, abs(a - e))
            if (a > 0.5) == (e > 0.5) { agree += 1 }
            if e > 0.5 { people += 1 }
        }
        let share = Double(people) / Double(expected.count)
        print("\(fixtureName): max |GraniteML - ORT| \(worst), masks agree on \(agree)/\(expected.count), person \(share * 100) %")
        XCTAssertLessThanOrEqual(worst, 1e-4, fixtureName)
        XCTAssertGreaterThanOrEqual(Double(agree) / Double(expected.count), 0.9999, fixtureName)
        // The model does its job on these photos (so the comparison is not of two blank maps).
        if person { XCTAssertGreaterThan(share, 0.2, fixtureName) } else { XCTAssertLessThan(share, 0.02, fixtureName) }
    }

    func testGeneralModelMatchesONNXRuntime() throws {
        for p in Self.photos { try compare("selfie-256-\(p.stem)", person: p.person) }
    }

    func testLandscapeModelMatchesONNXRuntime() throws {
        for p in Self.photos { try compare("selfie-landscape-\(p.stem)", person: p.person, threads: 2) }
    }

    /// After optimisation no HardSwish or ReduceMean is left (the ops the Vulkan backend lacks):
    /// the five squeeze-and-excitation means became GlobalAveragePools (beside the five it had).
    func testLandscapeModelIsRewrittenToCommonOps() throws {
        let graph = try Optimizer.optimize(OnnxLoader.load(path: try TestEnvironment.model(ModelDescription.selfieSegmentationLandscape.file)))
        let ops = graph.nodes.map(\.op)
        XCTAssertFalse(ops.contains("ReduceMean"))
        XCTAssertFalse(ops.contains("HardSwish"))
        XCTAssertEqual(ops.filter { $0 == "GlobalAveragePool" }.count, 10)
    }

    /// Both files ship in Models/ with the hash their descriptions record (checked on every load);
    /// a damaged copy under the described name is refused naming both hashes; the README gives
    /// each file's hash, the licence ships beside them.
    func testModelsShipWithHashAndProvenance() throws {
        let readme = try String(contentsOf: TestEnvironment.root.appendingPathComponent("Models/README.md"), encoding: .utf8)
        XCTAssertTrue(FileManager.default.fileExists(atPath: TestEnvironment.root.appendingPathComponent("Models/LICENSE-mediapipe.txt").path))
        for d in [ModelDescription.selfieSegmentation256, .selfieSegmentationLandscape] {
            let shipped = try ModelLocator.locate(d, environment: ["HOME": "/home/nobody"])
            XCTAssertTrue(shipped.hasSuffix("Models/\(d.file)"), shipped)
            XCTAssertEqual(try ModelChecksums.verifiedDigest(shipped), d.sha256)
            XCTAssertTrue(readme.contains(try XCTUnwrap(d.sha256)), "Models/README.md records \(d.file)'s hash")
            let segmenter = try PersonSegmenter(modelPath: shipped, threads: 1)
            XCTAssertEqual(segmenter.description, d)
            XCTAssertEqual(segmenter.inputSize.width, 256)
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("granite-seg-hash-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let d = ModelDescription.selfieSegmentation256
        var bytes = try Data(contentsOf: URL(fileURLWithPath: try ModelLocator.locate(d)))
        bytes[bytes.count / 2] ^= 0x5A
        let damaged = dir.appendingPathComponent(d.file)
        try bytes.write(to: damaged)
        XCTAssertThrowsError(try PersonSegmenter(modelPath: damaged.path, threads: 1)) { error in
            guard case let .modelHashMismatch(path, expected, actual)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, damaged.path)
            XCTAssertEqual(expected, d.sha256)
            XCTAssertNotEqual(actual, expected)
        }
    }

    /// A depth model is not a segmenter (and the reverse): a typed error naming the file.
    func testDepthModelIsRefusedAsSegmenter() throws {
        let depth = try ModelLocator.locate(.fastDepth224)
        XCTAssertThrowsError(try PersonSegmenter(modelPath: depth, threads: 1)) { error in
            guard case let .invalidDescription(path, reason)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, depth)
            XCTAssertTrue(reason.contains("not a person probability"), reason)
        }
        XCTAssertThrowsError(try DepthEstimator(modelPath: try ModelLocator.locate(.selfieSegmentation256), threads: 1))
    }

    /// The segmenter end to end on an odd-sized picture: the mask comes at the picture's size,
    /// 8-bit samples are round(p × 255), a blank picture has (almost) no person.
    func testSegmenterMaskSizesAndSamples() throws {
        let segmenter = try PersonSegmenter(threads: 1)
        let blank = try Image(width: 97, height: 61, format: .rgb24, bytes: [UInt8](repeating: 128, count: 97 * 61 * 3))
        let mask = try segmenter.segment(blank)
        XCTAssertEqual(mask.width, 97)
        XCTAssertEqual(mask.height, 61)
        XCTAssertLessThan(mask.personFraction, 0.05)
        let small = try segmenter.segment(blank, size: .model)
        XCTAssertEqual(small.width, 256)
        XCTAssertEqual(small.height, 256)
        let three = try PersonMask(width: 3, height: 1, values: [0, 0.5, 1.2])
        XCTAssertEqual(three.samples8(), [0, 128, 255])
        XCTAssertEqual(three.grayImage().format, .gray8)
        XCTAssertThrowsError(try PersonMask(width: 2, height: 2, values: [0]))
    }
}

import Foundation
import GraniteCodecs
import GraniteConvert
import GraniteMedia
import GraniteML
import GraniteTesting
import XCTest

/// `granite depth`'s pipeline on real photographs (2688 px on the long side, from Debian's
/// lomiri-wallpapers, made by scripts/tiers/pre-media.sh): reduced JPEG decode, antialiased resize,
/// FastDepth; against ONNX Runtime fed with Pillow's antialiased bilinear resize of the same file.
final class DepthPhotoTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let fixtures = root.appendingPathComponent(".build-media-fixtures").path

    static func pearson(_ a: [Float], _ b: [Float]) -> Double {
        let n = Double(a.count)
        let ma = a.reduce(0) { $0 + Double($1) } / n, mb = b.reduce(0) { $0 + Double($1) } / n
        var sab = 0.0, saa = 0.0, sbb = 0.0
        for (x, y) in zip(a, b) {
            let da = Double(x) - ma, db = Double(y) - mb
            sab += da * db; saa += da * da; sbb += db * db
        }
        return sab / (saa * sbb).squareRoot()
    }

    func photos() throws -> [String] {
        let dir = Self.fixtures + "/photos"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir))?.filter { $0.hasSuffix(".jpg") }.sorted() ?? []
        try Prerequisite.require(names.count >= 3, "no real photos in \(dir) (run scripts/tiers/pre-media.sh)")
        return names.map { dir + "/" + $0 }
    }

    func estimator() throws -> DepthEstimator {
        let model = Self.root.appendingPathComponent("Models/fastdepth-224-int8.onnx").path
        try Prerequisite.require(FileManager.default.fileExists(atPath: model), "the depth model is not at \(model)")
        return try DepthEstimator(modelPath: model, threads: 2)
    }

    func testDepthMatchesOnnxRuntimeWithPillowResizeOnRealPhotos() throws {
        let estimator = try estimator()
        for photo in try photos() {
            let stem = ((photo as NSString).lastPathComponent as NSString).deletingPathExtension
            let reference: [Float] = try FileBytes.read(Self.fixtures + "/depth/\(stem).f32").withUnsafeBytes {
                Array($0.bindMemory(to: Float.self))
            }
            let map = try DepthImages.estimate(photo, with: estimator, modelSize: true)
            XCTAssertEqual([map.width, map.height], [224, 224], stem)
            let r = Self.pearson(map.values, reference)
            // The int8 model's output comes in whole steps; on a low-contrast photo it has few of them
            // (the dragonfly: 12 levels, spread 1.2 steps), where even ONNX Runtime's own map moves to
            // Pearson 0.945 when the input JPEG is re-encoded at quality 90: decoding at 4× the input
            // (DepthImages.decodeFactor) keeps it at 0.953 (0.948 at 2×).
            let floor = 0.95
            print("depth \(stem): Pearson \(r) against ONNX Runtime + Pillow bilinear")
            XCTAssertGreaterThanOrEqual(r, floor, "\(stem): Pearson \(r) against ONNX Runtime fed by Pillow's antialiased resize")
        }
    }

    func testPhotosAreDecodedReducedAndMapsComeAtThePhotosSize() throws {
        let estimator = try estimator()
        let photo = try photos()[0]
        let (image, width, height) = try DepthImages.decode(photo, for: estimator.inputSize)
        XCTAssertEqual(max(width, height), 2688)
        // A DCT scale keeping both sides ≥ 4 × 224, the smallest: never the full photo.
        XCTAssertGreaterThanOrEqual(min(image.width, image.height), DepthImages.decodeFactor * 224)
        XCTAssertLessThan(min(image.width, image.height) * 7 / 8, DepthImages.decodeFactor * 224,
                          "decoded at \(image.width)x\(image.height): a smaller scale would do")
        XCTAssertLessThan(image.width, width, "decoded at \(image.width)x\(image.height)")
        let map = try DepthImages.estimate(photo, with: estimator)
        XCTAssertEqual([map.width, map.height], [width, height])
        let small = try DepthImages.estimate(photo, with: estimator, modelSize: true)
        // The full-size map is the model's map scaled up: its mean agrees.
        let mean = { (v: [Float]) in v.reduce(0, +) / Float(v.count) }
        XCTAssertEqual(mean(map.values), mean(small.values), accuracy: 0.02 * mean(small.values))
    }
}

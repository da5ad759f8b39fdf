import Foundation
import GraniteCapture
import GraniteCodecs
import GraniteMedia
import GraniteML
import XCTest

@testable import GraniteCam

/// A depth stage whose map is a left-to-right ramp (larger = farther to the right).
private final class RampDepthFake: DepthStage {
    func estimate(_ image: Image) throws -> Image {
        var bytes = [UInt8](repeating: 0, count: image.width * image.height)
        for y in 0..<image.height { for x in 0..<image.width { bytes[y * image.width + x] = UInt8(x * 255 / max(1, image.width - 1)) } }
        return try Image(width: image.width, height: image.height, format: .gray8, bytes: bytes)
    }
}

/// The colour view written beside each 16-bit depth map (`depth-SEQ.preview.png`): an image
/// any viewer shows, in the preview's viridis, nearer = further along the palette.
final class DepthPreviewTests: XCTestCase {
    /// A `gray16` map of `samples` (row-major, native-endian as `Image` holds them).
    func map(width: Int, height: Int, _ samples: [UInt16]) throws -> Image {
        let bytes = samples.withUnsafeBytes { Array($0) }
        return try Image(width: width, height: height, format: .gray16, bytes: bytes)
    }

    /// The palette entry a decoded RGBA pixel shows.
    func paletteIndex(_ image: Image, x: Int, y: Int, file: StaticString = #filePath, line: UInt = #line) -> Int? {
        let p = image.rgba(x: x, y: y)
        let palette = ColorMap.palette
        return (0..<256).first { palette[$0 * 3] == p.r && palette[$0 * 3 + 1] == p.g && palette[$0 * 3 + 2] == p.b }
    }

    func testNearerSamplesGoFurtherAlongViridisAndLibpngReadsIt() throws {
        // 300 distinct depths in millimetres, row by row (nearest first), one odd width.
        let width = 30, height = 10
        let samples = (0..<(width * height)).map { UInt16(500 + $0 * 17) }
        let png = try OutputWriter.depthPreviewPNG(try map(width: width, height: height, samples), path: "t.png")
        let info = try Codecs.info(png, path: "t.png")
        XCTAssertEqual(info.width, width)
        XCTAssertEqual(info.height, height)
        XCTAssertEqual(png[24], 8, "8 bits a sample")
        XCTAssertEqual(png[25], 3, "colour type 3: indexed colour, shown in colour by every viewer")
        let decoded = try ColorConversion.rgba(try Codecs.decode(png, path: "t.png"))
        var last = Int.max
        for i in 0..<samples.count {
            let index = try XCTUnwrap(paletteIndex(decoded, x: i % width, y: i / width), "pixel \(i) is a viridis colour")
            XCTAssertLessThanOrEqual(index, last, "pixel \(i): farther is never further along the palette")
            last = index
        }
        XCTAssertEqual(paletteIndex(decoded, x: 0, y: 0), 255, "the nearest sample is yellow")
        XCTAssertEqual(paletteIndex(decoded, x: width - 1, y: height - 1), 0, "the farthest dark purple")
        XCTAssertEqual(paletteIndex(decoded, x: 14, y: 5), Int(((1 - Float(5 * width + 14) / Float(width * height - 1)) * 255).rounded()))
    }

    func testAFlatMapIsOneColourAndNotAGrayMapIsRefused() throws {
        let png = try OutputWriter.depthPreviewPNG(try map(width: 4, height: 3, [UInt16](repeating: 1200, count: 12)), path: "flat.png")
        let decoded = try ColorConversion.rgba(try Codecs.decode(png, path: "flat.png"))
        XCTAssertEqual(Set((0..<12).map { paletteIndex(decoded, x: $0 % 4, y: $0 / 4) }), [0])
        let rgba = try Image(width: 2, height: 2, format: .rgba8)
        XCTAssertThrowsError(try OutputWriter.depthPreviewPNG(rgba, path: "x.png")) { error in
            XCTAssertTrue("\(error)".contains("x.png"), "\(error)")
        }
    }

    func testARunWritesEachDepthMapsColourViewBesideItWhenAsked() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("granite-depth-preview-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        var s = CamSettings()
        s.request = CaptureRequest(format: .auto, size: FrameSize(width: 48, height: 32), fps: 100)
        s.outputDirectory = out.path
        s.frameLimit = 6
        s.paced = false
        s.depthEvery = 2
        s.depthPreview = true
        let summary = try await CamApp(pipeline: try CamPipeline(settings: s, depth: RampDepthFake())).run()
        XCTAssertEqual(summary.depthSaved, 3)
        let names = try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
        let expected = [0, 2, 4].flatMap { [String(format: "depth-%08d.png", $0), String(format: "depth-%08d.preview.png", $0)] }
        XCTAssertEqual(names.filter { $0.hasPrefix("depth-") }, expected.sorted())
        let view = try ColorConversion.rgba(try Codecs.decode(Array(try Data(contentsOf: out.appendingPathComponent("depth-00000002.preview.png"))), path: "view"))
        XCTAssertEqual(paletteIndex(view, x: 0, y: 16), 255, "the ramp's near edge is yellow")
        XCTAssertEqual(paletteIndex(view, x: 47, y: 16), 0, "its far edge dark purple")
        let sidecar = try String(contentsOf: out.appendingPathComponent("depth.jsonl"), encoding: .utf8)
        XCTAssertTrue(sidecar.contains("\"preview\":\"depth-00000004.preview.png\""), sidecar)
    }
}

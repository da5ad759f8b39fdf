import Foundation
import GraniteCodecs
import GraniteConvert
import GraniteMedia
import GraniteML
import GraniteTesting
import XCTest

/// The depth PNGs written row by row from a model-size map scaled up (the `granite depth` path)
/// hold exactly the pixels of the whole scaled map's `to16BitPNGImage()` and `colorized()`, read
/// back by libpng and by ImageMagick.
final class DepthImagesTests: XCTestCase {
    /// A 56×42 "model output": a slope with a bump, metres (or relative values).
    static func modelMap(metric: Bool, meaning: ModelDescription.Meaning = .depth) throws -> DepthMap {
        var values = [Float]()
        for y in 0..<42 {
            for x in 0..<56 {
                let bump = Float(exp(-Double((x - 20) * (x - 20) + (y - 15) * (y - 15)) / 40))
                values.append(1.5 + Float(y) * 0.11 + Float(x) * 0.013 - 0.8 * bump)
            }
        }
        return try DepthMap(width: 56, height: 42, values: values, meaning: meaning, isMetric: metric)
    }

    static func magick() throws -> String {
        for c in ["/usr/bin/convert", "/usr/local/bin/convert"] where FileManager.default.isExecutableFile(atPath: c) { return c }
        try Prerequisite.unmet("ImageMagick `convert` not found (Debian package imagemagick): the independent PNG reader here")
    }

    func testStreamedPNGsHoldTheScaledMapsPixels() throws {
        for (metric, meaning) in [(true, ModelDescription.Meaning.depth), (false, .inverseDepth)] {
            let map = try Self.modelMap(metric: metric, meaning: meaning)
            // 517×389: not a multiple of anything, several bands, upscaled ~9× like a photo's map.
            let scaled = try ScaledDepthMap(map, width: 517, height: 389)
            let whole = scaled.materialized()
            XCTAssertEqual(whole, try DepthMap(width: 517, height: 389,
                                               values: Resampler.resize(floats: map.values, width: 56, height: 42, channels: 1,
                                                                        toWidth: 517, toHeight: 389, filter: .bilinear),
                                               meaning: meaning, isMetric: metric))
            let dir = NSTemporaryDirectory() + "granite-depthimages-\(getpid())"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let images = try DepthImages(scaled, depthPath: dir + "/d.png", previewPath: dir + "/p.png")
            try images.write(depthPath: dir + "/d.png", previewPath: dir + "/p.png")

            let depth = try Codecs.decodeFile(dir + "/d.png", options: DecodeOptions(keepGray: true))
            XCTAssertEqual(depth, whole.to16BitPNGImage(), "metric \(metric)")
            let preview = try Codecs.decodeFile(dir + "/p.png")
            XCTAssertEqual(preview, whole.colorized(), "metric \(metric)")

            let magick = try Self.magick()
            let p = Process()
            p.executableURL = URL(fileURLWithPath: magick)
            p.arguments = [dir + "/p.png", "-depth", "8", "rgba:-"]
            let pipe = Pipe()
            p.standardOutput = pipe
            try p.run()
            let theirs = [UInt8](pipe.fileHandleForReading.readDataToEndOfFile())
            p.waitUntilExit()
            XCTAssertEqual(theirs, whole.colorized().bytes, "ImageMagick reads the indexed preview")

            // The same files from a map already at the output size (convert --depth's old path).
            let direct = try DepthImages(whole, depthPath: "d", previewPath: "p")
            XCTAssertEqual(try Codecs.decode(direct.depthPNG, options: DecodeOptions(keepGray: true)), depth)
        }
    }

    func testPaletteIsViridisAndNearIsYellow() throws {
        XCTAssertEqual(ColorMap.palette.count, 768)
        let map = try Self.modelMap(metric: true)
        let scale = try ScaledDepthMap(map, width: 100, height: 80).scale
        XCTAssertEqual(scale.paletteIndex(scale.lo), 255, "the nearest point of a depth map is the last (yellow) entry")
        XCTAssertEqual(scale.paletteIndex(scale.hi), 0)
        XCTAssertGreaterThan(ColorMap.palette[255 * 3], 240)
        XCTAssertGreaterThan(ColorMap.palette[2], ColorMap.palette[1], "far is purple")
    }
}

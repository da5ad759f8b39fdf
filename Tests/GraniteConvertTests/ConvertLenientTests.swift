import Foundation
import GraniteCodecs
@testable import GraniteConvert
import GraniteMedia
import GraniteTesting
import XCTest

/// `granite convert` on the damage and quirks of real photo folders: libjpeg warnings and
/// `--fail-on`, orientation in every format, transparency into JPEG and premultiplied resizing.
final class ConvertLenientTests: XCTestCase {
    func manifest(_ out: String) throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json")))
    }

    func convert(_ input: String, _ settings: ConvertSettings) async throws -> (ConvertSummary, String) {
        let out = ConvertFixtures.folder("lenient-out")
        let summary = try await BatchConverter(inputs: [input], outputDirectory: out, settings: settings, jobs: 2).run { _ in nil }
        return (summary, out)
    }

    /// A JPEG with stray bytes before its DQT marker, one cut short, one clean.
    func damagedFolder() throws -> String {
        let input = ConvertFixtures.folder("lenient-in")
        let clean = try Codecs.encodeJPEG(ConvertFixtures.photo(width: 64, height: 48, seed: 1), quality: 90)
        var dqt = 2
        while !(clean[dqt] == 0xFF && clean[dqt + 1] == 0xDB) { dqt += 1 }
        TestSupportFiles.write(Array(clean[..<dqt]) + [1, 2, 3, 4, 5] + Array(clean[dqt...]), input + "/extraneous.jpg")
        TestSupportFiles.write(Array(clean.prefix(clean.count * 3 / 4)), input + "/truncated.jpg")
        TestSupportFiles.write(clean, input + "/clean.jpg")
        return input
    }

    func testWarningsAreReportedAndRecordedTruncationFailsByDefault() async throws {
        let input = try damagedFolder()
        let (summary, out) = try await convert(input, ConvertSettings(format: .png))
        XCTAssertEqual(summary.converted, 2)
        XCTAssertEqual(summary.failed.map { ($0.path as NSString).lastPathComponent }, ["truncated.jpg"])
        XCTAssertTrue(summary.failed[0].reason.contains("truncated"), summary.failed[0].reason)
        let entries = Dictionary(uniqueKeysWithValues: try manifest(out).entries.map { ($0.output, $0) })
        XCTAssertEqual(entries["extraneous.png"]?.warnings, ["Corrupt JPEG data: 5 extraneous bytes before marker 0xdb"])
        XCTAssertNil(entries["clean.png"]?.warnings)
        // The warned file's pixels are those of the clean file.
        XCTAssertEqual(try FileBytes.read(out + "/extraneous.png"), try FileBytes.read(out + "/clean.png"))
    }

    func testFailOnLevels() async throws {
        let input = try damagedFolder()
        var strict = ConvertSettings(format: .png)
        strict.failOn = .warning
        let (s1, _) = try await convert(input, strict)
        XCTAssertEqual(Set(s1.failed.map { ($0.path as NSString).lastPathComponent }), ["extraneous.jpg", "truncated.jpg"])
        var lenient = ConvertSettings(format: .png)
        lenient.failOn = FailOn.none
        let (s2, out) = try await convert(input, lenient)
        XCTAssertEqual([s2.converted, s2.failed.count], [3, 0])
        let entry = try manifest(out).entries.first { $0.output == "truncated.png" }
        XCTAssertTrue(entry?.warnings?.contains { $0.contains("truncated") } == true, "\(String(describing: entry?.warnings))")
    }

    /// A PNG and a WebP stored sideways with Exif orientation 6 (right): upright outputs with
    /// the tag reset to 1, also when metadata is stripped; `--no-auto-orient` keeps both.
    func testEveryFormatIsTurnedUpright() async throws {
        let input = ConvertFixtures.folder("orient-in")
        let stored = ConvertFixtures.photo(width: 60, height: 40, seed: 3)
        let exif = EXIFFixtureLite.tiff(orientation: 6)
        TestSupportFiles.write(ImageMetadata(exif: exif).embedded(in: try Codecs.encodePNG(stored)).bytes, input + "/sideways.png")
        TestSupportFiles.write(ImageMetadata(exif: exif).embedded(in: try Codecs.encodeWebP(stored, lossless: true)).bytes,
                               input + "/sideways.webp")
        for keep in [nil, [MetadataKind]()] {
            var settings = ConvertSettings()
            settings.keep = keep
            let (summary, out) = try await convert(input, settings)
            XCTAssertEqual(summary.converted, 2)
            for name in ["sideways.png", "sideways.webp"] {
                let bytes = try FileBytes.read(out + "/" + name)
                let raw = try Codecs.decode(bytes, options: DecodeOptions(applyEXIFOrientation: false))
                XCTAssertEqual([raw.width, raw.height], [40, 60], name)
                // The stored top-left pixel is now at the top right (orientation 6 turns clockwise).
                // (The WebP output is lossy at quality 85: a few levels off.)
                let p = raw.rgba(x: 39, y: 0), q = stored.rgba(x: 0, y: 0)
                for (a, b) in zip([p.r, p.g, p.b], [q.r, q.g, q.b]) { XCTAssertLessThanOrEqual(abs(Int(a) - Int(b)), 6, name) }
                XCTAssertEqual(EXIFOrientation.read(bytes), .up, name)
                if keep == nil {
                    let block = try EXIFBlock.parse(try XCTUnwrap(ImageMetadata.read(bytes).metadata.exif))
                    XCTAssertEqual(block.orientation, .up, name)
                }
            }
        }
        var keepTurn = ConvertSettings()
        keepTurn.autoOrient = false
        let (summary, out) = try await convert(input, keepTurn)
        XCTAssertEqual(summary.converted, 2)
        for name in ["sideways.png", "sideways.webp"] {
            let bytes = try FileBytes.read(out + "/" + name)
            let raw = try Codecs.decode(bytes, options: DecodeOptions(applyEXIFOrientation: false))
            XCTAssertEqual([raw.width, raw.height], [60, 40], name)
            XCTAssertEqual(EXIFOrientation.read(bytes), .right, name)
        }
        XCTAssertTrue(keepTurn.fingerprint(for: .png).contains("no-auto-orient"))
    }

    /// A transparent PNG into JPEG: the colour hidden under alpha 0 (bright green here) never
    /// shows; the background (white, or `--background`) does, and half-transparent pixels blend.
    func testTransparencyIsFlattenedOntoTheBackgroundForJPEG() async throws {
        let input = ConvertFixtures.folder("alpha-in")
        var bytes = [UInt8]()
        for y in 0..<32 {
            for x in 0..<32 {
                // Left half: green under alpha 0. Right half: blue at alpha 128.
                bytes += x < 16 ? [0, 255, 0, 0] : [0, 0, 255, 128]
                _ = y
            }
        }
        let image = try Image(width: 32, height: 32, format: .rgba8, bytes: bytes)
        TestSupportFiles.write(try Codecs.encodePNG(image), input + "/clear.png")
        for (background, expected) in [(nil, [(255, 255, 255), (127, 127, 255)]), (RGBColor(red: 0, green: 0, blue: 0), [(0, 0, 0), (0, 0, 128)])] {
            var settings = ConvertSettings(format: .jpeg, quality: 95)
            settings.background = background
            let (summary, out) = try await convert(input, settings)
            XCTAssertEqual(summary.converted, 1)
            let jpeg = try Codecs.decode(try FileBytes.read(out + "/clear.jpg"))
            for (x, want) in zip([4, 28], expected) {
                let p = jpeg.rgba(x: x, y: 16)
                XCTAssertEqual(Double(p.r), Double(want.0), accuracy: 4, "x \(x) background \(String(describing: background))")
                XCTAssertEqual(Double(p.g), Double(want.1), accuracy: 4, "x \(x) background \(String(describing: background))")
                XCTAssertEqual(Double(p.b), Double(want.2), accuracy: 4, "x \(x) background \(String(describing: background))")
            }
        }
        // PNG and WebP keep alpha.
        let (_, out) = try await convert(input, ConvertSettings(format: .png))
        XCTAssertEqual(try Codecs.decode(try FileBytes.read(out + "/clear.png")), image)
        XCTAssertEqual(RGBColor(parsing: "#0f8"), RGBColor(red: 0, green: 0xFF, blue: 0x88))
        XCTAssertEqual(RGBColor(parsing: "10, 20,30"), RGBColor(red: 10, green: 20, blue: 30))
        XCTAssertNil(RGBColor(parsing: "#12345"))
        var black = ConvertSettings(format: .jpeg)
        black.background = RGBColor(parsing: "black")
        XCTAssertTrue(black.fingerprint(for: .jpeg).contains("background=#000000"))
        XCTAssertFalse(black.fingerprint(for: .png).contains("background"))
    }

    /// Premultiplied resizing against libvips' `vipsthumbnail` (which premultiplies): a red disc
    /// on transparent black, shrunk 4×. Where vips gives alpha ≥ 32 the colour is within a mean
    /// of 3 levels of vips' (straight resizing darkens the rim towards the black underneath, tens
    /// of levels), and alpha within a mean of 3 levels.
    func testPremultipliedResizeMatchesVipsthumbnail() async throws {
        let vips = try Self.tool("vipsthumbnail", package: "libvips-tools")
        let input = ConvertFixtures.folder("premul-in")
        let size = 200
        var bytes = [UInt8](repeating: 0, count: size * size * 4)
        for y in 0..<size {
            for x in 0..<size {
                let dx = Double(x) + 0.5 - 100, dy = Double(y) + 0.5 - 100
                if dx * dx + dy * dy < 70 * 70 { bytes.replaceSubrange((y * size + x) * 4..<(y * size + x) * 4 + 4, with: [230, 20, 10, 255]) }
            }
        }
        let disc = try Image(width: size, height: size, format: .rgba8, bytes: bytes)
        TestSupportFiles.write(try Codecs.encodePNG(disc), input + "/disc.png")
        let (summary, out) = try await convert(input, ConvertSettings(resize: .fit(width: 50, height: 50), format: .png))
        XCTAssertEqual(summary.converted, 1)
        let ours = try Codecs.decode(try FileBytes.read(out + "/disc.png"))
        let vipsOut = out + "/vips.png"
        let r = try ChildProgram.run(vips, [input + "/disc.png", "-s", "50x50", "-o", vipsOut])
        XCTAssertEqual(r.status, 0, r.err)
        let theirs = try Codecs.decode(try FileBytes.read(vipsOut))
        XCTAssertEqual([ours.width, ours.height], [theirs.width, theirs.height])
        let straight = try Resampler.resize(disc, width: 50, height: 50, filter: .lanczos3, alpha: .straight)
        func errors(_ mine: Image) -> (color: Double, alpha: Double) {
            var color = 0.0, alpha = 0.0, n = 0.0
            for p in 0..<mine.pixelCount {
                let a = Double(theirs.bytes[p * 4 + 3])
                alpha += abs(Double(mine.bytes[p * 4 + 3]) - a)
                guard a >= 32 else { continue }
                for c in 0..<3 { color += abs(Double(mine.bytes[p * 4 + c]) - Double(theirs.bytes[p * 4 + c])) / 3 }
                n += 1
            }
            return (color / n, alpha / Double(mine.pixelCount))
        }
        let premultiplied = errors(ours), plain = errors(straight)
        XCTAssertLessThan(premultiplied.color, 3, "premultiplied vs vips")
        XCTAssertLessThan(premultiplied.alpha, 3, "alpha vs vips")
        XCTAssertGreaterThan(plain.color, premultiplied.color * 3, "straight resizing should darken the rim")
    }

    /// An animated GIF: an animated WebP (resized frame by frame) with `--format webp`, its first
    /// frame as PNG by default.
    func testAnimatedGIFStaysAnimatedIntoWebP() async throws {
        let magick = try Self.tool("convert", package: "imagemagick")
        let input = ConvertFixtures.folder("anim-in")
        let made = try ChildProgram.run(magick, ["-delay", "10", "-size", "40x20", "xc:red", "xc:blue", "xc:lime", "-loop", "0", input + "/a.gif"])
        XCTAssertEqual(made.status, 0, made.err)
        let (s1, out1) = try await convert(input, ConvertSettings(resize: .scale(0.5), format: .webp))
        XCTAssertEqual(s1.converted, 1)
        let frames = try XCTUnwrap(try Codecs.decodeAnimation(try FileBytes.read(out1 + "/a.webp")))
        XCTAssertEqual(frames.count, 3)
        XCTAssertEqual([frames[0].image.width, frames[0].image.height], [20, 10])
        let blue = frames[1].image.rgba(x: 10, y: 5)
        XCTAssertLessThan(Int(blue.r) + Int(blue.g), 30)
        XCTAssertGreaterThan(blue.b, 220)
        let (s2, out2) = try await convert(input, ConvertSettings())
        XCTAssertEqual(s2.converted, 1)
        let first = try Codecs.decode(try FileBytes.read(out2 + "/a.png"))
        let red = first.rgba(x: 3, y: 3)
        XCTAssertEqual([red.r, red.g, red.b], [255, 0, 0])
    }

    static func tool(_ name: String, package: String) throws -> String {
        for dir in ["/usr/bin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") {
            return "\(dir)/\(name)"
        }
        try Prerequisite.unmet("\(name) not found (Debian package \(package)): it is the reference for this test")
    }
}

/// A minimal Exif TIFF structure: IFD0 with the orientation tag only (little-endian).
enum EXIFFixtureLite {
    static func tiff(orientation: Int) -> [UInt8] {
        [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, UInt8(orientation), 0, 0, 0, 0, 0, 0, 0]
    }
}

import Foundation
import GraniteCodecs
import GraniteMedia
import GraniteTesting
import XCTest

/// JPEG XL read and write (libjxl), checked against pillow-jxl-plugin (its own libjxl build,
/// through Rust bindings) from the project's .venv (scripts/tiers/pre-media.sh installs it).
final class JXLTests: XCTestCase {
    func python() throws -> String {
        try TestSupport.venvPython(importing: "pillow_jxl", "pillow-jxl-plugin, the independent JPEG XL codec")
    }

    func pillowRGBA(_ python: String, _ path: String) throws -> [UInt8] {
        try TestSupport.pillowRGBA(python, path, plugin: "pillow_jxl")
    }

    func testOurFilesDecodeInPillowAndTheirsInOurs() throws {
        let python = try python()
        let dir = TestSupport.temporaryDirectory("jxl")
        for alpha in [false, true] {
            let image = TestSupport.gradient(width: 48, height: 40, alpha: alpha)
            // Lossless: exact both ways.
            let lossless = try Codecs.encodeJXL(image, quality: 100)
            XCTAssertEqual(Codecs.sniff(lossless), .jxl)
            TestSupport.write(lossless, dir + "/l.jxl")
            XCTAssertEqual(try pillowRGBA(python, dir + "/l.jxl"), image.bytes, "lossless alpha \(alpha)")
            XCTAssertEqual(try Codecs.decode(lossless), image, "lossless alpha \(alpha)")
            // Lossy at quality 90 (distance 1): close to the input, and both decoders agree.
            let lossy = try Codecs.encodeJXL(image, quality: 90)
            TestSupport.write(lossy, dir + "/q.jxl")
            let ours = try Codecs.decode(lossy)
            XCTAssertLessThan(TestSupport.meanAbsoluteError(ours.bytes, image.bytes), 3, "lossy alpha \(alpha)")
            XCTAssertLessThan(TestSupport.meanAbsoluteError(ours.bytes, try pillowRGBA(python, dir + "/q.jxl")), 1, "lossy alpha \(alpha)")
        }
        // A file Pillow writes (container format) reads here.
        TestSupport.write(try Codecs.encodePNG(TestSupport.gradient(width: 30, height: 20)), dir + "/in.png")
        let w = try ChildProgram.run(python, ["-c", "import sys, pillow_jxl; from PIL import Image; Image.open(sys.argv[1]).save(sys.argv[2], lossless=True)",
                                              dir + "/in.png", dir + "/p.jxl"])
        XCTAssertEqual(w.status, 0, w.err)
        let theirs = try FileBytes.read(dir + "/p.jxl")
        XCTAssertEqual(Codecs.sniff(theirs), .jxl)
        XCTAssertEqual(try Codecs.decode(theirs), TestSupport.gradient(width: 30, height: 20))
        XCTAssertThrowsError(try Codecs.decode(Array(theirs.prefix(theirs.count / 2)), path: "cut.jxl")) { error in
            XCTAssertEqual((error as? CodecError)?.path, "cut.jxl")
        }
    }

    func testMetadataBoxesAreWritten() throws {
        let exif: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x0F, 0x01, 2, 0, 4, 0, 0, 0, 0x41, 0x42, 0x43, 0, 0, 0, 0, 0]
        let jxl = try Codecs.encodeJXL(TestSupport.gradient(width: 16, height: 16), quality: 80,
                                       metadata: ImageMetadata(icc: ColorTransform.sRGBProfile, exif: exif))
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/exiftool") else {
            try Prerequisite.unmet("exiftool not found (Debian package libimage-exiftool-perl): the independent metadata reader")
        }
        let dir = TestSupport.temporaryDirectory("jxl-meta")
        TestSupport.write(jxl, dir + "/m.jxl")
        let make = try TestSupport.run("/usr/bin/exiftool", ["-s3", "-Make", dir + "/m.jxl"]).stdout
        XCTAssertEqual(String(decoding: make, as: UTF8.self), "ABC\n")
        XCTAssertThrowsError(try Codecs.encodeJXL(TestSupport.gradient(width: 4, height: 4), quality: 0))
    }

    /// An RGB profile that is not sRGB: lcms's sRGB profile with Display P3's colorants (D50) in
    /// its rXYZ/gXYZ/bXYZ tags and no profile ID.
    static func wideProfile() -> [UInt8] {
        var icc = ColorTransform.sRGBProfile
        for i in 84..<100 { icc[i] = 0 }
        func be32(_ at: Int) -> Int { icc[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        let colorants: [String: [Double]] = ["rXYZ": [0.5151, 0.2412, -0.0011], "gXYZ": [0.2920, 0.6922, 0.0419],
                                             "bXYZ": [0.1571, 0.0666, 0.7841]]
        for entry in 0..<be32(128) {
            let at = 132 + entry * 12
            let signature = String(decoding: icc[at..<at + 4], as: UTF8.self)
            guard let xyz = colorants[signature] else { continue }
            let offset = be32(at + 4) + 8
            for (k, value) in xyz.enumerated() {
                let fixed = UInt32(bitPattern: Int32((value * 65536).rounded()))
                for b in 0..<4 { icc[offset + k * 4 + b] = UInt8(truncatingIfNeeded: fixed >> (24 - 8 * UInt32(b))) }
            }
        }
        return icc
    }

    /// The profile of the decoded pixels comes with the metadata: a wide-gamut lossless JPEG XL
    /// keeps its profile (bytes as written), one encoded as plain sRGB needs none.
    func testTheDecodedPixelsKeepTheirICCProfile() throws {
        let wide = Self.wideProfile()
        XCTAssertEqual(try ICCProfile.parse(wide).colorSpace, "RGB")
        XCTAssertNotEqual(wide, ColorTransform.sRGBProfile)
        let image = TestSupport.gradient(width: 24, height: 16)
        let lossless = try Codecs.encodeJXL(image, quality: 100, metadata: ImageMetadata(icc: wide))
        let read = try XCTUnwrap(ImageMetadata.read(lossless).metadata.icc, "the wide profile is read back")
        XCTAssertEqual(read, wide, "a lossless image's pixels are in the file's own profile")
        XCTAssertEqual(try Codecs.decode(lossless), image, "lossless pixels as written")
        // A file that carries an ICC profile keeps it (libjxl does not take lcms's sRGB profile
        // for its own sRGB encoding); one encoded as plain sRGB needs none.
        let srgb = try Codecs.encodeJXL(image, quality: 100, metadata: ImageMetadata(icc: ColorTransform.sRGBProfile))
        XCTAssertEqual(ImageMetadata.read(srgb).metadata.icc, ColorTransform.sRGBProfile)
        XCTAssertNil(ImageMetadata.read(try Codecs.encodeJXL(image, quality: 80)).metadata.icc, "plain sRGB: no profile")
        XCTAssertNil(ImageMetadata.read(try Codecs.encodeJXL(image, quality: 100)).metadata.icc, "plain sRGB, lossless: no profile")
    }
}

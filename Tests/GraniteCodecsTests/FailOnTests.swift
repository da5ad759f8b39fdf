import GraniteCodecs
import GraniteMedia
import XCTest

/// Lenient decoding: libjpeg and libpng warnings are reported and the image decodes; `FailOn`
/// chooses what stops it. The damaged files are made here from clean ones.
final class FailOnTests: XCTestCase {
    let image = TestSupport.gradient(width: 48, height: 40)

    /// `jpeg` with `count` stray bytes inserted before its first DQT marker (as some cameras and
    /// Photoshop write): libjpeg warns "Corrupt JPEG data: N extraneous bytes before marker 0xdb".
    func extraneousBytes(_ jpeg: [UInt8], count: Int) -> [UInt8] {
        var i = 2
        while !(jpeg[i] == 0xFF && jpeg[i + 1] == 0xDB) { i += 1 }
        return Array(jpeg[..<i]) + [UInt8](repeating: 0x5A, count: count) + Array(jpeg[i...])
    }

    func testExtraneousBytesWarnAndDecodeTheSamePixels() throws {
        let clean = try Codecs.encodeJPEG(image, quality: 90)
        let damaged = extraneousBytes(clean, count: 3)
        var warnings = [String]()
        let decoded = try Codecs.decode(damaged, path: "x.jpg", options: DecodeOptions(), warnings: &warnings)
        XCTAssertEqual(decoded, try Codecs.decode(clean))
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        XCTAssertTrue(warnings.first?.contains("3 extraneous bytes before marker 0xdb") == true, "\(warnings)")
        // Scaled decoding and the header alone read past it too.
        let info = try Codecs.info(damaged)
        XCTAssertEqual([info.width, info.height], [48, 40])
        var scaledWarnings = [String]()
        let half = try Codecs.decode(damaged, options: DecodeOptions(minimumSize: (24, 20)), warnings: &scaledWarnings)
        XCTAssertEqual([half.width, half.height], [24, 20])
        XCTAssertFalse(scaledWarnings.isEmpty)
        for level in [FailOn.none, .truncated, .error] {
            XCTAssertNoThrow(try Codecs.decode(damaged, options: DecodeOptions(failOn: level)), "\(level)")
        }
        XCTAssertThrowsError(try Codecs.decode(damaged, path: "x.jpg", options: DecodeOptions(failOn: .warning))) { error in
            guard let error = error as? CodecError else { return XCTFail("untyped \(error)") }
            XCTAssertEqual(error.path, "x.jpg")
            XCTAssertTrue(error.reason.contains("extraneous bytes"), error.reason)
            XCTAssertTrue(error.reason.contains("fail-on warning"), error.reason)
        }
    }

    /// A JPEG cut short fails by default; with `none` it decodes, the missing rows filled, and says so.
    func testTruncatedJPEGFailsUnlessFailOnNone() throws {
        // Tall enough that the entropy-coded data, not the tables, makes up most of the file.
        let image = TestSupport.gradient(width: 48, height: 400)
        for progressive in [false, true] {
            let clean = try Codecs.encodeJPEG(image, quality: 90, progressive: progressive)
            let cut = Array(clean[..<(clean.count * 2 / 3)])
            for level in [FailOn.truncated, .error, .warning] {
                XCTAssertThrowsError(try Codecs.decode(cut, path: "t.jpg", options: DecodeOptions(failOn: level))) { error in
                    XCTAssertTrue((error as? CodecError)?.reason.contains("truncated") == true, "\(error)")
                }
            }
            var warnings = [String]()
            let partial = try Codecs.decode(cut, options: DecodeOptions(failOn: .none), warnings: &warnings)
            XCTAssertEqual([partial.width, partial.height], [48, 400])
            XCTAssertTrue(warnings.contains { $0.contains("truncated") }, "\(warnings)")
            // A baseline file's first rows are there, as in the whole file (a progressive one has
            // every row, at the precision of the scans that arrived).
            let whole = try Codecs.decode(clean)
            if !progressive {
                XCTAssertLessThan(TestSupport.meanAbsoluteError(Array(partial.bytes[0..<(48 * 4 * 4)]), Array(whole.bytes[0..<(48 * 4 * 4)])), 4)
            }
        }
        // A trailer after the end marker (as some cameras append) is not truncation.
        let trailer = try Codecs.encodeJPEG(image, quality: 90) + Array("SAMSUNG trailer".utf8)
        var warnings = [String]()
        XCTAssertNoThrow(try Codecs.decode(trailer, options: DecodeOptions(failOn: .warning), warnings: &warnings))
    }

    /// A PNG whose pixels are whole but whose IEND chunk is missing: truncated.
    func testPNGWithoutIENDIsTruncated() throws {
        let png = try Codecs.encodePNG(image)
        let cut = Array(png.dropLast(12))
        XCTAssertThrowsError(try Codecs.decode(cut))
        var warnings = [String]()
        XCTAssertEqual(try Codecs.decode(cut, options: DecodeOptions(failOn: .none), warnings: &warnings), image)
        XCTAssertEqual(warnings, ["PNG is truncated: no IEND chunk at the end"])
    }

    func testLevelsAreOrderedAsLibvips() {
        XCTAssertEqual(FailOn.allCases, [.none, .truncated, .error, .warning])
        XCTAssertTrue(FailOn.none < .truncated && FailOn.error < .warning)
        XCTAssertEqual(FailOn(name: "WARNING"), .warning)
        XCTAssertNil(FailOn(name: "sometimes"))
        XCTAssertEqual(FailOn.default, .truncated)
    }
}

import Foundation
import GraniteCodecs
import GraniteConvert
import XCTest

/// `--name` templates: placeholders, literal braces, typed errors, and the folder layout kept end to end.
final class OutputNameTests: XCTestCase {
    func testPlaceholdersFillAndFoldersAreKept() throws {
        let small = try OutputName("{stem}_small.{ext}")
        XCTAssertEqual(small.apply("a/b/photo.JPG", format: nil), "a/b/photo_small.JPG")
        XCTAssertEqual(small.apply("photo.jpg", format: .webp), "photo_small.webp")
        XCTAssertEqual(try OutputName("{{{stem}}}.png").apply("x/y.jpeg", format: .png), "x/{y}.png")
        XCTAssertEqual(try OutputName("thumb-{stem}").apply("p.q.jpg", format: nil), "thumb-p.q")
    }

    func testBadTemplatesAreTypedErrors() {
        for (template, words) in [("{stem}_{size}.{ext}", "unknown placeholder '{size}'"), ("{stem", "unclosed"),
                                  ("{stem}}x", "unmatched"), ("sub/{stem}.jpg", "'/'"), ("", "empty"), ("same.{ext}", "{stem}")] {
            XCTAssertThrowsError(try OutputName(template), template) { error in
                guard case let .badOption(option, value, reason) = error as? ConvertError else { return XCTFail("\(error)") }
                XCTAssertEqual(option, "--name")
                XCTAssertEqual(value, template)
                XCTAssertTrue(reason.contains(words), "\(template): \(reason)")
            }
        }
    }

    func testConvertNamesOutputsByTemplate() throws {
        let root = ConvertFixtures.folder("cli-name"), input = root + "/in"
        try ConvertFixtures.writeJPEGs(3, to: input)  // img0.jpg, set1/img1.jpg, set2/img2.jpg
        let r = try ConvertFixtures.runGranite(["convert", input, "-o", root + "/out", "--name", "{stem}_small.{ext}",
                                                "--format", "webp", "--resize", "50%"])
        XCTAssertEqual(r.status, 0, r.stderr)
        for name in ["img0_small.webp", "set1/img1_small.webp", "set2/img2_small.webp"] {
            let bytes = try FileBytes.read(root + "/out/" + name)
            XCTAssertEqual(Codecs.sniff(bytes), .webp, name)
        }
        let manifest = try String(contentsOfFile: root + "/out/manifest.json", encoding: .utf8)
        XCTAssertTrue(manifest.contains("set1/img1_small.webp") || manifest.contains("set1\\/img1_small.webp"), manifest)
        let bad = try ConvertFixtures.runGranite(["convert", input, "-o", root + "/bad", "--name", "{stem}-{width}.{ext}"])
        XCTAssertEqual(bad.status, ConvertExitCode.usage)
        XCTAssertTrue(bad.stderr.contains("{width}"), bad.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: root + "/bad/img0.jpg"))
    }
}

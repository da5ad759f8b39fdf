import Foundation
import GraniteCodecs
import GraniteConvert
import GraniteMedia
import GraniteTesting
import XCTest

/// Comments through `granite convert`: GIF comment extensions and JPEG COM segments carried into
/// JPEG and PNG outputs, `--keep` without `comment` dropping them, and the formats with no place for
/// one saying so in the manifest. Inputs come from Pillow (its GIF and JPEG writers) with further
/// comments spliced in by hand; outputs are read back by exiftool (every comment, `-a`) and Pillow.
final class ConvertCommentTests: XCTestCase {
    typealias M = ConvertMetadataTests

    func exiftool() throws -> String { try M.tool("exiftool", package: "libimage-exiftool-perl") }

    /// exiftool's comments of `path`, one per line, in file order.
    func listed(_ path: String) throws -> [String] {
        String(decoding: try M.run(try exiftool(), ["-a", "-s3", "-Comment", path]), as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// exiftool's comments of `path`, their bytes joined as `-b` extracts them.
    func joined(_ path: String) throws -> [UInt8] { try M.run(try exiftool(), ["-a", "-b", "-Comment", path]) }

    /// The manifest entry of the one output in `out`.
    func entry(_ out: String) throws -> Manifest.Entry {
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json")))
        XCTAssertEqual(manifest.entries.count, 1)
        return try XCTUnwrap(manifest.entries.first)
    }

    /// JPEG bytes with COM segments for `comments` right after SOI, each split at 65533 bytes as
    /// exiftool splits a long one.
    static func withComments(_ jpeg: [UInt8], _ comments: [[UInt8]]) -> [UInt8] {
        var segments = [UInt8]()
        for c in comments {
            for n in stride(from: 0, to: max(c.count, 1), by: 65533) {
                let part = c[n..<min(c.count, n + 65533)]
                segments += [0xFF, 0xFE, UInt8((part.count + 2) >> 8), UInt8((part.count + 2) & 0xFF)] + part
            }
        }
        return Array(jpeg[0..<2]) + segments + Array(jpeg[2...])
    }

    /// A 16x12 GIF written by Pillow (`frames` frames, its comment "made by Pillow") with a second
    /// comment extension, `after`, added after the last frame.
    func pillowGIF(_ path: String, frames: Int, after: [UInt8]) throws {
        let python = try ConvertFixtures.venvPython(importing: "PIL", "Pillow writes the GIF input")
        let script = "import sys; from PIL import Image; f = [Image.new('RGB', (16, 12), (40 * i, 90, 200 - 40 * i)) for i in range(\(frames))]; "
            + "f[0].save(sys.argv[1], save_all=True, append_images=f[1:], duration=100, comment=b'made by Pillow')"
        let r = try ChildProgram.run(python, ["-c", script, path])
        XCTAssertEqual(r.status, 0, r.err)
        var gif = try FileBytes.read(path)
        XCTAssertEqual(gif.last, 0x3B, "the trailer")
        gif.insert(contentsOf: [0x21, 0xFE, UInt8(after.count)] + after + [0], at: gif.count - 1)
        try M.write(gif, path)
    }

    func testGIFCommentsReachJPEG() throws {
        let dir = ConvertFixtures.folder("comment-gif"), out = dir + "/out"
        let after = Array("caf".utf8) + [0xE9, 0x20] + Array("after the frames".utf8)  // Latin-1, as real GIFs have it
        try pillowGIF(dir + "/in.gif", frames: 1, after: after)
        XCTAssertEqual(try listed(dir + "/in.gif").count, 2, "exiftool reads both comments of the input")
        let r = try ConvertFixtures.runGranite(["convert", dir + "/in.gif", "-o", out, "--format", "jpg"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stderr.contains("warning"), r.stderr)
        let jpg = out + "/in.jpg"
        XCTAssertEqual(try listed(jpg).first, "made by Pillow")
        XCTAssertEqual(try listed(jpg).count, 2)
        XCTAssertEqual(try joined(jpg), Array("made by Pillow".utf8) + after, "both, in order, byte for byte")
        // Pillow's info['comment'] is the last COM segment.
        let python = try ConvertFixtures.venvPython(importing: "PIL", "Pillow reads the JPEG output")
        let read = try ChildProgram.run(python, ["-c", "import sys; from PIL import Image; sys.stdout.buffer.write(Image.open(sys.argv[1]).info['comment'])", jpg])
        XCTAssertEqual(read.stdout, after, read.err)
        XCTAssertEqual(try entry(out).metadata, [.comment])
    }

    /// Several comments (ASCII, Latin-1, UTF-8, one of 70000 bytes in two segments) JPEG → PNG →
    /// JPEG come back byte for byte and in order.
    func testJPEGCommentsRoundTripThroughPNG() throws {
        let dir = ConvertFixtures.folder("comment-roundtrip")
        let long = (0..<70_000).map { (i: Int) -> UInt8 in UInt8(0x20 + i % 95) }
        let comments: [[UInt8]] = [Array("first".utf8), [0x63, 0x61, 0x66, 0xE9], Array("naïve ✓".utf8), long, Array("last".utf8)]
        let jpeg = try Codecs.encodeJPEG(ConvertFixtures.photo(width: 32, height: 24, seed: 2), quality: 90)
        try M.write(Self.withComments(jpeg, comments), dir + "/in.jpg")
        XCTAssertEqual(try listed(dir + "/in.jpg").count, 6, "exiftool sees six COM segments")

        var r = try ConvertFixtures.runGranite(["convert", dir + "/in.jpg", "-o", dir + "/png", "--format", "png"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let png = dir + "/png/in.png"
        XCTAssertEqual(try listed(png).count, 5, "five PNG text chunks")
        XCTAssertEqual(try listed(png)[2], "naïve ✓")
        XCTAssertEqual(try entry(dir + "/png").metadata, [.comment])
        r = try ConvertFixtures.runGranite(["convert", png, "-o", dir + "/back", "--format", "jpg"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let back = dir + "/back/in.jpg"
        XCTAssertEqual(ImageMetadata.read(try FileBytes.read(back)).metadata.comments, comments)
        XCTAssertEqual(try joined(back), try joined(dir + "/in.jpg"), "exiftool reads the same bytes as from the input")
        XCTAssertEqual(try listed(back).map(\.count), try listed(dir + "/in.jpg").map(\.count), "split where the input was split")
    }

    /// `--keep` without `comment` (and `--strip`) leaves comments out silently; `--keep comment`
    /// keeps them alone.
    func testKeepWithoutCommentDropsIt() throws {
        let dir = ConvertFixtures.folder("comment-keep")
        let jpeg = try Codecs.encodeJPEG(ConvertFixtures.photo(width: 16, height: 16, seed: 4), quality: 90)
        try M.write(Self.withComments(jpeg, [Array("keep me?".utf8)]), dir + "/in.jpg")
        try M.run(try exiftool(), ["-q", "-overwrite_original", "-XMP-dc:Title=Titled", dir + "/in.jpg"])
        for (name, options, expected) in [("some", ["--keep", "icc,exif,xmp"], [MetadataKind.xmp]), ("strip", ["--strip"], []),
                                          ("only", ["--keep", "comment"], [.comment])] {
            let out = dir + "/" + name
            let r = try ConvertFixtures.runGranite(["convert", dir + "/in.jpg", "-o", out] + options)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertFalse(r.stderr.contains("warning"), "\(name): \(r.stderr)")
            XCTAssertEqual(try listed(out + "/in.jpg"), expected.contains(.comment) ? ["keep me?"] : [], name)
            let e = try entry(out)
            XCTAssertEqual(e.metadata, expected, name)
            XCTAssertNil(e.warnings, name)
        }
    }

    /// WebP (still and animated), TIFF, JPEG XL and AVIF have no comment place: each output
    /// converts, and its manifest entry and a warning say the comment was dropped and why.
    func testFormatsWithoutPlaceReportTheDrop() throws {
        let dir = ConvertFixtures.folder("comment-drop")
        let jpeg = try Codecs.encodeJPEG(ConvertFixtures.photo(width: 16, height: 16, seed: 5), quality: 90)
        try M.write(Self.withComments(jpeg, [Array("nowhere to go".utf8)]), dir + "/in.jpg")
        try pillowGIF(dir + "/anim.gif", frames: 2, after: Array("moving".utf8))
        let cases = [("in.jpg", "webp", "WebP"), ("anim.gif", "webp", "WebP"), ("in.jpg", "tif", "TIFF"),
                     ("in.jpg", "jxl", "JPEG XL"), ("in.jpg", "avif", "AVIF")]
        for (input, format, name) in cases {
            let out = dir + "/\(input)-\(format)"
            let r = try ConvertFixtures.runGranite(["convert", dir + "/" + input, "-o", out, "--format", format])
            XCTAssertEqual(r.status, 0, r.stderr)
            let e = try entry(out)
            let warning = try XCTUnwrap(e.warnings?.first { $0.hasPrefix("comment dropped: \(name) has no place for it") }, "\(input) → \(format): \(e.warnings ?? [])")
            XCTAssertTrue(r.stderr.contains(warning), r.stderr)
            XCTAssertFalse(e.metadata?.contains(.comment) ?? true, "\(format): \(e.metadata ?? [])")
            XCTAssertEqual(try listed(out + "/" + e.output), [], format)
        }
        let animated = try FileBytes.read(dir + "/anim.gif-webp/anim.webp")
        XCTAssertEqual(try Codecs.decodeAnimation(animated)?.count, 2, "still animated")
    }

    /// An output converted before comments were kept (its manifest entry lists no comment, its
    /// settings fingerprint still matches) is converted again when its input has one, once; an
    /// input without a comment is still skipped.
    func testAnOutputMadeBeforeCommentsWereKeptIsRedoneOnce() async throws {
        let dir = ConvertFixtures.folder("comment-upgrade"), input = dir + "/in", out = dir + "/out"
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        let jpeg = try Codecs.encodeJPEG(ConvertFixtures.photo(width: 16, height: 16, seed: 6), quality: 90)
        try M.write(Self.withComments(jpeg, [Array("said before".utf8)]), input + "/said.jpg")
        try M.write(try Codecs.encodeJPEG(ConvertFixtures.photo(width: 16, height: 16, seed: 7), quality: 90), input + "/plain.jpg")
        let settings = ConvertSettings(quality: 85)
        let first = try await BatchConverter(inputs: [input], outputDirectory: out, settings: settings).run { _ in nil }
        XCTAssertEqual(first.converted, 2)
        // The manifest an earlier version wrote: no comment kept anywhere.
        let url = URL(fileURLWithPath: out + "/manifest.json")
        var manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: url))
        for i in manifest.entries.indices { manifest.entries[i].metadata = manifest.entries[i].metadata?.filter { $0 != .comment } }
        try JSONEncoder().encode(manifest).write(to: url)
        let again = try await BatchConverter(inputs: [input], outputDirectory: out, settings: settings).run { _ in nil }
        XCTAssertEqual([again.converted, again.skipped], [1, 1], "the commented input is converted again, the plain one skipped")
        XCTAssertEqual(ImageMetadata.read(try FileBytes.read(out + "/said.jpg")).metadata.comments, [Array("said before".utf8)])
        let third = try await BatchConverter(inputs: [input], outputDirectory: out, settings: settings).run { _ in nil }
        XCTAssertEqual([third.converted, third.skipped], [0, 2], "then both are done")
    }
}

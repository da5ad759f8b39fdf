import Foundation
import GraniteCodecs
import GraniteMedia
import GraniteTesting
import XCTest

/// Comments in and out of the containers: JPEG COM segments, PNG text chunks with keyword
/// `Comment`, GIF comment extensions (read only). Our reader is checked against exiftool (which
/// lists every comment, `-a`) and Pillow, and our writer is read back by both.
final class ImageCommentTests: XCTestCase {
    /// Comments with each kind of byte: ASCII, Latin-1 (not UTF-8), UTF-8, empty, and a NUL inside.
    static let mixed: [[UInt8]] = [Array("first comment".utf8), [0x63, 0x61, 0x66, 0xE9, 0x20, 0x63, 0x72, 0xE8, 0x6D, 0x65],
                                   Array("naïve ✓ ünïcödé".utf8), [], [0x61, 0x00, 0x62]]

    /// A comment of `count` bytes that are all visible ASCII, varied so a misplaced split shows.
    static func longComment(_ count: Int) -> [UInt8] {
        (0..<count).map { (i: Int) -> UInt8 in UInt8(0x21 + (i * 7 + i / 255) % 94) }
    }

    /// `path` written by `exiftool -a -s3 -Comment`: one line per comment, in file order.
    static func exiftoolComments(_ path: String, group: String = "") throws -> [String] {
        let r = try TestSupport.run(try TestSupport.exiftool(), ["-a", "-s3", "-\(group)Comment", path])
        XCTAssertEqual(r.status, 0)
        return String(decoding: r.stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// GIF bytes with a comment extension (sub-blocks of at most 255 bytes) before each top-level
    /// block whose index is in `at` (0: the first block after the colour table; a count past the
    /// last block: before the trailer).
    static func gif(_ gif: [UInt8], inserting comments: [(at: Int, text: [UInt8])]) -> [UInt8] {
        var starts = [Int]()
        var i = 13 + (gif[10] & 0x80 != 0 ? 3 << (Int(gif[10] & 7) + 1) : 0)
        func skipSubBlocks(_ j: Int) -> Int { var k = j; while gif[k] != 0 { k += 1 + Int(gif[k]) }; return k + 1 }
        while gif[i] != 0x3B {
            starts.append(i)
            if gif[i] == 0x21 {
                i = skipSubBlocks(i + 2)
            } else {
                var j = i + 10
                if gif[i + 9] & 0x80 != 0 { j += 3 << (Int(gif[i + 9] & 7) + 1) }
                i = skipSubBlocks(j + 1)
            }
        }
        starts.append(i)
        var out = gif
        // From the end, so earlier positions stay valid; at one position, the later comment first.
        for (_, (at, text)) in comments.enumerated().sorted(by: { ($0.element.at, $0.offset) > ($1.element.at, $1.offset) }) {
            var ext: [UInt8] = [0x21, 0xFE]
            for n in stride(from: 0, to: text.count, by: 255) {
                let part = text[n..<min(text.count, n + 255)]
                ext += [UInt8(part.count)] + part
            }
            out.insert(contentsOf: ext + [0], at: starts[min(at, starts.count - 1)])
        }
        return out
    }

    func testJPEGCommentsInOrderWithExiftoolAndPillow() throws {
        let jpeg = try Codecs.encodeJPEG(TestSupport.gradient(width: 24, height: 16), quality: 90)
        let (tagged, written, problems) = ImageMetadata(xmp: nil, comments: Self.mixed).embedded(in: jpeg)
        XCTAssertEqual(written, [.comment])
        XCTAssertEqual(problems, [])
        XCTAssertEqual(ImageMetadata.read(tagged).metadata.comments, Self.mixed, "every comment, in order, byte for byte")
        XCTAssertTrue(try Codecs.decode(tagged) == Codecs.decode(jpeg), "pixels unchanged")
        let dir = TestSupport.temporaryDirectory("comment-jpeg")
        TestSupport.write(tagged, dir + "/c.jpg")
        // exiftool strips a trailing NUL only; "a\0b" keeps its NUL, which ends the line it prints.
        let listed = try Self.exiftoolComments(dir + "/c.jpg")
        XCTAssertEqual(listed.count, 5, "\(listed)")
        XCTAssertEqual(listed.first, "first comment")
        XCTAssertEqual(listed[2], "naïve ✓ ünïcödé")
        XCTAssertEqual(listed[3], "")
        // Pillow keeps every COM segment in its applist, bytes as they are.
        let python = try TestSupport.venvPython(importing: "PIL", "Pillow reads the COM segments we wrote")
        let script = "import sys; from PIL import Image; im = Image.open(sys.argv[1]); "
            + "sys.stdout.write('\\n'.join(v.hex() for k, v in im.applist if k == 'COM'))"
        let r = try ChildProgram.run(python, ["-c", script, dir + "/c.jpg"])
        XCTAssertEqual(r.status, 0, r.err)
        let hex = Self.mixed.map { $0.map { String(format: "%02x", $0) }.joined() }
        XCTAssertEqual(String(decoding: r.stdout, as: UTF8.self), hex.joined(separator: "\n"))
    }

    /// A comment over one segment's 65533 bytes is split into full COM segments and read back as
    /// one; exiftool (which lists each segment) gives the same bytes joined, and a long comment
    /// exiftool splits itself is read as one too.
    func testLongJPEGCommentIsSplitAndRejoined() throws {
        let long = Self.longComment(150_000), after = Array("after the long one".utf8)
        let jpeg = try Codecs.encodeJPEG(TestSupport.gradient(width: 16, height: 16), quality: 80)
        let tagged = ImageMetadata(comments: [long, after]).embedded(in: jpeg).bytes
        XCTAssertEqual(ImageMetadata.read(tagged).metadata.comments, [long, after])
        let dir = TestSupport.temporaryDirectory("comment-long")
        TestSupport.write(tagged, dir + "/long.jpg")
        let lines = try Self.exiftoolComments(dir + "/long.jpg")
        XCTAssertEqual(lines.map(\.count), [65533, 65533, 150_000 - 2 * 65533, after.count], "three segments, then the next comment")
        let joined = try TestSupport.run(try TestSupport.exiftool(), ["-a", "-b", "-Comment", dir + "/long.jpg"]).stdout
        XCTAssertEqual(joined, long + after)

        TestSupport.write(jpeg, dir + "/theirs.jpg")
        TestSupport.write(long, dir + "/long.txt")
        try TestSupport.run(try TestSupport.exiftool(), ["-q", "-overwrite_original", "-Comment<=\(dir)/long.txt", dir + "/theirs.jpg"])
        XCTAssertEqual(ImageMetadata.read(try FileBytes.read(dir + "/theirs.jpg")).metadata.comments, [long], "exiftool's split, rejoined")
    }

    /// PNG: ASCII and Latin-1 comments become tEXt, UTF-8 ones iTXt; Pillow's tEXt, zTXt and iTXt
    /// comments are all read, in order.
    func testPNGCommentChunks() throws {
        let png = try Codecs.encodePNG(TestSupport.gradient(width: 8, height: 8))
        let comments = Array(Self.mixed.prefix(3))
        let (tagged, written, _) = ImageMetadata(comments: comments).embedded(in: png)
        XCTAssertEqual(written, [.comment])
        let read = ImageMetadata.read(tagged)
        XCTAssertEqual(read.problems, [])
        XCTAssertEqual(read.metadata.comments, comments)
        let dir = TestSupport.temporaryDirectory("comment-png")
        TestSupport.write(tagged, dir + "/c.png")
        func count(_ type: String) -> Int {
            let needle = Array((type + "Comment").utf8) + [0]
            return (0...(tagged.count - needle.count)).filter { tagged[$0] == needle[0] && Array(tagged[$0..<$0 + needle.count]) == needle }.count
        }
        XCTAssertEqual([count("tEXt"), count("iTXt"), count("zTXt")], [2, 1, 0], "ASCII and Latin-1 in tEXt, UTF-8 in iTXt")
        // exiftool reads tEXt as Latin-1 and iTXt as UTF-8, and prints both as UTF-8.
        XCTAssertEqual(try Self.exiftoolComments(dir + "/c.png"), ["first comment", "café crème", "naïve ✓ ünïcödé"])

        let python = try TestSupport.venvPython(importing: "PIL", "Pillow writes PNG text chunks")
        let script = "import sys; from PIL import Image, PngImagePlugin; i = PngImagePlugin.PngInfo(); "
            + "i.add_text('Comment', 'plain'); i.add_text('Comment', 'caf\\xe9', zip=True); i.add_itxt('Comment', 'z\\u00fcrich', zip=True); "
            + "i.add_text('Title', 'not a comment'); Image.new('RGB', (4, 4)).save(sys.argv[1], pnginfo=i)"
        let r = try ChildProgram.run(python, ["-c", script, dir + "/pillow.png"])
        XCTAssertEqual(r.status, 0, r.err)
        let theirs = ImageMetadata.read(try FileBytes.read(dir + "/pillow.png"))
        XCTAssertEqual(theirs.problems, [])
        XCTAssertEqual(theirs.metadata.comments, [Array("plain".utf8), [0x63, 0x61, 0x66, 0xE9], Array("zürich".utf8)])
    }

    /// GIF: every comment extension, before, between and after the frames, in order (exiftool
    /// agrees); a comment cut off by the end of the file is reported, not kept half.
    func testGIFCommentExtensions() throws {
        let python = try TestSupport.venvPython(importing: "PIL", "Pillow writes the GIF")
        let dir = TestSupport.temporaryDirectory("comment-gif")
        let script = "import sys; from PIL import Image; a = Image.new('RGB', (6, 4), (200, 10, 10)); b = Image.new('RGB', (6, 4), (10, 10, 200)); "
            + "a.save(sys.argv[1], save_all=True, append_images=[b], duration=100, comment=b'from Pillow')"
        let r = try ChildProgram.run(python, ["-c", script, dir + "/p.gif"])
        XCTAssertEqual(r.status, 0, r.err)
        let long = Self.longComment(700)  // three sub-blocks
        let gif = Self.gif(try FileBytes.read(dir + "/p.gif"), inserting: [(2, Array("between".utf8)), (99, long), (2, [0xE9, 0x74, 0xE9])])
        XCTAssertEqual(ImageMetadata.read(gif).metadata.comments, [Array("from Pillow".utf8), Array("between".utf8), [0xE9, 0x74, 0xE9], long])
        TestSupport.write(gif, dir + "/c.gif")
        XCTAssertEqual(try Self.exiftoolComments(dir + "/c.gif").count, 4)
        XCTAssertEqual(try TestSupport.run(try TestSupport.exiftool(), ["-a", "-b", "-Comment", dir + "/c.gif"]).stdout.suffix(700), long[...])
        XCTAssertEqual(try Codecs.decodeAnimation(gif)?.count, 2, "giflib still reads both frames")

        let cut = Array(Self.gif(try FileBytes.read(dir + "/p.gif"), inserting: [(99, long)]).dropLast(300))
        let read = ImageMetadata.read(cut)
        XCTAssertEqual(read.metadata.comments, [Array("from Pillow".utf8)])
        XCTAssertEqual(read.problems.map(\.kind), [.comment])
    }

    /// WebP, AVIF, TIFF and JPEG XL have no place for a comment: it is reported, never written
    /// into another field.
    func testFormatsWithoutACommentPlaceReportTheDrop() throws {
        let m = ImageMetadata(xmp: nil, comments: [Array("hi".utf8)])
        let webp = try Codecs.encodeWebP(TestSupport.gradient(width: 8, height: 8))
        let (bytes, written, problems) = m.embedded(in: webp)
        XCTAssertEqual(bytes, webp)
        XCTAssertEqual(written, [])
        XCTAssertEqual(problems.map(\.description), ["comment dropped: WebP has no place for it (its RIFF chunks have none)"])
        for format in [ImageFormat.avif, .tiff, .jxl] {
            let held = m.held(by: format)
            XCTAssertEqual(held.metadata.comments, [], "\(format)")
            XCTAssertEqual(held.problems.map(\.kind), [.comment], "\(format)")
        }
        XCTAssertEqual(m.held(by: .jpeg).problems, [])
        XCTAssertEqual(m.held(by: .png).metadata, m)
    }
}

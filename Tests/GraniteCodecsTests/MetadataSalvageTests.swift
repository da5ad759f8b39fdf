import Foundation
import GraniteCodecs
import GraniteMedia
import GraniteTesting
import XCTest

/// Damaged Exif kept entry by entry, ImageMagick's PNG text profiles, and PNG gamma chunks.
final class MetadataSalvageTests: XCTestCase {
    func entryOffset(_ block: EXIFBlock, _ ifd: TIFFIFD, _ tag: UInt16) -> Int {
        ifd.offset + 2 + 12 * ifd.entries.firstIndex { $0.tag == tag }!
    }

    /// Make's value aimed past the end: Make is dropped (named), every other tag kept, in a
    /// block that parses strictly and reads the same through exiftool.
    func testOneBadTagDropsOnlyThatTag() throws {
        for little in [true, false] {
            let good = EXIFFixture(littleEndian: little).build()
            let block = try EXIFBlock.parse(good)
            var bad = good
            let at = entryOffset(block, block.ifd0, EXIFBlock.Tag.make)
            bad[(at + 8)...(at + 11)] = little ? [0xF0, 0xFF, 0, 0] : [0, 0, 0xFF, 0xF0]
            XCTAssertThrowsError(try EXIFBlock.parse(bad))
            let (salvaged, dropped) = EXIFBlock.salvage(bad)
            XCTAssertEqual(dropped.count, 1)
            XCTAssertTrue(dropped[0].description.contains("IFD0 tag 0x10f"), dropped[0].description)
            let kept = try EXIFBlock.parse(try XCTUnwrap(salvaged))
            XCTAssertNil(kept.string(EXIFBlock.Tag.make))
            XCTAssertEqual(kept.string(EXIFBlock.Tag.model), "GC-1 Mark II")
            XCTAssertEqual(kept.string(EXIFBlock.Tag.copyright), "(c) 2026 Test Author")
            XCTAssertEqual(kept.string(EXIFBlock.Tag.dateTimeOriginal), "2026:11:24 14:30:00")
            XCTAssertEqual(kept.string(0x0001), "N")
            XCTAssertEqual(kept.orientation, .right)
            XCTAssertNil(kept.thumbnail)
            XCTAssertEqual(kept.littleEndian, little)

            // Through a JPEG: ImageMetadata.read keeps the salvaged block and names what it dropped.
            let jpeg = try Codecs.encodeJPEG(TestSupport.gradient(width: 16, height: 16))
            let tagged = ImageMetadata(exif: bad).embedded(in: jpeg).bytes
            let read = ImageMetadata.read(tagged)
            XCTAssertEqual(read.metadata.exif, salvaged)
            XCTAssertEqual(read.problems.map(\.partial), [true])
            XCTAssertTrue(read.problems[0].description.hasPrefix("Exif entry dropped, the rest kept: IFD0 tag 0x10f"),
                          read.problems[0].description)
            try assertExiftool(ImageMetadata(exif: salvaged).embedded(in: jpeg).bytes,
                               ["IFD0:Model": "GC-1 Mark II", "ExifIFD:DateTimeOriginal": "2026:11:24 14:30:00", "IFD0:Orientation": 6])
        }
    }

    /// A wrong pointer count and a byte-order mark that contradicts the data are read past.
    func testWrongPointerCountAndStrayByteOrder() throws {
        let good = EXIFFixture(littleEndian: true).build()
        let block = try EXIFBlock.parse(good)
        var count = good
        let at = entryOffset(block, block.ifd0, EXIFBlock.Tag.exifIFD)
        count[at + 4] = 2  // Exif IFD pointer with count 2
        XCTAssertThrowsError(try EXIFBlock.parse(count))
        let a = try EXIFBlock.parse(try XCTUnwrap(EXIFBlock.salvage(count).bytes))
        XCTAssertEqual(a.string(EXIFBlock.Tag.dateTimeOriginal), "2026:11:24 14:30:00")
        var order = good
        order[0] = 0x4D; order[1] = 0x4D  // says big-endian, data little-endian
        let (bytes, dropped) = EXIFBlock.salvage(order)
        let b = try EXIFBlock.parse(try XCTUnwrap(bytes))
        XCTAssertEqual(b.string(EXIFBlock.Tag.make), "Granite Camera Co")
        XCTAssertTrue(dropped.first?.description.contains("byte order") == true)
    }

    /// Random damage: salvage never traps, and what it returns always parses strictly.
    func testSalvageOfDamagedBlocksAlwaysParses() {
        var random = TestSupport.Random(state: 26)
        for little in [true, false] {
            let good = EXIFFixture(littleEndian: little).build()
            for n in 0..<good.count {
                if let bytes = EXIFBlock.salvage(Array(good.prefix(n))).bytes { XCTAssertNoThrow(try EXIFBlock.parse(bytes), "cut \(n)") }
            }
            for trial in 0..<2000 {
                var bytes = good
                for _ in 0..<(1 + random.below(4)) { bytes[random.below(bytes.count)] = UInt8(random.below(256)) }
                if let out = EXIFBlock.salvage(bytes).bytes { XCTAssertNoThrow(try EXIFBlock.parse(out), "trial \(trial)") }
            }
        }
    }

    /// ImageMagick's "Raw profile type exif/xmp" text chunks (zTXt, tEXt) are read; exiftool
    /// checks the test file is what ImageMagick writes, and the output's eXIf / iTXt carry them on.
    func testPNGRawProfileTextChunksAreRead() throws {
        let exif = EXIFFixture(littleEndian: false, thumbnail: nil).build()
        let xmp = Array(#"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/></x:xmpmeta>"#.utf8)
        func rawProfile(_ name: String, _ bytes: [UInt8]) -> [UInt8] {
            var text = "\n\(name)\n" + String(repeating: " ", count: max(0, 8 - String(bytes.count).count)) + "\(bytes.count)\n"
            for (i, b) in bytes.enumerated() {
                text += (b < 16 ? "0" : "") + String(b, radix: 16)
                if i % 36 == 35 { text += "\n" }
            }
            return Array((text + "\n").utf8)
        }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let n = data.count, body = Array(type.utf8) + data
            let crc = Self.crc32(body)
            return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + body
                + [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
        }
        let png = try Codecs.encodePNG(TestSupport.gradient(width: 20, height: 10))
        let ihdrEnd = 8 + 25
        let exifChunk = chunk("zTXt", Array("Raw profile type exif".utf8) + [0, 0] + Self.zlib(rawProfile("exif", [0x45, 0x78, 0x69, 0x66, 0, 0] + exif)))
        let xmpChunk = chunk("tEXt", Array("Raw profile type xmp".utf8) + [0] + rawProfile("xmp", xmp))
        let file = Array(png[..<ihdrEnd]) + exifChunk + xmpChunk + Array(png[ihdrEnd...])
        let read = ImageMetadata.read(file)
        XCTAssertEqual(read.problems, [])
        XCTAssertEqual(read.metadata.exif, exif)
        XCTAssertEqual(read.metadata.xmp, xmp)
        XCTAssertEqual(EXIFOrientation.read(file), .right)
        XCTAssertEqual(try Codecs.decode(file).width, 10, "turned upright from the text profile's orientation")
        try assertExiftool(file, ["IFD0:Model": "GC-1 Mark II", "IFD0:Orientation": 6])
        // Written back as eXIf and iTXt.
        let out = read.metadata.embedded(in: png)
        XCTAssertEqual(out.written, [.exif, .xmp])
        XCTAssertEqual(ImageMetadata.read(out.bytes).metadata, read.metadata)
    }

    /// gAMA and cHRM are not applied: the stored values come back, as libvips and Pillow give
    /// them (libpng's simplified API alone, like ImageMagick and browsers, would re-encode gAMA 1.0
    /// up to ~70 levels brighter).
    func testPNGGammaChunksLeavePixelsAsStored() throws {
        let image = TestSupport.gradient(width: 64, height: 8, alpha: true)
        let png = try Codecs.encodePNG(image)
        let at = 8 + 25
        for gamma in [100_000, 45455, 22000] {
            let g = [UInt8(gamma >> 24), UInt8(gamma >> 16 & 0xFF), UInt8(gamma >> 8 & 0xFF), UInt8(gamma & 0xFF)]
            var data = Array("gAMA".utf8) + g
            var crc = Self.crc32(data)
            var file = Array(png[..<at]) + [0, 0, 0, 4] + data + [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
            data = Array("cHRM".utf8) + [UInt8](repeating: 0, count: 32)
            crc = Self.crc32(data)
            file += [0, 0, 0, 32] + data + [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
            file += png[at...]
            XCTAssertEqual(try Codecs.decode(file), image, "gAMA \(gamma)")
            let dir = TestSupport.temporaryDirectory("gamma")
            TestSupport.write(file, dir + "/g.png")
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/vips") else {
                try Prerequisite.unmet("vips not found (Debian package libvips-tools): the reference PNG reader for gamma")
            }
            let r = try ChildProgram.run("/usr/bin/vips", ["rawsave", dir + "/g.png", dir + "/g.raw"])
            XCTAssertEqual(r.status, 0, r.err)
            XCTAssertEqual(try FileBytes.read(dir + "/g.raw"), image.bytes, "libvips on gAMA \(gamma)")
        }
    }

    func assertExiftool(_ bytes: [UInt8], _ expected: [String: Any], file: StaticString = #filePath, line: UInt = #line) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/exiftool") else {
            try Prerequisite.unmet("exiftool not found (Debian package libimage-exiftool-perl): the independent Exif reader")
        }
        let dir = TestSupport.temporaryDirectory("salvage")
        TestSupport.write(bytes, dir + "/f")
        let json = try TestSupport.run("/usr/bin/exiftool", ["-j", "-n", "-G1", "-a", dir + "/f"]).stdout
        let tags = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(json)) as? [[String: Any]])?.first)
        for (key, value) in expected {
            XCTAssertEqual("\(tags[key] ?? "missing")", "\(value)", key, file: file, line: line)
        }
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// A zlib stream of stored (uncompressed) blocks.
    static func zlib(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var i = 0
        repeat {
            let n = min(65535, data.count - i)
            let last: UInt8 = i + n == data.count ? 1 : 0
            out += [last, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8(~n >> 8 & 0xFF)] + data[i..<i + n]
            i += n
        } while i < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for x in data { a = (a + UInt32(x)) % 65521; b = (b + a) % 65521 }
        let adler = b << 16 | a
        return out + [UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)]
    }

    /// A tag twice in one IFD (here IFD0's Exif pointer, found by the fuzzer): the first is kept,
    /// the second dropped with a warning, and the salvaged block parses strictly (a second
    /// pointer used to stay behind aimed at nothing).
    func testATagTwiceInOneIFDKeepsTheFirst() throws {
        let bytes = try XCTUnwrap(Data(base64Encoded: "SUkqAAgAAAAACAAAABMAAQMAAAEAAAAIAAAAAQEDAAFLAAAGAAAAAgEDAAMAAADyAAAAAwEDAAEAAAApAQMAAgAASW50AAAAAQA9AcwAAAAAAAAAAwABAABTdWJzdHJpbgACAAAA/gAAAD8BBQAGAAAADgEAAGmHBAABAAAAPgEHAAAAJYj8//78AACUAQAAAAAAABAAEAAQAFNlZWQAADcaoAAAAAACK4cKAAAAIACF61EAAACAAAEDAAEAAAAGAAAAAgEDAAMAAADyAAAAAwEDAAEAAAApAQMAAgAASW50AAAAAQA9AcwAAAAAAAAAAwABAAAAAgAAFAAAAAACAAAA/gAAAD8BBQAGAAAADgEAAGmHBAABAAAAPgEAACWI/P9TZXF1ZW5j/vwAAJRJSSoACAAAABMVAAEDAAEAAAAIAAAAAQAAAAAAABAAEAAQAFNlZQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAGQAADcaoAAAAAACK4cKwvUAAAAAEAUAAJAHAAQAAAAwMgIADwEAKAACACPw/wAAEiAgICAgw/WoAAAAAALNzEwAAAAAAc3MTAAAAIAAzcxMAAAAAAKPwvUAAAAAEAUAAJAHAAQAAAAwMgIADwEAKAACACPw/wAAEiBdICAgICAB")).map { $0 }
        let (salvaged, dropped) = EXIFBlock.salvage(bytes)
        let block = try XCTUnwrap(salvaged)
        XCTAssertNoThrow(try EXIFBlock.parse(block))
        XCTAssertTrue(dropped.contains { "\($0)".contains("the tag again in the same IFD") }, "\(dropped)")
    }
}

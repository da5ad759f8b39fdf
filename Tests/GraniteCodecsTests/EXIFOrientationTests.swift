import GraniteCodecs
import GraniteMedia
import XCTest

final class EXIFOrientationTests: XCTestCase {
    // Stored quadrant colors: top-left red, top-right green, bottom-left blue, bottom-right white.
    let red: [UInt8] = [255, 0, 0], green: [UInt8] = [0, 255, 0], blue: [UInt8] = [0, 0, 255], white: [UInt8] = [255, 255, 255]

    func quadrants(width: Int, height: Int) throws -> Image {
        var bytes = [UInt8]()
        for y in 0..<height {
            for x in 0..<width {
                let c = y < height / 2 ? (x < width / 2 ? red : green) : (x < width / 2 ? blue : white)
                bytes += c + [255]
            }
        }
        return try Image(width: width, height: height, format: .rgba8, bytes: bytes)
    }

    /// An APP1 Exif segment holding only IFD0 with the orientation tag.
    func exifSegment(orientation: Int, littleEndian: Bool) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { littleEndian ? [UInt8(v & 0xFF), UInt8(v >> 8)] : [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { littleEndian ? u16(v & 0xFFFF) + u16(v >> 16) : u16(v >> 16) + u16(v & 0xFFFF) }
        var tiff: [UInt8] = littleEndian ? [0x49, 0x49] : [0x4D, 0x4D]
        tiff += u16(42) + u32(8)
        tiff += u16(2)  // two entries: an unrelated tag first, then orientation
        tiff += u16(0x010F) + u16(2) + u32(4) + [0x41, 0x42, 0x43, 0]  // Make = "ABC"
        tiff += u16(0x0112) + u16(3) + u32(1) + u16(orientation) + [0, 0]
        tiff += u32(0)
        let payload: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0] + tiff
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    func withOrientation(_ jpeg: [UInt8], _ o: Int, littleEndian: Bool) -> [UInt8] {
        Array(jpeg[0..<2]) + exifSegment(orientation: o, littleEndian: littleEndian) + Array(jpeg[2...])
    }

    func color(_ image: Image, _ x: Int, _ y: Int) -> [UInt8] {
        let p = image.rgba(x: x, y: y)
        return [p.r, p.g, p.b].map { $0 > 127 ? 255 : 0 }
    }

    func testAllEightOrientationsComeOutUpright() throws {
        let stored = try quadrants(width: 64, height: 32)
        let jpeg = try Codecs.encodeJPEG(stored, quality: 95, subsampling: .s444)
        // Where the stored top-left and top-right quadrants end up (TIFF 6.0 orientation table).
        let expected: [Int: (tl: String, tr: String)] = [
            1: ("TL", "TR"), 2: ("TR", "TL"), 3: ("BR", "BL"), 4: ("BL", "BR"),
            5: ("TL", "BL"), 6: ("TR", "BR"), 7: ("BR", "TR"), 8: ("BL", "TL"),
        ]
        for littleEndian in [true, false] {
            for o in 1...8 {
                let bytes = withOrientation(jpeg, o, littleEndian: littleEndian)
                XCTAssertEqual(EXIFOrientation.read(jpeg: bytes).rawValue, o)
                let image = try Codecs.decode(bytes)
                let swapped = o >= 5
                XCTAssertEqual([image.width, image.height], swapped ? [32, 64] : [64, 32], "orientation \(o)")
                let inset = 4
                let corners = ["TL": (inset, inset), "TR": (image.width - 1 - inset, inset),
                               "BL": (inset, image.height - 1 - inset), "BR": (image.width - 1 - inset, image.height - 1 - inset)]
                let (tl, tr) = expected[o]!
                XCTAssertEqual(color(image, corners[tl]!.0, corners[tl]!.1), red, "orientation \(o) red")
                XCTAssertEqual(color(image, corners[tr]!.0, corners[tr]!.1), green, "orientation \(o) green")
                let info = try Codecs.info(bytes)
                XCTAssertEqual([info.width, info.height], [image.width, image.height])
                let raw = try Codecs.decode(bytes, options: DecodeOptions(applyEXIFOrientation: false))
                XCTAssertEqual([raw.width, raw.height], [64, 32])
            }
        }
    }

    /// ImageMagick's -auto-orient agrees with our decoder on a rotated photo.
    func testAgreesWithImageMagickAutoOrient() throws {
        let magick = try TestSupport.imageMagick()
        let jpeg = withOrientation(try Codecs.encodeJPEG(try quadrants(width: 48, height: 32), quality: 95, subsampling: .s444), 6,
                                   littleEndian: false)
        let dir = TestSupport.temporaryDirectory("orient")
        TestSupport.write(jpeg, dir + "/r.jpg")
        let theirs = try TestSupport.run(magick, [dir + "/r.jpg", "-auto-orient", "-depth", "8", "rgba:-"]).stdout
        let ours = try Codecs.decode(jpeg)
        XCTAssertEqual(theirs.count, ours.bytes.count)
        XCTAssertLessThan(TestSupport.meanAbsoluteError(theirs, ours.bytes), 3)
    }

    func testDamagedExifIsIgnored() throws {
        let jpeg = try Codecs.encodeJPEG(try quadrants(width: 16, height: 16), quality: 90)
        var bytes = withOrientation(jpeg, 6, littleEndian: true)
        bytes[4 + 2 + 6 + 4] = 0xFF  // IFD offset points far outside the segment
        XCTAssertEqual(EXIFOrientation.read(jpeg: bytes), .up)
        XCTAssertEqual(try Codecs.decode(bytes).width, 16)
    }

    /// Checks `decode` of `bytes` against the TIFF orientation table (as for JPEG above).
    func assertUpright(_ bytes: [UInt8], _ o: Int, _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let expected: [Int: (tl: String, tr: String)] = [
            1: ("TL", "TR"), 2: ("TR", "TL"), 3: ("BR", "BL"), 4: ("BL", "BR"),
            5: ("TL", "BL"), 6: ("TR", "BR"), 7: ("BR", "TR"), 8: ("BL", "TL"),
        ]
        XCTAssertEqual(EXIFOrientation.read(bytes).rawValue, o, what, file: file, line: line)
        let image = try Codecs.decode(bytes)
        XCTAssertEqual([image.width, image.height], o >= 5 ? [32, 64] : [64, 32], what, file: file, line: line)
        let corners = ["TL": (4, 4), "TR": (image.width - 5, 4), "BL": (4, image.height - 5), "BR": (image.width - 5, image.height - 5)]
        let (tl, tr) = expected[o]!
        XCTAssertEqual(color(image, corners[tl]!.0, corners[tl]!.1), red, "\(what) red", file: file, line: line)
        XCTAssertEqual(color(image, corners[tr]!.0, corners[tr]!.1), green, "\(what) green", file: file, line: line)
        let info = try Codecs.info(bytes)
        XCTAssertEqual([info.width, info.height, info.orientation.rawValue], [image.width, image.height, o], what, file: file, line: line)
        let raw = try Codecs.decode(bytes, options: DecodeOptions(applyEXIFOrientation: false))
        XCTAssertEqual([raw.width, raw.height], [64, 32], what, file: file, line: line)
    }

    /// PNG `eXIf` and WebP `EXIF` turn the pixels as JPEG's APP1 does, in both byte orders.
    func testPNGAndWebPExifOrientationsComeOutUpright() throws {
        let stored = try quadrants(width: 64, height: 32)
        let png = try Codecs.encodePNG(stored), webp = try Codecs.encodeWebP(stored, lossless: true)
        for littleEndian in [true, false] {
            for o in 1...8 {
                let tiff = Array(exifSegment(orientation: o, littleEndian: littleEndian).dropFirst(4 + 6))
                let blocks = ImageMetadata(exif: tiff)
                let taggedPNG = blocks.embedded(in: png), taggedWebP = blocks.embedded(in: webp)
                XCTAssertEqual(taggedPNG.written, [.exif])
                XCTAssertEqual(taggedWebP.written, [.exif])
                try assertUpright(taggedPNG.bytes, o, "PNG orientation \(o)")
                try assertUpright(taggedWebP.bytes, o, "WebP orientation \(o)")
            }
        }
    }

    /// With no Exif orientation, XMP's `tiff:Orientation` (attribute or element form) is followed;
    /// an Exif orientation wins over a different XMP one.
    func testXMPOrientationIsFollowedWhenExifHasNone() throws {
        let stored = try quadrants(width: 64, height: 32)
        let attribute = Array("""
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description xmlns:tiff="http://ns.adobe.com/tiff/1.0/" tiff:Orientation="8"/></rdf:RDF></x:xmpmeta>
            """.utf8)
        let element = Array("""
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description xmlns:tiff="http://ns.adobe.com/tiff/1.0/"><tiff:Orientation>3</tiff:Orientation></rdf:Description></rdf:RDF></x:xmpmeta>
            """.utf8)
        let png = try Codecs.encodePNG(stored)
        try assertUpright(ImageMetadata(xmp: attribute).embedded(in: png).bytes, 8, "PNG XMP attribute")
        try assertUpright(ImageMetadata(xmp: element).embedded(in: try Codecs.encodeJPEG(stored, quality: 95, subsampling: .s444)).bytes,
                          3, "JPEG XMP element")
        let both = ImageMetadata(exif: Array(exifSegment(orientation: 6, littleEndian: true).dropFirst(10)), xmp: attribute)
        try assertUpright(both.embedded(in: try Codecs.encodeWebP(stored, lossless: true)).bytes, 6, "WebP Exif over XMP")
        XCTAssertEqual(try XMPPacket.parse(attribute).orientation, .left)
    }
}

import Foundation
import GraniteCodecs
import GraniteMedia
import XCTest

/// Metadata blocks in and out of JPEG and PNG: byte-exact round trips through our reader, the
/// decoders still reading the files, and ImageMagick / exiftool reading what we wrote.
final class ImageMetadataTests: XCTestCase {
    let xmp = Array("""
    <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF \
    xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" \
    xmlns:tiff="http://ns.adobe.com/tiff/1.0/" tiff:Orientation="6"/></rdf:RDF></x:xmpmeta><?xpacket end="w"?>
    """.utf8)

    /// lcms's sRGB profile grown to `size` bytes (zero padding, header size patched): still valid.
    static func bigProfile(_ size: Int) -> [UInt8] {
        var p = ColorTransform.sRGBProfile
        p += [UInt8](repeating: 0, count: size - p.count)
        p[0...3] = [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
        return p
    }

    func testSRGBProfileParses() throws {
        let profile = try ICCProfile.parse(ColorTransform.sRGBProfile)
        XCTAssertEqual(profile.colorSpace, "RGB")
        XCTAssertEqual(profile.deviceClass, "mntr")
        var bad = ColorTransform.sRGBProfile
        bad[36] = 0
        XCTAssertThrowsError(try ICCProfile.parse(bad))
        XCTAssertThrowsError(try ICCProfile.parse(Array(ColorTransform.sRGBProfile.dropLast())))
    }

    func testJPEGRoundTripWithChunkedProfile() throws {
        let icc = Self.bigProfile(150_000)  // three APP2 chunks
        let exif = EXIFFixture(orientation: 1, thumbnail: nil).build()  // 1: decoding leaves the pixels as stored
        let jpeg = try Codecs.encodeJPEG(TestSupport.gradient(width: 40, height: 30), quality: 90)
        let (tagged, written, problems) = ImageMetadata(icc: icc, exif: exif, xmp: xmp).embedded(in: jpeg)
        XCTAssertEqual(written, [.exif, .xmp, .icc])
        XCTAssertEqual(problems, [])
        let back = ImageMetadata.read(tagged)
        XCTAssertEqual(back.problems, [])
        XCTAssertEqual(back.metadata, ImageMetadata(icc: icc, exif: exif, xmp: xmp))
        XCTAssertTrue(try Codecs.decode(tagged) == Codecs.decode(jpeg), "pixels unchanged")
        // The JFIF APP0 stays first.
        XCTAssertEqual(Array(tagged[2...3]), [0xFF, 0xE0])
        // ImageMagick puts the three chunks back together into the same bytes.
        let dir = TestSupport.temporaryDirectory("meta-jpeg")
        try Data(tagged).write(to: URL(fileURLWithPath: dir + "/t.jpg"))
        let extracted = try TestSupport.run(try TestSupport.imageMagick(), [dir + "/t.jpg", "icc:-"])
        XCTAssertEqual(extracted.stdout, icc)
    }

    func testPNGRoundTrip() throws {
        let icc = ColorTransform.sRGBProfile
        let exif = EXIFFixture(littleEndian: false, thumbnail: nil).build()
        let png = try Codecs.encodePNG(TestSupport.gradient(width: 40, height: 30, alpha: true))
        let (tagged, written, _) = ImageMetadata(icc: icc, exif: exif, xmp: xmp).embedded(in: png)
        XCTAssertEqual(written, [.icc, .exif, .xmp])
        let back = ImageMetadata.read(tagged)
        XCTAssertEqual(back.problems, [])
        XCTAssertEqual(back.metadata, ImageMetadata(icc: icc, exif: exif, xmp: xmp))
        XCTAssertEqual(try Codecs.decode(tagged, options: DecodeOptions(applyEXIFOrientation: false)), try Codecs.decode(png))
        XCTAssertEqual(try Codecs.decode(tagged).width, 30, "orientation 6 turns the PNG upright")
        let dir = TestSupport.temporaryDirectory("meta-png")
        try Data(tagged).write(to: URL(fileURLWithPath: dir + "/t.png"))
        XCTAssertEqual(try TestSupport.run(try TestSupport.imageMagick(), [dir + "/t.png", "icc:-"]).stdout, icc)
        // No sRGB chunk beside iCCP.
        XCTAssertNil(tagged.firstRange(of: Array("sRGB".utf8)))
    }

    func testBrokenBlocksAreDroppedWithTypedProblems() throws {
        let jpeg = try Codecs.encodeJPEG(TestSupport.gradient(width: 16, height: 16))
        var exif = EXIFFixture().build()
        exif[4...7] = [0xFF, 0xFF, 0, 0]
        var icc = ColorTransform.sRGBProfile
        icc[36] = 0
        let (tagged, _, _) = ImageMetadata(icc: icc, exif: exif, xmp: [0xFF, 0xFE, 0x00]).embedded(in: jpeg)
        let back = ImageMetadata.read(tagged)
        XCTAssertEqual(back.metadata, ImageMetadata())
        XCTAssertEqual(back.problems.map(\.kind), [.icc, .exif, .xmp])
        // A missing ICC chunk (1 of 2 announced).
        let two = ImageMetadata(icc: Self.bigProfile(70_000)).embedded(in: jpeg).bytes
        let first = two.firstRange(of: Array("ICC_PROFILE".utf8))!.lowerBound - 4
        let length = Int(two[first + 2]) << 8 | Int(two[first + 3])
        let cut = Array(two[..<first] + two[(first + 2 + length)...])
        let r = ImageMetadata.read(cut)
        XCTAssertNil(r.metadata.icc)
        XCTAssertEqual(r.problems.map(\.kind), [.icc])
        // A PNG chunk with a bad CRC.
        var png = ImageMetadata(exif: EXIFFixture().build()).embedded(in: try Codecs.encodePNG(TestSupport.gradient(width: 8, height: 8))).bytes
        let at = png.firstRange(of: Array("eXIf".utf8))!.upperBound + 3
        png[at] ^= 0xFF
        XCTAssertEqual(ImageMetadata.read(png).problems.first?.kind, .exif)
    }

    func testXMPOrientationReset() throws {
        let packet = try XMPPacket.parse(xmp).resettingOrientation()
        let text = String(decoding: packet.bytes, as: UTF8.self)
        XCTAssertTrue(text.contains("tiff:Orientation=\"1\""))
        XCTAssertEqual(packet.bytes.count, xmp.count)
        let element = Array("<x:xmpmeta><tiff:Orientation>8</tiff:Orientation></x:xmpmeta>".utf8)
        XCTAssertEqual(String(decoding: try XMPPacket.parse(element).resettingOrientation().bytes, as: UTF8.self),
                       "<x:xmpmeta><tiff:Orientation>1</tiff:Orientation></x:xmpmeta>")
    }

    /// Byte flips and truncations of tagged JPEG, PNG and WebP files: reading their metadata
    /// returns (blocks or problems) and never traps.
    func testDamagedContainersNeverTrap() throws {
        let blocks = ImageMetadata(icc: Self.bigProfile(70_000), exif: EXIFFixture().build(), xmp: xmp)
        let image = TestSupport.gradient(width: 24, height: 16)
        let files = [try Codecs.encodeJPEG(image), try Codecs.encodePNG(image), try Codecs.encodeWebP(image)]
            .map { blocks.embedded(in: $0).bytes }
        var random = TestSupport.Random(state: 160)
        for file in files {
            XCTAssertEqual(ImageMetadata.read(file).metadata.kinds, [.icc, .exif, .xmp])
            for _ in 0..<1500 {
                var bytes = file
                for _ in 0..<(1 + random.below(3)) { bytes[random.below(bytes.count)] = UInt8(random.below(256)) }
                _ = ImageMetadata.read(bytes)
                _ = ImageMetadata.read(Array(file.prefix(random.below(file.count))))
            }
        }
    }
}

extension Array where Element == UInt8 {
    func firstRange(of needle: [UInt8]) -> Range<Int>? {
        guard count >= needle.count else { return nil }
        for i in 0...(count - needle.count) where self[i..<i + needle.count].elementsEqual(needle) { return i..<i + needle.count }
        return nil
    }
}

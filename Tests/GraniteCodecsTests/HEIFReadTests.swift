import Foundation
import GraniteCodecs
import GraniteMedia
import XCTest

/// Reading HEIC (libheif with libde265) and AVIF (libavif), checked against ImageMagick's libheif
/// decoder on files made here (HEIC by ImageMagick's libheif/x265 encoder, AVIF by our encoder).
final class HEIFReadTests: XCTestCase {
    func testHEICDecodesAsImageMagickDoes() throws {
        let magick = try TestSupport.imageMagick()
        let dir = TestSupport.temporaryDirectory("heic")
        TestSupport.write(try Codecs.encodePNG(TestSupport.gradient(width: 96, height: 64)), dir + "/in.png")
        let made = try TestSupport.run(magick, [dir + "/in.png", "-quality", "90", dir + "/in.heic"])
        XCTAssertEqual(made.status, 0)
        let bytes = try FileBytes.read(dir + "/in.heic")
        XCTAssertEqual(Codecs.sniff(bytes), .heic)
        let info = try Codecs.info(bytes)
        XCTAssertEqual([info.width, info.height], [96, 64])
        let ours = try Codecs.decode(bytes, path: "in.heic")
        XCTAssertEqual([ours.width, ours.height], [96, 64])
        let theirs = try TestSupport.magickRGBA(dir + "/in.heic")
        XCTAssertLessThan(TestSupport.meanAbsoluteError(ours.bytes, theirs), 1.5)
        // And close to what was encoded (lossy).
        XCTAssertLessThan(TestSupport.meanAbsoluteError(ours.bytes, TestSupport.gradient(width: 96, height: 64).bytes), 4)
        // Damage is a typed error naming the file.
        XCTAssertThrowsError(try Codecs.decode(Array(bytes.prefix(bytes.count / 2)), path: "cut.heic")) { error in
            XCTAssertEqual((error as? CodecError)?.path, "cut.heic")
        }
        XCTAssertThrowsError(try Codecs.decode(bytes, options: DecodeOptions(maxPixels: 1000))) { error in
            XCTAssertEqual((error as? CodecError)?.phase, "header")
        }
    }

    /// AVIF with alpha, and with the rotation libavif derives from an Exif orientation (irot):
    /// turned upright on decode, as ImageMagick (libheif) shows it.
    func testAVIFDecodesUprightWithAlpha() throws {
        let dir = TestSupport.temporaryDirectory("avif-read")
        let translucent = TestSupport.gradient(width: 64, height: 32, alpha: true)
        let withAlpha = try Codecs.decode(try Codecs.encodeAVIF(translucent, quality: 90))
        XCTAssertEqual([withAlpha.width, withAlpha.height], [64, 32])
        XCTAssertLessThan(TestSupport.meanAbsoluteError(withAlpha.bytes, translucent.bytes), 3, "colour and alpha")

        let image = TestSupport.gradient(width: 64, height: 32)
        let avif = try Codecs.encodeAVIF(image, quality: 90)
        let plain = try Codecs.decode(avif)
        TestSupport.write(avif, dir + "/a.avif")
        XCTAssertLessThan(TestSupport.meanAbsoluteError(plain.bytes, try TestSupport.magickRGBA(dir + "/a.avif")), 1.5)

        // Exif orientation 6 becomes irot in the file: decoded turned, 32x64.
        let exif: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]
        let turned = try Codecs.encodeAVIF(image, quality: 90, metadata: ImageMetadata(exif: exif))
        let upright = try Codecs.decode(turned)
        XCTAssertEqual([upright.width, upright.height], [32, 64])
        let info = try Codecs.info(turned)
        XCTAssertEqual([info.width, info.height], [32, 64])
        TestSupport.write(turned, dir + "/t.avif")
        XCTAssertLessThan(TestSupport.meanAbsoluteError(upright.bytes, try TestSupport.magickRGBA(dir + "/t.avif")), 1.5)
        let stored = try Codecs.decode(turned, options: DecodeOptions(applyEXIFOrientation: false))
        XCTAssertEqual([stored.width, stored.height], [64, 32])
        XCTAssertEqual(ImageMetadata.read(turned).metadata.exif.flatMap { try? EXIFBlock.parse($0) }?.orientation, .right)
    }
}

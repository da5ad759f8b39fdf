import Foundation
import GraniteCodecs
import GraniteMedia
import XCTest

/// WebP through libwebp: round trips, ImageMagick decoding our files, metadata chunks that
/// exiftool reads, and typed errors on broken files.
final class WebPTests: XCTestCase {
    func testLosslessRoundTripIsExactAndLossyIsClose() throws {
        let image = TestSupport.gradient(width: 37, height: 23, alpha: true)
        let lossless = try Codecs.encodeWebP(image, lossless: true)
        XCTAssertEqual(Codecs.sniff(lossless), .webp)
        XCTAssertEqual(Self.visible(try Codecs.decode(lossless).bytes), Self.visible(image.bytes))
        let opaque37 = TestSupport.gradient(width: 37, height: 23)
        XCTAssertEqual(try Codecs.decode(try Codecs.encodeWebP(opaque37, lossless: true)), opaque37)
        let info = try Codecs.info(lossless)
        XCTAssertEqual([info.width, info.height], [37, 23])
        let opaque = TestSupport.gradient(width: 64, height: 48)
        let lossy = try Codecs.encodeWebP(opaque, quality: 90)
        XCTAssertLessThan(TestSupport.meanAbsoluteError(try Codecs.decode(lossy).bytes, opaque.bytes), 3)
        XCTAssertLessThan(try Codecs.encodeWebP(opaque, quality: 10).count, lossy.count)
    }

    /// RGBA with the color of fully transparent pixels zeroed: libwebp's lossless mode (like
    /// `cwebp -lossless` without `-exact`) does not keep colors nobody can see.
    static func visible(_ rgba: [UInt8]) -> [UInt8] {
        var out = rgba
        for p in stride(from: 0, to: out.count, by: 4) where out[p + 3] == 0 { out[p] = 0; out[p + 1] = 0; out[p + 2] = 0 }
        return out
    }

    func testImageMagickDecodesOurFiles() throws {
        let image = TestSupport.gradient(width: 40, height: 30, alpha: true)
        let dir = TestSupport.temporaryDirectory("webp")
        try Data(try Codecs.encodeWebP(image, lossless: true)).write(to: URL(fileURLWithPath: dir + "/a.webp"))
        XCTAssertEqual(Self.visible(try TestSupport.magickRGBA(dir + "/a.webp")), Self.visible(image.bytes))
    }

    func testMetadataChunks() throws {
        let icc = ColorTransform.sRGBProfile
        let exif = EXIFFixture(thumbnail: nil).build()
        let xmp = Array("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF/></x:xmpmeta>".utf8)
        let dir = TestSupport.temporaryDirectory("webp-meta")
        for (name, lossless, alpha) in [("lossy", false, false), ("lossless", true, true), ("lossy-alpha", false, true)] {
            let image = TestSupport.gradient(width: 33, height: 21, alpha: alpha)
            let webp = try Codecs.encodeWebP(image, quality: 95, lossless: lossless)
            let (tagged, written, problems) = ImageMetadata(icc: icc, exif: exif, xmp: xmp).embedded(in: webp)
            XCTAssertEqual(written, [.icc, .exif, .xmp], name)
            XCTAssertEqual(problems, [])
            XCTAssertEqual(ImageMetadata.read(tagged).metadata, ImageMetadata(icc: icc, exif: exif, xmp: xmp), name)
            // The Exif says orientation 6: pixels as stored without auto-orientation, turned with it.
            XCTAssertEqual(try Codecs.decode(tagged, options: DecodeOptions(applyEXIFOrientation: false)), try Codecs.decode(webp), name)
            XCTAssertEqual(try Codecs.decode(tagged).width, 21, name)
            let path = dir + "/\(name).webp"
            try Data(tagged).write(to: URL(fileURLWithPath: path))
            XCTAssertEqual(try TestSupport.run(try TestSupport.imageMagick(), [path, "icc:-"]).stdout, icc, name)
            XCTAssertEqual(try TestSupport.magickRGBA(path), try Codecs.decode(webp).bytes, name)
            let make = try TestSupport.run(try TestSupport.exiftool(), ["-s3", "-Make", path]).stdout
            XCTAssertEqual(String(decoding: make, as: UTF8.self), "Granite Camera Co\n", name)
        }
    }

    func testBrokenFilesAreTypedErrors() throws {
        let webp = try Codecs.encodeWebP(TestSupport.gradient(width: 32, height: 32), quality: 80)
        XCTAssertThrowsError(try Codecs.decode(Array(webp.prefix(webp.count / 2)))) { error in
            XCTAssertEqual((error as? CodecError)?.phase, "decode")
        }
        XCTAssertThrowsError(try Codecs.decode(Array(webp.prefix(16)))) { error in
            XCTAssertEqual((error as? CodecError)?.phase, "header")
        }
        XCTAssertThrowsError(try Codecs.decode(webp, options: DecodeOptions(maxPixels: 100))) { error in
            XCTAssertEqual((error as? CodecError)?.phase, "header")
        }
    }
}

import Foundation
import GraniteCodecs
import GraniteMedia
import GraniteTesting
import XCTest

/// AVIF writing through libavif + libaom, read back by independent decoders: ImageMagick (libheif)
/// and avifdec (libavif with dav1d, to PNG) for the pixels, avifdec's PNG for the ICC profile's
/// bytes, avifdec --info and exiftool for the Exif and XMP items.
final class AVIFTests: XCTestCase {
    static func avifdec() throws -> String {
        let path = "/usr/bin/avifdec"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            try Prerequisite.unmet("avifdec not found (Debian package libavif-bin): it is the independent AVIF decoder here")
        }
        return path
    }

    func testPixelsAndProfileSurviveIndependentDecoders() throws {
        let icc = ColorTransform.sRGBProfile
        var fixture = EXIFFixture(thumbnail: nil)
        fixture.orientation = 1  // as convert writes it for pixels already upright
        let exif = fixture.build()
        let xmp = Array("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF/></x:xmpmeta>".utf8)
        let dir = TestSupport.temporaryDirectory("avif")
        let image = TestSupport.gradient(width: 96, height: 64)
        let avif = try Codecs.encodeAVIF(image, quality: 90, metadata: ImageMetadata(icc: icc, exif: exif, xmp: xmp), threads: 2)
        XCTAssertEqual(Codecs.sniff(avif), .avif)
        let path = dir + "/a.avif"
        try AtomicFile.write(avif, to: path)

        let theirs = try TestSupport.magickRGBA(path)
        XCTAssertEqual(theirs.count, image.bytes.count)
        let error = TestSupport.meanAbsoluteError(theirs, image.bytes)
        XCTAssertLessThan(error, 2.5, "ImageMagick's decode of our AVIF: mean error \(error) levels")

        let info = String(decoding: try TestSupport.run(try Self.avifdec(), ["--info", path]).stdout, as: UTF8.self)
        XCTAssertTrue(info.contains("Resolution     : 96x64"), info)
        XCTAssertTrue(info.contains("Alpha          : Absent"), info)
        for line in ["ICC Profile    : Present", "XMP Metadata   : Present", "Exif Metadata  : Present"] {
            XCTAssertTrue(info.contains(line), "avifdec --info lacks '\(line)': \(info)")
        }
        // avifdec's own decode (dav1d) to PNG agrees as well.
        XCTAssertEqual(try TestSupport.run(try Self.avifdec(), [path, dir + "/a.png"]).status, 0)
        let viaDav1d = try FileBytes.read(dir + "/a.png")
        XCTAssertLessThan(TestSupport.meanAbsoluteError(try Codecs.decode(viaDav1d).bytes, image.bytes), 2.5)
        XCTAssertEqual(ImageMetadata.read(viaDav1d).metadata.icc, icc, "ICC profile bytes, as avifdec writes them to its PNG")
        let make = try TestSupport.run(try TestSupport.exiftool(), ["-s3", "-Make", path]).stdout
        XCTAssertEqual(String(decoding: make, as: UTF8.self), "Granite Camera Co\n")
        // libavif mirrors an Exif orientation into the AVIF's own irot/imir transform, so viewers that
        // ignore Exif (most AVIF readers) still turn the image as the other formats' readers do.
        fixture.orientation = 6
        let turned = try Codecs.encodeAVIF(image, quality: 50, metadata: ImageMetadata(exif: fixture.build()))
        try AtomicFile.write(turned, to: dir + "/t.avif")
        let turnedInfo = String(decoding: try TestSupport.run(try Self.avifdec(), ["--info", dir + "/t.avif"]).stdout, as: UTF8.self)
        XCTAssertTrue(turnedInfo.contains("irot (Rotation)"), turnedInfo)
        // Lower quality, smaller file.
        XCTAssertLessThan(try Codecs.encodeAVIF(image, quality: 20).count, avif.count)
    }

    func testAlphaIsKeptAndGrayIsExpanded() throws {
        let dir = TestSupport.temporaryDirectory("avif-alpha")
        let image = TestSupport.gradient(width: 40, height: 30, alpha: true)
        try AtomicFile.write(try Codecs.encodeAVIF(image, quality: 95), to: dir + "/a.avif")
        let info = String(decoding: try TestSupport.run(try Self.avifdec(), ["--info", dir + "/a.avif"]).stdout, as: UTF8.self)
        XCTAssertTrue(info.contains("Alpha          : Not premultiplied"), info)
        // ImageMagick's libheif drops AVIF alpha here: avifdec's PNG is the reference.
        XCTAssertEqual(try TestSupport.run(try Self.avifdec(), [dir + "/a.avif", dir + "/a.png"]).status, 0)
        let theirs = try Codecs.decodeFile(dir + "/a.png").bytes
        let alphaError = TestSupport.meanAbsoluteError(stride(from: 3, to: theirs.count, by: 4).map { theirs[$0] },
                                                       stride(from: 3, to: image.bytes.count, by: 4).map { image.bytes[$0] })
        XCTAssertLessThan(alphaError, 4, "alpha plane")
        let gray = try Image(width: 16, height: 8, format: .gray8, bytes: (0..<128).map { UInt8($0 * 2) })
        XCTAssertEqual(Codecs.sniff(try Codecs.encodeAVIF(gray)), .avif)
    }

    func testBadInputIsATypedError() throws {
        let image = TestSupport.gradient(width: 8, height: 8)
        XCTAssertThrowsError(try Codecs.encodeAVIF(image, quality: 0, path: "x.avif")) { error in
            XCTAssertEqual(error as? CodecError, .encode(path: "x.avif", reason: "AVIF quality 0 is not in 1...100"))
        }
        XCTAssertThrowsError(try Codecs.encodeAVIF(try Image(width: 2, height: 2, format: .yuyv))) { error in
            XCTAssertEqual((error as? CodecError)?.phase, "encode")
        }
        // A damaged AVIF is a typed error, never a crash.
        let avif = try Codecs.encodeAVIF(image)
        XCTAssertThrowsError(try Codecs.decode(Array(avif.prefix(40)), path: "in.avif")) { error in
            XCTAssertEqual((error as? CodecError)?.path, "in.avif")
        }
    }
}

import Foundation
@testable import GraniteCodecs
import GraniteMedia
import GraniteTesting
import XCTest

/// Reading HEIC (libheif with libde265) and AVIF (libavif), checked against ImageMagick's libheif
/// decoder on files made here (HEIC by ImageMagick's libheif/x265 encoder, AVIF by our encoder), and
/// against decoders that share nothing with Debian's libheif: pillow-heif (its own libheif,
/// libde265 and x265 builds, which also writes the HEICs with `irot`/`imir`) and Pillow's AVIF
/// plugin (its own libavif and dav1d).
final class HEIFReadTests: XCTestCase {
    func pillowHEIF() throws -> String {
        try TestSupport.venvPython(importing: "pillow_heif", "pillow-heif, the independent HEIC codec")
    }

    /// pillow-heif writes `png` as HEIC at quality 90 with Exif orientation `orientation`, which
    /// its libheif turns into the container's `irot`/`imir` boxes (the pixels stay as stored).
    func makeHEIC(_ python: String, from png: String, to heic: String, orientation: Int) throws {
        let script = "import sys, pillow_heif; from PIL import Image; pillow_heif.register_heif_opener(); "
            + "e = Image.Exif(); e[0x0112] = int(sys.argv[3]); "
            + "Image.open(sys.argv[1]).convert('RGB').save(sys.argv[2], quality=90, exif=e.tobytes())"
        let r = try ChildProgram.run(python, ["-c", script, png, heic, "\(orientation)"])
        XCTAssertEqual(r.status, 0, r.err)
    }

    /// HEICs turned by `irot` (orientation 6, 8, 3) or mirrored by `imir` (2, 4) come out upright:
    /// the size swapped where it should be and the pixels as pillow-heif shows them.
    func testHEICRotationAndMirrorAreApplied() throws {
        let python = try pillowHEIF()
        let dir = TestSupport.temporaryDirectory("heic-irot")
        let image = TestSupport.gradient(width: 96, height: 64)
        TestSupport.write(try Codecs.encodePNG(image), dir + "/in.png")
        for (orientation, box) in [(6, "irot"), (8, "irot"), (3, "irot"), (2, "imir"), (4, "imir")] {
            let path = dir + "/o\(orientation).heic"
            try makeHEIC(python, from: dir + "/in.png", to: path, orientation: orientation)
            let bytes = try FileBytes.read(path)
            XCTAssertNotNil(bytes.firstRange(of: Array(box.utf8), startingAt: 0), "orientation \(orientation): pillow-heif wrote \(box)")
            let turned = orientation >= 5
            let info = try Codecs.info(bytes)
            XCTAssertEqual([info.width, info.height], turned ? [64, 96] : [96, 64], "orientation \(orientation)")
            let ours = try Codecs.decode(bytes, path: path)
            XCTAssertEqual([ours.width, ours.height], turned ? [64, 96] : [96, 64], "orientation \(orientation)")
            let theirs = try TestSupport.pillowRGBA(python, path, plugin: "pillow_heif")
            XCTAssertLessThan(TestSupport.meanAbsoluteError(ours.bytes, theirs), 1.5, "orientation \(orientation) against pillow-heif")
            // And against the input turned by our own (JPEG-tested) orientation code, so a transform
            // both decoders got wrong the same way would show.
            let expected = image.applying(EXIFOrientation(rawValue: orientation)!)
            XCTAssertLessThan(TestSupport.meanAbsoluteError(ours.bytes, expected.bytes), 4, "orientation \(orientation) against the input")
        }
    }

    /// A plain HEIC from pillow-heif's encoder decodes as pillow-heif decodes it.
    func testHEICDecodesAsPillowHEIFDoes() throws {
        let python = try pillowHEIF()
        let dir = TestSupport.temporaryDirectory("heic-pillow")
        TestSupport.write(try Codecs.encodePNG(TestSupport.gradient(width: 80, height: 48)), dir + "/in.png")
        try makeHEIC(python, from: dir + "/in.png", to: dir + "/p.heic", orientation: 1)
        let ours = try Codecs.decode(try FileBytes.read(dir + "/p.heic"))
        XCTAssertEqual([ours.width, ours.height], [80, 48])
        XCTAssertLessThan(TestSupport.meanAbsoluteError(ours.bytes, try TestSupport.pillowRGBA(python, dir + "/p.heic", plugin: "pillow_heif")), 1.5)
    }

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
        // Pillow's own AVIF plugin (libavif with dav1d, nothing shared with libheif): the same pixels,
        // plain and turned, and the alpha.
        let python = try TestSupport.venvPython(importing: "PIL.AvifImagePlugin", "Pillow's AVIF plugin, the independent AVIF decoder")
        XCTAssertLessThan(TestSupport.meanAbsoluteError(plain.bytes, try TestSupport.pillowRGBA(python, dir + "/a.avif")), 1.5)
        XCTAssertLessThan(TestSupport.meanAbsoluteError(upright.bytes, try TestSupport.pillowRGBA(python, dir + "/t.avif")), 1.5)
        TestSupport.write(try Codecs.encodeAVIF(translucent, quality: 90), dir + "/alpha.avif")
        XCTAssertLessThan(TestSupport.meanAbsoluteError(withAlpha.bytes, try TestSupport.pillowRGBA(python, dir + "/alpha.avif")), 1.5)
        let stored = try Codecs.decode(turned, options: DecodeOptions(applyEXIFOrientation: false))
        XCTAssertEqual([stored.width, stored.height], [64, 32])
        XCTAssertEqual(ImageMetadata.read(turned).metadata.exif.flatMap { try? EXIFBlock.parse($0) }?.orientation, .right)
    }
}

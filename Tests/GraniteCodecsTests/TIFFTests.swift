import Foundation
import GraniteCodecs
import GraniteMedia
import XCTest

/// TIFF read and write (libtiff), checked with ImageMagick both ways on files made here.
final class TIFFTests: XCTestCase {
    func testWrittenTIFFIsLosslessForImageMagick() throws {
        let dir = TestSupport.temporaryDirectory("tiff")
        for alpha in [false, true] {
            let image = TestSupport.gradient(width: 45, height: 31, alpha: alpha)
            let icc = ColorTransform.sRGBProfile
            let tiff = try Codecs.encodeTIFF(image, metadata: ImageMetadata(icc: icc))
            XCTAssertEqual(Codecs.sniff(tiff), .tiff)
            TestSupport.write(tiff, dir + "/o.tif")
            XCTAssertEqual(try TestSupport.magickRGBA(dir + "/o.tif"), image.bytes, "alpha \(alpha)")
            let back = try Codecs.decode(tiff)
            if alpha {
                // libtiff's RGBA reader premultiplies; undoing it loses a little where alpha is low.
                for p in 0..<image.pixelCount where image.bytes[p * 4 + 3] >= 64 {
                    for c in 0..<4 { XCTAssertLessThanOrEqual(abs(Int(back.bytes[p * 4 + c]) - Int(image.bytes[p * 4 + c])), 2) }
                }
            } else {
                XCTAssertEqual(back, image)
            }
            XCTAssertEqual(ImageMetadata.read(tiff).metadata.icc, icc)
        }
        XCTAssertEqual(try Codecs.decode(try Codecs.encodeTIFF(try Image(width: 3, height: 2, format: .gray8, bytes: [0, 50, 100, 150, 200, 250]))).bytes,
                       [0, 0, 0, 255, 50, 50, 50, 255, 100, 100, 100, 255, 150, 150, 150, 255, 200, 200, 200, 255, 250, 250, 250, 255])
    }

    /// A TIFF made by ImageMagick (LZW, 16-bit, Orientation tag RightTop): read upright as
    /// ImageMagick's `-auto-orient` gives it.
    func testImageMagickTIFFReadsUpright() throws {
        let magick = try TestSupport.imageMagick()
        let dir = TestSupport.temporaryDirectory("tiff-in")
        TestSupport.write(try Codecs.encodePNG(TestSupport.gradient(width: 40, height: 24)), dir + "/in.png")
        for (options, name) in [(["-compress", "lzw"], "lzw"), (["-depth", "16", "-compress", "zip"], "deep"), (["-orient", "RightTop"], "turned")] {
            let path = dir + "/\(name).tif"
            XCTAssertEqual(try TestSupport.run(magick, [dir + "/in.png"] + options + [path]).status, 0)
            let ours = try Codecs.decode(try FileBytes.read(path), path: path)
            let theirs = try TestSupport.run(magick, [path, "-auto-orient", "-depth", "8", "rgba:-"]).stdout
            XCTAssertEqual(ours.bytes.count, theirs.count, name)
            XCTAssertLessThanOrEqual(TestSupport.meanAbsoluteError(ours.bytes, theirs), 0.5, name)
            if name == "turned" { XCTAssertEqual([ours.width, ours.height], [24, 40]) }
        }
        XCTAssertThrowsError(try Codecs.decode(Array(try FileBytes.read(dir + "/lzw.tif").prefix(100)), path: "cut.tif")) { error in
            XCTAssertEqual((error as? CodecError)?.path, "cut.tif")
        }
    }
}

import Foundation
import GraniteCodecs
import GraniteMedia
import XCTest

/// JPEG → resized JPEG through YCbCr planes (`Codecs.transcodeJPEG`): the same picture as
/// decode, resize, encode through RGB, and ImageMagick reads it as we do.
final class JPEGTranscodeTests: XCTestCase {
    /// The RGB path's output for the same request.
    func throughRGB(_ jpeg: [UInt8], _ size: (Int, Int), quality: Int = 85) throws -> [UInt8] {
        var options = DecodeOptions()
        options.minimumSize = size
        let decoded = try Codecs.decode(jpeg, options: options)
        let resized = try Resampler.resize(decoded, width: size.0, height: size.1, filter: .lanczos3)
        return try Codecs.encodeJPEG(resized, quality: quality)
    }

    func testPlanesGiveTheRGBPathsPicture() throws {
        // Exact DCT halves, a DCT scale plus Lanczos, odd sizes (padded chroma) and an upscale.
        for (w, h, tw, th) in [(192, 128, 96, 64), (200, 150, 77, 51), (161, 97, 80, 48), (96, 64, 96, 64), (64, 48, 101, 75)] {
            let jpeg = try Codecs.encodeJPEG(TestSupport.gradient(width: w, height: h), quality: 92)
            var warnings = [String]()
            let out = try XCTUnwrap(try Codecs.transcodeJPEG(jpeg, options: DecodeOptions(), size: (tw, th), filter: .lanczos3,
                                                             warnings: &warnings), "\(w)x\(h) → \(tw)x\(th)")
            XCTAssertEqual(warnings, [])
            let ours = try Codecs.decode(out)
            XCTAssertEqual([ours.width, ours.height], [tw, th])
            let rgb = try Codecs.decode(try throughRGB(jpeg, (tw, th)))
            XCTAssertLessThan(TestSupport.meanAbsoluteError(ours.bytes, rgb.bytes), 1.5, "\(w)x\(h) → \(tw)x\(th) against the RGB path")
            let path = TestSupport.temporaryDirectory("transcode") + "/t.jpg"
            TestSupport.write(out, path)
            XCTAssertEqual(try TestSupport.magickRGBA(path).count, tw * th * 4, "ImageMagick reads it")
            XCTAssertLessThan(TestSupport.meanAbsoluteError(ours.bytes, try TestSupport.magickRGBA(path)), 1.5)
        }
    }

    /// Files the planes cannot carry as they are go back to the caller (nil): another subsampling
    /// than the output's, gray, CMYK, an orientation to apply.
    func testFilesNeedingRGBAreLeftToTheCaller() throws {
        let image = TestSupport.gradient(width: 64, height: 48)
        var warnings = [String]()
        func transcode(_ jpeg: [UInt8], _ options: DecodeOptions = DecodeOptions()) throws -> [UInt8]? {
            try Codecs.transcodeJPEG(jpeg, options: options, size: (32, 24), filter: .lanczos3, warnings: &warnings)
        }
        XCTAssertNil(try transcode(try Codecs.encodeJPEG(image, quality: 90, subsampling: .s444)))
        let gray = try Image(width: 64, height: 48, format: .gray8, bytes: [UInt8](repeating: 90, count: 64 * 48))
        XCTAssertNil(try transcode(try Codecs.encodeJPEG(gray, quality: 90)))
        let exif: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]
        let turned = ImageMetadata(exif: exif).embedded(in: try Codecs.encodeJPEG(image, quality: 90)).bytes
        XCTAssertNil(try transcode(turned), "orientation 6 is applied through RGB")
        XCTAssertNotNil(try transcode(turned, DecodeOptions(applyEXIFOrientation: false)), "unless orientation is left alone")
        XCTAssertNil(try transcode(try Codecs.encodePNG(image)), "not a JPEG")
        // Damage is reported as the RGB path reports it; a bomb is refused before any pixel.
        let jpeg = try Codecs.encodeJPEG(image, quality: 90)
        XCTAssertThrowsError(try transcode(Array(jpeg.prefix(jpeg.count * 2 / 3)))) { error in
            XCTAssertEqual((error as? CodecError)?.phase, "decode", "truncated is an error by default")
        }
        warnings = []
        XCTAssertNotNil(try transcode(Array(jpeg.prefix(jpeg.count * 2 / 3)), DecodeOptions(failOn: .none)))
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        XCTAssertThrowsError(try transcode(jpeg, DecodeOptions(maxPixels: 100)))
    }
}

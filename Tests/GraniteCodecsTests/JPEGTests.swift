import Foundation
import GraniteCodecs
import GraniteMedia
import XCTest

final class JPEGTests: XCTestCase {
    func testRoundTripKeepsPixelsClose() throws {
        let image = TestSupport.gradient(width: 67, height: 45)
        let jpeg = try Codecs.encodeJPEG(image, quality: 95, subsampling: .s444)
        XCTAssertEqual(Codecs.sniff(jpeg), .jpeg)
        let back = try Codecs.decode(jpeg)
        XCTAssertEqual(back.width, 67)
        XCTAssertEqual(back.height, 45)
        XCTAssertEqual(back.format, .rgba8)
        XCTAssertLessThan(TestSupport.meanAbsoluteError(back.bytes, image.bytes), 2.0)
        XCTAssertTrue(stride(from: 3, to: back.bytes.count, by: 4).allSatisfy { back.bytes[$0] == 255 })
    }

    func testQualityChangesSizeAndError() throws {
        let image = TestSupport.gradient(width: 128, height: 96)
        let low = try Codecs.encodeJPEG(image, quality: 10)
        let high = try Codecs.encodeJPEG(image, quality: 98)
        XCTAssertLessThan(low.count, high.count)
        let lowError = TestSupport.meanAbsoluteError(try Codecs.decode(low).bytes, image.bytes)
        let highError = TestSupport.meanAbsoluteError(try Codecs.decode(high).bytes, image.bytes)
        XCTAssertLessThan(highError, lowError)
        XCTAssertThrowsError(try Codecs.encodeJPEG(image, quality: 0)) { error in
            XCTAssertEqual((error as? CodecError)?.phase, "encode")
        }
    }

    /// The SOF marker records progressive vs baseline and each component's sampling factors.
    func testProgressiveAndSubsamplingAreWritten() throws {
        let image = TestSupport.gradient(width: 64, height: 64)
        for (subsampling, lumaFactors) in [(ChromaSubsampling.s444, 0x11), (.s422, 0x21), (.s420, 0x22)] {
            for progressive in [false, true] {
                let jpeg = try Codecs.encodeJPEG(image, quality: 80, subsampling: subsampling, progressive: progressive)
                let sof = try XCTUnwrap(findSOF(jpeg), "no SOF marker")
                XCTAssertEqual(sof.marker, progressive ? 0xC2 : 0xC0)
                XCTAssertEqual(sof.lumaSampling, lumaFactors, "\(subsampling)")
                XCTAssertLessThan(TestSupport.meanAbsoluteError(try Codecs.decode(jpeg).bytes, image.bytes), 4)
            }
        }
    }

    func testGrayscaleEncodeAndDecode() throws {
        let rgba = TestSupport.gradient(width: 40, height: 24)
        let gray = try Image(width: 40, height: 24, format: .gray8, bytes: stride(from: 0, to: rgba.bytes.count, by: 4).map { rgba.bytes[$0] })
        let jpeg = try Codecs.encodeJPEG(gray, quality: 95)
        XCTAssertEqual(findSOF(jpeg)?.components, 1)
        let kept = try Codecs.decode(jpeg, options: DecodeOptions(keepGray: true))
        XCTAssertEqual(kept.format, .gray8)
        XCTAssertLessThan(TestSupport.meanAbsoluteError(kept.bytes, gray.bytes), 2)
        let expanded = try Codecs.decode(jpeg)
        XCTAssertEqual(expanded.format, .rgba8)
        for p in stride(from: 0, to: expanded.bytes.count, by: 4) {
            XCTAssertEqual(expanded.bytes[p], expanded.bytes[p + 1])
            XCTAssertEqual(expanded.bytes[p], expanded.bytes[p + 2])
        }
    }

    func testEncoderOutputDecodesInImageMagick() throws {
        let image = TestSupport.gradient(width: 50, height: 30)
        let dir = TestSupport.temporaryDirectory("jpeg-im")
        let path = dir + "/x.jpg"
        try AtomicFile.write(try Codecs.encodeJPEG(image, quality: 92, subsampling: .s444), to: path)
        let theirs = try TestSupport.magickRGBA(path)
        XCTAssertEqual(theirs.count, image.bytes.count)
        XCTAssertLessThan(TestSupport.meanAbsoluteError(theirs, image.bytes), 2.5)
    }

    /// CMYK JPEGs (ImageMagick writes Adobe-inverted CMYK) come out as RGB.
    func testCMYKInputIsConverted() throws {
        let dir = TestSupport.temporaryDirectory("cmyk")
        let path = dir + "/cmyk.jpg"
        let status = try TestSupport.run(try TestSupport.imageMagick(),
                                         ["-size", "16x8", "xc:#e02010", "-colorspace", "CMYK", "-quality", "95", path]).status
        XCTAssertEqual(status, 0)
        let bytes = try FileBytes.read(path)
        let image = try Codecs.decode(bytes, path: path)
        XCTAssertEqual(image.format, .rgba8)
        let px = image.rgba(x: 8, y: 4)
        XCTAssertEqual(Double(px.r), 0xE0, accuracy: 12)
        XCTAssertEqual(Double(px.g), 0x20, accuracy: 12)
        XCTAssertEqual(Double(px.b), 0x10, accuracy: 12)
    }

    func testScaledDecodePicksTheSmallestSufficientFactor() throws {
        let jpeg = try Codecs.encodeJPEG(TestSupport.gradient(width: 400, height: 200), quality: 90)
        let half = try Codecs.decode(jpeg, options: DecodeOptions(minimumSize: (200, 100)))
        XCTAssertEqual([half.width, half.height], [200, 100])
        let quarterish = try Codecs.decode(jpeg, options: DecodeOptions(minimumSize: (90, 40)))
        XCTAssertEqual([quarterish.width, quarterish.height], [100, 50])
        let full = try Codecs.decode(jpeg, options: DecodeOptions(minimumSize: (201, 1)))
        XCTAssertGreaterThanOrEqual(full.width, 201)
    }

    func findSOF(_ b: [UInt8]) -> (marker: UInt8, components: Int, lumaSampling: Int)? {
        var i = 2
        while i + 4 < b.count, b[i] == 0xFF {
            let marker = b[i + 1]
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            if marker == 0xC0 || marker == 0xC2 {
                return (marker, Int(b[i + 9]), Int(b[i + 11]))
            }
            i += 2 + length
        }
        return nil
    }
}

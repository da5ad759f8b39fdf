import Foundation
import GraniteCodecs
import GraniteMedia
import XCTest

/// A corpus made here from valid files: truncations, bit flips, zeroed runs, bombs. Every file
/// must come back as an image or as a `CodecError` naming it; none may crash the process.
final class CorruptInputTests: XCTestCase {
    func validFiles() throws -> [(String, [UInt8])] {
        let image = TestSupport.gradient(width: 48, height: 40, alpha: true)
        return [
            ("base.jpg", try Codecs.encodeJPEG(image, quality: 80)),
            ("prog.jpg", try Codecs.encodeJPEG(image, quality: 80, progressive: true)),
            ("rgba.png", try Codecs.encodePNG(image)),
        ]
    }

    func testTruncationsAtManyOffsetsAreAllReported() throws {
        var reported = 0
        for (name, bytes) in try validFiles() {
            var offsets = Set(stride(from: 0, to: bytes.count, by: max(1, bytes.count / 60)))
            offsets.formUnion([0, 1, 2, 3, 7, 8, 16, 33, bytes.count - 1, bytes.count - 2])
            for cut in offsets.sorted() where cut < bytes.count {
                let path = "\(name)@\(cut)"
                XCTAssertThrowsError(try Codecs.decode(Array(bytes[0..<cut]), path: path), path) { error in
                    guard let error = error as? CodecError else { return XCTFail("untyped error for \(path)") }
                    XCTAssertEqual(error.path, path)
                    XCTAssertFalse(error.reason.isEmpty)
                }
                reported += 1
            }
        }
        XCTAssertGreaterThan(reported, 150)
    }

    func testBitFlipsAndZeroRunsNeverCrash() throws {
        var rng = TestSupport.Random(state: 42)
        var outcomes = (images: 0, errors: 0)
        for (name, bytes) in try validFiles() {
            for trial in 0..<120 {
                var damaged = bytes
                if trial % 3 == 0 {
                    let start = rng.below(damaged.count), length = 1 + rng.below(64)
                    for i in start..<min(start + length, damaged.count) { damaged[i] = 0 }
                } else {
                    for _ in 0..<(1 + rng.below(4)) { damaged[rng.below(damaged.count)] ^= UInt8(1 << rng.below(8)) }
                }
                let path = "\(name)#\(trial)"
                do {
                    let image = try Codecs.decode(damaged, path: path)
                    XCTAssertEqual(image.bytes.count, image.format.byteCount(width: image.width, height: image.height))
                    outcomes.images += 1
                } catch {
                    XCTAssertEqual(error.path, path)
                    outcomes.errors += 1
                }
            }
        }
        XCTAssertEqual(outcomes.images + outcomes.errors, 360)
        XCTAssertGreaterThan(outcomes.errors, 0)
    }

    func testEmptyTextAndZeroFilesAreHeaderErrors() {
        for (name, bytes) in [("empty", [UInt8]()), ("text", Array("hello, world\n".utf8)), ("zeros", [UInt8](repeating: 0, count: 4096)),
                              ("jpeg-magic-only", [0xFF, 0xD8, 0xFF]), ("png-magic-only", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])] {
            XCTAssertThrowsError(try Codecs.decode(bytes, path: name)) { error in
                XCTAssertEqual(error as? CodecError == nil, false)
                XCTAssertEqual((error as? CodecError)?.phase, "header", name)
                XCTAssertEqual((error as? CodecError)?.path, name)
            }
        }
    }

    func testHugeJPEGHeaderIsRefusedBeforeDecoding() throws {
        var jpeg = try Codecs.encodeJPEG(TestSupport.gradient(width: 16, height: 16), quality: 80)
        let sof = try XCTUnwrap((2..<jpeg.count - 9).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg[sof + 5] = 0xEA; jpeg[sof + 6] = 0x60  // height 60000
        jpeg[sof + 7] = 0xEA; jpeg[sof + 8] = 0x60  // width 60000: 3.6 gigapixels
        XCTAssertThrowsError(try Codecs.decode(jpeg, path: "bomb.jpg")) { error in
            XCTAssertEqual((error as? CodecError)?.phase, "header")
            XCTAssertTrue("\(error)".contains("60000x60000"), "\(error)")
        }
    }

    func testHugePNGHeaderIsRefusedBeforeDecoding() throws {
        var png = try Codecs.encodePNG(TestSupport.gradient(width: 16, height: 16))
        // IHDR data starts at 16: width, height (big-endian), then its CRC at 29.
        let dims: [UInt8] = [0x00, 0x01, 0x86, 0xA0, 0x00, 0x01, 0x86, 0xA0]  // 100000 x 100000
        png.replaceSubrange(16..<24, with: dims)
        let crc = crc32(Array(png[12..<29]))
        png.replaceSubrange(29..<33, with: [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)])
        XCTAssertThrowsError(try Codecs.decode(png, path: "bomb.png")) { error in
            XCTAssertEqual((error as? CodecError)?.phase, "header", "\(error)")
        }
    }

    func testPixelLimitIsConfigurable() throws {
        let jpeg = try Codecs.encodeJPEG(TestSupport.gradient(width: 64, height: 64), quality: 80)
        let png = try Codecs.encodePNG(TestSupport.gradient(width: 64, height: 64))
        for bytes in [jpeg, png] {
            XCTAssertNoThrow(try Codecs.decode(bytes, options: DecodeOptions(maxPixels: 4096)))
            XCTAssertThrowsError(try Codecs.decode(bytes, options: DecodeOptions(maxPixels: 4095))) { error in
                XCTAssertEqual((error as? CodecError)?.phase, "header")
                XCTAssertTrue((error as? CodecError)?.reason.contains("limit of 4095") ?? false, "\(error)")
            }
        }
    }

    func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

import GraniteCodecs
import XCTest

/// The Exif (TIFF) parser and the thumbnail/orientation sanitiser, in both byte orders, and its
/// typed errors on damaged blocks.
final class EXIFBlockTests: XCTestCase {
    func testParsesBothByteOrders() throws {
        for little in [true, false] {
            let bytes = EXIFFixture(littleEndian: little).build()
            let block = try EXIFBlock.parse(bytes)
            XCTAssertEqual(block.littleEndian, little)
            XCTAssertEqual(block.string(EXIFBlock.Tag.make), "Granite Camera Co")
            XCTAssertEqual(block.string(EXIFBlock.Tag.model), "GC-1 Mark II")
            XCTAssertEqual(block.string(EXIFBlock.Tag.copyright), "(c) 2026 Test Author")
            XCTAssertEqual(block.string(EXIFBlock.Tag.dateTimeOriginal), "2026:11:24 14:30:00")
            XCTAssertEqual(block.string(0x0001), "N")  // GPSLatitudeRef
            XCTAssertEqual(block.orientation, .right)
            XCTAssertNotNil(block.gps?.entry(0x0002))
            let thumb = try XCTUnwrap(block.thumbnail)
            XCTAssertEqual(Array(bytes[thumb].prefix(2)), [0xFF, 0xD8])
            XCTAssertEqual(thumb.upperBound, bytes.count)
        }
    }

    func testSanitizedDropsThumbnailAndResetsOrientation() throws {
        for little in [true, false] {
            let bytes = EXIFFixture(littleEndian: little).build()
            let block = try EXIFBlock.parse(bytes)
            let clean = try EXIFBlock.parse(block.sanitized(resetOrientation: true))
            XCTAssertNil(clean.ifd1)
            XCTAssertNil(clean.thumbnail)
            XCTAssertEqual(clean.ifd0.next, 0)
            XCTAssertEqual(clean.orientation, .up)
            XCTAssertEqual(clean.string(EXIFBlock.Tag.make), "Granite Camera Co")
            XCTAssertEqual(clean.string(EXIFBlock.Tag.dateTimeOriginal), "2026:11:24 14:30:00")
            // IFD1 and the thumbnail were the tail: cut off, not just unlinked.
            XCTAssertEqual(clean.bytes.count, block.ifd1!.offset)
            XCTAssertNil(clean.bytes.firstIndex(of: 0x42))
            // Kept orientation when the pixels were not turned.
            XCTAssertEqual(try EXIFBlock.parse(block.sanitized(resetOrientation: false)).orientation, .right)
        }
    }

    func testNoThumbnailLeavesBytesAlone() throws {
        let bytes = EXIFFixture(thumbnail: nil).build()
        XCTAssertEqual(try EXIFBlock.parse(bytes).sanitized(resetOrientation: false), bytes)
    }

    func testTypedErrors() {
        let good = EXIFFixture().build()
        func error(_ bytes: [UInt8]) -> MetadataError? {
            do { _ = try EXIFBlock.parse(bytes); return nil } catch { return error }
        }
        guard case .tooShort? = error([0x49, 0x49, 42]) else { return XCTFail("short block") }
        guard case .badField(_, let reason)? = error([0x41, 0x42] + good.dropFirst(2)) else { return XCTFail("byte order") }
        XCTAssertTrue(reason.contains("byte order"))
        var magic = good
        magic[2] = 43
        guard case .badField? = error(magic) else { return XCTFail("magic") }
        var far = good
        far[4...7] = [0xFF, 0xFF, 0, 0]  // IFD0 at 65535
        guard case .outOfBounds(let what, _, _, _)? = error(far) else { return XCTFail("IFD0 offset") }
        XCTAssertEqual(what, "IFD0")
        // The Exif pointer aimed back at IFD0.
        let block = try! EXIFBlock.parse(good)
        var loop = good
        let pointer = block.ifd0.entry(EXIFBlock.Tag.exifIFD)!.valueOffset
        loop[pointer...pointer + 3] = [8, 0, 0, 0]
        guard case .loop? = error(loop) else { return XCTFail("loop") }
        // Make's text moved past the end.
        var value = good
        let entry = block.ifd0.offset + 2 + 12 * block.ifd0.entries.firstIndex { $0.tag == EXIFBlock.Tag.make }!
        value[(entry + 8)...(entry + 11)] = [0xF0, 0xFF, 0, 0]
        guard case .outOfBounds(let w, _, _, _)? = error(value) else { return XCTFail("value offset") }
        XCTAssertEqual(w, "IFD0 tag 0x10f")
    }

    /// Truncations and byte flips of a real-shaped block: every one parses or throws, none traps.
    func testDamagedBlocksNeverTrap() {
        var random = TestSupport.Random(state: 16)
        for little in [true, false] {
            let good = EXIFFixture(littleEndian: little).build()
            for n in 0..<good.count {
                if let block = try? EXIFBlock.parse(Array(good.prefix(n))) { _ = block.sanitized(resetOrientation: true) }
            }
            for _ in 0..<3000 {
                var bytes = good
                for _ in 0..<(1 + random.below(4)) { bytes[random.below(bytes.count)] = UInt8(random.below(256)) }
                if let block = try? EXIFBlock.parse(bytes) {
                    let clean = block.sanitized(resetOrientation: true)
                    XCTAssertNoThrow(try EXIFBlock.parse(clean), "a sanitised block parses again")
                }
            }
        }
    }
}

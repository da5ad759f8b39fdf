import XCTest
@testable import GraniteMedia

final class ImageTests: XCTestCase {
    func testByteCountsPerFormat() {
        XCTAssertEqual(PixelFormat.rgba8.byteCount(width: 13, height: 7), 13 * 7 * 4)
        XCTAssertEqual(PixelFormat.yuyv.byteCount(width: 13, height: 7), 7 * 7 * 4)
        XCTAssertEqual(PixelFormat.nv12.byteCount(width: 4, height: 2), 8 + 4)
        XCTAssertEqual(PixelFormat.nv12.byteCount(width: 5, height: 3), 15 + 3 * 2 * 2)
    }

    func testWrongByteCountIsATypedError() {
        XCTAssertThrowsError(try Image(width: 2, height: 2, format: .rgba8, bytes: [1, 2, 3])) { error in
            XCTAssertEqual(error as? MediaError,
                           .byteCountMismatch(format: .rgba8, width: 2, height: 2, expected: 16, actual: 3))
        }
        XCTAssertThrowsError(try Image(width: 0, height: 2, format: .gray8))
    }

    func testFloatRoundTrip() throws {
        let values: [Float] = [0, 0.5, -1, 3.25, 1e-6, 42]
        let image = try Image(width: 3, height: 2, floats: values)
        XCTAssertEqual(image.format, .grayF32)
        XCTAssertEqual(image.floats(), values)
    }

    func testMonotonicClockAdvances() {
        let a = monotonicNanos()
        let b = monotonicNanos()
        XCTAssertGreaterThanOrEqual(b, a)
        XCTAssertGreaterThan(a, 0)
    }
}

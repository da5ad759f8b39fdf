import XCTest
@testable import GraniteMedia

/// The project's one YUV → RGB conversion (BT.601, integer).
final class ColorConversionTests: XCTestCase {
    func testYUVConversionKnownValues() throws {
        // Y0 U Y1 V: black (16) then white (235), neutral chroma.
        let yuyv = try Image(width: 2, height: 1, format: .yuyv, bytes: [16, 128, 235, 128])
        XCTAssertEqual(try ColorConversion.rgba(yuyv).bytes, [0, 0, 0, 255, 255, 255, 255, 255])
        // NV12 2x2 of mid grey with a strong red chroma (V high).
        let nv12 = try Image(width: 2, height: 2, format: .nv12, bytes: [126, 126, 126, 126, 128, 240])
        let px = try ColorConversion.rgba(nv12).bytes
        XCTAssertGreaterThan(px[0], 230)
        XCTAssertLessThan(px[1], 60)
        XCTAssertEqual(Array(px[0..<4]), Array(px[12..<16]))
        XCTAssertThrowsError(try ColorConversion.rgba(try Image(width: 1, height: 1, format: .grayF32)))
    }

    func testFullRangeKeepsTheEnds() throws {
        XCTAssertTrue(ColorConversion.rgb(y: 0, u: 128, v: 128, range: .full) == (0, 0, 0))
        XCTAssertTrue(ColorConversion.rgb(y: 255, u: 128, v: 128, range: .full) == (255, 255, 255))
        XCTAssertTrue(ColorConversion.rgb(y: 16, u: 128, v: 128, range: .limited) == (0, 0, 0))
        let yuyv = try Image(width: 2, height: 1, format: .yuyv, bytes: [0, 128, 255, 128])
        XCTAssertEqual(try ColorConversion.rgba(yuyv, range: .full).bytes, [0, 0, 0, 255, 255, 255, 255, 255])
        XCTAssertEqual(try ColorConversion.rgba(yuyv, range: .limited).bytes, [0, 0, 0, 255, 255, 255, 255, 255], "clamped")
    }
}

import GraniteCapture
import GraniteMedia
import XCTest

@testable import GraniteCam

final class CamPartsTests: XCTestCase {
    func testSourceSpecAndSavePolicy() throws {
        XCTAssertEqual(try SourceSpec(parsing: "testpattern"), .testPattern)
        XCTAssertEqual(try SourceSpec(parsing: "folder:/tmp/x"), .folder("/tmp/x"))
        XCTAssertEqual(try SourceSpec(parsing: "/dev/video2"), .device("/dev/video2"))
        XCTAssertThrowsError(try SourceSpec(parsing: "webcam"))
        XCTAssertEqual(try SavePolicy(parsing: "5"), .everyNth(5))
        XCTAssertEqual(try SavePolicy(parsing: "1"), .every)
        XCTAssertThrowsError(try SavePolicy(parsing: "-2"))
        XCTAssertEqual((0..<10).filter { SavePolicy.everyNth(4).saves(UInt64($0)) }, [0, 4, 8])
    }

    func testNetpbmEncoderRoundTrips() throws {
        let image = TestPattern(size: FrameSize(width: 33, height: 17)).render(index: 4)
        let back = try NetpbmDecoder().decode(try NetpbmEncoder().encode(image), path: "x.ppm")
        XCTAssertEqual(back.format, .rgb24)
        XCTAssertEqual(try ColorConversion.rgba(back), image)
    }

    func testLatencyWindowAndRate() {
        var window = LatencyWindow(capacity: 100)
        for ms in 1...200 { window.add(UInt64(ms) * 1_000_000) }
        XCTAssertEqual(window.count, 100, "the window keeps only the newest samples")
        XCTAssertEqual(window.percentile(50), 150)
        XCTAssertEqual(window.percentile(99), 199)
        var rate = RateMeter(capacity: 10)
        for i in 0..<30 { rate.tick(UInt64(i) * 40_000_000) }
        XCTAssertEqual(rate.rate, 25, accuracy: 1e-9)
        XCTAssertEqual(StatusState.oneDecimal(12.34), "12.3")
        XCTAssertEqual(StatusState.oneDecimal(nil), "–")
    }
}

import GraniteMedia
import XCTest

@testable import GraniteCapture

final class TestPatternTests: XCTestCase {
    func testSameIndexSameBytesAndFramesMove() {
        let pattern = TestPattern(size: FrameSize(width: 320, height: 240))
        XCTAssertEqual(pattern.render(index: 7), pattern.render(index: 7))
        XCTAssertNotEqual(pattern.render(index: 7).bytes, pattern.render(index: 8).bytes)
        // The bars scroll: the same row differs between frames far from the caption.
        let a = pattern.render(index: 0), b = pattern.render(index: 10)
        let row = 150 * 320 * 4
        XCTAssertNotEqual(Array(a.bytes[row..<(row + 320 * 4)]), Array(b.bytes[row..<(row + 320 * 4)]))
    }

    /// Rendering into recycled storage (what the source does) gives the same bytes as fresh
    /// storage, whether the slot's old frame was let go (refilled in place) or is still held.
    func testRecycledStorageRendersTheSameFrames() {
        let pattern = TestPattern(size: FrameSize(width: 320, height: 240))
        var storage = RecycledBytes(slots: 2)
        var held: [Image] = []
        for index: UInt64 in 0..<6 {
            let frame = pattern.render(index: index, recycling: &storage)
            XCTAssertEqual(frame, pattern.render(index: index), "frame \(index)")
            if index % 3 == 0 { held.append(frame) }
        }
        XCTAssertEqual(held.map { pattern.readCounter($0) }, [0, 3])
    }

    func testCounterReadsBackAtSeveralSizes() {
        for (w, h) in [(160, 120), (640, 480), (1280, 720), (333, 97)] {
            let pattern = TestPattern(size: FrameSize(width: w, height: h), fps: 25)
            for index: UInt64 in [0, 1, 42, 999_999, 1_000_123] {
                XCTAssertEqual(pattern.readCounter(pattern.render(index: index)), index % 1_000_000, "\(w)x\(h) frame \(index)")
            }
        }
    }

    /// The counter reads in place from the camera formats a consumer receives (the luma plane).
    func testCounterReadsFromYUVFrames() throws {
        let pattern = TestPattern(size: FrameSize(width: 320, height: 240))
        let frame = pattern.render(index: 4321)
        for (layout, format) in [(YUVLayout.yuyv(stride: 0), PixelFormat.yuyv), (.i420, .i420), (.nv12, .nv12)] {
            let yuv = try Image(width: 320, height: 240, format: format, bytes: ColorConversion.yuv(frame, layout: layout, vectorised: false))
            XCTAssertEqual(pattern.readCounter(yuv), 4321, "\(format)")
        }
        XCTAssertNil(pattern.readCounter(try Image(width: 320, height: 240, format: .gray8,
                                                   bytes: [UInt8](repeating: 0, count: 320 * 240))), "a format it does not read")
    }

    func testCounterRejectsForeignImage() throws {
        let pattern = TestPattern(size: FrameSize(width: 160, height: 120))
        XCTAssertNil(pattern.readCounter(try Image(width: 160, height: 120, format: .rgba8)))
    }

    func testCaptionShowsNominalTime() {
        let pattern = TestPattern(size: FrameSize(width: 64, height: 48), fps: 25)
        XCTAssertEqual(pattern.caption(index: 0), "#000000 00:00:00.000")
        XCTAssertEqual(pattern.caption(index: 90_025), "#090025 01:00:01.000")
        XCTAssertEqual(pattern.caption(index: 37), "#000037 00:00:01.480")
    }

    func testFramesAreOpaqueRGBA() {
        let image = TestPattern(size: FrameSize(width: 97, height: 31)).render(index: 3)
        XCTAssertEqual(image.format, .rgba8)
        XCTAssertEqual(image.bytes.count, 97 * 31 * 4)
        XCTAssertTrue(stride(from: 3, to: image.bytes.count, by: 4).allSatisfy { image.bytes[$0] == 255 })
    }
}

import XCTest

@testable import GraniteCapture

/// The arithmetic of negotiation: read-back formats and frame intervals, without a device.
final class NegotiationTests: XCTestCase {
    let info = DeviceInfo(path: "/dev/videoX", card: "cam", driver: "test", bus: "none", capabilities: 0, canCapture: true,
                          formats: [FormatInfo(fourcc: FourCC.make("YUYV"), name: "YUYV", compressed: false, emulated: false, sizes: []),
                                    FormatInfo(fourcc: FourCC.make("RGB3"), name: "RGB3", compressed: false, emulated: true, sizes: [])])

    func testReadBackTakesTheDriversSizeAndStride() throws {
        let padded = try StreamFormat(readBack: .yuyv, fourcc: FourCC.make("YUYV"), width: 320, height: 180, bytesPerLine: 768, info: info)
        XCTAssertEqual(padded, StreamFormat(format: .yuyv, size: FrameSize(width: 320, height: 180), bytesPerLine: 768, fps: nil))
        let packed = try StreamFormat(readBack: .rgb24, fourcc: FourCC.make("RGB3"), width: 4, height: 2, bytesPerLine: 0, info: info)
        XCTAssertEqual(packed.bytesPerLine, 12, "0 means packed rows")
        XCTAssertTrue(packed.emulated)
    }

    func testReadBackOfAnotherFourccIsUnsupported() {
        XCTAssertThrowsError(try StreamFormat(readBack: .rgb24, fourcc: FourCC.make("YUYV"), width: 4, height: 2, bytesPerLine: 0, info: info)) { error in
            guard case let .unsupportedFormat(device, requested, offered) = error as? CaptureError else { return XCTFail("\(error)") }
            XCTAssertEqual(device, "/dev/videoX")
            XCTAssertEqual(requested, "rgb24 (driver chose YUYV)")
            XCTAssertEqual(offered, ["YUYV", "RGB3 (emulated)"])
        }
    }

    func testFrameIntervals() {
        XCTAssertEqual(FrameInterval(fps: 30), FrameInterval(numerator: 1, denominator: 30))
        XCTAssertEqual(FrameInterval(fps: 29.97), FrameInterval(numerator: 1000, denominator: 29970))
        XCTAssertEqual(FrameInterval(numerator: 1001, denominator: 30000).fps ?? 0, 29.97, accuracy: 0.001)
        XCTAssertNil(FrameInterval(numerator: 0, denominator: 0).fps, "drivers answer 0/0 for unknown")
        // Rates no interval can state (a flag can ask for any of them) are not sent at all.
        for fps in [0, -5, .nan, .infinity, 1e10, 5e-5] as [Double] {
            XCTAssertNil(FrameInterval(fps: fps), "\(fps)")
        }
    }

    /// Found by Fuzzers/fuzz-v4l2: a driver's read-back of 2357986000x3758096386 YUYV made the
    /// frame-size arithmetic (stride × height) overflow and trap; now it is a decode error.
    func testUnpackRefusesAGeometryThatOverflows() throws {
        let stream = try StreamFormat(readBack: .yuyv, fourcc: FourCC.make("YUYV"), width: 2_357_986_000, height: 3_758_096_386,
                                      bytesPerLine: 16_776_193, info: info)
        XCTAssertThrowsError(try stream.image(from: [UInt8](repeating: 0, count: 74), device: "/dev/videoX", decoder: nil)) { error in
            guard case let .decodeFailed(path, reason) = error as? CaptureError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "/dev/videoX")
            XCTAssertTrue(reason.contains("too large"), reason)
        }
        for (width, height) in [(0, 480), (640, 0)] as [(UInt32, UInt32)] {
            let empty = try StreamFormat(readBack: .nv12, fourcc: FourCC.make("NV12"), width: width, height: height, bytesPerLine: 0, info: info)
            XCTAssertThrowsError(try empty.image(from: [1, 2, 3], device: "/dev/videoX", decoder: nil)) { error in
                guard case let .decodeFailed(_, reason) = error as? CaptureError else { return XCTFail("\(error)") }
                XCTAssertTrue(reason.contains("empty frame size"), reason)
            }
        }
    }
}

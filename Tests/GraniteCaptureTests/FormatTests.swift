import GraniteMedia
import XCTest

@testable import GraniteCapture

final class FormatTests: XCTestCase {
    func info(_ formats: [(String, Bool, [FrameSize: [Double]])]) -> DeviceInfo {
        DeviceInfo(path: "/dev/videoX", card: "cam", driver: "test", bus: "none", capabilities: 0, canCapture: true,
                   formats: formats.map { code, emulated, sizes in
                       FormatInfo(fourcc: FourCC.make(code), name: code, compressed: code == "MJPG", emulated: emulated,
                                  sizes: sizes.map { SizeInfo(size: $0.key, rates: $0.value) })
                   })
    }

    let hd = FrameSize(width: 1280, height: 720), vga = FrameSize(width: 640, height: 480)

    func testAutoPrefersUncompressedWhenItFits() throws {
        let device = info([("MJPG", false, [hd: [30], vga: [30]]), ("YUYV", false, [hd: [10], vga: [30]]), ("RGB3", true, [vga: [30]])])
        XCTAssertEqual(try device.choose(CaptureRequest(size: vga, fps: 30)), .yuyv)
        XCTAssertEqual(try device.choose(CaptureRequest(size: hd, fps: 30)), .mjpeg, "YUYV cannot do 720p30 here")
        XCTAssertEqual(try device.choose(CaptureRequest(size: hd, fps: 30), allowMJPEG: false), .yuyv)
        XCTAssertEqual(try device.choose(CaptureRequest(format: .rgb24)), .rgb24)
    }

    func testUnsupportedFormatNamesDeviceAndOffers() {
        let device = info([("YUYV", false, [vga: [30]]), ("RGB3", true, [vga: [30]])])
        XCTAssertThrowsError(try device.choose(CaptureRequest(format: .nv12))) { error in
            XCTAssertEqual(error as? CaptureError,
                           .unsupportedFormat(device: "/dev/videoX", requested: "nv12", offered: ["YUYV", "RGB3 (emulated)"]))
            XCTAssertEqual("\(error)", "/dev/videoX: format nv12 is not offered; the device offers: YUYV, RGB3 (emulated)")
        }
        XCTAssertThrowsError(try info([("H264", false, [vga: [30]])]).choose(CaptureRequest()))
    }

    func testFourCCAndSizes() {
        XCTAssertEqual(FourCC.make("YUYV"), 0x5659_5559)
        XCTAssertEqual(FourCC.string(FourCC.make("MJPG")), "MJPG")
        XCTAssertEqual(CaptureFormat(fourcc: FourCC.make("NV12")), .nv12)
        XCTAssertEqual(FrameSize(parsing: "1280x720"), hd)
        XCTAssertNil(FrameSize(parsing: "0x720"))
        XCTAssertNil(FrameSize(parsing: "big"))
        XCTAssertEqual(ReconnectPolicy(initialDelay: 0.1, maximumDelay: 1).delay(attempt: 0), 0.1)
        XCTAssertEqual(ReconnectPolicy(initialDelay: 0.1, maximumDelay: 1).delay(attempt: 3), 0.8, accuracy: 1e-9)
        XCTAssertEqual(ReconnectPolicy(initialDelay: 0.1, maximumDelay: 1).delay(attempt: 30), 1)
    }

    /// A source that went away gives up at the first limit it reaches: attempts or seconds gone.
    func testReconnectLimits() {
        let second: UInt64 = 1_000_000_000
        let forever = ReconnectPolicy()
        XCTAssertFalse(forever.givesUp(attempts: 1_000, since: 0, now: 3_600 * second))
        XCTAssertEqual(forever.limitDescription, "without end")
        let timed = ReconnectPolicy(maximumWait: 30)
        XCTAssertFalse(timed.givesUp(attempts: 500, since: 10 * second, now: 39 * second))
        XCTAssertTrue(timed.givesUp(attempts: 1, since: 10 * second, now: 40 * second))
        XCTAssertEqual(timed.limitDescription, "up to 30 s")
        let both = ReconnectPolicy(maximumAttempts: 3, maximumWait: 2.5)
        XCTAssertTrue(both.givesUp(attempts: 3, since: 0, now: 0))
        XCTAssertFalse(both.givesUp(attempts: 2, since: 0, now: 2 * second))
        XCTAssertEqual(both.limitDescription, "up to 2.5 s or 3 attempts")
        XCTAssertEqual(PipeWireSource.defaultReconnect.maximumWait, 30)
    }

    func testUnpackDropsRowPadding() throws {
        let format = StreamFormat(format: .yuyv, size: FrameSize(width: 4, height: 2), bytesPerLine: 12, fps: 30)
        let payload: [UInt8] = Array(0..<8) + [0xEE, 0xEE, 0xEE, 0xEE] + Array(8..<16) + [0xEE, 0xEE, 0xEE, 0xEE]
        let image = try format.image(from: payload, device: "/dev/videoX", decoder: nil)
        XCTAssertEqual(image.bytes, Array(0..<16))
        XCTAssertEqual(image.format, .yuyv)
    }

    func testUnpackNV12Planes() throws {
        let format = StreamFormat(format: .nv12, size: FrameSize(width: 2, height: 2), bytesPerLine: 4, fps: nil)
        // Y rows [1,2,pad,pad] [3,4,pad,pad], then one UV row [5,6,pad,pad].
        let payload: [UInt8] = [1, 2, 0, 0, 3, 4, 0, 0, 5, 6, 0, 0]
        XCTAssertEqual(try format.image(from: payload, device: "d", decoder: nil).bytes, [1, 2, 3, 4, 5, 6])
        XCTAssertThrowsError(try format.image(from: [1, 2, 3], device: "d", decoder: nil)) { error in
            XCTAssertEqual(error as? CaptureError, .decodeFailed(path: "d", reason: "short frame: 3 of 10 bytes"))
        }
    }

    func testMJPEGWithoutDecoderIsAnError() {
        let format = StreamFormat(format: .mjpeg, size: FrameSize(width: 2, height: 2), bytesPerLine: 0, fps: nil)
        XCTAssertThrowsError(try format.image(from: [0xFF, 0xD8], device: "d", decoder: nil))
    }

    func testNetpbm() throws {
        let decoder = NetpbmDecoder()
        let gray = try decoder.decode(Array("P5\n# c\n2 1\n255\n".utf8) + [7, 8], path: "x.pgm")
        XCTAssertEqual(gray.format, .gray8)
        XCTAssertEqual(gray.bytes, [7, 8])
        XCTAssertThrowsError(try decoder.decode(Array("P6 1 1 65535\n".utf8) + [0, 0, 0, 0, 0, 0], path: "deep.ppm")) { error in
            XCTAssertEqual(error as? CaptureError, .decodeFailed(path: "deep.ppm", reason: "only 8-bit Netpbm (maxval 255), got 65535"))
        }
        XCTAssertThrowsError(try decoder.decode(Array("GIF89a".utf8), path: "x.gif"))
        XCTAssertThrowsError(try decoder.decode([], path: "empty.ppm"))
    }
}

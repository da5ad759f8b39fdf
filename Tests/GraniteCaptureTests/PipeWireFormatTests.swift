import XCTest
@testable import GraniteCapture
import GraniteMedia

/// The buffer layouts a PipeWire camera writes and reads: GStreamer's default video layout
/// (rows rounded up to 4 bytes, planes one after another), which `pipewiresrc` and browsers
/// assume when a buffer has one data block.
final class PipeWireFormatTests: XCTestCase {
    func testStridesAndSizesMatchGStreamersDefaults() {
        // (format, width, height, stride of plane 0, frame bytes) as gst_video_info_set_format gives them.
        let cases: [(PipeWireVideoFormat, Int, Int, Int, Int)] = [
            (.yuy2, 320, 240, 640, 640 * 240),
            (.yuy2, 322, 240, 644, 644 * 240),
            (.nv12, 320, 240, 320, 320 * 240 + 320 * 120),
            (.nv12, 322, 242, 324, 324 * 242 + 324 * 121),
            (.i420, 320, 240, 320, 320 * 240 + 2 * 160 * 120),
            (.i420, 1284, 720, 1284, 1284 * 720 + 2 * 644 * 360),
            (.bgrx, 321, 10, 1284, 1284 * 10),
            (.rgbx, 1920, 1080, 7680, 7680 * 1080),
        ]
        for (format, w, h, stride, bytes) in cases {
            XCTAssertEqual(format.stride(width: w), stride, "\(format) \(w)x\(h) stride")
            XCTAssertEqual(format.byteCount(width: w, height: h), bytes, "\(format) \(w)x\(h) bytes")
        }
    }

    func testNamesAndSPAIdsRoundTrip() {
        for format in PipeWireVideoFormat.allCases {
            XCTAssertEqual(PipeWireVideoFormat(spaID: format.spaID), format)
            XCTAssertEqual(PipeWireVideoFormat(name: format.rawValue.lowercased()), format)
        }
        XCTAssertNil(PipeWireVideoFormat(name: "mjpeg"))
        XCTAssertEqual(Set(PipeWireVideoFormat.allCases.map(\.spaID)).count, PipeWireVideoFormat.allCases.count)
    }

    func testCameraPropertiesNameAVideoSourceOfRoleCamera() {
        let props = Dictionary(uniqueKeysWithValues: PipeWireOutput.properties(name: "Granite Test Camera"))
        XCTAssertEqual(props["media.class"], "Video/Source")
        XCTAssertEqual(props["media.role"], "Camera")
        XCTAssertEqual(props["node.description"], "Granite Test Camera")
        XCTAssertEqual(props["node.name"], "granite.granite-test-camera")
    }

    func testCaptureTimeTakesOnlyMonotonicStamps() {
        let now: UInt64 = 1_000_000_000_000
        XCTAssertEqual(PipeWireCapture.captureTime(pts: Int64(now - 3_000_000), now: now), now - 3_000_000, "granite-cam's stamp")
        XCTAssertEqual(PipeWireCapture.captureTime(pts: 2_000_000_000, now: now), now, "another time line (a pipeline's running time)")
        XCTAssertEqual(PipeWireCapture.captureTime(pts: Int64(now + 1), now: now), now, "from the future")
        XCTAssertEqual(PipeWireCapture.captureTime(pts: 0, now: now), now, "none")
    }
}

import GraniteCapture
import XCTest

/// Control names, values and errors, apart from a device (the vivid tier sets real ones).
final class CameraControlTests: XCTestCase {
    func testNamesAreSpelledAsV4L2CtlSpellsThem() {
        XCTAssertEqual(CameraControl.variableName("Exposure Time, Absolute"), "exposure_time_absolute")
        XCTAssertEqual(CameraControl.variableName("Focus, Automatic Continuous"), "focus_automatic_continuous")
        XCTAssertEqual(CameraControl.variableName("White Balance Temperature, Auto"), "white_balance_temperature_auto")
        XCTAssertEqual(CameraControl.variableName("  Integer 64 Bits "), "integer_64_bits")
        XCTAssertEqual(CameraControl.variableName("Loop Video"), "loop_video")
    }

    func testValuesAreCheckedAgainstRangeStepAndMenu() throws {
        let brightness = CameraControl(id: 0x0098_0900, label: "Brightness", kind: .integer, minimum: 0, maximum: 255,
                                       step: 5, defaultValue: 128, flags: 0x20, value: 128)
        XCTAssertEqual(try brightness.parse("200", device: "/dev/video0"), 200)
        XCTAssertThrowsError(try brightness.parse("256", device: "/dev/video0")) { error in
            XCTAssertEqual("\(error)", "/dev/video0: control brightness cannot be set to 256: out of range (valid: 0...255 in steps of 5)")
        }
        XCTAssertThrowsError(try brightness.parse("201", device: "/dev/video0"))
        XCTAssertThrowsError(try brightness.parse("bright", device: "/dev/video0"))
        XCTAssertEqual(brightness.description, "brightness 0x00980900 (int): min=0 max=255 step=5 default=128 value=128 flags=slider")
        let menu = CameraControl(id: 1, label: "Auto Exposure", kind: .menu, minimum: 0, maximum: 3, step: 1, defaultValue: 3,
                                 flags: 0, value: 1, menu: [.init(index: 1, name: "Manual Mode"), .init(index: 3, name: "Aperture Priority Mode")])
        XCTAssertEqual(try menu.parse("3", device: "d"), 3)
        XCTAssertEqual(try menu.parse("Manual Mode", device: "d"), 1)
        XCTAssertEqual(try menu.parse("aperture_priority_mode", device: "d"), 3)
        XCTAssertThrowsError(try menu.parse("2", device: "d")) { error in
            XCTAssertTrue("\(error)".contains("valid: 1 (Manual Mode), 3 (Aperture Priority Mode)"), "\(error)")
        }
        let flag = CameraControl(id: 2, label: "Boolean", kind: .boolean, minimum: 0, maximum: 1, step: 1, defaultValue: 1, flags: 0)
        XCTAssertEqual(try flag.parse("false", device: "d"), 0)
        XCTAssertThrowsError(try flag.parse("2", device: "d"))
        let readOnly = CameraControl(id: 3, label: "Gain", kind: .integer, minimum: 0, maximum: 10, step: 1, defaultValue: 0, flags: 0x4)
        XCTAssertThrowsError(try readOnly.parse("1", device: "d")) { XCTAssertTrue("\($0)".contains("read-only")) }
    }

    func testSettingsParse() throws {
        XCTAssertEqual(try ControlSetting(parsing: "Brightness=12"), ControlSetting(name: "brightness", value: "12"))
        XCTAssertEqual(try ControlSetting(parsing: "string=a=b").value, "a=b")
        XCTAssertThrowsError(try ControlSetting(parsing: "=3"))
        XCTAssertThrowsError(try ControlSetting(parsing: "brightness"))
    }
}

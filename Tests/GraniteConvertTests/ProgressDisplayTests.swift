import GraniteConvert
import XCTest

final class ProgressDisplayTests: XCTestCase {
    final class Capture: @unchecked Sendable {
        var text = ""
    }

    func testTerminalRedrawsOneBarLine() {
        let capture = Capture()
        let display = ProgressDisplay(total: 4, isTerminal: true) { capture.text += $0 }
        display.update(done: 1, failed: 0)
        display.message("granite convert: failed: x.jpg: header error: empty file")
        display.update(done: 4, failed: 1)
        display.finish()
        XCTAssertTrue(capture.text.hasPrefix("\r\u{1B}[2K[#######-----------------------] 1/4 "), capture.text)
        XCTAssertTrue(capture.text.contains("img/s ETA "))
        XCTAssertTrue(capture.text.contains("\r\u{1B}[2Kgranite convert: failed: x.jpg: header error: empty file\n"))
        XCTAssertTrue(capture.text.contains("[##############################] 4/4 "))
        XCTAssertTrue(capture.text.hasSuffix(", 1 failed\n"), capture.text)
    }

    func testPlainLinesAreThrottledButTheLastAlwaysShows() {
        let capture = Capture()
        let display = ProgressDisplay(total: 100, isTerminal: false, lineInterval: 3600) { capture.text += $0 }
        for done in 1...100 { display.update(done: done, failed: 0) }
        display.finish()
        let lines = capture.text.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, capture.text)  // the first, then nothing for an hour, then the last
        guard lines.count == 2 else { return }
        XCTAssertTrue(lines[0].hasPrefix("granite convert: 1/100 done, "))
        XCTAssertTrue(lines[1].hasPrefix("granite convert: 100/100 done, "))
        XCTAssertFalse(capture.text.contains("\u{1B}"))
    }
}

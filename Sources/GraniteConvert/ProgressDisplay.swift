#if canImport(Glibc)
import Glibc
#endif
import GraniteMedia

/// Progress on stderr: a redrawn bar on a terminal, plain periodic lines otherwise.
///
/// Driven by the converter's single collecting loop, so it needs no locking.
public final class ProgressDisplay {
    let total: Int
    let isTerminal: Bool
    let start = monotonicNanos()
    var lastDraw: UInt64 = 0
    var barShown = false
    /// Seconds between plain lines when stderr is not a terminal.
    let lineInterval: Double

    /// A display for `total` items; `isTerminal` defaults to whether stderr is a TTY.
    public init(total: Int, isTerminal: Bool = isatty(2) != 0, lineInterval: Double = 2) {
        self.total = total
        self.isTerminal = isTerminal
        self.lineInterval = lineInterval
    }

    var elapsed: Double { Double(monotonicNanos() - start) / 1e9 }

    /// Shows `done` of `total` (redraws at most 10 times a second on a TTY).
    func update(done: Int, failed: Int) {
        let now = monotonicNanos()
        let interval = isTerminal ? 0.1 : lineInterval
        guard done == total || Double(now - lastDraw) / 1e9 >= interval else { return }
        lastDraw = now
        let t = elapsed
        let rate = t > 0 ? Double(done) / t : 0
        let eta = rate > 0 ? Double(total - done) / rate : 0
        let failedText = failed > 0 ? ", \(failed) failed" : ""
        if isTerminal {
            let width = 30
            let filled = total > 0 ? width * done / total : width
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            emit("\r\u{1B}[2K[\(bar)] \(done)/\(total) \(fixed(rate, 1)) img/s ETA \(clock(eta))\(failedText)")
            barShown = true
        } else {
            emit("granite convert: \(done)/\(total) done, \(fixed(rate, 1)) images/s, ETA \(clock(eta))\(failedText)\n")
        }
    }

    /// Prints a message line without tearing the bar.
    func message(_ text: String) {
        if barShown { emit("\r\u{1B}[2K") }
        emit(text + "\n")
        if barShown { lastDraw = 0 }  // redraw the bar at once
        barShown = false
    }

    /// Ends the bar's line.
    func finish() {
        if barShown { emit("\n") }
        barShown = false
    }

    func emit(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }
}

/// `12.3` with `digits` decimals.
func fixed(_ value: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let v = (value * scale).rounded() / scale
    var text = String(v)
    if let dot = text.firstIndex(of: ".") {
        let decimals = text.distance(from: dot, to: text.endIndex) - 1
        if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
        if digits == 0 { text = String(text[..<dot]) }
    }
    return text
}

/// `m:ss`.
func clock(_ seconds: Double) -> String {
    let s = max(0, Int(seconds.rounded()))
    let ss = s % 60
    return "\(s / 60):\(ss < 10 ? "0" : "")\(ss)"
}

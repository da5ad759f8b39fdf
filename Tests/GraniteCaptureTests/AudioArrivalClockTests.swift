import XCTest

@testable import GraniteCapture

/// ``AudioArrivalClock``: capture times of sound from arrival times alone (a driver that does not
/// stamp its cycles), driven with made-up arrivals and no clock.
final class AudioArrivalClockTests: XCTestCase {
    let rate = 48_000, block = 1024
    var quantum: Double { Double(block) * 1e9 / Double(rate) }

    /// Block k is captured over [t0 + k·q, t0 + (k+1)·q) and arrives `late(k)` after its end.
    func stamps(_ count: Int, t0: Double = 5e9, lost: Range<Int> = 0..<0, late: (Int) -> Double) -> [(truth: Double, stamp: Double)] {
        var clock = AudioArrivalClock(rate: rate)
        var out: [(Double, Double)] = []
        for k in 0..<count where !lost.contains(k) {
            let truth = t0 + Double(k) * quantum
            let stamp = clock.stamp(frames: block, arrival: UInt64(truth + quantum + late(k)))
            out.append((truth, Double(stamp)))
        }
        return out
    }

    func testTheLeastDelayedArrivalSetsTheTimesAndLateWakeUpsDoNotMoveThem() {
        // Delays 0.5–30 ms, the least (0.5 ms) at block 7; a burst of 60 ms late wake-ups at 40–44.
        let delays = (0..<100).map { k -> Double in
            if k == 7 { return 0.5e6 }
            if (40..<45).contains(k) { return 60e6 }
            return 2e6 + Double((k * 7919) % 28) * 1e6
        }
        let result = stamps(100) { delays[$0] }
        for (k, r) in result.enumerated() where k >= 7 {
            XCTAssertEqual(r.stamp - r.truth, 0.5e6, accuracy: 1e3, "block \(k): stamped \((r.stamp - r.truth) / 1e6) ms from its capture")
        }
        // Before the least-delayed block the estimate is late by at most the delays seen so far.
        XCTAssertLessThanOrEqual(result[0].stamp - result[0].truth, 31e6)
    }

    func testLostSoundMovesTheTimesOnOnceItLastsASecond() {
        // 10 blocks (213 ms) lost after block 50: the blocks after are 213 ms later than the count says.
        let result = stamps(200, lost: 50..<60) { _ in 1e6 }
        let afterGap = result.filter { $0.truth > 5e9 + 60 * quantum }
        let settled = afterGap.dropFirst(Int(1e9 / quantum) + 1)
        XCTAssertFalse(settled.isEmpty)
        for r in settled { XCTAssertEqual(r.stamp - r.truth, 1e6, accuracy: 1e3, "after the gap: \((r.stamp - r.truth) / 1e6) ms") }
        // Until a second has shown the gap, the sound is placed early by the gap (it is not yet known to be one).
        XCTAssertEqual(afterGap[0].stamp - afterGap[0].truth, 1e6 - 10 * quantum, accuracy: 1e3)
    }
}

import Foundation
import GraniteIPFS

/// A one-line progress bar on stderr for `granite pin` (TTY only, at most 10 redraws a second).
final class PinProgressBar: @unchecked Sendable {
    private let lock = NSLock()
    private let enabled: Bool
    private let totalBytes: UInt64
    private let totalJobs: Int
    private let start = Date()
    private var perEntry: [String: UInt64] = [:]
    private var bytes: UInt64 = 0
    private var finishedJobs = 0
    private var lastDraw = Date.distantPast

    init(jobs: [PinJob], enabled: Bool) {
        self.enabled = enabled
        totalBytes = jobs.reduce(0) { $0 + $1.bytes }
        totalJobs = jobs.count
    }

    /// Folds one pinning event into the bar.
    func handle(_ event: PinEvent) {
        lock.withLock {
            switch event {
            case let .uploaded(jobID, name, cumulative):
                let key = jobID + "\u{0}" + name
                bytes += cumulative - min(cumulative, perEntry[key] ?? 0)
                perEntry[key] = max(cumulative, perEntry[key] ?? 0)
            case .pinned, .problem:
                finishedJobs += 1
            }
            draw(force: finishedJobs == totalJobs)
        }
    }

    /// Ends the bar's line.
    func finish() {
        lock.withLock {
            guard enabled, totalJobs > 0 else { return }
            draw(force: true)
            FileHandle.standardError.write(Data("\n".utf8))
        }
    }

    private func draw(force: Bool) {
        guard enabled, force || Date().timeIntervalSince(lastDraw) >= 0.1 else { return }
        lastDraw = Date()
        let fraction = totalBytes == 0 ? Double(finishedJobs) / Double(max(totalJobs, 1))
            : min(1, Double(bytes) / Double(totalBytes))
        let width = 30
        let filled = Int(fraction * Double(width))
        let rate = Double(bytes) / max(Date().timeIntervalSince(start), 0.001) / 1e6
        let line = String(format: "\r[%@%@] %3.0f%%  %d/%d  %@  %.1f MB/s ",
                          String(repeating: "#", count: filled), String(repeating: ".", count: width - filled),
                          fraction * 100, finishedJobs, totalJobs, PinSummary.humanBytes(bytes), rate)
        FileHandle.standardError.write(Data(line.utf8))
    }
}

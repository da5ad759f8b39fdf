import Foundation
import GraniteIPFS

/// The end-of-run summary of `granite pin`: text for people, JSON for scripts.
struct PinSummary: Encodable {
    var files: Int
    var bytes: UInt64
    var pinned: [PinReport.Pinned]
    var problems: [PinReport.Problem]
    var car: String?
    var journal: String

    init(report: PinReport, car: String?, journal: String) {
        files = report.files
        bytes = report.bytes
        pinned = report.pinned
        problems = report.problems
        self.car = car
        self.journal = journal
    }

    /// Writes the summary to stdout (problems also to stderr in text mode).
    func print(json: Bool) throws {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            Swift.print(String(decoding: try encoder.encode(self), as: UTF8.self))
            return
        }
        for item in pinned { Swift.print("\(item.cid)  \(item.paths.joined(separator: " "))") }
        Swift.print("pinned \(pinned.count) CID(s): \(files) file(s), \(Self.humanBytes(bytes))"
                    + (car.map { "; CAR \($0)" } ?? "") + (problems.isEmpty ? "" : "; \(problems.count) not pinned"))
        for problem in problems {
            let fate = problem.willRetry ? "pending (granite pin --retry)" : "failed"
            FileHandle.standardError.write(Data("\(fate): \(problem.paths.joined(separator: " ")): \(problem.reason)\n".utf8))
        }
    }

    /// `12.3 MB` style sizes (SI).
    static func humanBytes(_ n: UInt64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var value = Double(n)
        var unit = 0
        while value >= 1000, unit < units.count - 1 { value /= 1000; unit += 1 }
        return unit == 0 ? "\(n) B" : String(format: "%.1f %@", value, units[unit])
    }
}

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
    var remote: Remote?

    /// Remote pinning's part: the service, and each job's CID and request there.
    struct Remote: Encodable {
        struct Entry: Encodable {
            var cid: String
            var paths: [String]
            var requestID: String?
            var reason: String?
        }
        var service: String
        var pinned: [Entry]
        var failed: [Entry]
        var pending: [Entry]
        var problem: String?

        init(_ outcome: RemoteOutcome) {
            func entry(_ state: RemoteJobState) -> Entry {
                var reason: String?
                if case let .failed(why) = state.outcome { reason = why }
                return Entry(cid: state.job.cid.description, paths: state.job.paths, requestID: state.requestID, reason: reason)
            }
            service = outcome.service
            pinned = outcome.pinned.map(entry)
            failed = outcome.failed.map(entry)
            pending = outcome.pending.map(entry)
            problem = outcome.problem
        }
    }

    init(report: PinReport, car: String?, journal: String, remote: RemoteOutcome? = nil) {
        files = report.files
        bytes = report.bytes
        pinned = report.pinned
        problems = report.problems
        self.car = car
        self.journal = journal
        self.remote = remote.map(Remote.init)
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
        guard let remote else { return }
        let total = remote.pinned.count + remote.failed.count + remote.pending.count
        Swift.print("pinned \(remote.pinned.count) of \(total) on \(remote.service)")
        for entry in remote.failed {
            FileHandle.standardError.write(Data("failed on \(remote.service): \(entry.cid) \(entry.paths.joined(separator: " ")): \(entry.reason ?? "")\n".utf8))
        }
        for entry in remote.pending {
            let line = "pending on \(remote.service) (granite pin --retry --service \(remote.service)): "
                + "\(entry.cid) \(entry.paths.joined(separator: " "))\n"
            FileHandle.standardError.write(Data(line.utf8))
        }
        if let problem = remote.problem { FileHandle.standardError.write(Data("granite pin: \(problem)\n".utf8)) }
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

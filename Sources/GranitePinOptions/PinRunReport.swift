import GraniteIPFS

/// What a run that pinned the files it wrote says at the end, and whether that fails it: the one
/// text `granite convert --pin` and `granite-cam --pin` print, built from GraniteIPFS `PinSession.Outcome`.
///
/// ```
/// pinned 3 of 3 files on http://127.0.0.1:5001
/// folder bafy… pinned: ipfs://bafy…/                      (or "journaled, not pinned yet")
/// warning: 3 files and the folder not pinned yet (why); they stay journaled in J: run `granite pin --retry`
/// pinned 1 of 1 on https://service/psa: ipfs://bafy…/     (with --service)
/// error: the service refused the token; 1 stay journaled: run `granite pin --retry --service URL`
/// ```
public struct PinRunReport: Sendable, Equatable {
    /// One line of the report.
    public struct Line: Sendable, Equatable {
        /// Where it goes: results to standard output, warnings and errors to standard error.
        public enum Kind: Sendable, Equatable { case result, warning, error }
        /// Its kind.
        public var kind: Kind
        /// The text, without the kind.
        public var text: String

        /// The line as printed after the program's name: `warning: …`, `error: …` or the result.
        public var message: String {
            switch kind {
            case .result: text
            case .warning: "warning: " + text
            case .error: "error: " + text
            }
        }
    }

    /// The lines, in order.
    public var lines: [Line] = []
    /// True when the run must exit 1: the pinning service refused the token (nothing there was tried).
    /// A node that is down or slow never fails a run: its jobs stay journaled.
    public var failed = false

    /// The report of `outcome`.
    public init(_ outcome: PinSession.Outcome) {
        lines.append(Line(kind: .result, text: "pinned \(outcome.pinned) of \(outcome.queued) files on \(outcome.node)"))
        if let folder = outcome.folder {
            let state = outcome.foldersPinned == true ? "pinned" : "journaled, not pinned yet"
            lines.append(Line(kind: .result, text: "folder \(folder.root) \(state): ipfs://\(folder.root)/"))
        }
        if outcome.remaining > 0 || outcome.foldersPinned == false {
            let folderToo = outcome.foldersPinned == false ? " and the folder" : ""
            lines.append(Line(kind: .warning, text: "\(outcome.remaining) files\(folderToo) not pinned yet (\(outcome.problem ?? "unknown")); "
                                                  + "they stay journaled in \(outcome.journal): run `granite pin --retry`"))
        } else if let problem = outcome.problem {
            lines.append(Line(kind: .warning, text: "pinning: \(problem)"))
        }
        guard let remote = outcome.remote else { return }
        let total = remote.pinned.count + remote.failed.count + remote.pending.count
        let address = outcome.folder.map { remote.pinned.isEmpty ? "" : ": ipfs://\($0.root)/" } ?? ""
        lines.append(Line(kind: .result, text: "pinned \(remote.pinned.count) of \(total) on \(remote.service)\(address)"))
        for state in remote.failed {
            if case let .failed(why) = state.outcome {
                lines.append(Line(kind: .warning, text: "failed on \(remote.service): \(state.job.cid): \(why)"))
            }
        }
        if let problem = remote.problem {
            lines.append(Line(kind: remote.tokenRefused ? .error : .warning,
                              text: "\(problem); \(remote.pending.count) stay journaled: run `granite pin --retry --service \(remote.service)`"))
        }
        failed = remote.tokenRefused
    }
}

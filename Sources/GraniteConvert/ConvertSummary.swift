/// What happened to one input.
public enum ConvertOutcome: Sendable, Equatable {
    /// Written to `output` (relative to the output folder).
    case converted(path: String, output: String)
    /// Already done and unchanged (manifest, input and output all agree).
    case skipped(path: String)
    /// Not converted, with the reason.
    case failed(path: String, reason: String)
}

/// Counts and timing of a batch.
public struct ConvertSummary: Sendable, Equatable {
    /// Inputs written this run.
    public var converted = 0
    /// Inputs already done.
    public var skipped = 0
    /// Inputs that failed: path and reason, in the order they finished.
    public var failed: [(path: String, reason: String)] = []
    /// Wall-clock seconds of the batch.
    public var seconds = 0.0

    /// An empty summary.
    public init() {}

    mutating func add(_ outcome: ConvertOutcome) {
        switch outcome {
        case .converted: converted += 1
        case .skipped: skipped += 1
        case let .failed(path, reason): failed.append((path, reason))
        }
    }

    /// Inputs seen.
    public var total: Int { converted + skipped + failed.count }

    /// Converted images per second of wall time.
    public var imagesPerSecond: Double { seconds > 0 ? Double(converted) / seconds : 0 }

    /// `0` when nothing failed, `ConvertExitCode.partialFailure` otherwise.
    public var exitCode: Int32 { failed.isEmpty ? ConvertExitCode.success : ConvertExitCode.partialFailure }

    /// The one-line summary the CLI prints.
    public var line: String {
        "converted \(converted), skipped \(skipped), failed \(failed.count) in \(fixed(seconds, 2)) s (\(fixed(imagesPerSecond, 1)) images/s)"
    }

    public static func == (a: ConvertSummary, b: ConvertSummary) -> Bool {
        a.converted == b.converted && a.skipped == b.skipped && a.seconds == b.seconds
            && a.failed.map(\.path) == b.failed.map(\.path) && a.failed.map(\.reason) == b.failed.map(\.reason)
    }
}

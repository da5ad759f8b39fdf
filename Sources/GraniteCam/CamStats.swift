/// The last `capacity` latency samples and their percentiles (a fixed ring: memory stays flat).
struct LatencyWindow: Sendable, Equatable {
    private var samples: [UInt64] = []
    private var next = 0
    /// How many samples are kept.
    let capacity: Int

    /// An empty window.
    init(capacity: Int = 512) { self.capacity = capacity }

    /// Adds one sample, in nanoseconds.
    mutating func add(_ nanos: UInt64) {
        if samples.count < capacity { samples.append(nanos) } else { samples[next] = nanos }
        next = (next + 1) % capacity
    }

    /// The `p`-th percentile (0...100) in milliseconds, nearest rank; `nil` when empty.
    func percentile(_ p: Double) -> Double? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
        return Double(sorted[max(0, min(sorted.count - 1, rank))]) / 1e6
    }

    /// Number of samples held.
    var count: Int { samples.count }
}

/// Events per second over a sliding window of recent arrival times.
struct RateMeter: Sendable, Equatable {
    private var stamps: [UInt64] = []
    private var next = 0
    private let capacity: Int

    /// A meter averaging over up to `capacity` events.
    init(capacity: Int = 120) { self.capacity = capacity }

    /// Records an event at `nanos` (monotonic).
    mutating func tick(_ nanos: UInt64) {
        if stamps.count < capacity { stamps.append(nanos) } else { stamps[next] = nanos }
        next = (next + 1) % capacity
    }

    /// The rate over the window, or 0 with fewer than two events.
    var rate: Double {
        guard stamps.count >= 2, let lo = stamps.min(), let hi = stamps.max(), hi > lo else { return 0 }
        return Double(stamps.count - 1) / (Double(hi - lo) / 1e9)
    }
}

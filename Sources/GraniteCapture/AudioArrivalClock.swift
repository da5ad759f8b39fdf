/// Capture times for blocks of sound from the times they arrive, where the graph's driver does not
/// stamp its cycles (`pw_time.now` 0: a driver made by another client's stream). A pure value over
/// the times it is given, so its rule is tested without a clock.
///
/// A sample cannot arrive before it was captured, so every block gives an upper bound on when the
/// first sample of the stream was captured: its arrival − every sample so far ÷ rate. The least of
/// those bounds is the estimate (the block that came with the least delay); a late wake-up only
/// raises a bound, never the estimate. When sound is lost (the source stalled, the buffers overran),
/// every bound after the gap sits above the estimate by the gap: once the bounds of `windowSeconds`
/// of sound in a row do by more than `gapNanos`, the estimate moves up by the least of them. (A
/// loaded machine delays wake-ups for a moment, not for a second: the window tells the two apart;
/// smaller losses are not worth a false gap.)
struct AudioArrivalClock: Sendable {
    /// Samples per second.
    let rate: Double
    let sampleRate: Int
    /// Seconds of sound in a row whose bounds must sit above the estimate before it moves (a gap,
    /// not a late wake-up).
    let windowSeconds: Double
    /// How far above the estimate counts as a gap.
    let gapNanos: Double
    /// Samples stamped so far.
    private(set) var samples: Int = 0
    /// The capture time of the stream's first sample, as far as known (ns).
    private(set) var origin: Double?
    /// The least excess over the estimate in the current streak, and the samples the streak covers.
    private var streak: (least: Double, samples: Int)?

    init(rate: Int, windowSeconds: Double = 1, gapNanos: Double = 100_000_000) {
        sampleRate = rate
        self.rate = Double(rate)
        self.windowSeconds = windowSeconds
        self.gapNanos = gapNanos
    }

    /// The capture time of the first of `frames` samples that arrived at `arrival` (monotonic ns).
    mutating func stamp(frames: Int, arrival: UInt64) -> UInt64 {
        let bound = Double(arrival) - Double(samples + frames) * 1e9 / rate
        if origin == nil || bound < origin! {
            origin = bound
            streak = nil
        } else if bound - origin! > gapNanos {
            let least = min(streak?.least ?? .infinity, bound - origin!)
            let covered = (streak?.samples ?? 0) + frames
            streak = (least, covered)
            if Double(covered) >= windowSeconds * rate {
                origin! += least
                streak = nil
            }
        } else {
            streak = nil
        }
        let at = origin! + Double(samples) * 1e9 / rate
        samples += frames
        return UInt64(max(0, at))
    }

    /// Blocks of interleaved samples (`channels` per instant) that arrived together at `arrival`,
    /// oldest first, each stamped with the capture time of its first sample.
    mutating func stamp(_ blocks: [[Float]], channels: Int, arrival: UInt64) -> [AudioBlock] {
        let frames = blocks.reduce(0) { $0 + $1.count / channels }
        var at = Double(stamp(frames: frames, arrival: arrival))
        return blocks.map { samples in
            defer { at += Double(samples.count / channels) * 1e9 / rate }
            return AudioBlock(samples: samples, timestampNanos: UInt64(at), sampleRate: sampleRate, channels: channels)
        }
    }
}

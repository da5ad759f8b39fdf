#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import GraniteMedia
import GraniteSync
import Synchronization

/// The plumbing every source shares: its own thread, the stream, the counters, stopping.
///
/// A source's loop runs on a dedicated dispatch queue and calls `emit` per frame; `emit`
/// renumbers nothing, it only watches the sequence for gaps and the channel for overflow. With
/// ``FrameDelivery/lossless(buffering:)`` `emit` blocks while the consumer is behind.
final class SourceRunner: Sendable {
    private struct State {
        var stats = CaptureStats()
        var lastSequence: UInt64?
        var started = false
        var channel: FrameChannel?
    }

    let name: String
    private let state = Locked(State())
    private let finished = DispatchSemaphore(value: 0)
    private let loopRunning = Atomic<Bool>(false)
    // An atomic, not part of `state`: stream termination handlers set it, and those can run
    // synchronously inside `finish()` while `state` is locked.
    private let stopRequested = Atomic<Bool>(false)

    init(name: String) {
        self.name = name
    }

    /// Makes the stream and runs `loop` on a new thread; `loop` returns when done or stopped.
    func start(_ delivery: FrameDelivery, loop: @escaping @Sendable (SourceRunner) -> Void) throws(CaptureError) -> AsyncStream<CaptureEvent> {
        let channel = FrameChannel(delivery: delivery)
        let alreadyStarted = state.withLock { s -> Bool in
            if s.started { return true }
            s.started = true
            s.channel = channel
            return false
        }
        if alreadyStarted { throw .invalidRequest("\(name): a source can be started only once") }
        let stream = channel.stream(onRelease: { [weak self] in self?.requestStop() })
        loopRunning.store(true, ordering: .sequentiallyConsistent)
        DispatchQueue(label: "granite.capture.\(name)", qos: .userInteractive).async {
            loop(self)
            let channel = self.state.withLock { s in
                defer { s.channel = nil }
                return s.channel
            }
            channel?.close()
            self.loopRunning.store(false, ordering: .sequentiallyConsistent)
            self.finished.signal()
        }
        return stream
    }

    /// Whether the loop should wind down.
    var isStopping: Bool { stopRequested.load(ordering: .sequentiallyConsistent) }

    /// Asks the loop to stop without waiting (stream termination uses this).
    func requestStop() {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        // Wakes a producer blocked on a full lossless channel; what is queued stays readable.
        state.withLock { $0.channel }?.close()
    }

    /// Asks the loop to stop and waits until it has released everything.
    func stop() {
        requestStop()
        let wasStarted = state.withLock { $0.started }
        guard wasStarted else { return }
        if loopRunning.load(ordering: .sequentiallyConsistent) {
            finished.wait()
            finished.signal()   // later stop() calls return at once
        }
    }

    /// Hands one frame to the stream, counting sequence gaps and consumer overflow. Blocks while
    /// a lossless channel is full (outside the lock, so counters and stop stay responsive).
    func emit(_ frame: Frame) {
        let channel = state.withLock { s -> FrameChannel? in
            if let last = s.lastSequence, frame.sequence > last + 1 {
                s.stats.droppedBySource += frame.sequence - last - 1
            }
            s.lastSequence = frame.sequence
            return s.channel
        }
        guard let channel else { return }
        let outcome = channel.push(frame: .frame(frame))
        state.withLock { s in
            switch outcome {
            case .enqueued: s.stats.delivered += 1
            case .droppedOldest:
                s.stats.delivered += 1
                s.stats.droppedByConsumer += 1
            case .closed: break
            }
        }
        if outcome == .closed { stopRequested.store(true, ordering: .sequentiallyConsistent) }
    }

    /// Announces the format in effect.
    func announce(_ format: StreamFormat) {
        state.withLock { $0.channel }?.push(control: .started(format))
    }

    /// Reports a fault (recoverable or final).
    func fault(_ error: CaptureError) {
        let channel = state.withLock { s in
            s.stats.faults += 1
            s.stats.lastFault = error
            return s.channel
        }
        channel?.push(control: .fault(error))
    }

    /// Counts a driver timestamp replaced because it went backwards.
    func repairedTimestamp() {
        state.withLock { $0.stats.repairedTimestamps += 1 }
    }

    /// Counts a successful reopen of a source gone since `gone` (monotonic ns); returns the gap in seconds.
    @discardableResult
    func reconnected(goneSince gone: UInt64) -> Double {
        let gap = Double(monotonicNanos() &- gone) / 1e9
        state.withLock { s in
            s.stats.reconnects += 1
            s.stats.longestGap = max(s.stats.longestGap, gap)
        }
        return gap
    }

    /// The last sequence number emitted, if any.
    var lastSequence: UInt64? { state.withLock { $0.lastSequence } }

    var stats: CaptureStats { state.withLock { $0.stats } }

    /// Sleeps until `deadline` (monotonic ns) in slices, returning early when stopping.
    /// Returns `false` if a stop was requested.
    func sleep(until deadline: UInt64) -> Bool {
        while true {
            if isStopping { return false }
            let now = monotonicNanos()
            if now >= deadline { return true }
            let slice = min(deadline - now, 50_000_000)
            var ts = timespec(tv_sec: Int(slice / 1_000_000_000), tv_nsec: Int(slice % 1_000_000_000))
            _ = nanosleep(&ts, nil)
        }
    }
}

import GraniteSync

/// The run's admission, in one place: frames in flight (from capture to their last outlet), at
/// most `limit` admitted. Owned by the capture relay's resources; a frame's place leaves the gate
/// as a ``FrameSlot`` carried forward with the frame, and comes back when its last holder is done
/// — on that holder's executor, never through the component tree.
///
/// ```
///  capture pump ─acquire()─► FrameSlot ─► FrameReady ─► root ─► outlets (sinks, files, depth PNG)
///       ▲ (suspends on a continuation                                  │ last one done
///       │  while pending ≥ limit)                                      ▼
///       └──────────────────── wakes ◄─────────────────── slot.done() ─► gate.free()
/// ```
/// Only the pump waits; ``close()`` (stop) lets the pump through at once, refusing.
final class FlowGate: Sendable {
    private struct State {
        var pending = 0
        var peak = 0
        var freed: UInt64 = 0
        var closed = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    /// Frames admitted at most at once.
    let limit: Int
    private let state = Locked(State())

    /// A gate admitting `limit` (at least 1) frames.
    init(limit: Int) { self.limit = max(1, limit) }

    /// Waits until fewer than `limit` frames are pending, then admits one. Nil when the gate was
    /// closed (the run is stopping) and nothing was admitted. One waiter at a time (the pump).
    func acquire() async -> FrameSlot? {
        if let admitted = tryAcquire() { return admitted ? FrameSlot(gate: self) : nil }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if s.closed || s.pending < limit { return true }
                precondition(s.waiter == nil, "FlowGate: one waiter at a time")
                s.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
        return tryAcquire() == true ? FrameSlot(gate: self) : nil
    }

    /// Admits one frame when there is room; nil when full or closed (never waits).
    func admit() -> FrameSlot? { tryAcquire() == true ? FrameSlot(gate: self) : nil }

    /// Admits one item when there is room (true), refuses when closed (false), or nil when full.
    private func tryAcquire() -> Bool? {
        state.withLock { s in
            if s.closed { return false }
            guard s.pending < limit else { return nil }
            s.pending += 1
            s.peak = max(s.peak, s.pending)
            return true
        }
    }

    /// Frees one frame's place and wakes the pump if it waits for room. Only ``FrameSlot`` calls
    /// this, once per slot (its `freed` flag): a place is never freed twice.
    func free() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.pending = max(0, s.pending - 1)
            s.freed += 1
            guard s.pending < limit else { return nil }
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Stops admitting: a waiting pump gets nil, later `acquire` calls return nil at once.
    func close() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.closed = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Frames in flight now.
    var pending: Int { state.withLock { $0.pending } }

    /// The most frames ever in flight at once (bounded: the tests check it).
    var peak: Int { state.withLock { $0.peak } }

    /// Places freed so far (each admitted frame frees exactly one).
    var freed: UInt64 { state.withLock { $0.freed } }
}

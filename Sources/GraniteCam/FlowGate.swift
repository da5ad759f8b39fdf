import Synchronization

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
    private let state = Mutex(State())

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

    /// Frees one frame's place and wakes the pump if it waits for room (``FrameSlot`` only, once).
    fileprivate func free() {
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

/// One admitted frame's place in the run's ``FlowGate``, carried forward with the frame (in
/// `FrameReady`, then in each outlet's event): the frame carries its own release.
///
/// The carrier holds it once. Whoever hands the frame to `n` outlets calls ``share(_:)`` with `n`
/// first, then ``done()`` for its own hold; each outlet calls ``done()`` where it finishes with
/// the frame (the sink relay after the sinks took it, the output relay after the file and the
/// depth PNG are written). The last ``done()`` frees the place in the gate, on that outlet's own
/// executor — no event travels back through the tree for it. A slot nobody finishes (its event
/// dropped by an unmounted relay) frees its place when it is deallocated.
final class FrameSlot: Sendable {
    private let gate: FlowGate
    /// Holders not done yet (the carrier's own hold first).
    private let holds = Atomic<Int>(1)
    private let freed = Atomic<Bool>(false)

    fileprivate init(gate: FlowGate) { self.gate = gate }

    /// `count` more holders (the outlets the frame is about to be handed to). Call before handing
    /// it on, while holding it: the count never reaches zero in between.
    func share(_ count: Int) {
        guard count > 0 else { return }
        holds.add(count, ordering: .acquiringAndReleasing)
    }

    /// One holder is done with the frame; the last one frees its place in the gate.
    func done() {
        let (_, left) = holds.subtract(1, ordering: .acquiringAndReleasing)
        if left == 0 { free() }
    }

    /// Whether the place was given back.
    var isFree: Bool { freed.load(ordering: .acquiring) }

    private func free() {
        guard !freed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        gate.free()
    }

    deinit { free() }
}

import Synchronization

/// The run's back-pressure, in one place: frames in flight (from capture to their last output),
/// at most `limit` admitted. Owned by the capture relay; the rest of the tree gives a frame's
/// place back with a `CaptureRelayEvents.Release` event.
///
/// ```
///  capture pump ─acquire()─► (suspends on a continuation while `pending` ≥ limit)
///  CamComponent: a frame's last outlet done ─Release─► capture relay ─release()─► wakes the pump
/// ```
/// Only the pump waits; `close()` (stop) lets the pump through at once.
final class FlowGate: Sendable {
    private struct State {
        var pending = 0
        var peak = 0
        var closed = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    /// Work items admitted at most at once.
    let limit: Int
    private let state = Mutex(State())

    /// A gate admitting `limit` (at least 1) work items.
    init(limit: Int) { self.limit = max(1, limit) }

    /// Waits until fewer than `limit` items are pending, then admits one. Returns false when the
    /// gate was closed (the run is stopping) and nothing was admitted. One waiter at a time (the pump).
    func acquire() async -> Bool {
        if let admitted = tryAcquire() { return admitted }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if s.closed || s.pending < limit { return true }
                precondition(s.waiter == nil, "FlowGate: one waiter at a time")
                s.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
        return tryAcquire() ?? false
    }

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

    /// Finishes `count` items and wakes the pump if it waits for room.
    func release(_ count: Int = 1) {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.pending = max(0, s.pending - count)
            guard s.pending < limit else { return nil }
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Stops admitting: a waiting pump returns false, later `acquire` calls return false at once.
    func close() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.closed = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Items in flight now.
    var pending: Int { state.withLock { $0.pending } }

    /// The most items ever in flight at once (bounded: the tests check it).
    var peak: Int { state.withLock { $0.peak } }
}

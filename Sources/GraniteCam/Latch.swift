import GraniteSync

/// A one-time signal: ``wait()`` returns once ``signal()`` was called (before or after).
final class Latch: Sendable {
    private let state = Locked<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Sets the latch and wakes the waiters.
    func signal() {
        let waiters = state.withLock { s in
            s.done = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once ``signal()`` was called.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { s in
                if !s.done { s.waiters.append(continuation) }
                return s.done
            }
            if done { continuation.resume() }
        }
    }
}

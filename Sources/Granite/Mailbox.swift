import GraniteSync
import DequeModule

/// What a mailbox asks of its owner: how to run one job, and where.
protocol MailboxOwner: AnyObject, Sendable {
    /// Where this job must run; `nil` runs it wherever the mailbox is draining.
    func executor(for job: Job) -> GraniteExecutor?
    /// Whether this job awaits (an async reducer).
    func isAsync(_ job: Job) -> Bool
    /// Runs a synchronous job.
    func run(_ job: Job)
    /// Called with the mailbox lock held after each job: publish what the job changed.
    func commitLocked()
    /// Called once when the mailbox is closed and no job runs any more (release what jobs used).
    func mailboxDidClose()
    /// Runs an asynchronous job.
    func runAsync(_ job: Job) async
    /// What a drain that leaves the sender's thread (an executor hop, a task) must hold so the
    /// owner, and everything the jobs touch, outlive it: the node that owns the engine.
    var anchor: any GraniteNode { get }
}

/// A serial mailbox: jobs run one at a time, in the order submitted, also when some await.
///
/// ```
///  send ─► [lock: idle? become the drainer : append] ─► drain: run, pop, run, ... ─► idle
///                                                        │ async job: continue in a Task
///                                                        │ job with executor: hop there
/// ```
/// The fast path (idle mailbox, synchronous job, no executor) runs the job on the sender's
/// thread with two uncontended lock round trips and no allocation.
final class Mailbox: Sendable {
    private struct Inner {
        var queue = Deque<Job>()
        var running = false
        var closed = false
        /// Not started yet (a component before it mounts): jobs queue, none runs, until ``start(first:)``.
        var held = false
        var task: Task<Void, Never>?
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// Jobs ever accepted (queued or run inline): the runtime's drain compares it before and after.
        var accepted: UInt64 = 0
    }

    private let lock: Lock
    /// Invariant: read and written only while holding `lock` (the dynamic exclusivity checks
    /// would only repeat what the lock guarantees).
    @exclusivity(unchecked) nonisolated(unsafe) private var state = Inner()
    /// Where draining starts; `nil` drains on the sender's thread.
    private let home: GraniteExecutor?
    /// Invariant: the owner (an engine) owns this mailbox, and every drain runs while its node is
    /// held — by the sender on the inline path (it calls through the node), by the closure or
    /// task of every hop otherwise (they capture ``MailboxOwner/anchor``). So the owner outlives
    /// each use and the hot path does no reference counting.
    private unowned(unsafe) let owner: any MailboxOwner

    /// `lock` is shared with the owner, so publishing a job's state and releasing the mailbox
    /// take one lock round trip.
    /// `held`: jobs queue but none runs until ``start(first:)`` (a component's mailbox, until it mounts).
    init(owner: any MailboxOwner, home: GraniteExecutor?, lock: Lock, held: Bool = false) {
        self.lock = lock
        self.owner = owner
        self.home = home
        state.held = held
    }

    /// Queues a job; false when the mailbox is closed.
    @discardableResult
    func submit(_ job: Job) -> Bool {
        let become: Bool? = lock.withLock {
            if state.closed { return nil }
            state.accepted &+= 1
            if state.running || state.held { state.queue.append(job); return false }
            state.running = true
            return true
        }
        guard let become else { return false }
        guard become else { return true }
        if home == nil, owner.executor(for: job) == nil, !owner.isAsync(job) {
            // Fast path: an idle mailbox runs a synchronous job on the sender's thread.
            owner.run(job)
            drain(first: nil, on: nil)
        } else if let home {
            let anchor = owner.anchor
            home.run { withExtendedLifetime(anchor) { self.drain(first: job, on: home) } }
        } else {
            drain(first: job, on: nil)
        }
        return true
    }

    /// Becomes the drainer if the mailbox is open, idle and has no home executor; the caller
    /// then runs its job inline and calls ``drainRest()``. The allocation- and copy-free fast path.
    @inline(__always)
    func tryAcquireInline() -> Bool {
        guard home == nil else { return false }
        return lock.withLock {
            if state.closed || state.running || state.held { return false }
            state.running = true
            state.accepted &+= 1
            return true
        }
    }

    /// Publishes the inline job's state and goes idle, or runs what was queued meanwhile.
    /// `commitLocked` is the owner's, passed in so the hot path makes no witness call.
    @inline(__always)
    func drainRest(_ commitLocked: () -> Void) {
        // The common case in one lock round trip: nothing queued, nobody waiting, still open.
        let idle: Bool = lock.withLock {
            commitLocked()
            guard state.queue.isEmpty, !state.closed, state.waiters.isEmpty else { return false }
            state.running = false
            return true
        }
        if !idle { drain(first: nil, on: nil) }
    }

    /// Starts a held mailbox: `first` (the mount's render and links) runs before the jobs queued
    /// while it was held, which then run in the order sent. No effect on a started or closed one.
    func start(first: [Job]) {
        let become: Bool = lock.withLock {
            guard state.held, !state.closed else { return false }
            state.held = false
            state.accepted &+= UInt64(first.count)
            for job in first.reversed() { state.queue.prepend(job) }
            if state.running || state.queue.isEmpty { return false }
            state.running = true
            return true
        }
        guard become else { return }
        if let home {
            let anchor = owner.anchor
            home.run { withExtendedLifetime(anchor) { self.drain(first: nil, on: home) } }
        } else {
            drain(first: nil, on: nil)
        }
    }

    /// How many jobs wait in a held mailbox (0 once started).
    var heldCount: Int { lock.withLock { state.held ? state.queue.count : 0 } }

    /// Runs jobs until the queue is empty, hopping to executors or into a Task where needed.
    private func drain(first: Job?, on current: GraniteExecutor?) {
        var next = first
        while let job = next ?? pop() {
            next = nil
            if let target = owner.executor(for: job), target.queue !== current?.queue {
                let anchor = owner.anchor
                target.run { withExtendedLifetime(anchor) { self.drain(first: job, on: target) } }
                return
            }
            if owner.isAsync(job) {
                let anchor = owner.anchor
                let task = Task {
                    defer { withExtendedLifetime(anchor) {} }
                    await self.owner.runAsync(job)
                    self.continueAfterAsync()
                }
                lock.withLock { state.task = task }
                return
            }
            owner.run(job)
        }
    }

    private func continueAfterAsync() {
        if let home {
            let anchor = owner.anchor
            home.run { withExtendedLifetime(anchor) { self.drain(first: nil, on: home) } }
        } else {
            drain(first: nil, on: nil)
        }
    }

    private func pop() -> Job? {
        var closedIdle = false
        defer { if closedIdle { owner.mailboxDidClose() } }
        let (job, waiters): (Job?, [CheckedContinuation<Void, Never>]) = lock.withLock {
            owner.commitLocked()
            if let job = state.queue.popFirst() { return (job, []) }
            state.running = false
            state.task = nil
            if state.closed { closedIdle = true }
            if state.waiters.isEmpty { return (nil, []) }
            let waiters = state.waiters
            state.waiters = []
            return (nil, waiters)
        }
        if !waiters.isEmpty { for waiter in waiters { waiter.resume() } }
        return job
    }

    /// True when nothing is queued or running.
    var isIdle: Bool { lock.withLock { !state.running && state.queue.isEmpty } }

    /// Jobs accepted so far (a counter that only grows).
    var accepted: UInt64 { lock.withLock { state.accepted } }

    /// Waits until the mailbox has drained.
    func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = lock.withLock { () -> Bool in
                // A held mailbox reduces nothing until started: nothing to wait for yet.
                if !state.running && (state.queue.isEmpty || state.held) { return true }
                state.waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Refuses new jobs, drops queued ones and cancels an async job in flight; returns how many were dropped.
    @discardableResult
    func close() -> Int {
        let (dropped, task, waiters, idle) = lock.withLock {
            if state.closed { return (0, nil as Task<Void, Never>?, [CheckedContinuation<Void, Never>](), false) }
            state.closed = true
            let dropped = state.queue.count
            state.queue.removeAll()
            let w = state.running ? [] : state.waiters
            if !state.running { state.waiters = [] }
            return (dropped, state.task, w, !state.running)
        }
        task?.cancel()
        for waiter in waiters { waiter.resume() }
        if idle { owner.mailboxDidClose() }
        return dropped
    }
}

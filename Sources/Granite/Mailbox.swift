import DequeModule
import Synchronization

/// What a mailbox asks of its owner: how to run one job, and where.
protocol MailboxOwner: AnyObject, Sendable {
    associatedtype Job: Sendable
    /// Where this job must run; `nil` runs it wherever the mailbox is draining.
    func executor(for job: Job) -> GraniteExecutor?
    /// Whether this job awaits (an async reducer).
    func isAsync(_ job: Job) -> Bool
    /// Runs a synchronous job.
    func run(_ job: Job)
    /// Runs an asynchronous job.
    func runAsync(_ job: Job) async
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
final class Mailbox<Owner: MailboxOwner>: Sendable {
    private struct Inner: ~Copyable {
        var queue = Deque<Owner.Job>()
        var running = false
        var closed = false
        var task: Task<Void, Never>?
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let inner = Mutex(Inner())
    /// Where draining starts; `nil` drains on the sender's thread.
    private let home: GraniteExecutor?
    private unowned let owner: Owner

    init(owner: Owner, home: GraniteExecutor?) {
        self.owner = owner
        self.home = home
    }

    /// Queues a job; false when the mailbox is closed.
    @discardableResult
    func submit(_ job: Owner.Job) -> Bool {
        let become: Bool? = inner.withLock { inner in
            if inner.closed { return nil }
            if inner.running { inner.queue.append(job); return false }
            inner.running = true
            return true
        }
        guard let become else { return false }
        guard become else { return true }
        if let home {
            home.run { self.drain(first: job, on: home) }
        } else {
            drain(first: job, on: nil)
        }
        return true
    }

    /// Runs jobs until the queue is empty, hopping to executors or into a Task where needed.
    private func drain(first: Owner.Job?, on current: GraniteExecutor?) {
        var next = first
        while let job = next ?? pop() {
            next = nil
            if let target = owner.executor(for: job), target.queue !== current?.queue {
                target.run { self.drain(first: job, on: target) }
                return
            }
            if owner.isAsync(job) {
                let task = Task {
                    await self.owner.runAsync(job)
                    self.continueAfterAsync()
                }
                inner.withLock { $0.task = task }
                return
            }
            owner.run(job)
        }
    }

    private func continueAfterAsync() {
        if let home {
            home.run { self.drain(first: nil, on: home) }
        } else {
            drain(first: nil, on: nil)
        }
    }

    private func pop() -> Owner.Job? {
        let (job, waiters): (Owner.Job?, [CheckedContinuation<Void, Never>]) = inner.withLock { inner in
            if let job = inner.queue.popFirst() { return (job, []) }
            inner.running = false
            inner.task = nil
            let waiters = inner.waiters
            inner.waiters = []
            return (nil, waiters)
        }
        for waiter in waiters { waiter.resume() }
        return job
    }

    /// True when nothing is queued or running.
    var isIdle: Bool { inner.withLock { !$0.running && $0.queue.isEmpty } }

    /// Waits until the mailbox has drained.
    func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = inner.withLock { inner -> Bool in
                if !inner.running && inner.queue.isEmpty { return true }
                inner.waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Refuses new jobs, drops queued ones and cancels an async job in flight; returns how many were dropped.
    @discardableResult
    func close() -> Int {
        let (dropped, task, waiters) = inner.withLock { inner in
            inner.closed = true
            let dropped = inner.queue.count
            inner.queue.removeAll()
            let w = inner.running ? [] : inner.waiters
            if !inner.running { inner.waiters = [] }
            return (dropped, inner.task, w)
        }
        task?.cancel()
        for waiter in waiters { waiter.resume() }
        return dropped
    }
}

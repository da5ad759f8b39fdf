/// A pinning relay for pipelines: `submit` journals at once, a worker uploads in the background.
///
/// ```
/// producer (convert, camera) ─submit(paths)─► journal (local CID, fsync) ─signal─► worker
/// worker: pass = Pinner.process() ─► events ─► (status line, logs)
///         pending after a pass (node down, auth) ─► next pass after `retryInterval`
/// ```
/// `submit` returns as soon as the job is durable, so a slow or absent node never slows the
/// producer; jobs not finished when the process ends stay in the journal for the next run or
/// `granite pin --retry`. Passes never overlap within one queue, so each job is marked done once.
public actor PinQueue {
    /// The pinner doing the work.
    public let pinner: Pinner
    /// Wait before another pass while jobs are pending.
    public let retryInterval: Duration
    /// Every pinning event of every pass, for a status display.
    public nonisolated let events: AsyncStream<PinEvent>

    private let eventSink: AsyncStream<PinEvent>.Continuation
    private let wake: AsyncStream<Void>.Continuation
    private let wakeups: AsyncStream<Void>
    private var worker: Task<Void, Never>?
    private var current: Task<Result<PinReport, PinError>, Never>?
    private var lastReport = PinReport()

    /// A queue over `pinner`, retrying pending jobs every `retryInterval`.
    public init(pinner: Pinner, retryInterval: Duration = .seconds(30)) {
        self.pinner = pinner
        self.retryInterval = retryInterval
        (events, eventSink) = AsyncStream.makeStream(of: PinEvent.self, bufferingPolicy: .bufferingNewest(1024))
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Journals `paths` as new jobs (durable when this returns) and wakes the worker.
    @discardableResult
    public func submit(_ paths: [String]) throws(PinError) -> [PinJob] {
        let jobs = try pinner.enqueue(paths: paths)
        wake.yield()
        return jobs
    }

    /// Wakes the worker for jobs journaled directly through ``pinner`` (``Pinner/enqueue(paths:carPath:)``),
    /// for callers that cannot await (a relay's reducer).
    public nonisolated func wakeWorker() { wake.yield() }

    /// Starts the background worker (it first finishes what earlier runs left pending).
    public func start() {
        guard worker == nil else { return }
        let wakeups = self.wakeups
        let interval = retryInterval
        worker = Task { [weak self] in
            var timer: Task<Void, Never>?
            self?.wake.yield()
            for await _ in wakeups {
                guard let self, !Task.isCancelled else { break }
                timer?.cancel()
                let report = try? await self.pass()
                if report.map({ $0.problems.contains(where: \.willRetry) }) ?? true {
                    timer = Task { [wake = self.wake] in
                        try? await Task.sleep(for: interval)
                        if !Task.isCancelled { wake.yield() }
                    }
                }
            }
            timer?.cancel()
        }
    }

    /// Runs a pass now (after any pass in flight) and returns its report: what a program calls
    /// before it exits, to pin what it can while it still runs.
    public func drain() async throws(PinError) -> PinReport {
        try await pass()
    }

    /// Stops the worker; unfinished jobs stay in the journal.
    public func stop() async {
        worker?.cancel()
        wake.yield()
        _ = await worker?.value
        worker = nil
        if let current { _ = await current.value }
        eventSink.finish()
    }

    /// The report of the latest pass.
    public var latestReport: PinReport { lastReport }

    private func pass() async throws(PinError) -> PinReport {
        while let running = current {
            _ = await running.value
            if current == running { current = nil }
        }
        let pinner = self.pinner
        let sink = eventSink
        let task = Task { await Pinner.result { () async throws(PinError) in try await pinner.process { sink.yield($0) } } }
        current = task
        let result = await task.value
        if current == task { current = nil }
        let report = try result.get()
        lastReport = report
        return report
    }
}

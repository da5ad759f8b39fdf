import Foundation
import GraniteIPFS
import Synchronization

/// `granite convert --pin`: a `PinQueue` fed with each output as it is written, drained with a
/// bounded wait at the end; what is not pinned by then stays journaled for `granite pin --retry`.
final class ConvertPinning: Sendable {
    let queue: PinQueue
    let pinner: Pinner
    let journalPath: String
    private let submitted = Mutex<[PinJob]>([])
    private let failures = Mutex<[String]>([])

    /// Resolves the node and journal as `granite pin` does and starts the queue's worker.
    init(api: String?, apiAuth: String?, cidVersion: Int) async throws {
        let pinner = try PinCommand.makePinner(api: api, apiAuth: apiAuth, journal: nil, attempts: 3,
                                               options: ImportOptions(cidVersion: cidVersion), concurrency: 4)
        journalPath = pinner.journal.path
        self.pinner = pinner
        queue = PinQueue(pinner: pinner, retryInterval: .seconds(2))
        await queue.start()
    }

    /// Journals `paths` (one job each) and wakes the worker; a journal error is kept for the summary.
    func submit(_ paths: [String]) async {
        do {
            let jobs = try await queue.submit(paths)
            submitted.withLock { $0 += jobs }
        } catch {
            failures.withLock { $0.append("\(paths.joined(separator: ", ")): \(error)") }
        }
    }

    /// Waits up to `timeout` for a pass over everything queued, then reports; never throws.
    /// A node that does not answer a quick probe gets no wait: the jobs stay journaled.
    func finish(timeout: Duration) async -> [String] {
        let jobs = submitted.withLock { $0 }
        if !jobs.isEmpty, (try? await pinner.client.with(configuration: .quickProbe).version()) == nil {
            let queue = self.queue
            Task { await queue.stop() }   // a pass in flight ends on its own; nothing waits for it
            var lines = ["pinned 0 of \(jobs.count) outputs on \(pinner.client.endpoint)"]
            for failure in failures.withLock({ $0 }) { lines.append("warning: not queued for pinning: \(failure)") }
            lines.append("warning: IPFS node at \(pinner.client.endpoint) not reachable: \(jobs.count) outputs "
                         + "stay journaled in \(journalPath): run `granite pin --retry`")
            return lines
        }
        let (stream, done) = AsyncStream.makeStream(of: Bool.self, bufferingPolicy: .bufferingNewest(2))
        let queue = self.queue
        let drain = Task { () -> PinReport? in
            let report = try? await queue.drain()
            done.yield(true)
            return report
        }
        let timer = Task { try? await Task.sleep(for: timeout); done.yield(false) }
        var iterator = stream.makeAsyncIterator()
        let drained = await iterator.next() ?? false
        timer.cancel()
        var lines: [String] = []
        let state = try? pinner.journal.state()
        let doneIDs = Set(state?.done.map(\.id) ?? [])
        let pinned = jobs.filter { doneIDs.contains($0.id) }.count
        let remaining = jobs.count - pinned
        lines.append("pinned \(pinned) of \(jobs.count) outputs on \(pinner.client.endpoint)")
        for failure in failures.withLock({ $0 }) { lines.append("warning: not queued for pinning: \(failure)") }
        if remaining > 0 {
            var why = drained ? "" : " (no answer within \(timeout))"
            if drained, let reason = await drain.value?.problems.first?.reason { why = " (\(reason))" }
            lines.append("warning: \(remaining) outputs not pinned yet\(why); they stay journaled in \(journalPath): run `granite pin --retry`")
        }
        if drained { await queue.stop() }
        return lines
    }
}

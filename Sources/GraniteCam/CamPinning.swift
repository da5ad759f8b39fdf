import Foundation
import GraniteIPFS
import Synchronization

/// `granite-cam --pin`: every file written is journaled for pinning on a Kubo node through
/// GraniteIPFS's ``PinQueue``; the queue's worker uploads in the background, so capture never
/// waits on the node. At the end ``finish()`` drains for a bounded time; what is left stays in
/// the journal for `granite pin --retry`.
public final class CamPinning: Sendable {
    /// What pinning did in one run.
    public struct Outcome: Sendable, Equatable {
        /// Files journaled in this run.
        public var queued: Int
        /// Of those, pinned on the node (CID checked locally).
        public var pinned: Int
        /// Of those, still pending or failed (kept in the journal).
        public var remaining: Int
        /// The journal file.
        public var journal: String
        /// Why some are left, when known.
        public var problem: String?
    }

    /// The queue (journal, pinner, worker).
    public let queue: PinQueue
    /// The queue's pinner (its journal and client).
    public let pinner: Pinner
    /// The node, for messages.
    public let endpoint: String
    /// The longest ``finish()`` waits for the node before leaving the rest journaled.
    public let drainTimeout: Duration
    private let jobIDs = Mutex<[String]>([])
    private let drained = Mutex<Bool>(false)

    /// Pinning through `client`, journaled in `journalPath`.
    public init(client: KuboClient, journalPath: String, drainTimeout: Duration = .seconds(10),
                retryInterval: Duration = .seconds(5)) throws {
        let journal = try PinJournal(path: journalPath)
        pinner = try Pinner(client: client, journal: journal, options: ImportOptions())
        queue = PinQueue(pinner: pinner, retryInterval: retryInterval)
        endpoint = client.endpoint.description
        self.drainTimeout = drainTimeout
    }

    /// The node from `--api` / `$IPFS_API` / the repo's api file, the journal from `--pin-journal`
    /// or `$GRANITE_PIN_JOURNAL` (the same resolution as `granite pin`).
    public static func resolve(api: String?, journal: String?, drainTimeout: Duration) throws -> CamPinning {
        let client = KuboClient(endpoint: try KuboEndpoint.resolve(option: api), auth: try KuboAuth.resolve(option: nil))
        return try CamPinning(client: client, journalPath: journal ?? PinJournal.defaultPath(), drainTimeout: drainTimeout)
    }

    /// Asks the node for its version; returns a warning when it does not answer (capture goes on).
    public func probe() async -> String? {
        do {
            _ = try await pinner.client.version()
            return nil
        } catch {
            return "IPFS node at \(endpoint) not reachable (\(error)); files are journaled in "
                + "\(pinner.journal.path) and pinned when it answers (or by `granite pin --retry`)"
        }
    }

    /// Journals `path` (durable when this returns) and wakes the worker. Never waits on the node.
    func submit(_ path: String) throws {
        let jobs = try pinner.enqueue(paths: [path])
        jobIDs.withLock { $0 += jobs.map(\.id) }
        queue.wakeWorker()
    }

    /// Runs a last pass for at most ``drainTimeout``, stops the worker when it finished, and
    /// counts this run's jobs.
    public func finish() async -> Outcome {
        let queue = self.queue
        Task { [self] in
            _ = try? await queue.drain()
            drained.withLock { $0 = true }
        }
        let deadline = ContinuousClock.now + drainTimeout
        while !drained.withLock({ $0 }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if drained.withLock({ $0 }) { await queue.stop() }
        let ids = jobIDs.withLock { $0 }
        let done = Set(((try? pinner.journal.state())?.done ?? []).map(\.id))
        let pinned = ids.filter(done.contains).count
        let problem = await queue.latestReport.problems.first?.reason
        return Outcome(queued: ids.count, pinned: pinned, remaining: ids.count - pinned,
                       journal: pinner.journal.path, problem: pinned == ids.count ? nil : problem ?? "node did not answer in time")
    }
}

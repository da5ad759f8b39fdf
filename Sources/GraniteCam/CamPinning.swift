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
    /// One attempt, short timeouts: asks whether the node is up without the pinner's retries.
    private let probeClient: KuboClient
    private let jobIDs = Mutex<[String]>([])
    private let drained = Mutex<Bool>(false)

    /// Pinning through `client`, journaled in `journalPath`; `probeClient` (default `client`)
    /// answers ``probe()``: give it one attempt and short timeouts so a node that is down is
    /// reported at once.
    public init(client: KuboClient, probeClient: KuboClient? = nil, journalPath: String, drainTimeout: Duration = .seconds(10),
                retryInterval: Duration = .seconds(5)) throws {
        let journal = try PinJournal(path: journalPath)
        pinner = try Pinner(client: client, journal: journal, options: ImportOptions())
        queue = PinQueue(pinner: pinner, retryInterval: retryInterval)
        endpoint = client.endpoint.description
        self.probeClient = probeClient ?? client
        self.drainTimeout = drainTimeout
    }

    /// The probe's settings: one attempt, 1 s to connect, 5 s to answer (a node that is down
    /// is known in about a second instead of after the pinner's ~12 s of retries).
    public static var probeConfiguration: KuboClient.Configuration { .quickProbe }

    /// The node from `--api` / `$IPFS_API` / the repo's api file, the journal from `--pin-journal`
    /// or `$GRANITE_PIN_JOURNAL` (the same resolution as `granite pin`).
    public static func resolve(api: String?, journal: String?, drainTimeout: Duration) throws -> CamPinning {
        let endpoint = try KuboEndpoint.resolve(option: api), auth = try KuboAuth.resolve(option: nil)
        return try CamPinning(client: KuboClient(endpoint: endpoint, auth: auth),
                              probeClient: KuboClient(endpoint: endpoint, auth: auth, configuration: probeConfiguration),
                              journalPath: journal ?? PinJournal.defaultPath(), drainTimeout: drainTimeout)
    }

    /// Asks the node for its version (one quick attempt); returns a warning when it does not
    /// answer (capture goes on, files are journaled).
    public func probe() async -> String? {
        do {
            _ = try await probeClient.version()
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
    /// counts this run's jobs. A node that does not answer a quick probe gets no last pass: the
    /// program exits at once and the jobs stay journaled.
    public func finish() async -> Outcome {
        let ids = jobIDs.withLock { $0 }
        if !ids.isEmpty, (try? await probeClient.version()) == nil {
            let queue = self.queue
            Task { await queue.stop() }   // its pass in flight ends on its own; nothing waits for it
            return outcome(ids, problem: "IPFS node at \(endpoint) not reachable")
        }
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
        return outcome(jobIDs.withLock { $0 }, problem: await queue.latestReport.problems.first?.reason ?? "node did not answer in time")
    }

    /// Counts which of `ids` the journal has done; `problem` is reported when some are not.
    private func outcome(_ ids: [String], problem: String) -> Outcome {
        let done = Set(((try? pinner.journal.state())?.done ?? []).map(\.id))
        let pinned = ids.filter(done.contains).count
        return Outcome(queued: ids.count, pinned: pinned, remaining: ids.count - pinned,
                       journal: pinner.journal.path, problem: pinned == ids.count ? nil : problem)
    }
}

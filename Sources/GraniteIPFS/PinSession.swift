import Foundation
import GraniteSync

/// One program run's pinning: the node and journal resolved once, a ``PinQueue`` whose worker
/// uploads in the background while the program produces files, and a bounded wait at the end.
///
/// ```
/// resolve(api, auth, journal) ─► submit(paths) ─► journal (local CID, fsync) ─► worker uploads
/// finish(): node answers a quick probe? ─ no ─► everything stays journaled (no wait)
///                                       └ yes ─► last pass, given up after `wait` without progress
/// ```
/// `granite pin`, `granite convert --pin` and `granite-cam --pin` all pin through this type, so the
/// three resolve the node, the credentials and the journal alike and end the same way: what is not
/// pinned when the program ends stays journaled for `granite pin --retry`.
public final class PinSession: Sendable {
    /// What pinning did in one run.
    public struct Outcome: Sendable, Equatable {
        /// Jobs of this run (submitted, or adopted by ``adoptPending()``).
        public var queued: Int
        /// Of those, pinned on the node (CID checked locally).
        public var pinned: Int
        /// Of those, still pending or failed (kept in the journal).
        public var remaining: Int
        /// The journal file.
        public var journal: String
        /// The node, for messages.
        public var node: String
        /// Why some are left on the node, when known (node text escaped); the service's part
        /// says its own in ``remote``.
        public var problem: String?
        /// The last pass's report, when it ended within the wait.
        public var report: PinReport?
        /// The folder journaled by ``pinFolderAtFinish(_:excluding:)``, when one was.
        public var folder: FolderCIDs?
        /// Whether the folders this run journaled (``submitFolder(_:excluding:)``) are pinned;
        /// nil when it journaled none. Folder jobs are not counted in `queued`/`pinned`.
        public var foldersPinned: Bool?
        /// The pinning service's part, when ``pinRemotelyAtFinish(_:)`` named one.
        public var remote: RemoteOutcome?
    }

    /// A folder as one UnixFS directory: its root CID and the CID of everything inside it.
    public struct FolderCIDs: Sendable, Equatable {
        /// The folder's CID: what `ipfs add -r` of the folder (without the excluded names) gives;
        /// `ipfs://ROOT/a/b.png` addresses a file in it.
        public var root: CID
        /// Every file and subfolder, by its path relative to the folder (`set1/img1.jpg`).
        public var byPath: [String: CID]
    }

    /// The queue (journal, pinner, worker).
    public let queue: PinQueue
    /// The queue's pinner (its journal and client).
    public let pinner: Pinner
    /// The node, for messages.
    public let endpoint: String
    /// How long ``finish(onEvent:)`` waits without progress before leaving the rest journaled.
    public let wait: Duration
    /// One attempt, short timeouts: asks whether the node is up without the pinner's retries.
    private let probeClient: KuboClient
    private let jobIDs = Locked<[String]>([])
    private let folderJobIDs = Locked<[String]>([])
    private let finalFolder = Locked<(path: String, excluding: @Sendable (String) -> Bool)?>(nil)
    private let finalRemote = Locked<RemotePinner?>(nil)

    /// Pinning through `client`, journaled in `journalPath`; `probeClient` (default: `client` with
    /// ``KuboClient/Configuration/quickProbe``) answers ``probe()`` and the check in ``finish(onEvent:)``.
    public init(client: KuboClient, probeClient: KuboClient? = nil, journalPath: String, options: ImportOptions = .init(),
                concurrency: Int = PinSession.defaultConcurrency, wait: Duration = PinSession.defaultWait,
                retryInterval: Duration = PinSession.defaultRetryInterval) throws(PinError) {
        let journal: PinJournal
        do { journal = try PinJournal(path: journalPath) } catch { throw .journal(error) }
        do { pinner = try Pinner(client: client, journal: journal, options: options, concurrency: concurrency) } catch { throw .files(error) }
        queue = PinQueue(pinner: pinner, retryInterval: retryInterval)
        endpoint = client.endpoint.description
        self.probeClient = probeClient ?? client.with(configuration: .quickProbe)
        self.wait = wait
    }

    // The one set of session settings every program uses (`granite pin` lets --attempts and
    // --concurrency change the first two):
    /// The default of `--pin-wait`: 30 s without progress.
    public static let defaultWait: Duration = .seconds(30)
    /// Attempts per request before a job is left pending (transient failures only: a refused
    /// connection, a timeout, a 5xx or 429), with the client's backoff between them.
    public static let defaultAttempts = 4
    /// Uploads at once.
    public static let defaultConcurrency = 4
    /// How long the background worker waits before another pass when a job failed transiently.
    /// It only paces retries while a program runs: the end of a run drains at once.
    public static let defaultRetryInterval: Duration = .seconds(5)

    /// The node from `api` / `$IPFS_API` / the repo's api file, credentials from `apiAuth` /
    /// `$IPFS_API_AUTH`, the journal from `journal` / `$GRANITE_PIN_JOURNAL` / the default path:
    /// the one resolution every program uses.
    /// Credentials over cleartext `http://` to a host other than loopback throw
    /// ``KuboError/insecureCredentials(node:)`` here, before anything is journaled, unless `allowInsecureHTTP`.
    public static func resolve(api: String?, apiAuth: String?, journal: String?, wait: Duration = defaultWait,
                               attempts: Int = defaultAttempts, options: ImportOptions = .init(), concurrency: Int = defaultConcurrency,
                               retryInterval: Duration = defaultRetryInterval, allowInsecureHTTP: Bool = false) throws(PinError) -> PinSession {
        let endpoint: KuboEndpoint, auth: KuboAuth?
        do { (endpoint, auth) = (try KuboEndpoint.resolve(option: api), try KuboAuth.resolve(option: apiAuth)) } catch { throw .node(error) }
        var configuration = KuboClient.Configuration()
        configuration.maxAttempts = attempts
        configuration.allowInsecureHTTP = allowInsecureHTTP
        let client = KuboClient(endpoint: endpoint, auth: auth, configuration: configuration)
        do { try client.checkCredentialsTravelSafely() } catch { throw .node(error) }
        return try PinSession(client: client,
                              journalPath: journal ?? PinJournal.defaultPath(), options: options,
                              concurrency: concurrency, wait: wait, retryInterval: retryInterval)
    }

    /// Starts the background worker (programs that produce files while they run).
    public func start() async { await queue.start() }

    /// Asks the node for its version (one quick attempt); returns a warning when it does not
    /// answer (the program goes on; files are journaled).
    public func probe() async -> String? {
        do {
            _ = try await probeClient.version()
            return nil
        } catch {
            var what = "not reachable"
            if case let .timeout(_, _, after) = error { what = "did not answer in \(KuboError.seconds(after))" }
            return "IPFS node at \(endpoint) \(what) (\(error)); files are journaled in "
                + "\(pinner.journal.path) and pinned when it answers (or by `granite pin --retry`)"
        }
    }

    /// Journals `paths` (one job each, durable when this returns; `carPath` also gets the DAG
    /// as a CAR file) and wakes the worker. Never waits on the node.
    @discardableResult
    public func submit(_ paths: [String], carPath: String? = nil) throws(PinError) -> [PinJob] {
        let jobs = try pinner.enqueue(paths: paths, carPath: carPath)
        jobIDs.withLock { $0 += jobs.map(\.id) }
        queue.wakeWorker()
        return jobs
    }

    /// Journals `folder` as one job: a directory of its entries (files and subfolders, except
    /// the top-level names `excluding` accepts and the pin journal itself), the same DAG as `ipfs add -r --cid-version=N
    /// [--raw-leaves]` of the folder without them. Returns its root CID and every entry's CID,
    /// computed here (nothing is hashed twice). Never waits on the node.
    public func submitFolder(_ folder: String, excluding: (String) -> Bool = { _ in false }) throws(PinError) -> FolderCIDs {
        let base = URL(fileURLWithPath: folder).standardizedFileURL.path
        let journal = URL(fileURLWithPath: pinner.journal.path).standardizedFileURL.path
        // The journal changes while it pins: never part of the folder (at its top level).
        let children: [String]
        do { children = try FileKind.sortedChildren(of: folder) } catch { throw .files(error) }
        let paths = children.filter { !excluding($0) }.map { base + "/" + $0 }.filter { $0 != journal }
        var options = pinner.options
        options.wrapWithDirectory = true
        let (jobs, result) = try pinner.enqueueImport(paths: paths, options: options)
        folderJobIDs.withLock { $0 += jobs.map(\.id) }
        queue.wakeWorker()
        let byPath = Dictionary(result.entries.filter { !$0.name.isEmpty }.map { ($0.name, $0.cid) }, uniquingKeysWith: { a, _ in a })
        return FolderCIDs(root: result.roots[0].cid, byPath: byPath)
    }

    /// Makes ``finish(onEvent:)`` first journal `folder` (``submitFolder(_:excluding:)``) and
    /// report its CIDs in ``Outcome/folder``: for programs that write a folder until they exit.
    public func pinFolderAtFinish(_ folder: String, excluding: @escaping @Sendable (String) -> Bool = { $0.hasPrefix(".") }) {
        finalFolder.withLock { $0 = (folder, excluding) }
    }

    /// The node's multiaddrs (one quick `id`), the origins a pinning service fetches from; empty
    /// when it does not answer.
    public func origins() async -> [String] {
        (try? await probeClient.id().addresses) ?? []
    }

    /// Pins this run's jobs (``submit(_:carPath:)``, ``submitFolder(_:excluding:)``; only the
    /// folders with `foldersOnly`) on `remote`'s pinning service too, with the node's addresses as
    /// origins, after ``finish(onEvent:)`` pinned them here; jobs earlier runs left wanted there
    /// are finished as well. Waits as ``finish(onEvent:)`` does: up to ``wait`` without a change.
    public func finishRemote(_ remote: RemotePinner, foldersOnly: Bool = false,
                             onEvent: (@Sendable (RemotePinEvent) -> Void)? = nil) async -> RemoteOutcome {
        let ids = Set((foldersOnly ? [] : jobIDs.withLock { $0 }) + folderJobIDs.withLock { $0 })
        do {
            let state = try pinner.journal.state()
            try remote.want((state.pending + state.done).filter { ids.contains($0.id) })
        } catch {
            var outcome = RemoteOutcome(service: remote.client.service)
            outcome.problem = "\(error)"
            return outcome
        }
        return await remote.finish(origins: await origins(), wait: wait, onEvent: onEvent)
    }

    /// Makes ``finish(onEvent:)`` also pin this run's jobs on `remote`'s service
    /// (``finishRemote(_:foldersOnly:onEvent:)``) and report it in ``Outcome/remote``: the
    /// folders when the run journaled one (one root for the run), else every file.
    public func pinRemotelyAtFinish(_ remote: RemotePinner) {
        finalRemote.withLock { $0 = remote }
    }

    /// Counts every job earlier runs left pending as this run's (`granite pin` finishes them all).
    public func adoptPending() throws(PinJournalError) {
        let pending = try pinner.journal.state().pending.map(\.id)
        jobIDs.withLock { ids in ids += pending.filter { !ids.contains($0) } }
    }

    /// Runs a last pass, waiting for it while it makes progress (an upload advancing, a job
    /// ending) and giving up after ``wait`` without any; stops the worker when the pass ended.
    /// A node that does not answer a quick probe gets no pass: the jobs stay journaled. Never throws.
    public func finish(onEvent: (@Sendable (PinEvent) -> Void)? = nil) async -> Outcome {
        var folder: FolderCIDs?
        var folderProblem: String?
        if let (path, excluding) = finalFolder.withLock({ $0 }) {
            do { folder = try submitFolder(path, excluding: excluding) } catch { folderProblem = "folder \(path): \(error)" }
        }
        var outcome = await finishJobs(onEvent: onEvent)
        outcome.folder = folder
        if let folderProblem { outcome.problem = folderProblem + (outcome.problem.map { "; " + $0 } ?? "") }
        if let remote = finalRemote.withLock({ $0 }) {
            outcome.remote = await finishRemote(remote, foldersOnly: !folderJobIDs.withLock { $0.isEmpty })
        }
        return outcome
    }

    private func finishJobs(onEvent: (@Sendable (PinEvent) -> Void)?) async -> Outcome {
        let ids = jobIDs.withLock { $0 } + folderJobIDs.withLock { $0 }
        let queue = self.queue
        if ids.isEmpty {
            await queue.stop()
            return outcome(ids, problem: nil, report: nil)
        }
        do {
            _ = try await probeClient.version()
        } catch {
            Task { await queue.stop() }   // a pass in flight ends on its own; nothing waits for it
            switch error {
            case let .timeout(_, _, after):   // there, but too slow to answer a version
                return outcome(ids, problem: "IPFS node at \(endpoint) did not answer in \(KuboError.seconds(after))", report: nil)
            case .unreachable, .cancelled:
                return outcome(ids, problem: "IPFS node at \(endpoint) not reachable", report: nil)
            default:   // it answered, with a refusal: say what it said
                return outcome(ids, problem: "\(error)", report: nil)
            }
        }
        let lastActivity = Locked(ContinuousClock.now)
        let result = Locked<Result<PinReport, PinError>?>(nil)
        let watcher = Task {
            for await event in queue.events {
                lastActivity.withLock { $0 = .now }
                onEvent?(event)
            }
        }
        let drain = Task {
            let report = await Pinner.result { () async throws(PinError) in try await queue.drain() }
            result.withLock { $0 = report }
        }
        while result.withLock({ $0 }) == nil, ContinuousClock.now < lastActivity.withLock({ $0 }) + wait {
            try? await Task.sleep(for: .milliseconds(20))
        }
        let ended = result.withLock { $0 }
        if ended != nil {
            await queue.stop()
        } else {
            drain.cancel()
            Task { await queue.stop() }
        }
        watcher.cancel()
        let report = try? ended?.get()
        var problem: String?
        switch ended {
        case nil: problem = "no progress from IPFS node at \(endpoint) for \(wait)"
        case let .failure(error)?: problem = "\(error)"
        case let .success(report)?: problem = report.problems.first?.reason
        }
        return outcome(ids, problem: problem, report: report)
    }

    /// Counts which of `ids` the journal has done; `problem` is reported when some are not.
    private func outcome(_ all: [String], problem: String?, report: PinReport?) -> Outcome {
        let done = Set(((try? pinner.journal.state())?.done ?? []).map(\.id))
        let folders = Set(folderJobIDs.withLock { $0 })
        let ids = all.filter { !folders.contains($0) }
        let pinned = ids.filter(done.contains).count
        let foldersPinned = folders.isEmpty ? nil : folders.allSatisfy(done.contains)
        return Outcome(queued: ids.count, pinned: pinned, remaining: ids.count - pinned, journal: pinner.journal.path, node: endpoint,
                       problem: pinned == ids.count && foldersPinned != false ? nil : problem, report: report, folder: nil,
                       foldersPinned: foldersPinned)
    }
}

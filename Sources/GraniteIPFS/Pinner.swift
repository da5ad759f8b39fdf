import Foundation
import Logging
import NIOConcurrencyHelpers

/// What happened to the jobs of one pinning pass.
public struct PinReport: Sendable, Codable, Equatable {
    /// A job that is now pinned (CID verified).
    public struct Pinned: Sendable, Codable, Hashable {
        /// The job's inputs.
        public var paths: [String]
        /// Its root CID, as computed locally and confirmed by the node.
        public var cid: CID
        /// File bytes under the root.
        public var bytes: UInt64
        /// Files under the root.
        public var files: Int
    }

    /// A job that did not finish, and why.
    public struct Problem: Sendable, Codable, Hashable {
        /// The job's inputs.
        public var paths: [String]
        /// Its root CID, as computed locally.
        public var cid: CID
        /// What went wrong (credentials never included).
        public var reason: String
        /// True when it stays in the journal for a later run; false when it failed for good.
        public var willRetry: Bool

        /// A problem with `job`'s inputs and CID.
        public init(paths: [String], cid: CID, reason: String, willRetry: Bool) {
            self.paths = paths
            self.cid = cid
            self.reason = reason
            self.willRetry = willRetry
        }
    }

    /// An empty report.
    public init() {}

    /// Pinned in this pass.
    public var pinned: [Pinned] = []
    /// Not pinned in this pass.
    public var problems: [Problem] = []

    /// Files' bytes pinned.
    public var bytes: UInt64 { pinned.reduce(0) { $0 + $1.bytes } }
    /// Files pinned.
    public var files: Int { pinned.reduce(0) { $0 + $1.files } }
}

/// Progress of a pinning pass, for a progress bar.
public enum PinEvent: Sendable {
    /// The node has read `bytes` of the job's entry `name` so far (cumulative per entry).
    case uploaded(jobID: String, name: String, bytes: UInt64)
    /// The job is pinned.
    case pinned(PinJob)
    /// The job did not finish.
    case problem(PinJob, String)
}

/// Pins files through the journal: queue (local CID, durable) → one CAR → root verified and pinned → done.
///
/// ```
/// enqueue(paths) ─► UnixFSImporter (local CID) ─► journal "queue" (fsync)
/// process()      ─► each pending job ─► sent before? ─ yes ─► pin/ls, block/stat root ─ held ─► pin/add ─┐
///                        │                                                    └─ not held ─┐            │
///                        └─ no ─► journal "send" ─► dag/import (CAR built while sent, pin-roots) ─► root named? ─► journal "done"
///                                    └─ node without dag/import (404): add (CIDs checked) ─► pin/add ─┘
///                          └─ transient failure: stays pending for the next run / --retry
/// ```
/// A job is one file or a whole batch (a folder, `--wrap`) under one root: one request either way.
/// Jobs are idempotent (content-addressed), so a job re-run after a crash pins the same CID
/// again, which the node's pin set absorbs.
public struct Pinner: Sendable {
    /// The node.
    public let client: KuboClient
    /// The journal.
    public let journal: PinJournal
    /// DAG settings for new jobs.
    public let options: ImportOptions
    /// Jobs uploaded at once.
    public let concurrency: Int
    /// Set once the node answered `dag/import` with 404: every later job goes by `add`.
    private let nodeLacksDagImport = NIOLockedValueBox(false)
    private let logger = Logger(label: "granite.ipfs.pinner")

    /// A pinner for `client` recording into `journal`.
    public init(client: KuboClient, journal: PinJournal, options: ImportOptions, concurrency: Int = 4) throws(IPFSError) {
        try options.validate()
        self.client = client
        self.journal = journal
        self.options = options
        self.concurrency = max(1, concurrency)
    }

    /// Computes the local CIDs of `paths` and journals them durably; nothing is uploaded yet.
    ///
    /// One job per path, or one for all of them with `wrapWithDirectory`. With `carPath`, the
    /// DAG is also exported as a CARv1 file.
    public func enqueue(paths: [String], carPath: String? = nil) throws(PinError) -> [PinJob] {
        try enqueueImport(paths: paths, options: options, carPath: carPath).jobs
    }

    /// ``enqueue(paths:carPath:)`` with other import `options` (e.g. wrapped in a directory),
    /// returning the local import too (every entry's CID), so nothing is hashed twice.
    public func enqueueImport(paths: [String], options: ImportOptions, carPath: String? = nil) throws(PinError) -> (jobs: [PinJob], result: ImportResult) {
        let absolute = paths.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        let result: ImportResult
        do { result = try UnixFSImporter(options: options).importPaths(absolute, carPath: carPath) } catch { throw .files(error) }
        let now = Date().timeIntervalSince1970
        let jobs: [PinJob]
        func files(under root: ImportedEntry) -> Int {
            result.entries.filter { !$0.isDirectory && (root.name.isEmpty || $0.name == root.name || $0.name.hasPrefix(root.name + "/")) }.count
        }
        if options.wrapWithDirectory {
            let root = result.roots[0]
            jobs = [PinJob(id: UUID().uuidString, paths: absolute, cid: root.cid, options: options,
                           bytes: root.contentSize, files: files(under: root), queuedAt: now)]
        } else {
            jobs = zip(absolute, result.roots).map { path, root in
                PinJob(id: UUID().uuidString, paths: [path], cid: root.cid, options: options,
                       bytes: root.contentSize, files: files(under: root), queuedAt: now)
            }
        }
        do { try journal.enqueue(jobs) } catch { throw .journal(error) }
        return (jobs, result)
    }

    /// Runs every pending job of the journal (this process's and earlier ones), `concurrency` at a time.
    public func process(progress: (@Sendable (PinEvent) -> Void)? = nil) async throws(PinError) -> PinReport {
        let pending: [PinJob], sent: Set<String>
        do { (pending, sent) = (try journal.state().pending, try journal.sentIDs()) } catch { throw .journal(error) }
        let journal = self.journal
        // The group's children never throw (each job's outcome is a Result), so a plain task group
        // serves and the one failure of the pass itself, the journal's, comes out as a Result too.
        let outcome = await withTaskGroup(of: (PinJob, Result<Void, PinError>).self) { group -> Result<PinReport, PinError> in
            var report = PinReport()
            var next = 0
            func launch() {
                guard next < pending.count else { return }
                let job = pending[next]
                next += 1
                group.addTask {
                    (job, await Self.result { () async throws(PinError) in try await run(job, sentBefore: sent.contains(job.id), progress: progress) })
                }
            }
            for _ in 0..<concurrency { launch() }
            while let (job, result) = await group.next() {
                switch result {
                case .success:
                    report.pinned.append(.init(paths: job.paths, cid: job.cid, bytes: job.bytes, files: job.files))
                    progress?(.pinned(job))
                case let .failure(error):
                    if error.isPermanent {
                        do throws(PinJournalError) { try journal.markFailed(job.id, reason: "\(error)") } catch {
                            group.cancelAll()
                            return .failure(.journal(error))
                        }
                    }
                    report.problems.append(.init(paths: job.paths, cid: job.cid, reason: "\(error)", willRetry: !error.isPermanent))
                    progress?(.problem(job, "\(error)"))
                }
                launch()
            }
            return .success(report)
        }
        // The pass's "done" records, written without waiting for a sync each, become durable here.
        do { try journal.sync() } catch { throw .journal(error) }
        return try outcome.get()
    }

    /// Queues `paths` and processes everything pending.
    public func pin(paths: [String], carPath: String? = nil,
                    progress: (@Sendable (PinEvent) -> Void)? = nil) async throws(PinError) -> PinReport {
        _ = try enqueue(paths: paths, carPath: carPath)
        return try await process(progress: progress)
    }

    /// One job: its DAG as one CAR (or, on a node without `dag/import`, add + pin/add), the root
    /// verified against the queued one, then journaled done.
    private func run(_ job: PinJob, sentBefore: Bool, progress: (@Sendable (PinEvent) -> Void)?) async throws(PinError) {
        guard !Task.isCancelled else { throw .cancelled }
        let present = job.paths.allSatisfy { FileManager.default.fileExists(atPath: $0) }
        if present, !nodeLacksDagImport.withLockedValue({ $0 }) {
            switch await Self.result({ () async throws(PinError) in try await importCAR(job, sentBefore: sentBefore, progress: progress) }) {
            case .success:
                do { try journal.markDone(job.id, cid: job.cid) } catch { throw .journal(error) }
                return
            case let .failure(error) where error.nodeLacksDagImport:
                nodeLacksDagImport.withLockedValue { $0 = true }
                logger.info("node has no dag/import; adding file by file", metadata: ["node": "\(client.endpoint)"])
            case let .failure(error):
                throw error
            }
        }
        if present {
            // The root CID from queue time is the check: a Merkle root covers every block below
            // it, so the files are not hashed a second time unless the node disagrees.
            let name = job.options.wrapWithDirectory ? "" : URL(fileURLWithPath: job.paths[0]).lastPathComponent
            let root = ImportedEntry(name: name, cid: job.cid, dagSize: 0, contentSize: job.bytes,
                                     isDirectory: job.options.wrapWithDirectory)
            let id = job.id
            var onProgress: (@Sendable (AddProgress) -> Void)?
            if let progress { onProgress = { progress(.uploaded(jobID: id, name: $0.name, bytes: $0.bytes)) } }
            do {
                // pin=false: only the verified CID gets pinned, by the pin/add below.
                _ = try await client.add(paths: job.paths, options: job.options, pin: false,
                                         expected: ImportResult(entries: [root], roots: [root]), progress: onProgress)
            } catch {
                guard case .cidMismatch = error else { throw .node(error) }
                let now: [CID]
                do { now = try UnixFSImporter(options: job.options).importPaths(job.paths).roots.map(\.cid) } catch { throw .files(error) }
                if now != [job.cid] {
                    throw .contentChanged(paths: job.paths, queued: job.cid, now: now.map(\.description).joined(separator: ","))
                }
                throw .node(error)
            }
        } else {
            logger.info("source gone; pinning by CID only", metadata: ["cid": "\(job.cid)"])
        }
        let pins: [CID]
        do { pins = try await client.pinAdd(job.cid) } catch { throw .node(error) }
        guard pins.contains(job.cid) else {
            throw .node(.badResponse(node: client.endpoint.baseURL, command: "pin/add", reason: "answer does not list \(job.cid)"))
        }
        do { try journal.markDone(job.id, cid: job.cid) } catch { throw .journal(error) }
    }

    /// The job's DAG to the node as one CAR with its root pinned; a job an earlier attempt began
    /// sending is first looked for on the node (pinned, or its root block held: pinned offline).
    private func importCAR(_ job: PinJob, sentBefore: Bool, progress: (@Sendable (PinEvent) -> Void)?) async throws(PinError) {
        if sentBefore {
            if (try? await client.isPinned(job.cid)) == true { return }
            if (try? await client.hasBlock(job.cid)) == true,
               let pins = try? await client.pinAdd(job.cid, offline: true), pins.contains(job.cid) {
                return
            }
        }
        do { try journal.markSent(job.id) } catch { throw .journal(error) }
        let id = job.id, name = job.options.wrapWithDirectory ? "" : URL(fileURLWithPath: job.paths[0]).lastPathComponent
        var onProgress: (@Sendable (UInt64) -> Void)?
        if let progress { onProgress = { progress(.uploaded(jobID: id, name: name, bytes: $0)) } }
        do {
            try await client.dagImport(paths: job.paths, options: job.options, root: job.cid, bytes: job.bytes, progress: onProgress)
        } catch {
            if case let .local(.rootChanged(_, now)) = error {
                throw .contentChanged(paths: job.paths, queued: job.cid, now: now)
            }
            throw .node(error)
        }
    }

    /// The outcome of `body` as a Result (typed: `Result(catching:)` has no async form).
    static func result<Success>(_ body: () async throws(PinError) -> Success) async -> Result<Success, PinError> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }
}

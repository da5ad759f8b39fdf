import Foundation
import GraniteMedia
#if canImport(Glibc)
import Glibc
#endif

/// One output queued for pinning: what to add and the root CID it must have.
public struct PinJob: Sendable, Hashable, Codable {
    /// Unique id of this job.
    public var id: String
    /// Absolute paths added together (one, or several wrapped in a directory).
    public var paths: [String]
    /// The root CID computed locally when the job was queued.
    public var cid: CID
    /// DAG settings the CID was computed with (sent to the node).
    public var options: ImportOptions
    /// File bytes under the root.
    public var bytes: UInt64
    /// Files (and symlinks) under the root.
    public var files: Int
    /// Seconds since 1970 when queued.
    public var queuedAt: Double
}

/// Errors of the pin journal.
public enum PinJournalError: Error, Equatable, CustomStringConvertible {
    /// The journal could not be opened or created.
    case open(path: String, reason: String)
    /// An append or sync failed: the record is not durable.
    case write(path: String, reason: String)
    /// A record in the middle of the journal does not parse.
    case corrupt(path: String, line: Int)

    /// A one-line message naming what failed and why.
    public var description: String {
        switch self {
        case let .open(path, reason): "cannot open pin journal '\(path)': \(reason)"
        case let .write(path, reason): "cannot write pin journal '\(path)': \(reason)"
        case let .corrupt(path, line): "pin journal '\(path)' line \(line) is not a valid record"
        }
    }
}

/// A durable, append-only JSON-lines journal of pin jobs: nothing queued is ever lost.
///
/// ```
/// {"op":"queue","job":{…}}      written and fsynced before any upload
/// {"op":"done","id":…,"cid":…}  only after pin/add succeeded and the CID matched
/// {"op":"fail","id":…,"reason":…}  for jobs no retry can finish (content changed, gone)
/// {"op":"send","id":…}          the job's CAR stream is about to go to the node (`dag/import`)
/// ```
/// A job (one file, or a whole batch under one root) goes to the node as one CAR; a later run
/// that finds its "send" record asks the node for the root first (`pin/ls`, `block/stat`) and
/// re-sends nothing the node holds.
/// Remote pinning (``RemotePinner``) adds, per job and pinning service:
/// ```
/// {"op":"remote","id":…,"service":URL}                 wanted there: written before the first POST
/// {"op":"remote-request","id":…,"service":…,"requestid":…}  the service's request id, right after its answer
/// {"op":"remote-done"|"remote-fail","id":…,"service":…[,"reason":…]}
/// ```
/// so a run killed or stopped while the service works resumes with `GET /pins/{requestid}`
/// instead of a second `POST /pins`.
///
/// Every append holds an exclusive `flock`, so several processes (`granite pin`, a camera's
/// relay) can share one journal. State is replayed from the file on each read; a torn last
/// line (a crash mid-append) is ignored and a newline is written before the next record.
public final class PinJournal: Sendable {
    /// The journal file.
    public let path: String

    private struct Record: Codable {
        var op: String
        var job: PinJob?
        var id: String?
        var cid: CID?
        var reason: String?
        /// Remote records: the pinning service's URL and its request id.
        var service: String?
        var requestid: String?
    }

    /// Opens (creating it and its folder if needed) the journal at `path`.
    public init(path: String) throws(PinJournalError) {
        self.path = path
        let dir = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: dir.isEmpty ? "." : dir, withIntermediateDirectories: true)
        } catch {
            throw PinJournalError.open(path: path, reason: "cannot create its folder")
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw PinJournalError.open(path: path, reason: String(cString: strerror(errno))) }
        close(fd)
    }

    /// `$GRANITE_PIN_JOURNAL`, else `$XDG_STATE_HOME/granite/pins.jsonl`, else `~/.local/state/granite/pins.jsonl`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let path = environment["GRANITE_PIN_JOURNAL"], !path.isEmpty { return path }
        let state = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
        return state + "/granite/pins.jsonl"
    }

    /// Records `jobs` as queued; durable when this returns.
    public func enqueue(_ jobs: [PinJob]) throws(PinJournalError) {
        try append(jobs.map { Record(op: "queue", job: $0) })
    }

    /// Records job `id` as pinned with `cid`. Written at once but not synced at once: the next
    /// durable record or ``sync()`` makes it durable. A crash before that leaves the job pending,
    /// so a later run pins the same CID again, which the node's pin set absorbs (jobs are
    /// idempotent); waiting for an fsync per pinned job would cost more than that rare re-pin.
    public func markDone(_ id: String, cid: CID) throws(PinJournalError) {
        try append([Record(op: "done", id: id, cid: cid)], durable: false)
    }

    /// Records that job `id`'s CAR is being sent. Not synced: without it a later run only sends
    /// again what it would have checked first.
    public func markSent(_ id: String) throws(PinJournalError) {
        try append([Record(op: "send", id: id)], durable: false)
    }

    /// The jobs with a "send" record: sent (in part or whole) by an earlier attempt.
    public func sentIDs() throws(PinJournalError) -> Set<String> {
        let records = try withLock(LOCK_SH) { _ throws(PinJournalError) in try readRecords() }
        return Set(records.filter { $0.op == "send" }.compactMap(\.id))
    }

    /// Makes every record written so far durable (one fsync, none when nothing is pending).
    public func sync() throws(PinJournalError) {
        try syncs.waitDurable(syncs.latest(), sync: syncFile)
    }

    /// Records job `id` as failed for good, with the reason.
    public func markFailed(_ id: String, reason: String) throws(PinJournalError) {
        try append([Record(op: "fail", id: id, reason: reason)])
    }

    /// Records that `ids` are wanted on the pinning service `service`; durable when this returns.
    public func wantRemote(_ ids: [String], service: String) throws(PinJournalError) {
        try append(ids.map { Record(op: "remote", id: $0, service: service) })
    }

    /// Records the service's request id for job `id`; durable when this returns.
    public func recordRemoteRequest(_ id: String, service: String, requestID: String) throws(PinJournalError) {
        try append([Record(op: "remote-request", id: id, service: service, requestid: requestID)])
    }

    /// Records job `id` as pinned on `service`.
    public func markRemoteDone(_ id: String, service: String) throws(PinJournalError) {
        try append([Record(op: "remote-done", id: id, service: service)])
    }

    /// Records job `id` as failed on `service`, with the service's reason.
    public func markRemoteFailed(_ id: String, service: String, reason: String) throws(PinJournalError) {
        try append([Record(op: "remote-fail", id: id, reason: reason, service: service)])
    }

    /// Where each job wanted on `service` stands there (queue order).
    public func remoteState(service: String) throws(PinJournalError) -> [RemoteJobState] {
        let records = try withLock(LOCK_SH) { _ throws(PinJournalError) in try readRecords() }
        return Self.replayRemote(records).filter { $0.service == service }
    }

    private static func replayRemote(_ records: [Record]) -> [RemoteJobState] {
        var jobs: [String: PinJob] = [:]
        var order: [String] = []
        var states: [String: RemoteJobState] = [:]
        for record in records {
            if record.op == "queue", let job = record.job { jobs[job.id] = job; continue }
            guard let id = record.id, let service = record.service, let job = jobs[id] else { continue }
            let key = service + "\u{0}" + id
            switch record.op {
            case "remote":
                if states[key] == nil { order.append(key) }
                if states[key] == nil || states[key]?.outcome != .pinned {
                    states[key] = RemoteJobState(job: job, service: service, requestID: states[key]?.requestID, outcome: .pending)
                }
            case "remote-request": states[key]?.requestID = record.requestid
            case "remote-done": states[key]?.outcome = .pinned
            case "remote-fail": states[key]?.outcome = .failed(record.reason ?? "")
            default: break
            }
        }
        return order.compactMap { states[$0] }
    }

    /// The journal replayed: jobs still pending (queue order), done, and failed with reasons.
    public func state() throws(PinJournalError) -> (pending: [PinJob], done: [PinJob], failed: [(PinJob, String)]) {
        Self.replay(try withLock(LOCK_SH) { _ throws(PinJournalError) in try readRecords() })
    }

    private static func replay(_ records: [Record]) -> (pending: [PinJob], done: [PinJob], failed: [(PinJob, String)]) {
        var jobs: [String: PinJob] = [:]
        var order: [String] = []
        var done = Set<String>()
        var failed: [String: String] = [:]
        for record in records {
            switch record.op {
            case "queue":
                if let job = record.job, jobs.updateValue(job, forKey: job.id) == nil { order.append(job.id) }
            case "done": if let id = record.id { done.insert(id); failed[id] = nil }
            case "fail": if let id = record.id, !done.contains(id) { failed[id] = record.reason ?? "" }
            default: break
            }
        }
        let all = order.compactMap { jobs[$0] }
        return (all.filter { !done.contains($0.id) && failed[$0.id] == nil },
                all.filter { done.contains($0.id) },
                all.compactMap { job in failed[job.id].map { (job, $0) } })
    }

    /// Rewrites the journal with only unfinished and failed jobs, through the project's one atomic
    /// writer (GraniteMedia's `AtomicWriter`: temporary file, fsync, rename, fsync of the folder).
    public func compact() throws(PinJournalError) {
        try withLock(LOCK_EX) { _ throws(PinJournalError) in
            let all = try readRecords()
            let (pending, done, failed) = Self.replay(all)
            var records = pending.map { Record(op: "queue", job: $0) }
            let sent = Set(all.filter { $0.op == "send" }.compactMap(\.id))
            records += pending.filter { sent.contains($0.id) }.map { Record(op: "send", id: $0.id) }
            for (job, reason) in failed {
                records.append(Record(op: "queue", job: job))
                records.append(Record(op: "fail", id: job.id, reason: reason))
            }
            // Jobs pinned here but still wanted on a pinning service keep their remote records.
            let remote = Self.replayRemote(all).filter { $0.outcome == .pending }
            let kept = Set(records.compactMap { $0.job?.id })
            for job in done where !kept.contains(job.id) && remote.contains(where: { $0.job.id == job.id }) {
                records.append(Record(op: "queue", job: job))
                records.append(Record(op: "done", id: job.id, cid: job.cid))
            }
            for state in remote {
                records.append(Record(op: "remote", id: state.job.id, service: state.service))
                if let requestID = state.requestID {
                    records.append(Record(op: "remote-request", id: state.job.id, service: state.service, requestid: requestID))
                }
            }
            let path = self.path
            let file = try AtomicWriter(path: path) { PinJournalError.write(path: path, reason: "\($1) \($0): \(String(cString: strerror($2)))") }
            try file.append(try encode(records))
            try file.commit()
        }
    }

    // MARK: - File access

    /// Appends `records` and, when `durable`, returns once they are on disk. Appends from several threads share
    /// fsyncs (group commit): each write is done under the file lock, then one thread syncs the
    /// file for every append written so far while the others wait for that sync, so N jobs
    /// finishing together cost about one fsync, not N — and no caller returns before its own
    /// records are durable.
    private func append(_ records: [Record], durable: Bool = true) throws(PinJournalError) {
        let bytes = try encode(records)
        try withLock(LOCK_EX) { _ throws(PinJournalError) in
            // Opened under the lock each time: compaction may have replaced the file. Opening
            // ends a torn last line (a crash mid-append) before ours; syncing is ours (group commit).
            try AppendLog(path: path, sync: .onRequest, failure: writeFailure).append(bytes)
        }
        let ticket = syncs.written()
        guard durable else { return }
        try syncs.waitDurable(ticket, sync: syncFile)
    }

    /// One fsync of the journal file (what ``GroupCommit`` shares among appends).
    private func syncFile() throws(PinJournalError) {
        try AppendLog.sync(path: path, failure: writeFailure)
    }

    /// A failed call on the journal as the journal's error.
    private var writeFailure: @Sendable (String, String, Int32) -> PinJournalError {
        { [path] _, operation, code in PinJournalError.write(path: path, reason: "\(operation): \(String(cString: strerror(code)))") }
    }

    private let syncs = GroupCommit()

    /// fsyncs done so far by this journal object (tests and benchmarks).
    var syncCount: Int { syncs.count }

    /// The records as JSON lines (GraniteMedia's `AppendLog` encoding, also for the compacted file).
    private func encode(_ records: [Record]) throws(PinJournalError) -> [UInt8] {
        var out: [UInt8] = []
        for record in records {
            do { out += try AppendLog<PinJournalError>.jsonLine(record) } catch { throw PinJournalError.write(path: path, reason: "\(error)") }
        }
        return out
    }

    private func readRecords() throws(PinJournalError) -> [Record] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PinJournalError.open(path: path, reason: "unreadable")
        }
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let decoder = JSONDecoder()
        var records: [Record] = []
        for (index, line) in lines.enumerated() where !line.isEmpty {
            if let record = try? decoder.decode(Record.self, from: Data(line)) {
                records.append(record)
            } else if line.starts(with: Array(#"{""#.utf8)) {
                // A record torn by a crash mid-append: its write never returned, so nobody was
                // told it was durable. Skip it.
                continue
            } else {
                throw PinJournalError.corrupt(path: path, line: index + 1)
            }
        }
        return records
    }

    private func withLock<T>(_ operation: Int32, _ body: (Int32) throws(PinJournalError) -> T) throws(PinJournalError) -> T {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw PinJournalError.open(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        while flock(fd, operation) != 0 {
            guard errno == EINTR else { throw PinJournalError.open(path: path, reason: "flock: \(String(cString: strerror(errno)))") }
        }
        return try body(fd)
    }
}

/// Where one job stands on one pinning service, replayed from the journal.
public struct RemoteJobState: Sendable, Equatable {
    /// How it ended there, if it has.
    public enum Outcome: Sendable, Equatable {
        /// Not pinned yet (no request, or the request is queued or pinning).
        case pending
        /// Pinned on the service.
        case pinned
        /// The service gave up on it (its reason, escaped).
        case failed(String)
    }

    /// The job (its root CID is what the service pins).
    public var job: PinJob
    /// The service's URL.
    public var service: String
    /// The service's request id, once a `POST /pins` was answered.
    public var requestID: String?
    /// How it ended.
    public var outcome: Outcome
}

/// Shares one fsync among the appends written while it was pending (group commit).
///
/// ```
/// append: write ─► ticket = ++written ─► synced ≥ ticket? ─ yes ─► durable
///                                            └ no: a sync running? ─ yes ─► wait for it, ask again
///                                                                   └ no ─► sync (covers all written) ─► synced = written then
/// ```
final class GroupCommit: @unchecked Sendable {
    private let condition = NSCondition()
    private var writtenCount: UInt64 = 0
    private var synced: UInt64 = 0
    private var syncing = false
    private var syncs = 0

    /// The ticket of an append whose write just returned.
    func written() -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        writtenCount += 1
        return writtenCount
    }

    /// The ticket of the newest append written (0: none yet).
    func latest() -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return writtenCount
    }

    /// fsyncs run so far.
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return syncs
    }

    /// Returns once a sync that started after append `ticket` was written has finished; runs
    /// `sync` itself when none is running.
    func waitDurable<Failure: Error>(_ ticket: UInt64, sync: () throws(Failure) -> Void) throws(Failure) {
        condition.lock()
        defer { condition.unlock() }
        while synced < ticket {
            if syncing {
                condition.wait()
                continue
            }
            syncing = true
            let covers = writtenCount
            condition.unlock()
            let result = Result { () throws(Failure) in try sync() }
            condition.lock()
            syncing = false
            syncs += 1
            if case .success = result { synced = max(synced, covers) }
            condition.broadcast()
            try result.get()
        }
    }
}

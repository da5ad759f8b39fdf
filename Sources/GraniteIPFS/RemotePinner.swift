import Foundation
import GraniteSync

/// What a remote pinning pass did (``RemotePinner/finish(origins:wait:onEvent:)``).
public struct RemoteOutcome: Sendable, Equatable {
    /// The service.
    public var service: String
    /// Jobs pinned there (this pass or earlier).
    public var pinned: [RemoteJobState] = []
    /// Jobs the service gave up on (their reasons in ``RemoteJobState/outcome``).
    public var failed: [RemoteJobState] = []
    /// Jobs not pinned yet (still queued or pinning, not requested, or not pinned locally yet).
    public var pending: [RemoteJobState] = []
    /// Why some are pending, when known (service text escaped).
    public var problem: String?
    /// True when the service refused the token: nothing more was tried.
    public var tokenRefused = false
}

/// Progress of a remote pinning pass.
public enum RemotePinEvent: Sendable {
    /// The service accepted the request for the job (or an earlier run's request was found).
    case requested(PinJob, RemotePin)
    /// The request moved on (queued → pinning → pinned | failed).
    case status(PinJob, RemotePin)
}

/// Pins journaled jobs' root CIDs on a pinning service, through the journal, so nothing is
/// requested twice.
///
/// ```
/// want(jobs) ─► journal "remote" (fsync)
/// finish()   ─► each wanted job pinned locally ─► no request id? ─► (earlier run: GET /pins?cid= first)
///                                                                  ─► POST /pins ─► journal "remote-request"
///            ─► poll GET /pins?cid=… (10 at a time; GET /pins/{id} for one missing) with back-off
///                 ─► pinned: journal "remote-done"   failed: "remote-fail"
///            ─► ends when all are final, or after `wait` without a change (the rest stays journaled)
/// ```
/// A run killed after its POST finds the request id in the journal and only asks for its status.
/// The token refused (401/403) stops the pass at once.
public final class RemotePinner: Sendable {
    /// The service.
    public let client: PinningServiceClient
    /// The journal (shared with the local ``Pinner``).
    public let journal: PinJournal
    /// Requests in flight at once.
    public let concurrency: Int
    /// First pause between status polls; grows 1.5× per poll up to ``pollMax``.
    public let pollInitial: Duration
    /// Longest pause between status polls.
    public let pollMax: Duration
    private let wantedHere = Locked<Set<String>>([])

    /// A pinner for `client`'s service recording into `journal`.
    public init(client: PinningServiceClient, journal: PinJournal, concurrency: Int = 8,
                pollInitial: Duration = .milliseconds(250), pollMax: Duration = .seconds(5)) {
        self.client = client
        self.journal = journal
        self.concurrency = max(1, concurrency)
        self.pollInitial = pollInitial
        self.pollMax = pollMax
    }

    /// Journals `jobs` as wanted on the service (those not wanted there already); durable when this returns.
    public func want(_ jobs: [PinJob]) throws(PinJournalError) {
        let known = Set(try journal.remoteState(service: client.service).map(\.job.id))
        let new = jobs.map(\.id).filter { !known.contains($0) }
        wantedHere.withLock { $0.formUnion(new) }
        if !new.isEmpty { try journal.wantRemote(new, service: client.service) }
    }

    /// Requests every wanted job that is pinned locally and polls them until each is final, or
    /// until `wait` passes without any change. `origins`: the local node's multiaddrs (provider
    /// hints for the service). Never throws: what is left stays journaled.
    public func finish(origins: [String], wait: Duration,
                       onEvent: (@Sendable (RemotePinEvent) -> Void)? = nil) async -> RemoteOutcome {
        let service = client.service
        var result = RemoteOutcome(service: service)
        let wanted: [RemoteJobState]
        let localDone: Set<String>
        do {
            wanted = try journal.remoteState(service: service).filter { $0.outcome == .pending }
            localDone = Set(try journal.state().done.map(\.id))
        } catch {
            result.problem = "\(error)"
            return tally(result)
        }
        let ready = wanted.filter { localDone.contains($0.job.id) }
        if ready.count < wanted.count {
            result.problem = "\(wanted.count - ready.count) not pinned on the local node yet (the service fetches from it)"
        }
        let (client, journal) = (self.client, self.journal)
        let flags = PassFlags()
        let note: @Sendable (PinningServiceError) -> Void = { error in
            if case .tokenRefused = error { flags.refused.withLock { $0 = true } }
            flags.problem.withLock { $0 = "\(error)" }
        }

        // 1. A request id for each (POST, or an earlier run's request found by CID).
        let unrequested = ready.filter { $0.requestID == nil }
        let here = wantedHere.withLock { $0 }
        await forEach(unrequested, stop: { flags.refused.withLock { $0 } }) { state in
            do {
                var pin: RemotePin?
                if !here.contains(state.job.id) {
                    // An earlier run may have been killed between the service's answer and the journal.
                    pin = try await client.list(cids: [state.job.cid], statuses: [.queued, .pinning, .pinned], limit: 1).pins.first
                }
                if pin == nil { pin = try await client.add(state.job.cid, name: Self.name(of: state.job), origins: origins) }
                guard let pin else { return }
                try journal.recordRemoteRequest(state.job.id, service: service, requestID: pin.requestID)
                onEvent?(.requested(state.job, pin))
            } catch let error as PinningServiceError {
                note(error)
            } catch {
                flags.problem.withLock { $0 = "\(error)" }
            }
        }

        // 2. Poll until final, or no change for `wait`.
        var active: [String: RemoteJobState] = [:]   // by request id
        if let states = try? journal.remoteState(service: service) {
            for state in states where state.outcome == .pending && localDone.contains(state.job.id) {
                if let id = state.requestID { active[id] = state }
            }
        }
        var lastSeen: [String: RemotePin.Status] = [:]
        var lastChange = ContinuousClock.now
        var pause = pollInitial
        while !active.isEmpty, !flags.refused.withLock({ $0 }) {
            let batches = stride(from: 0, to: active.count, by: 10).map { Array(active.values.sorted { $0.job.queuedAt < $1.job.queuedAt }[$0..<min($0 + 10, active.count)]) }
            let seen = PassFlags()
            let snapshot = active
            await forEach(batches, stop: { flags.refused.withLock { $0 } }) { batch in
                do {
                    let ids = Set(batch.compactMap(\.requestID))
                    let listed = try await client.list(cids: batch.map(\.job.cid), statuses: Set(RemotePin.Status.allCases), limit: 1000)
                    var found = listed.pins.filter { ids.contains($0.requestID) }
                    for id in ids.subtracting(found.map(\.requestID)) {   // past the list's first page, or gone
                        found.append(try await client.status(id))
                    }
                    seen.seen.withLock { all in for pin in found { all[pin.requestID] = pin } }
                } catch let error as PinningServiceError {
                    if case let .notFound(_, requestID) = error, let state = snapshot[requestID] {
                        try? journal.markRemoteFailed(state.job.id, service: service, reason: "the service no longer knows request \(requestID)")
                    }
                    note(error)
                } catch {
                    flags.problem.withLock { $0 = "\(error)" }
                }
            }
            for (id, pin) in seen.seen.withLock({ $0 }) {
                guard let state = active[id] else { continue }
                if lastSeen[id] != pin.status {
                    lastSeen[id] = pin.status
                    lastChange = .now
                    onEvent?(.status(state.job, pin))
                }
                switch pin.status {
                case .pinned:
                    do { try journal.markRemoteDone(state.job.id, service: service); active[id] = nil } catch { flags.problem.withLock { $0 = "\(error)" } }
                case .failed:
                    do {
                        try journal.markRemoteFailed(state.job.id, service: service, reason: pin.details ?? "the service reports the pin failed")
                        active[id] = nil
                    } catch { flags.problem.withLock { $0 = "\(error)" } }
                case .queued, .pinning:
                    break
                }
            }
            if active.isEmpty { break }
            let left = lastChange + wait - .now
            if left <= .zero {
                flags.problem.withLock { $0 = "no progress on pinning service \(service) for \(wait): \(active.count) still queued or pinning" }
                break
            }
            try? await Task.sleep(for: min(pause, left))
            pause = min(pause * 1.5, pollMax)
        }
        result.problem = flags.problem.withLock { $0 } ?? result.problem
        result.tokenRefused = flags.refused.withLock { $0 }
        return tally(result, considered: Set(wanted.map(\.job.id)))
    }

    /// Fills the outcome's lists from the journal: this run's jobs and those earlier runs left pending.
    private func tally(_ outcome: RemoteOutcome, considered: Set<String> = []) -> RemoteOutcome {
        var outcome = outcome
        let states = (try? journal.remoteState(service: client.service)) ?? []
        let mine = wantedHere.withLock { $0 }.union(considered)
        for state in states {
            switch state.outcome {
            case .pinned: if mine.contains(state.job.id) { outcome.pinned.append(state) }
            case .failed: if mine.contains(state.job.id) { outcome.failed.append(state) }
            case .pending: outcome.pending.append(state)
            }
        }
        if outcome.pending.isEmpty, outcome.failed.isEmpty { outcome.problem = nil }
        return outcome
    }

    /// The name sent with a job: its file or folder name.
    static func name(of job: PinJob) -> String? {
        guard job.paths.count == 1 else { return nil }
        return URL(fileURLWithPath: job.paths[0]).lastPathComponent
    }

    /// Runs `body` on each item, `concurrency` at a time, starting no new one once `stop()` is true.
    private func forEach<T: Sendable>(_ items: [T], stop: @escaping @Sendable () -> Bool,
                                      _ body: @escaping @Sendable (T) async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            var next = 0
            func launch() {
                guard next < items.count, !stop() else { return }
                let item = items[next]
                next += 1
                group.addTask { await body(item) }
            }
            for _ in 0..<max(1, concurrency) { launch() }
            while await group.next() != nil { launch() }
        }
    }
}

/// The shared state of one pass's concurrent requests.
private final class PassFlags: Sendable {
    let problem = Locked<String?>(nil)
    let refused = Locked(false)
    let seen = Locked<[String: RemotePin]>([:])
}

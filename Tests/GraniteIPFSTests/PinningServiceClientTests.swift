import Foundation
import XCTest
@testable import GraniteIPFS

/// `PinningServiceClient` (the generated client behind typed errors) against the project's test
/// pinning service, which checks every request and answer against openapi.yaml, with the Kubo
/// test node as the origin the service fetches from.
final class PinningServiceClientTests: XCTestCase {
    /// Add → queued/pinning → pinned (the service found the CID at the origin the node's `id`
    /// gives), list, remove; a CID nobody has ends failed with the service's reason.
    func testLifecycleAgainstTheSpecCheckedService() async throws {
        let node = try KuboStandin(test: self)
        let kubo = try node.client()
        let data = TestSupport.bytes(5_000, seed: 41)
        let added0 = try await kubo.add(data: data, name: "a.bin", options: .init())
        let cid = try XCTUnwrap(added0.first?.cid)
        let origins = try await kubo.id().addresses
        XCTAssertEqual(origins.count, 1)
        XCTAssertTrue(origins[0].hasPrefix("/ip4/127.0.0.1/tcp/") && origins[0].contains("/p2p/"), origins[0])

        let service = try PinningServiceStandin(["--pin-delay", "0.3"], test: self)
        let client = try service.client()
        let added = try await client.add(cid, name: "a.bin", origins: origins, meta: ["app": "granite"])
        XCTAssertEqual(added.status, .queued)
        XCTAssertEqual(added.cid, cid.description)
        XCTAssertEqual(added.name, "a.bin")
        var status = added
        for _ in 0..<50 where !status.status.isFinal {
            try await Task.sleep(for: .milliseconds(50))
            status = try await client.status(added.requestID)
        }
        XCTAssertEqual(status.status, .pinned)

        let missing = try CID(UnixFSImporter(options: .init()).cid(of: Array("nobody has this".utf8)).description)
        let lost = try await client.add(missing, origins: origins)
        try await Task.sleep(for: .milliseconds(400))
        let failed = try await client.status(lost.requestID)
        XCTAssertEqual(failed.status, .failed)
        XCTAssertEqual(failed.details, "CID not found at 1 origin(s)")

        let listed = try await client.list(statuses: [.pinned])
        XCTAssertEqual(listed.pins.map(\.requestID), [added.requestID])
        let byCID = try await client.list(cids: [missing], statuses: Set(RemotePin.Status.allCases))
        XCTAssertEqual(byCID.count, 1)
        try await client.remove(added.requestID)
        let afterRemove = try await client.list(statuses: [.pinned])
        XCTAssertEqual(afterRemove.count, 0)
        do throws(PinningServiceError) {
            _ = try await client.status(added.requestID)
            XCTFail("a removed request")
        } catch {
            XCTAssertEqual(error, .notFound(service: service.url, requestID: added.requestID))
        }
        let requests = try service.requests()
        XCTAssertEqual(requests["POST /pins"], 2)
        XCTAssertEqual(requests["DELETE /pins/{requestid}"], 1)
    }

    /// 429 waits the service's Retry-After, 5xx backs off, both give up after the last try with
    /// a typed error; a slow service times out; a refused token is tried once and never printed.
    func testFaultsAreRetriedBoundedAndTyped() async throws {
        let cid = try UnixFSImporter(options: .init()).cid(of: Array("x".utf8))

        let limited = try PinningServiceStandin(["--rate-429", "1", "--retry-after", "1"], test: self)
        var started = ContinuousClock.now
        let limitedClient = try limited.client(tries: 2)
        do throws(PinningServiceError) {
            _ = try await limitedClient.add(cid)
            XCTFail("always 429")
        } catch {
            XCTAssertEqual(error, .rateLimited(service: limited.url, operation: "add", tries: 2))
        }
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(950), "Retry-After: 1 honoured")
        XCTAssertEqual(try limited.requests()["POST /pins"], 2)

        let failing = try PinningServiceStandin(["--rate-500", "1"], test: self)
        let failingClient = try failing.client(tries: 3)
        do throws(PinningServiceError) {
            _ = try await failingClient.status("any")
            XCTFail("always 500")
        } catch {
            guard case let .unavailable(service, operation, status, reason, tries) = error else { return XCTFail("\(error)") }
            XCTAssertEqual([service, operation, reason], [failing.url, "status", "INTERNAL_SERVER_ERROR: injected fault"])
            XCTAssertEqual([status, tries], [500, 3])
        }
        XCTAssertEqual(try failing.requests()["GET /pins/{requestid}"], 3)

        let slow = try PinningServiceStandin(["--latency-ms", "1500"], test: self)
        let slowClient = try slow.client(tries: 2, timeout: .milliseconds(300))
        started = ContinuousClock.now
        do throws(PinningServiceError) {
            _ = try await slowClient.list()
            XCTFail("too slow")
        } catch {
            XCTAssertEqual(error, .timeout(service: slow.url, operation: "list"))
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(3))

        let secret = "s3cr3t-TOKEN-value-0123456789"
        let refusing = try PinningServiceStandin(["--refuse-token"], token: secret, test: self)
        let refusingClient = try refusing.client()
        do throws(PinningServiceError) {
            _ = try await refusingClient.add(cid)
            XCTFail("token refused")
        } catch {
            guard case .tokenRefused(_, 401, _) = error else { return XCTFail("\(error)") }
            XCTAssertFalse("\(error)".contains(secret))
            XCTAssertFalse(String(reflecting: error).contains(secret))
            XCTAssertTrue("\(error)".contains("refused the access token"), "\(error)")
        }
        XCTAssertEqual(try refusing.requests()["POST /pins"], 1, "a refused token is not retried")
        XCTAssertEqual("\(PinningServiceToken(secret))", "<token>")
        XCTAssertFalse(String(reflecting: try refusing.client(token: secret)).contains(secret))
    }

    /// Token files: first line, trimmed; empty, unreadable or multi-word files are clear errors
    /// naming the file (never the content); the environment variable is the fallback.
    func testTokenResolution() throws {
        let dir = try TestSupport.tempDir(self)
        let file = try TestSupport.write(Array("  abc.DEF-123  \nsecond line\n".utf8), to: dir, "token")
        XCTAssertEqual(try PinningServiceToken.resolve(file: file, service: "s", environment: [:]).secret, "abc.DEF-123")
        XCTAssertEqual(try PinningServiceToken.resolve(file: nil, service: "s", environment: ["GRANITE_PIN_SERVICE_TOKEN": "env-1\n"]).secret, "env-1")
        XCTAssertThrowsError(try PinningServiceToken.resolve(file: nil, service: "https://x", environment: [:])) { error in
            XCTAssertEqual(error as? PinningServiceError, .noToken(service: "https://x"))
        }
        let empty = try TestSupport.write([], to: dir, "empty")
        XCTAssertThrowsError(try PinningServiceToken.resolve(file: empty, service: "s", environment: [:])) { error in
            XCTAssertEqual(error as? PinningServiceError, .badTokenFile(path: empty, reason: "it is empty"))
        }
        let spaced = try TestSupport.write(Array("two words".utf8), to: dir, "spaced")
        XCTAssertThrowsError(try PinningServiceToken.resolve(file: spaced, service: "s", environment: [:])) { error in
            XCTAssertFalse("\(error)".contains("two words"))
        }
        XCTAssertThrowsError(try PinningServiceToken.resolve(file: dir.path + "/none", service: "s", environment: [:]))
        XCTAssertThrowsError(try PinningServiceClient(service: "ftp://x", token: .init("t")))
        XCTAssertThrowsError(try PinningServiceClient(service: "https://user:pw@x", token: .init("t")))
        XCTAssertEqual(try PinningServiceClient(service: "https://x.example/psa/", token: .init("t")).service, "https://x.example/psa")
        XCTAssertEqual(ServiceMiddleware.retryAfter("7"), .seconds(7))
        XCTAssertNil(ServiceMiddleware.retryAfter("soon"))
    }

    /// The journal's remote records replay to where each job stands, and compaction keeps
    /// the ones still wanted on a service.
    func testJournalRemoteRecordsReplayAndSurviveCompaction() throws {
        let dir = try TestSupport.tempDir(self)
        let journal = try PinJournal(path: dir.appendingPathComponent("pins.jsonl").path)
        let a = try TestSupport.write(Array("a".utf8), to: dir, "a.txt"), b = try TestSupport.write(Array("b".utf8), to: dir, "b.txt")
        let pinner = try Pinner(client: KuboClient(endpoint: .init(host: "127.0.0.1", port: 9)), journal: journal, options: .init())
        let jobs = try pinner.enqueue(paths: [a, b])
        for job in jobs { try journal.markDone(job.id, cid: job.cid) }
        try journal.wantRemote(jobs.map(\.id), service: "S")
        try journal.recordRemoteRequest(jobs[0].id, service: "S", requestID: "r0")
        try journal.recordRemoteRequest(jobs[1].id, service: "S", requestID: "r1")
        try journal.markRemoteDone(jobs[1].id, service: "S")
        XCTAssertEqual(try journal.remoteState(service: "S").map(\.outcome), [.pending, .pinned])
        XCTAssertEqual(try journal.remoteState(service: "S").map(\.requestID), ["r0", "r1"])
        XCTAssertEqual(try journal.remoteState(service: "other"), [])
        try journal.compact()
        let after = try journal.remoteState(service: "S")
        XCTAssertEqual(after.map(\.job.id), [jobs[0].id])
        XCTAssertEqual(after.first?.requestID, "r0")
        XCTAssertEqual(try journal.state().done.map(\.id), [jobs[0].id], "the job itself stays, done here")
    }
}

extension PinningServiceClientTests {
    /// A run killed between the service's answer to its POST and the journal write left a job
    /// wanted without a request id: the next run finds the request by CID instead of posting again.
    func testARequestAnEarlierRunDidNotJournalIsFoundNotRepeated() async throws {
        let dir = try TestSupport.tempDir(self)
        let file = try TestSupport.write(TestSupport.bytes(9_000, seed: 77), to: dir, "lost.bin")
        let node = try KuboStandin(test: self)
        let kubo = try node.client()
        _ = try await kubo.add(paths: [file], options: .init())
        let journal = try PinJournal(path: dir.appendingPathComponent("pins.jsonl").path)
        let job = try Pinner(client: kubo, journal: journal, options: .init()).enqueue(paths: [file])[0]
        try journal.markDone(job.id, cid: job.cid)
        let service = try PinningServiceStandin(["--pin-delay", "0.3"], test: self)
        try journal.wantRemote([job.id], service: service.url)            // the earlier run ...
        _ = try await service.client().add(job.cid, origins: try await kubo.id().addresses)   // ... and its POST

        let remote = RemotePinner(client: try service.client(), journal: journal, pollInitial: .milliseconds(50))
        let outcome = await remote.finish(origins: try await kubo.id().addresses, wait: .seconds(10))
        XCTAssertEqual(outcome.pinned.map(\.job.id), [job.id])
        XCTAssertNil(outcome.problem)
        let requests = try service.requests()
        XCTAssertEqual(requests["POST /pins"], 1, "found by CID, not posted again")
        XCTAssertGreaterThanOrEqual(requests["GET /pins"] ?? 0, 2)
    }
}

extension PinningServiceClientTests {
    /// A POST the service processed but answered 500 (`--rate-500-after`): the next try looks the
    /// CID up and adopts that request, so the service holds exactly one pin request per CID.
    func testAPostAnswered500AfterProcessingIsAdoptedNotRepeated() async throws {
        let importer = try UnixFSImporter(options: .init())
        let cids = try (0..<20).map { try importer.cid(of: Array("granite adopt \($0)".utf8)) }
        let service = try PinningServiceStandin(["--rate-500-after", "0.5", "--seed", "7", "--pin-delay", "60"], test: self)
        let client = try service.client()
        var requestIDs: Set<String> = []
        for cid in cids {
            let pin = try await client.add(cid, name: "adopt")
            XCTAssertEqual(pin.cid, cid.description)
            requestIDs.insert(pin.requestID)
        }
        let stats = try service.server.stats()
        XCTAssertGreaterThan(stats.faults["500-after"] ?? 0, 3, "the fault fired")
        XCTAssertEqual(stats.created, Dictionary(uniqueKeysWithValues: cids.map { ($0.description, 1) }),
                       "one pin request per CID")
        XCTAssertEqual(requestIDs.count, cids.count)
        XCTAssertEqual(stats.requests["POST /pins"], cids.count, "no second POST after a processed one")
        XCTAssertEqual(stats.requests["GET /pins"], stats.faults["500-after"], "one look-up per 500")

        // Every POST answered 500 after processing: still one request, the first try's.
        let always = try PinningServiceStandin(["--rate-500-after", "1", "--pin-delay", "60"], test: self)
        let pin = try await always.client().add(cids[0])
        let alwaysStats = try always.server.stats()
        XCTAssertEqual(alwaysStats.created, [cids[0].description: 1])
        XCTAssertEqual(alwaysStats.requests["POST /pins"], 1)
        let queued = try await always.client().list(statuses: [.queued])
        XCTAssertEqual(queued.pins.map(\.requestID), [pin.requestID])

        // A 429 was not processed: the retry posts again without a look-up.
        let limited = try PinningServiceStandin(["--rate-429", "0.5", "--retry-after", "0", "--seed", "3"], test: self)
        for cid in cids.prefix(5) { _ = try await limited.client().add(cid) }
        let limitedStats = try limited.server.stats()
        XCTAssertGreaterThan(limitedStats.faults["429"] ?? 0, 0)
        XCTAssertNil(limitedStats.requests["GET /pins"])
        XCTAssertEqual(limitedStats.created.count, 5)
        XCTAssertEqual(Set(limitedStats.created.values), [1])
    }
}

/// The pin journal's group commit: appends finishing together share fsyncs, none returns early.
final class PinJournalSyncTests: XCTestCase {
    /// Eight threads append in rounds (a barrier starts each round); a sync waits (on a condition,
    /// not a clock) until all eight appends of its round are written, so however the scheduler runs
    /// the threads, the first sync of a round covers some appends and the next one all the others:
    /// at most two syncs a round, 40 for 160 appends (at least 20), none returning early.
    func testConcurrentAppendsShareFsyncs() throws {
        let group = GroupCommit()
        let covered = Covered()   // the index of each finished sync
        let started = Atomic64()   // syncs begun
        let rounds = Rounds(parties: 8)
        // Eight real threads (concurrentPerform would use one per core: two here).
        let done = DispatchGroup()
        for _ in 0..<8 {
            done.enter()
            Thread {
                defer { done.leave() }
                for _ in 0..<20 {
                    rounds.start()
                    let before = started.load()
                    let ticket = group.written()
                    rounds.appended()
                    try? group.waitDurable(ticket) {
                        let index = started.increment()
                        rounds.waitUntilAllAppended()
                        covered.append(index)
                    }
                    // Returned only once a sync that began after this append began has finished.
                    XCTAssertTrue(covered.values.contains { $0 > before })
                }
            }.start()
        }
        done.wait()
        XCTAssertEqual(group.count, covered.values.count)
        XCTAssertLessThanOrEqual(group.count, 40, "160 appends in 20 rounds of 8: at most two syncs a round")
        XCTAssertGreaterThanOrEqual(group.count, 20, "every round needs a sync of its own")
        XCTAssertFalse(rounds.timedOut, "a sync waited 30 s for its round's appends")
    }

    func testJournalRecordsFromManyThreadsAreAllThere() throws {
        let dir = try TestSupport.tempDir(self)
        let journal = try PinJournal(path: dir.appendingPathComponent("pins.jsonl").path)
        let a = try TestSupport.write(Array("a".utf8), to: dir, "a.txt")
        let pinner = try Pinner(client: KuboClient(endpoint: .init(host: "127.0.0.1", port: 9)), journal: journal, options: .init())
        let jobs = try (0..<64).flatMap { _ in try pinner.enqueue(paths: [a]) }
        let queued = journal.syncCount
        XCTAssertGreaterThanOrEqual(queued, 1, "queue records are durable before any upload")
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for job in jobs[(worker * 8)..<(worker * 8 + 8)] { try? journal.markDone(job.id, cid: job.cid) }
        }
        XCTAssertEqual(Set(try journal.state().done.map(\.id)), Set(jobs.map(\.id)))
        // "done" records wait for the pass's one sync (a lost one only re-pins an idempotent CID).
        XCTAssertEqual(journal.syncCount, queued)
        try journal.sync()
        XCTAssertEqual(journal.syncCount, queued + 1)
        try journal.sync()
        XCTAssertEqual(journal.syncCount, queued + 1, "nothing written since: no fsync")
    }
}

/// A tiny lock-protected counter for the test above.
private final class Atomic64: @unchecked Sendable {
    private let lock = NSLock()
    private var value: UInt64 = 0
    func load() -> UInt64 { lock.lock(); defer { lock.unlock() }; return value }
    func increment() -> UInt64 { lock.lock(); defer { lock.unlock() }; value += 1; return value }
}

/// Rounds of appends: `start()` is a barrier for all parties, `appended()` counts the round's
/// appends, `waitUntilAllAppended()` returns once every party has appended in this round. A 30 s
/// safety limit only (recorded as `timedOut`), never the thing measured.
private final class Rounds: @unchecked Sendable {
    private let condition = NSCondition()
    private let parties: Int
    private var arrived = 0, generation = 0, appends = 0
    private(set) var timedOut = false
    init(parties: Int) { self.parties = parties }
    func start() {
        condition.lock()
        defer { condition.unlock() }
        let mine = generation
        arrived += 1
        if arrived == parties {
            arrived = 0; appends = 0; generation += 1
            condition.broadcast()
            return
        }
        while generation == mine { condition.wait() }
    }
    func appended() { condition.lock(); appends += 1; condition.broadcast(); condition.unlock() }
    func waitUntilAllAppended() {
        condition.lock()
        defer { condition.unlock() }
        let limit = Date().addingTimeInterval(30)
        while appends < parties {
            if !condition.wait(until: limit) { timedOut = true; return }
        }
    }
}

/// The syncs' coverage, recorded from several threads.
private final class Covered: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [UInt64] = []
    func append(_ value: UInt64) { lock.lock(); list.append(value); lock.unlock() }
    var values: [UInt64] { lock.lock(); defer { lock.unlock() }; return list }
}

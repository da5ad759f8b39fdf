import Foundation
import XCTest
@testable import GraniteIPFS

/// The journaled pinner against kubo-standin with its fault injection: every file ends up
/// pinned exactly once with the right CID, whatever the node does in between.
final class PinnerTests: XCTestCase {
    /// `count` files of varied sizes (some multi-chunk) in a fresh folder.
    private func makeFiles(_ count: Int) throws -> [String] {
        let dir = try TestSupport.tempDir(self)
        return try (0..<count).map { i in
            let size = i % 5 == 0 ? 262_144 * 2 + i : 700 + 97 * i
            return try TestSupport.write(TestSupport.bytes(size, seed: UInt64(100 + i)), to: dir, "frame-\(i).png")
        }
    }

    private func journal() throws -> PinJournal {
        try PinJournal(path: TestSupport.tempDir(self).appendingPathComponent("state/pins.jsonl").path)
    }

    /// Asserts: nothing pending or failed, one `done` record per job, and the node holds a
    /// recursive pin for each job's locally computed CID.
    private func assertAllPinnedOnce(_ journal: PinJournal, jobs: Int, client: KuboClient,
                                     file: StaticString = #filePath, line: UInt = #line) async throws {
        let state = try journal.state()
        XCTAssertEqual(state.pending.count, 0, "pending", file: file, line: line)
        XCTAssertEqual(state.failed.count, 0, "failed", file: file, line: line)
        XCTAssertEqual(state.done.count, jobs, file: file, line: line)
        let text = try String(contentsOfFile: journal.path, encoding: .utf8)
        let doneIDs = text.split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["op"] as? String == "done" }.compactMap { $0["id"] as? String }
        XCTAssertEqual(doneIDs.count, jobs, "one done record per job", file: file, line: line)
        XCTAssertEqual(Set(doneIDs).count, jobs, "no job done twice", file: file, line: line)
        let pins = try await client.pinLs(type: "recursive")
        for job in state.done {
            XCTAssertEqual(pins[job.cid.description], "recursive", "\(job.paths)", file: file, line: line)
            guard job.paths.allSatisfy({ FileManager.default.fileExists(atPath: $0) }) else { continue }
            let local = try UnixFSImporter(options: job.options).importPaths(job.paths).roots[0].cid
            XCTAssertEqual(job.cid, local, file: file, line: line)
        }
    }

    func testRandom500sAndLatency() async throws {
        let node = try KuboStandin(["--fail-rate", "0.3", "--seed", "3", "--latency-ms", "20"], test: self)
        let client = try node.client(attempts: 12)
        let journal = try journal()
        let pinner = try Pinner(client: client, journal: journal, options: .init(cidVersion: 1), concurrency: 4)
        let report = try await pinner.pin(paths: try makeFiles(20))
        XCTAssertEqual(report.pinned.count, 20)
        XCTAssertEqual(report.problems, [])
        try await assertAllPinnedOnce(journal, jobs: 20, client: try node.client(attempts: 12))
    }

    func testNodeGoingAwayMidBatchThenReturning() async throws {
        let repo = try TestSupport.tempDir(self)
        let first = try KuboStandin(["--down-after", "13"], repo: repo, test: self)
        var config = try first.client(attempts: 2).configuration
        config.connectTimeout = .milliseconds(300)
        config.readTimeout = .seconds(3)
        let journal = try journal()
        let files = try makeFiles(20)
        let client = KuboClient(endpoint: try KuboEndpoint(parsing: first.url), configuration: config)
        let report1 = try await Pinner(client: client, journal: journal, options: .init(cidVersion: 0), concurrency: 2)
            .pin(paths: files)
        XCTAssertGreaterThan(report1.pinned.count, 0)
        XCTAssertGreaterThan(report1.problems.count, 0)
        XCTAssertTrue(report1.problems.allSatisfy(\.willRetry), "\(report1.problems.map(\.reason))")
        XCTAssertEqual(report1.pinned.count + report1.problems.count, 20)
        XCTAssertEqual(try journal.state().pending.count, report1.problems.count)

        // The node comes back on the same port and repo; a new process finishes the journal.
        first.stop()
        let second = try KuboStandin([], port: first.port, repo: repo, test: self)
        let report2 = try await Pinner(client: try second.client(), journal: try PinJournal(path: journal.path),
                                       options: .init(cidVersion: 0)).process()
        XCTAssertEqual(report2.pinned.count, report1.problems.count)
        XCTAssertEqual(report2.problems, [])
        try await assertAllPinnedOnce(journal, jobs: 20, client: try second.client())
    }

    func testTruncatedStreamsStayPendingUntilTheNodeIsHealthy() async throws {
        let repo = try TestSupport.tempDir(self)
        let broken = try KuboStandin(["--truncate-after", "25"], repo: repo, test: self)
        let journal = try journal()
        let files = try makeFiles(3)
        let report1 = try await Pinner(client: try broken.client(attempts: 2), journal: journal, options: .init()).pin(paths: files)
        XCTAssertEqual(report1.pinned.count, 0)
        XCTAssertEqual(report1.problems.count, 3)
        XCTAssertTrue(report1.problems.allSatisfy(\.willRetry))
        broken.stop()
        let healthy = try KuboStandin([], repo: repo, test: self)
        let report2 = try await Pinner(client: try healthy.client(), journal: journal, options: .init()).process()
        XCTAssertEqual(report2.pinned.count, 3)
        try await assertAllPinnedOnce(journal, jobs: 3, client: try healthy.client())
    }

    func testWrongOrMissingAuthKeepsJobsPending() async throws {
        let node = try KuboStandin(["--auth", "bearer:right"], test: self)
        let journal = try journal()
        let files = try makeFiles(2)
        for auth in [nil, KuboAuth.bearer("wrong")] {
            let report = try await Pinner(client: try node.client(auth: auth), journal: journal, options: .init())
                .pin(paths: auth == nil ? files : [])
            XCTAssertEqual(report.pinned.count, 0)
            XCTAssertEqual(report.problems.count, 2)
            XCTAssertTrue(report.problems.allSatisfy { $0.willRetry && $0.reason.contains("403") })
            XCTAssertFalse(report.problems.contains { $0.reason.contains("right") || $0.reason.contains("wrong") })
        }
        let good = try node.client(auth: .bearer("right"))
        let report = try await Pinner(client: good, journal: journal, options: .init()).process()
        XCTAssertEqual(report.pinned.count, 2)
        try await assertAllPinnedOnce(journal, jobs: 2, client: good)
    }

    func testCrashAfterQueueingIsFinishedByTheNextRun() async throws {
        let node = try KuboStandin(test: self)
        let journal = try journal()
        let files = try makeFiles(4)
        // "Process 1" journals the jobs and dies before uploading, mid-way through an append.
        let jobs = try Pinner(client: try node.client(), journal: journal, options: .init(cidVersion: 0)).enqueue(paths: files)
        XCTAssertEqual(jobs.count, 4)
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: journal.path))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"id":"torn","op":"do"#.utf8))
        handle.closeFile()
        // "Process 2" opens the same journal and finishes.
        let reopened = try PinJournal(path: journal.path)
        XCTAssertEqual(try reopened.state().pending.map(\.id), jobs.map(\.id))
        let report = try await Pinner(client: try node.client(), journal: reopened, options: .init()).process()
        XCTAssertEqual(Set(report.pinned.map(\.cid)), Set(jobs.map(\.cid)))
        try await assertAllPinnedOnce(reopened, jobs: 4, client: try node.client())
        // Compaction keeps nothing finished; a garbage line in the middle is reported, not skipped.
        try reopened.compact()
        XCTAssertEqual(try String(contentsOfFile: journal.path, encoding: .utf8), "")
        try Data("garbage\n{}\n".utf8).write(to: URL(fileURLWithPath: journal.path))
        XCTAssertThrowsError(try reopened.state()) { XCTAssertEqual($0 as? PinJournalError, .corrupt(path: journal.path, line: 1)) }
    }

    func testChangedContentFailsForGoodAndIsReported() async throws {
        let node = try KuboStandin(test: self)
        let journal = try journal()
        let files = try makeFiles(2)
        let pinner = try Pinner(client: try node.client(), journal: journal, options: .init())
        let jobs = try pinner.enqueue(paths: files)
        try Data("changed".utf8).write(to: URL(fileURLWithPath: files[1]))
        let report = try await pinner.process()
        XCTAssertEqual(report.pinned.map(\.cid), [jobs[0].cid])
        XCTAssertEqual(report.problems.count, 1)
        XCTAssertFalse(report.problems[0].willRetry)
        XCTAssertTrue(report.problems[0].reason.contains("changed since queued"), report.problems[0].reason)
        let state = try journal.state()
        XCTAssertEqual(state.failed.map(\.0.id), [jobs[1].id])
        XCTAssertEqual(state.pending.count, 0)
    }

    func testMissingSourceIsPinnedByCIDWhenTheNodeHasIt() async throws {
        let node = try KuboStandin(test: self)
        let client = try node.client()
        let journal = try journal()
        let files = try makeFiles(1)
        _ = try await client.add(paths: files, options: .init(), pin: false)
        let jobs = try Pinner(client: client, journal: journal, options: .init()).enqueue(paths: files)
        try FileManager.default.removeItem(atPath: files[0])
        let report = try await Pinner(client: client, journal: journal, options: .init()).process()
        XCTAssertEqual(report.pinned.map(\.cid), jobs.map(\.cid))
        try await assertAllPinnedOnce(journal, jobs: 1, client: client)
    }
}

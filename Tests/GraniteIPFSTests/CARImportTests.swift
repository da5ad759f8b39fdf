import Foundation
import GranitePinOptions
import GraniteTesting
import XCTest
@testable import GraniteIPFS

/// A batch goes to the node as one CAR (`dag/import`, pin-roots) against the Kubo test node's real
/// core: pinned with its root, falls back to `add` on a node without it, resumes after a kill
/// without sending again what the node holds; HAMT folders are Kubo's.
final class CARImportTests: XCTestCase {
    /// `count` files of `size` bytes (one of 600 kB: several chunks) in `dir/name`.
    private func folder(_ name: String = "batch", count: Int = 30, size: Int = 3000) throws -> (URL, [String: [UInt8]]) {
        let dir = try TestSupport.tempDir(self).appendingPathComponent(name)
        var files: [String: [UInt8]] = [:]
        for i in 0..<count {
            let bytes = TestSupport.bytes(i == 0 ? 600_000 : size, seed: UInt64(i + 1))
            files[String(format: "frame-%03d.png", i)] = bytes
            try TestSupport.write(bytes, to: dir, String(format: "frame-%03d.png", i))
        }
        return (dir, files)
    }

    private func session(_ client: KuboClient, _ journal: String, version: Int = 1) throws -> PinSession {
        try PinSession(client: client, journalPath: journal, options: .init(cidVersion: version), wait: .seconds(30))
    }

    /// A folder is one job, sent as one CAR: a node that refuses `add` still pins it, the root is a
    /// recursive pin of Kubo's, its files read back through Kubo, and the journal holds one job.
    func testBatchGoesAsOneCARAndIsPinnedWithItsRoot() async throws {
        let node = try KuboStandin(["--refuse", "add"], test: self)
        let client = try node.client()
        let (dir, files) = try folder()
        let journal = try TestSupport.tempDir(self).appendingPathComponent("pins.jsonl").path
        let pins = try session(client, journal)
        let cids = try pins.submitFolder(dir.path)
        let outcome = await pins.finish()
        XCTAssertEqual(outcome.foldersPinned, true, outcome.problem ?? "")
        let pinned = try await client.pinLs(cids.root, type: "recursive")
        XCTAssertEqual(pinned[cids.root.description], "recursive")
        for name in ["frame-000.png", "frame-029.png"] {
            let back = try await client.cat("/ipfs/\(cids.root)/\(name)")
            XCTAssertEqual(back, files[name], name)
        }
        let state = try PinJournal(path: journal).state()
        XCTAssertEqual(state.done.map(\.cid), [cids.root], "one job, its root")
        XCTAssertEqual(state.done.first?.files, 30)
        XCTAssertEqual(try PinJournal(path: journal).sentIDs(), Set(state.done.map(\.id)))
    }

    /// A node without `dag/import` (404) gets the same batch file by file through `add`.
    func testNodeWithoutDagImportFallsBackToAdd() async throws {
        let node = try KuboStandin(["--refuse", "dag/import"], test: self)
        let client = try node.client()
        let (dir, _) = try folder(count: 5)
        let pins = try session(client, try TestSupport.tempDir(self).appendingPathComponent("pins.jsonl").path)
        let cids = try pins.submitFolder(dir.path)
        try pins.submit([dir.appendingPathComponent("frame-001.png").path])
        let outcome = await pins.finish()
        XCTAssertEqual(outcome.foldersPinned, true, outcome.problem ?? "")
        XCTAssertEqual(outcome.pinned, 1, outcome.problem ?? "")
        let pinned = try await client.pinLs(cids.root, type: "recursive")
        XCTAssertEqual(pinned[cids.root.description], "recursive")
    }

    /// Files changed between queueing and sending: the stream ends with the root mismatch and the
    /// job fails for good (no later run can pin the queued root).
    func testChangedFilesFailTheCARForGood() async throws {
        let node = try KuboStandin(test: self)
        let (dir, _) = try folder(count: 3)
        let journal = try PinJournal(path: try TestSupport.tempDir(self).appendingPathComponent("pins.jsonl").path)
        let pinner = try Pinner(client: try node.client(), journal: journal, options: .init(wrapWithDirectory: true))
        let jobs = try pinner.enqueue(paths: [dir.path])
        try TestSupport.write([1, 2, 3], to: dir, "frame-002.png")
        let report = try await pinner.process()
        XCTAssertEqual(report.problems.count, 1)
        XCTAssertFalse(report.problems[0].willRetry)
        XCTAssertTrue(report.problems[0].reason.contains("changed since queued") && report.problems[0].reason.contains("\(jobs[0].cid)"),
                      report.problems[0].reason)
        XCTAssertEqual(try journal.state().failed.count, 1)
    }

    /// `granite pin` killed (SIGKILL) after the node imported and pinned the batch but before the
    /// journal said so: the next run finds the root on the node and finishes without sending again,
    /// which a node refusing both `dag/import` and `add` proves.
    func testKilledRunResumesWithoutResending() async throws {
        let repo = try TestSupport.tempDir(self).appendingPathComponent("repo")
        // dag/import's answer comes a byte every 100 ms: the batch is pinned ~25 s before the answer is in.
        let slow = try KuboStandin(["--slow-answer-ms", "100", "--slow-command", "dag/import"], repo: repo, test: self)
        let (dir, _) = try folder(count: 12)
        let journal = try TestSupport.tempDir(self).appendingPathComponent("pins.jsonl").path
        let root = try UnixFSImporter(options: .init(cidVersion: 1, wrapWithDirectory: true)).importPaths([dir.path]).roots[0].cid
        let child = try ChildProgram.launch(try ChildProgram.built("granite"),
                                            ["pin", "--wrap", "--api", slow.url, "--pin-journal", journal, dir.path],
                                            environment: ["IPFS_API_AUTH": nil])
        let pinsFile = repo.appendingPathComponent("recursive-pins.json").path
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline,
              !((try? String(contentsOfFile: pinsFile, encoding: .utf8))?.contains(root.description) ?? false) {
            try await Task.sleep(for: .milliseconds(20))
        }
        kill(child.pid, SIGKILL)
        let killed = child.finish()
        XCTAssertEqual(killed.reason, .uncaughtSignal, "killed before its answer arrived: \(killed.err)")
        slow.stop()
        let state = try PinJournal(path: journal).state()
        XCTAssertEqual(state.pending.map(\.cid), [root], "the kill left the batch pending")

        let strict = try KuboStandin(["--refuse", "dag/import", "--refuse", "add"], port: 0, repo: repo, test: self)
        let pins = try session(try strict.client(), journal)
        try pins.adoptPending()
        let outcome = await pins.finish()
        XCTAssertEqual(outcome.pinned, 1, outcome.problem ?? "")
        XCTAssertEqual(try PinJournal(path: journal).state().done.map(\.cid), [root])
    }

    /// The node holds the batch's blocks but not its pin (a run killed between import and pin):
    /// the root is pinned offline from what the node holds, nothing sent again.
    func testHeldBlocksArePinnedWithoutResending() async throws {
        let repo = try TestSupport.tempDir(self).appendingPathComponent("repo")
        let first = try KuboStandin(repo: repo, test: self)
        let (dir, _) = try folder(count: 4)
        let journal = try PinJournal(path: try TestSupport.tempDir(self).appendingPathComponent("pins.jsonl").path)
        let options = ImportOptions(cidVersion: 0, wrapWithDirectory: true)
        let job = try Pinner(client: try first.client(), journal: journal, options: options).enqueue(paths: [dir.path])[0]
        try journal.markSent(job.id)
        try await first.client().dagImport(paths: job.paths, options: options, root: job.cid, bytes: job.bytes)
        try await first.client().pinRm(job.cid)
        first.stop()
        let strict = try KuboStandin(["--refuse", "dag/import", "--refuse", "add"], repo: repo, test: self)
        let held = try await strict.client().hasBlock(job.cid)
        let pinnedBefore = try await strict.client().isPinned(job.cid)
        XCTAssertTrue(held)
        XCTAssertFalse(pinnedBefore)
        let report = try await Pinner(client: try strict.client(), journal: journal, options: options).process()
        XCTAssertEqual(report.pinned.map(\.cid), [job.cid], "\(report.problems)")
        let pinnedAfter = try await strict.client().isPinned(job.cid)
        XCTAssertTrue(pinnedAfter)
    }

    /// A folder just over Kubo's 256 KiB estimate (name + CID bytes of its links) is a HAMT: the
    /// CIDv0 add makes the node compare its import with Kubo's own `AddFile`, and the client
    /// compares every CID with granite's, so the three agree; one byte under, a basic directory.
    func testHAMTFolderIsKubos() async throws {
        let node = try KuboStandin(test: self)
        let base = try TestSupport.tempDir(self)
        func edge(_ name: String, last: Int) throws -> URL {
            let dir = base.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            // 2674 links of 64 + 34 bytes, one of `last` + 34: 262,144 bytes with last = 58.
            for i in 0..<2674 { FileManager.default.createFile(atPath: dir.appendingPathComponent(String(format: "%064d", i)).path, contents: nil) }
            FileManager.default.createFile(atPath: dir.appendingPathComponent(String(repeating: "z", count: last)).path, contents: Data("z".utf8))
            return dir
        }
        let sharded = try edge("sharded", last: 58)
        let v0 = ImportOptions(cidVersion: 0)
        let local = try UnixFSImporter(options: v0).importPaths([sharded.path])
        let added = try await node.client().add(paths: [sharded.path], options: v0, pin: false, expected: local)
        XCTAssertEqual(added.last?.cid, local.roots[0].cid)
        let sink = BlockCollector()
        _ = try UnixFSImporter(options: v0).importPaths([sharded.path], sink: sink, progress: nil)
        XCTAssertEqual(sink.unixfsType(of: local.roots[0].cid), 5, "HAMT shard")
        let basic = try edge("basic", last: 57)
        let under = try UnixFSImporter(options: v0).importPaths([basic.path], sink: sink, progress: nil)
        XCTAssertEqual(sink.unixfsType(of: under.roots[0].cid), 1, "basic directory one byte under")
    }

    /// Credentials never go over cleartext http:// to a host other than loopback unless allowed.
    func testCleartextCredentialsToARemoteHostAreRefused() async throws {
        for (url, remote) in [("http://192.0.2.7:5001", true), ("http://node.example:5001", true), ("http://127.0.0.1.example:5001", true),
                              ("http://127.0.0.1:5001", false), ("http://localhost:5001", false), ("http://[::1]:5001", false),
                              ("https://node.example:5001", false)] {
            XCTAssertEqual(try KuboEndpoint(parsing: url).isCleartextToRemoteHost, remote, url)
        }
        let client = KuboClient(endpoint: try KuboEndpoint(parsing: "http://192.0.2.7:5001"), auth: .bearer("s3cret"))
        do {
            _ = try await client.version()
            XCTFail("sent")
        } catch {
            XCTAssertEqual(error, .insecureCredentials(node: "http://192.0.2.7:5001"))
            XCTAssertTrue("\(error)".contains("--allow-insecure-http") && !"\(error)".contains("s3cret"), "\(error)")
        }
        XCTAssertThrowsError(try PinOptions.parse(["--api", "http://192.0.2.7:5001", "--api-auth", "bearer:s3cret"]).session()) { error in
            XCTAssertEqual(error as? PinError, .node(.insecureCredentials(node: "http://192.0.2.7:5001")))
        }
        let allowed = try PinOptions.parse(["--api", "http://192.0.2.7:5001", "--api-auth", "bearer:s3cret", "--allow-insecure-http"])
        XCTAssertTrue(allowed.allowInsecureHTTP && allowed.anyGiven)
        XCTAssertEqual(try allowed.session().endpoint, "http://192.0.2.7:5001")
        XCTAssertNoThrow(try PinOptions.parse(["--api", "http://127.0.0.1:5001", "--api-auth", "bearer:s3cret"]).session())
        XCTAssertNoThrow(try PinOptions.parse(["--api", "http://192.0.2.7:5001"]).session(), "no credentials, nothing to leak")

        let token = PinningServiceToken("s3cret")
        XCTAssertThrowsError(try PinningServiceClient(service: "http://192.0.2.7/psa", token: token)) { error in
            XCTAssertEqual(error as? PinningServiceError, .insecureToken(service: "http://192.0.2.7/psa"))
            XCTAssertTrue("\(error)".contains("--allow-insecure-http"), "\(error)")
        }
        XCTAssertNoThrow(try PinningServiceClient(service: "http://127.0.0.1:9/psa", token: token))
        var configuration = PinningServiceClient.Configuration()
        configuration.allowInsecureHTTP = true
        XCTAssertNoThrow(try PinningServiceClient(service: "http://192.0.2.7/psa", token: token, configuration: configuration))
    }

    /// A node that answers one byte at a time (the test node's slow-answer fault) is reported as
    /// not answering in the deadline, not as unreachable.
    func testSlowAnsweringNodeDidNotAnswerInTime() async throws {
        let node = try KuboStandin(["--slow-answer-ms", "100"], test: self)
        var configuration = try node.client(attempts: 1).configuration
        configuration.requestTimeout = .seconds(2)
        let client = KuboClient(endpoint: try KuboEndpoint(parsing: node.url), configuration: configuration)
        do {
            _ = try await client.version()
            XCTFail("answered in time")
        } catch {
            XCTAssertEqual(error, .timeout(node: node.url, command: "version", after: .seconds(2)))
            XCTAssertTrue("\(error)".contains("did not answer version in 2 s"), "\(error)")
        }
        let pins = try PinSession(client: client, probeClient: client,
                                  journalPath: try TestSupport.tempDir(self).appendingPathComponent("pins.jsonl").path)
        let probed = await pins.probe()
        let warning = try XCTUnwrap(probed)
        XCTAssertTrue(warning.contains("did not answer in 2 s") && !warning.contains("not reachable"), warning)
        try pins.submit([try TestSupport.write([1, 2, 3], to: try TestSupport.tempDir(self), "a.png")])
        let outcome = await pins.finish()
        XCTAssertEqual(outcome.problem, "IPFS node at \(node.url) did not answer in 2 s")
    }
}

/// Keeps every block an import hands it (tests only).
final class BlockCollector: BlockSink {
    var blocks: [CID: [UInt8]] = [:]

    func put(cid: CID, block: UnsafeRawBufferPointer) throws(IPFSError) { blocks[cid] = Array(block) }

    /// The UnixFS `Type` of a dag-pb block held here (the Data message's field 1).
    func unixfsType(of cid: CID) -> UInt64? {
        guard let block = blocks[cid] else { return nil }
        var i = 0
        while i < block.count {
            let key = Varint.read(block, at: &i) ?? 0
            guard key & 7 == 2, let length = Varint.read(block, at: &i) else { return nil }
            if key >> 3 == 1, block[i] == 0x08 {
                var j = i + 1
                return Varint.read(block, at: &j)
            }
            i += Int(length)
        }
        return nil
    }
}

import Foundation
import GraniteTesting
import XCTest
@testable import GraniteIPFS

/// `granite pin --service` end to end: the built program, the Kubo test node as the origin and the
/// project's spec-checked pinning service, counting the requests it gets.
final class PinCommandRemoteTests: XCTestCase {
    /// Runs `granite` with `args` (no token or node credentials from this environment).
    private func run(_ args: [String], environment: [String: String?] = [:]) throws -> (Int32, String, String) {
        let result = try ChildProgram.run(try ChildProgram.built("granite"), args, environment: Self.clean.merging(environment) { $1 })
        return (result.status, result.out, result.err)
    }

    private static let clean: [String: String?] = ["IPFS_API_AUTH": nil, "GRANITE_PIN_SERVICE_TOKEN": nil]

    /// Two files pinned on the node, then on the service (one POST each; the service pins only
    /// because the origins sent lead it to the node), listed with --ls, one removed with --rm.
    func testPinListAndRemoveOnAService() throws {
        let dir = try TestSupport.tempDir(self)
        let journal = dir.appendingPathComponent("pins.jsonl").path
        let a = try TestSupport.write(TestSupport.bytes(70_000, seed: 1), to: dir, "in/a.jpg")
        let b = try TestSupport.write(TestSupport.bytes(3_000, seed: 2), to: dir, "in/b.jpg")
        let node = try KuboStandin(test: self)
        let service = try PinningServiceStandin(["--pin-delay", "0.4"], test: self)
        let tokenFile = try TestSupport.write(Array((service.token + "\n").utf8), to: dir, "token")
        let common = ["--api", node.url, "--pin-journal", journal, "--service", service.url, "--service-token-file", tokenFile]

        let (status, out, err) = try run(["pin"] + common + ["--pin-wait", "20", a, b])
        XCTAssertEqual(status, 0, err)
        XCTAssertTrue(out.contains("pinned 2 of 2 on \(service.url)"), out)
        XCTAssertFalse(out.contains(service.token) || err.contains(service.token))
        XCTAssertEqual(try service.requests()["POST /pins"], 2)
        let states = try PinJournal(path: journal).remoteState(service: service.url)
        XCTAssertEqual(states.map(\.outcome), [.pinned, .pinned])
        XCTAssertTrue(states.allSatisfy { $0.requestID != nil })

        let (lsStatus, listed, _) = try run(["pin", "--service", service.url, "--ls"], environment: ["GRANITE_PIN_SERVICE_TOKEN": service.token])
        XCTAssertEqual(lsStatus, 0)
        let cidA = try UnixFSImporter(options: .init()).importPaths([a]).roots[0].cid
        XCTAssertTrue(listed.contains("\(cidA)  pinned  \(states[0].requestID!)  a.jpg"), listed)
        XCTAssertTrue(listed.contains("2 of 2 pin request(s)"), listed)
        let (rmStatus, removed, _) = try run(["pin", "--service", service.url, "--rm", cidA.description],
                                            environment: ["GRANITE_PIN_SERVICE_TOKEN": service.token])
        XCTAssertEqual(rmStatus, 0)
        XCTAssertTrue(removed.contains("removed 1 pin request(s) for \(cidA)"), removed)
        XCTAssertTrue(try run(["pin", "--service", service.url, "--ls"], environment: ["GRANITE_PIN_SERVICE_TOKEN": service.token]).1
            .contains("1 of 1 pin request(s)"))

        // Usage: --ls without --service, a token file without --service; no token at all.
        XCTAssertEqual(try run(["pin", "--ls"]).0, 64)
        XCTAssertEqual(try run(["pin", "--service-token-file", tokenFile, a]).0, 64)
        let (noToken, _, noTokenErr) = try run(["pin", "--service", service.url, "--ls"])
        XCTAssertEqual(noToken, 1)
        XCTAssertTrue(noTokenErr.contains("GRANITE_PIN_SERVICE_TOKEN"), noTokenErr)
    }

    /// A batch (a folder, --wrap) goes to the node as one CAR and to the service as its root
    /// alone: one POST, pinned there from the node's origins.
    func testBatchRootIsPinnedOnTheService() throws {
        let dir = try TestSupport.tempDir(self)
        let journal = dir.appendingPathComponent("pins.jsonl").path
        for i in 0..<20 { try TestSupport.write(TestSupport.bytes(2_000 + i, seed: UInt64(i)), to: dir, "in/batch/f\(i).jpg") }
        let batch = dir.appendingPathComponent("in/batch").path
        let node = try KuboStandin(["--refuse", "add"], test: self)
        let service = try PinningServiceStandin(test: self)
        let tokenFile = try TestSupport.write(Array((service.token + "\n").utf8), to: dir, "token")
        let (status, out, err) = try run(["pin", "--wrap", "--api", node.url, "--pin-journal", journal, "--service", service.url,
                                          "--service-token-file", tokenFile, "--pin-wait", "20", batch])
        XCTAssertEqual(status, 0, err)
        let root = try UnixFSImporter(options: .init(wrapWithDirectory: true)).importPaths([batch]).roots[0].cid
        XCTAssertTrue(out.contains("\(root)") && out.contains("pinned 1 of 1 on \(service.url)"), out)
        XCTAssertEqual(try service.requests()["POST /pins"], 1)
        XCTAssertEqual(try PinJournal(path: journal).remoteState(service: service.url).map(\.job.cid), [root])
    }

    /// A run that ends before the service finished (--pin-wait) and a run killed while polling
    /// both leave the request ids journaled: the next run only asks for their status, so the
    /// service sees one POST per CID in all.
    func testStoppedAndKilledRunsResumeWithoutASecondPost() throws {
        let dir = try TestSupport.tempDir(self)
        let journal = dir.appendingPathComponent("pins.jsonl").path
        let files = try (0..<3).map { try TestSupport.write(TestSupport.bytes(2_000 + $0, seed: UInt64(10 + $0)), to: dir, "in/f\($0).png") }
        let node = try KuboStandin(test: self)
        let service = try PinningServiceStandin(["--pin-delay", "8"], test: self)   // queued 4 s, pinning 4 s
        let env: [String: String?] = ["GRANITE_PIN_SERVICE_TOKEN": service.token]
        let common = ["--api", node.url, "--pin-journal", journal, "--service", service.url]

        // 1. Pinned on the node, then gives up on the service after 2 s without a change: exit 1,
        //    all three pending there, their request ids journaled.
        let (stopped, _, stoppedErr) = try run(["pin"] + common + ["--pin-wait", "2"] + files, environment: env)
        XCTAssertEqual(stopped, 1)
        XCTAssertTrue(stoppedErr.contains("pending on \(service.url)"), stoppedErr)
        XCTAssertEqual(try service.requests()["POST /pins"], 3)
        XCTAssertEqual(try PinJournal(path: journal).remoteState(service: service.url).compactMap(\.requestID).count, 3)

        // 2. Killed while it polls.
        let polled = try service.requests()["GET /pins"] ?? 0
        let running = try ChildProgram.launch(try ChildProgram.built("granite"), ["pin", "--retry"] + common + ["--pin-wait", "30"],
                                              environment: Self.clean.merging(env) { $1 })
        let deadline = Date().addingTimeInterval(10)
        while (try service.requests()["GET /pins"] ?? 0) <= polled, Date() < deadline { usleep(50_000) }
        kill(running.pid, SIGKILL)
        XCTAssertEqual(running.finish().reason, .uncaughtSignal)

        // 3. Finishes: still three POSTs in all.
        let (done, out, err) = try run(["pin", "--retry"] + common + ["--pin-wait", "30"], environment: env)
        XCTAssertEqual(done, 0, err)
        XCTAssertTrue(out.contains("pinned 3 of 3 on \(service.url)"), out)
        XCTAssertEqual(try service.requests()["POST /pins"], 3, "no request was made twice")
        XCTAssertEqual(try PinJournal(path: journal).remoteState(service: service.url).map(\.outcome), [.pinned, .pinned, .pinned])
    }

    /// A refused token stops the run at once with a clear message that does not contain it; a pin
    /// the service fails is reported failed with the service's reason (escaped), exit 1.
    func testRefusedTokenAndFailedPin() throws {
        let dir = try TestSupport.tempDir(self)
        let journal = dir.appendingPathComponent("pins.jsonl").path
        let a = try TestSupport.write(TestSupport.bytes(1_000, seed: 3), to: dir, "a.bin")
        let cidA = try UnixFSImporter(options: .init()).importPaths([a]).roots[0].cid
        let node = try KuboStandin(test: self)
        let secret = "tok-\(UUID().uuidString)"
        let refusing = try PinningServiceStandin(["--refuse-token"], token: secret, test: self)
        let started = ContinuousClock.now
        let (status, out, err) = try run(["pin", "--api", node.url, "--pin-journal", journal, "--service", refusing.url, a],
                                         environment: ["GRANITE_PIN_SERVICE_TOKEN": secret])
        XCTAssertEqual(status, 1)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(15))
        XCTAssertTrue(err.contains("refused the access token (HTTP 401)"), err)
        XCTAssertFalse(out.contains(secret) || err.contains(secret))
        XCTAssertEqual(try refusing.requests().values.reduce(0, +), 1, "nothing more after the refusal")

        let failing = try PinningServiceStandin(["--pin-delay", "0.2", "--fail-cid", cidA.description], test: self)
        let (failed, _, failedErr) = try run(["pin", "--api", node.url, "--pin-journal", journal, "--service", failing.url, a],
                                             environment: ["GRANITE_PIN_SERVICE_TOKEN": failing.token])
        XCTAssertEqual(failed, 1)
        XCTAssertTrue(failedErr.contains("failed on \(failing.url): \(cidA)"), failedErr)
        XCTAssertTrue(failedErr.contains("refused by --fail-cid"), failedErr)
    }
}

import Foundation
import GraniteIPFSTesting
import GranitePinOptions
import XCTest
@testable import GraniteIPFS

/// Each error path of GraniteIPFS's public API throws its typed case (not only a message):
/// KuboError for the client, PinError (node, files, journal) for journaled pinning, and the test
/// servers' StandinError naming the server that failed. No node is needed: every failure is local.
final class TypedErrorTests: XCTestCase {
    /// A client for a port nothing listens on (the discard port): never reached in these tests.
    private let nowhere = KuboClient(endpoint: KuboEndpoint(host: "127.0.0.1", port: 9))

    private func journalPath() throws -> String {
        try TestSupport.tempDir(self).appendingPathComponent("pins.jsonl").path
    }

    func testAddOfAMissingFileIsALocalErrorNamingIt() async {
        do {
            _ = try await nowhere.add(paths: ["/nonexistent/granite.png"], options: .init())
            XCTFail("an add of a missing file succeeded")
        } catch {
            XCTAssertEqual(error, .local(.unreadable(path: "/nonexistent/granite.png", reason: "No such file or directory")))
            XCTAssertTrue(error.description.contains("/nonexistent/granite.png"), error.description)
        }
    }

    func testACancelledCommandIsCancelledNamingTheNode() async {
        let client = nowhere
        let task = Task { () async -> Result<KuboVersion, KuboError> in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(KuboError) { return .success(try await client.version()) } catch { return .failure(error) }
        }
        switch await task.value {
        case .success: XCTFail("a cancelled version() succeeded")
        case let .failure(error): XCTAssertEqual(error, .cancelled(node: "http://127.0.0.1:9", command: "version"))
        }
    }

    func testThePinFacadeReportsABadCIDAsLocal() async throws {
        let ipfs = try GraniteIPFS(host: "127.0.0.1", port: 9, ssl: false)
        do {
            _ = try await ipfs.pin.add("not-a-cid")
            XCTFail("a bad CID was pinned")
        } catch {
            guard case .local(.invalidCID("not-a-cid", _)) = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try GraniteIPFS(host: "", port: 5001, ssl: false)) {
            guard case .badAddress? = $0 as? KuboError else { return XCTFail("\($0)") }
        }
    }

    func testEnqueueOfAMissingFileIsAFilesError() throws {
        let pinner = try Pinner(client: nowhere, journal: try PinJournal(path: try journalPath()), options: .init())
        do {
            _ = try pinner.enqueue(paths: ["/nonexistent/a.jpg"])
            XCTFail("a missing file was journaled")
        } catch {
            XCTAssertEqual(error, .files(.unreadable(path: "/nonexistent/a.jpg", reason: "No such file or directory")))
        }
    }

    func testASessionWhoseJournalCannotBeCreatedIsAJournalError() throws {
        let blocker = try TestSupport.tempDir(self).appendingPathComponent("a-file")
        try Data("x".utf8).write(to: blocker)
        let path = blocker.path + "/pins.jsonl"   // a folder that is a file
        do {
            _ = try PinSession(client: nowhere, journalPath: path)
            XCTFail("a session opened a journal under a file")
        } catch {
            XCTAssertEqual(error, .journal(.open(path: path, reason: "cannot create its folder")))
            XCTAssertTrue(error.description.contains(path), error.description)
        }
    }

    func testABadAPIAddressIsANodeError() throws {
        let journal = try journalPath()
        do {
            _ = try PinSession.resolve(api: "not an address", apiAuth: nil, journal: journal)
            XCTFail("a bad address resolved")
        } catch {
            guard case .node(.badAddress("not an address", reason: _)) = error else { return XCTFail("\(error)") }
        }
        let options = try PinOptions.parse(["--api", "/ip4/127.0.0.1/tcp/5001", "--api-auth", "token-without-kind", "--pin-journal", journal])
        do {
            _ = try options.session()
            XCTFail("bad credentials resolved")
        } catch {
            guard case .node(.badAuth) = error else { return XCTFail("\(error)") }
            XCTAssertFalse(error.description.contains("token-without-kind"), "the secret was printed: \(error)")
        }
    }

    func testAFolderThatCannotBeListedIsAFilesError() throws {
        let session = try PinSession(client: nowhere, journalPath: try journalPath())
        do {
            _ = try session.submitFolder("/nonexistent/out")
            XCTFail("a missing folder was journaled")
        } catch {
            XCTAssertEqual(error, .files(.unreadable(path: "/nonexistent/out", reason: "cannot list directory")))
        }
    }

    func testDrainOverACorruptJournalIsAJournalError() async throws {
        let path = try journalPath()
        let queue = PinQueue(pinner: try Pinner(client: nowhere, journal: try PinJournal(path: path), options: .init()))
        try Data("garbage\n{}\n".utf8).write(to: URL(fileURLWithPath: path))
        do {
            _ = try await queue.drain()
            XCTFail("a pass ran over a corrupt journal")
        } catch {
            XCTAssertEqual(error, .journal(.corrupt(path: path, line: 1)))
        }
        await queue.stop()
    }

    func testRemotePinOptionsWithoutATokenAreNoToken() throws {
        let options = try PinOptions.parse(["--service", "https://psa.example"])
        let journal = try PinJournal(path: try journalPath())
        XCTAssertThrowsError(try options.remotePinner(journal: journal, environment: [:])) {
            XCTAssertEqual($0 as? PinningServiceError, .noToken(service: "https://psa.example"))
        }
    }

    func testAPinningServiceThatDoesNotStartIsNamedAsSuch() throws {
        let log = try TestSupport.tempDir(self).appendingPathComponent("service.log").path
        // A package root without the scripts: the missing file is named, and so is the server.
        let empty = try TestSupport.tempDir(self)
        do {
            _ = try PinningServiceProcess(packageRoot: empty, tokens: ["t"], log: log)
            XCTFail("a service started from an empty folder")
        } catch {
            XCTAssertEqual(error, .missing(server: StandinError.pinningService, path: empty.appendingPathComponent(".venv/bin/python").path))
        }
        try TestSupport.requirement(FileManager.default.isExecutableFile(atPath: TestSupport.python), "no \(TestSupport.python)")
        // The service refuses an option and exits before READY: the error names the service, not the Kubo node.
        do {
            _ = try PinningServiceProcess(packageRoot: TestSupport.root, tokens: ["t"], options: ["--no-such-option"], log: log)
            XCTFail("the service started with an unknown option")
        } catch {
            guard case let .notStarted(server, output) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(server, StandinError.pinningService)
            XCTAssertTrue(output.contains("--no-such-option"), output)
            XCTAssertTrue(error.description.hasPrefix("test pinning service did not start"), error.description)
        }
    }
}

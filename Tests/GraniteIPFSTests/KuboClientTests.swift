import Foundation
import XCTest
@testable import GraniteIPFS

/// The RPC client against the Kubo test node (real Kubo core; CIDv0 adds imported by Kubo itself).
final class KuboClientTests: XCTestCase {
    private let hello = Array("hello world\n".utf8)

    func testVersionAddCatPinRoundTrip() async throws {
        let node = try KuboStandin(test: self)
        let client = try node.client()
        let value1 = try await client.version().version
        XCTAssertEqual(value1, "0.22.0-standin")

        let v0 = try await client.add(data: hello, name: "hello.txt", options: .init(cidVersion: 0))
        XCTAssertEqual(v0.map(\.cid.description), ["QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o"])
        let value2 = try await client.cat(v0[0].cid.description)
        XCTAssertEqual(value2, hello)
        let value3 = try await client.pinLs()[v0[0].cid.description]
        XCTAssertEqual(value3, "recursive")

        // Files and a directory, streamed from disk, multi-chunk, both CID versions.
        let dir = try TestSupport.tempDir(self)
        let big = TestSupport.bytes(3 * 262_144 + 5, seed: 3)
        try TestSupport.write(big, to: dir, "album/big.bin")
        try TestSupport.write(hello, to: dir, "album/sub dir/hi+there.txt")
        try TestSupport.write([], to: dir, "album/empty")
        for version in [0, 1] {
            let options = ImportOptions(cidVersion: version)
            let added = try await client.add(paths: [dir.appendingPathComponent("album").path], options: options)
            let local = try UnixFSImporter(options: options).importPaths([dir.appendingPathComponent("album").path])
            XCTAssertEqual(Set(added.map(\.name)), Set(local.entries.map(\.name)))
            XCTAssertEqual(added.first { $0.name == "album" }?.cid, local.roots[0].cid)
            let value4 = try await client.cat("/ipfs/\(local.roots[0].cid)/big.bin")
            XCTAssertEqual(value4, big)
            let value5 = try await client.cat("/ipfs/\(local.roots[0].cid)/sub dir/hi+there.txt")
            XCTAssertEqual(value5, hello)
        }

        do {
            _ = try await client.cat(v0[0].cid.description, limit: 5)
            XCTFail("a 12-byte file must exceed a 5-byte limit")
        } catch {
            guard case .tooLarge(_, "cat", 5) = error else { return XCTFail("\(error)") }
        }

        // Unpin: no longer a recursive pin (album/sub dir/hi+there.txt keeps it indirectly).
        try await client.pinRm(v0[0].cid)
        let value6 = try await client.pinLs(type: "recursive")[v0[0].cid.description]
        XCTAssertNil(value6)
    }

    func testWrapWithDirectoryMatchesLocalWrapper() async throws {
        let node = try KuboStandin(test: self)
        let client = try node.client()
        let dir = try TestSupport.tempDir(self)
        let files = try (0..<3).map { try TestSupport.write(TestSupport.bytes(100 + $0, seed: UInt64($0)), to: dir, "p\($0).png") }
        let options = ImportOptions(cidVersion: 1, wrapWithDirectory: true)
        let added = try await client.add(paths: files, options: options)
        let wrapper = try XCTUnwrap(added.first { $0.name == "" })
        XCTAssertEqual(wrapper.cid, try UnixFSImporter(options: options).importPaths(files).roots[0].cid)
        let value7 = try await client.pinLs(wrapper.cid)[wrapper.cid.description]
        XCTAssertEqual(value7, "recursive")
    }

    func testCommandErrorsAreTyped() async throws {
        let node = try KuboStandin(test: self)
        let client = try node.client(attempts: 2)
        let dir = try await client.add(data: hello, name: "x", options: .init(cidVersion: 1, wrapWithDirectory: true))
        let wrapper = try XCTUnwrap(dir.first { $0.name == "" })
        do {
            _ = try await client.cat(wrapper.cid.description)
            XCTFail("cat of a directory must fail")
        } catch let KuboError.command(_, command, status, message, code) {
            XCTAssertEqual(command, "cat")
            XCTAssertEqual(status, 500)
            XCTAssertTrue(message.contains("directory"), message)
            XCTAssertEqual(code, 0)
        }
        do {
            let unpinned = try await client.add(data: [9, 9, 9], options: .init(), pin: false)
            _ = try await client.pinLs(unpinned[0].cid)
            XCTFail("pin/ls of an unpinned CID must fail")
        } catch {
            guard case let .command(_, _, _, message, _) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("not pinned"), message)
            XCTAssertFalse(error.isTransient)
        }
    }

    func testAuthBearerBasicAndRefusals() async throws {
        let node = try KuboStandin(["--auth", "bearer:s3cret", "--auth", "basic:al:pw"], test: self)
        for auth in [KuboAuth.bearer("s3cret"), .basic(user: "al", password: "pw")] {
            let value8 = try await node.client(auth: auth).version().version
            XCTAssertEqual(value8, "0.22.0-standin")
        }
        for auth in [nil, KuboAuth.bearer("wrong"), .basic(user: "al", password: "nope")] {
            do {
                _ = try await node.client(auth: auth, attempts: 3).add(data: hello, options: .init())
                XCTFail("must be refused")
            } catch let KuboError.forbidden(_, command, message) {
                XCTAssertEqual(command, "add")
                XCTAssertTrue(message.contains("Access Denied"), message)
                XCTAssertFalse(message.contains("s3cret"))
            }
        }
        XCTAssertEqual("\(KuboAuth.bearer("s3cret"))", "bearer:<redacted>")
        XCTAssertEqual(try KuboAuth(parsing: "basic:YWw6cHc="), .basic(user: "al", password: "pw"))
        XCTAssertThrowsError(try KuboAuth(parsing: "token s3cret")) { XCTAssertFalse("\($0)".contains("s3cret")) }
    }

    func testRandom500sAreRetried() async throws {
        let node = try KuboStandin(["--fail-rate", "0.4", "--seed", "7"], test: self)
        let client = try node.client(attempts: 12)
        for i in 0..<15 {
            let data = TestSupport.bytes(1000 + i, seed: UInt64(i))
            let added = try await client.add(data: data, options: .init(cidVersion: 1))
            let value9 = try await client.pinAdd(added[0].cid)
            XCTAssertEqual(value9, [added[0].cid])
        }
        let value10 = try await client.pinLs(type: "recursive").count
        XCTAssertGreaterThanOrEqual(value10, 15)
    }

    func testLatencyBeyondTheDeadlineIsATimeout() async throws {
        let node = try KuboStandin(["--latency-ms", "1500"], test: self)
        var config = try node.client().configuration
        config.requestTimeout = .milliseconds(300)
        config.maxAttempts = 2
        let client = KuboClient(endpoint: try KuboEndpoint(parsing: node.url), configuration: config)
        do {
            _ = try await client.version()
            XCTFail("must time out")
        } catch {
            XCTAssertEqual(error, .timeout(node: node.url, command: "version", after: .milliseconds(300)))
        }
        let value11 = try await node.client().version().version
        XCTAssertEqual(value11, "0.22.0-standin")  // 20 s deadline
    }

    func testTruncatedStreamsAreDetected() async throws {
        let node = try KuboStandin(["--truncate-after", "30"], test: self)
        do {
            _ = try await node.client(attempts: 2).add(data: hello, options: .init(cidVersion: 0))
            XCTFail("a cut add answer must fail")
        } catch let error as KuboError {
            XCTAssertTrue(error.isTransient, "\(error)")
            switch error {
            case .truncated, .unreachable: break
            default: XCTFail("\(error)")
            }
        }
    }

    func testUnreachableNodeIsTransientAndTyped() async throws {
        let client = KuboClient(endpoint: try KuboEndpoint(parsing: "/ip4/127.0.0.1/tcp/9"),
                                configuration: { var c = KuboClient.Configuration(); c.maxAttempts = 2; c.connectTimeout = .milliseconds(500)
                                                  c.initialBackoff = .milliseconds(10); return c }())
        do {
            _ = try await client.version()
            XCTFail("nothing listens on port 9")
        } catch {
            guard case .unreachable = error else { return XCTFail("\(error)") }
            XCTAssertTrue(error.isTransient)
        }
    }

    func testEndpointResolution() throws {
        XCTAssertEqual(try KuboEndpoint(parsing: "/ip4/127.0.0.1/tcp/5001").baseURL, "http://127.0.0.1:5001")
        XCTAssertEqual(try KuboEndpoint(parsing: "/dns/node.example/tcp/443/https").baseURL, "https://node.example:443")
        XCTAssertEqual(try KuboEndpoint(parsing: "/ip6/::1/tcp/5001").baseURL, "http://[::1]:5001")
        XCTAssertEqual(try KuboEndpoint(parsing: "http://10.0.0.2:5002/").baseURL, "http://10.0.0.2:5002")
        for bad in ["", "localhost:5001", "/ip4/1.2.3.4/udp/1", "/ip4/1.2.3.4/tcp/99999", "/ip4/1.2.3.4/tcp/1/ws"] {
            XCTAssertThrowsError(try KuboEndpoint(parsing: bad), bad)
        }
        let repo = try TestSupport.tempDir(self)
        try "/ip4/127.0.0.1/tcp/4242\n".write(to: repo.appendingPathComponent("api"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try KuboEndpoint.resolve(option: nil, environment: ["IPFS_PATH": repo.path]).baseURL, "http://127.0.0.1:4242")
        XCTAssertEqual(try KuboEndpoint.resolve(option: nil, environment: ["IPFS_API": "/ip4/10.1.1.1/tcp/1", "IPFS_PATH": repo.path]).baseURL,
                       "http://10.1.1.1:1")
        XCTAssertEqual(try KuboEndpoint.resolve(option: "http://h:7", environment: ["IPFS_API": "/ip4/10.1.1.1/tcp/1"]).baseURL, "http://h:7")
        XCTAssertEqual(try KuboEndpoint.resolve(option: nil, environment: ["HOME": repo.path + "/none"]).baseURL, "http://127.0.0.1:5001")
    }
}

/// Errors that arrive after output has started, in the `X-Stream-Error` trailer.
final class KuboStreamErrorTests: XCTestCase {
    func testTrailerErrorAfterStreamedOutputIsDetected() async throws {
        let node = try KuboStandin(test: self)
        // A CAR whose directory links a block it does not carry: the root's line streams out first
        // (with its pin error), then the command fails in the trailer.
        let gone = CID(version: 1, codec: .raw, block: Array("gone".utf8))
        let directory = DagPB.node(links: [DagPB.Link(cid: gone, name: Array("gone".utf8), tsize: 4)], data: DagPB.unixfs(.directory))
        let root = CID(version: 1, codec: .dagPB, block: directory)
        let header = CARWriter.header(roots: [root])
        let car = Varint.encode(UInt64(header.count)) + header + Varint.encode(UInt64(root.bytes.count + directory.count)) + root.bytes + directory
        let parts = [UploadPart(name: "x.car", content: .bytes(car))]
        let lines = LineCounter()
        do {
            _ = try await node.client(attempts: 1).call("dag/import", upload: parts) { _ in lines.add() }
            XCTFail("must fail")
        } catch let KuboError.streamError(_, command, message) {
            XCTAssertEqual(command, "dag/import")
            XCTAssertTrue(message.contains("unable to pin all roots"), message)
            XCTAssertGreaterThan(lines.count, 0, "output had started")
        }
    }
}

/// Counts NDJSON lines from a `@Sendable` handler.
private final class LineCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}

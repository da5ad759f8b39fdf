import Foundation
import GraniteTesting
import XCTest
@testable import GraniteIPFS

/// `granite pin` end to end: the built program against kubo-standin, exit codes and JSON.
final class PinCommandTests: XCTestCase {
    /// Runs `granite` (built next to this test bundle) with `args`; returns exit status, stdout and stderr.
    private func run(_ args: [String]) throws -> (Int32, String, String) {
        let result = try ChildProgram.run(try ChildProgram.built("granite"), args, environment: ["IPFS_API_AUTH": nil])
        return (result.status, result.out, result.err)
    }

    func testPinJSONRetryAndExitCodes() throws {
        let dir = try TestSupport.tempDir(self)
        let journal = dir.appendingPathComponent("pins.jsonl").path
        let photo = try TestSupport.write(TestSupport.bytes(300_000, seed: 5), to: dir, "in/photo.png")
        try TestSupport.write(Array("hello world\n".utf8), to: dir, "in/album/hello.txt")
        let album = dir.appendingPathComponent("in/album").path

        // Bad usage: 64, before any network.
        XCTAssertEqual(try run(["pin"]).0, 64)
        XCTAssertEqual(try run(["pin", "--cid-version", "2", photo]).0, 64)

        // Node down: the job is journaled, reported pending, exit 1 — and the CAR is still written.
        let car = dir.appendingPathComponent("out.car").path
        let (down, _, downErr) = try run(["pin", "--attempts", "1", "--api", "/ip4/127.0.0.1/tcp/9", "--pin-journal", journal, "--car", car, photo])
        XCTAssertEqual(down, 1)
        XCTAssertTrue(downErr.contains("pending"), downErr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: car))

        // Node up: --retry finishes it; a new run pins the album; JSON lists both CIDs.
        let node = try KuboStandin(test: self)
        let (retry, retryOut, _) = try run(["pin", "--retry", "--api", node.url, "--pin-journal", journal, "--json"])
        XCTAssertEqual(retry, 0)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(retryOut.utf8)) as? [String: Any])
        let pinned = try XCTUnwrap(json["pinned"] as? [[String: Any]])
        let photoCID = try UnixFSImporter(options: .init()).importPaths([photo]).roots[0].cid.description
        XCTAssertEqual(pinned.map { $0["cid"] as? String }, [photoCID])
        XCTAssertEqual(json["files"] as? Int, 1)
        XCTAssertEqual(json["bytes"] as? Int, 300_000)

        let (ok, text, _) = try run(["pin", "--api", node.url, "--pin-journal", journal, "--cid-version", "0", album])
        XCTAssertEqual(ok, 0)
        let albumCID = try UnixFSImporter(options: .init(cidVersion: 0)).importPaths([album]).roots[0].cid.description
        XCTAssertTrue(text.contains("\(albumCID)  \(album)"), text)
        XCTAssertTrue(text.contains("1 file(s), 12 B"), text)
        XCTAssertEqual(try PinJournal(path: journal).state().done.count, 2)
    }

    /// `granite pin` against hostile nodes: a huge `add` answer ends the run in bounded time with
    /// the job pending and the node named; a node's ANSI-laden error reaches stderr escaped.
    func testHostileNodesEndTheRunBoundedWithTextEscaped() throws {
        let dir = try TestSupport.tempDir(self)
        let journal = dir.appendingPathComponent("pins.jsonl").path
        let photo = try TestSupport.write(TestSupport.bytes(20_000, seed: 9), to: dir, "in/photo.png")
        let huge = try KuboStandin(["--huge-answer", "200000000"], test: self)
        let started = ContinuousClock.now
        let (status, _, err) = try run(["pin", "--api", huge.url, "--pin-journal", journal, photo])
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(15))
        XCTAssertEqual(status, 1)
        XCTAssertTrue(err.contains("pending") && err.contains(huge.url) && err.contains("more than"), err)
        XCTAssertEqual(try PinJournal(path: journal).state().pending.count, 1)

        let ansi = try KuboStandin(["--ansi-error", "--fail-rate", "1"], test: self)
        let (status2, out2, err2) = try run(["pin", "--attempts", "1", "--api", ansi.url, "--pin-journal", journal, "--retry"])
        XCTAssertEqual(status2, 1)
        XCTAssertFalse((out2 + err2).unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, err2)
        XCTAssertTrue(err2.contains("\\u{1B}[31mtest node: injected failure"), err2)
    }
}

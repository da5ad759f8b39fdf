import Foundation
import GranitePinOptions
import XCTest
@testable import GraniteIPFS

/// A node that misbehaves on purpose (the test node's fault switches, the one allowed fake):
/// every answer is size- and time-bounded, the job stays pending, and the node's text is printed
/// with its control characters escaped.
final class HostileNodeTests: XCTestCase {
    private func file(_ name: String = "frame.png", size: Int = 5000) throws -> String {
        try TestSupport.write(TestSupport.bytes(size, seed: 7), to: try TestSupport.tempDir(self), name)
    }

    private func session(_ node: KuboStandin, configure: (inout KuboClient.Configuration) -> Void = { _ in }) throws -> PinSession {
        var config = try node.client(attempts: 2).configuration
        configure(&config)
        let client = KuboClient(endpoint: try KuboEndpoint(parsing: node.url), configuration: config)
        return try PinSession(client: client, journalPath: try TestSupport.tempDir(self).appendingPathComponent("pins.jsonl").path,
                              wait: .seconds(30))
    }

    /// 200 MB of progress lines after the real answer: the job fails after ~1 MiB, stays pending,
    /// and the error names the node.
    func testHugeAddAnswerFailsTheJobQuicklyAndLeavesItPending() async throws {
        let node = try KuboStandin(["--huge-answer", "200000000"], test: self)
        let pins = try session(node)
        try pins.submit([try file()])
        let started = ContinuousClock.now
        let outcome = await pins.finish()
        let elapsed = ContinuousClock.now - started
        XCTAssertLessThan(elapsed, .seconds(10), "bounded by size, not by the 200 MB stream")
        XCTAssertEqual(outcome.pinned, 0)
        XCTAssertEqual(outcome.remaining, 1)
        let problem = try XCTUnwrap(outcome.problem)
        XCTAssertTrue(problem.contains(node.url) && problem.contains("more than"), problem)
        XCTAssertEqual(try pins.pinner.journal.state().pending.count, 1, "journaled as pending, not failed")
        XCTAssertEqual(try pins.pinner.journal.state().failed.count, 0)
    }

    /// An answer that never ends (a line every 0.5 s, so the read timeout never fires) is cut at
    /// the command's deadline, once (not retried).
    func testEndlessTrickleHitsTheDeadline() async throws {
        let node = try KuboStandin(["--trickle-answer"], test: self)
        let pins = try session(node) { $0.requestTimeout = .seconds(2) }
        try pins.submit([try file()])
        let started = ContinuousClock.now
        let outcome = await pins.finish()
        let elapsed = ContinuousClock.now - started
        XCTAssertLessThan(elapsed, .seconds(8), "2 s deadline plus one trickle interval, not retried")
        XCTAssertEqual(outcome.remaining, 1)
        let problem = try XCTUnwrap(outcome.problem)
        XCTAssertTrue(problem.contains(node.url) && problem.contains("did not finish"), problem)
        XCTAssertEqual(try pins.pinner.journal.state().pending.count, 1)
    }

    /// Error messages with ANSI escapes reach the user escaped: no ESC or BEL byte survives.
    func testNodeErrorTextIsEscaped() async throws {
        let node = try KuboStandin(["--ansi-error", "--fail-rate", "1"], test: self)
        do {
            _ = try await node.client(attempts: 1).version()
            XCTFail("every command fails")
        } catch {
            let text = "\(error)"
            XCTAssertFalse(text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, text)
            XCTAssertTrue(text.contains("\\u{1B}[31mtest node: injected failure"), text)
        }
    }

    func testNodeTextEscaping() {
        XCTAssertEqual(NodeText.escaped("ok: é ✓"), "ok: é ✓")
        XCTAssertEqual(NodeText.escaped("a\u{1B}[2Jb\r\n\u{7}\u{9B}c\u{202E}"), "a\\u{1B}[2Jb\\u{D}\\u{A}\\u{7}\\u{9B}c\\u{202E}")
        XCTAssertEqual(NodeText.escaped(String(repeating: "x", count: 10), limit: 4), "xxxx…")
    }

    /// The option group every program includes: names, types, defaults.
    func testSharedPinOptions() throws {
        let defaults = try PinOptions.parse([])
        XCTAssertEqual(defaults.wait, .seconds(30))
        XCTAssertFalse(defaults.anyGiven)
        let journal = try TestSupport.tempDir(self).appendingPathComponent("j.jsonl").path
        let given = try PinOptions.parse(["--api", "/ip4/127.0.0.1/tcp/5001", "--api-auth", "bearer:t",
                                          "--pin-journal", journal, "--pin-wait", "2.5"])
        XCTAssertEqual(given.wait, .milliseconds(2500))
        XCTAssertTrue(given.anyGiven)
        XCTAssertEqual(given.pinJournal, journal)
        XCTAssertThrowsError(try PinOptions.parse(["--pin-wait", "-1"]))
        let session = try given.session()
        XCTAssertEqual(session.endpoint, "http://127.0.0.1:5001")
        XCTAssertEqual(session.wait, .milliseconds(2500))
        XCTAssertEqual(session.pinner.journal.path, journal)
    }
}

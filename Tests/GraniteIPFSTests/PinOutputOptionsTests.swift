import Foundation
import GranitePinOptions
import GraniteTesting
import XCTest
@testable import GraniteIPFS

/// `granite convert --pin` and `granite-cam --pin` pin through ``PinOutputOptions``: the same
/// checks, the same session settings and the same report, shown here on the built programs.
final class PinOutputOptionsTests: XCTestCase {
    private func run(_ program: String, _ args: [String]) throws -> ChildProgram.Result {
        try ChildProgram.run(try ChildProgram.built(program), args, environment: ["IPFS_API_AUTH": nil, "GRANITE_PIN_JOURNAL": nil])
    }

    /// The lines a run printed about pinning, without the program's name, CIDs as ROOT.
    private func pinLines(_ text: String, program: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.contains("pinned") || $0.contains("journaled") }
            .map { line in
                var line = line.hasPrefix(program + ": ") ? String(line.dropFirst(program.count + 2)) : line
                line = line.replacingOccurrences(of: #"folder [a-zA-Z0-9]{40,} "#, with: "folder ROOT ", options: .regularExpression)
                return line.replacingOccurrences(of: #"ipfs://[^/\s]+/"#, with: "ipfs://ROOT/", options: .regularExpression)
            }
    }

    /// One session with the settings every program that pins its outputs gets.
    func testStartGivesPinSessionsOneSetOfSettings() async throws {
        let dir = try TestSupport.tempDir(self)
        let journal = dir.appendingPathComponent("pins.jsonl").path
        let options = try PinOutputOptions.parse(["--pin", "--api", "http://127.0.0.1:1", "--pin-journal", journal,
                                                  "--pin-wait", "7", "--cid-version", "0"])
        let start = try await options.start(folder: nil)
        let started = try XCTUnwrap(start)
        let session = started.session
        XCTAssertEqual(session.wait, .seconds(7))
        XCTAssertEqual(session.pinner.client.configuration.maxAttempts, PinSession.defaultAttempts)
        XCTAssertEqual(session.pinner.concurrency, PinSession.defaultConcurrency)
        let retryInterval = await session.queue.retryInterval
        XCTAssertEqual(retryInterval, PinSession.defaultRetryInterval)
        XCTAssertEqual(session.pinner.options.cidVersion, 0)
        XCTAssertEqual(session.pinner.journal.path, journal)
        let warning = try XCTUnwrap(started.warning, "nothing listens on port 1: the probe warns")
        XCTAssertTrue(warning.contains("http://127.0.0.1:1 not reachable"), warning)
        let outcome = await session.finish()
        XCTAssertEqual(outcome.queued, 0)

        let defaults = try PinOutputOptions.parse([])
        XCTAssertFalse(defaults.isRequested)
        let none = try await defaults.start(folder: nil)
        XCTAssertNil(none, "no --pin, no session")
        XCTAssertTrue(try PinOutputOptions.parse(["--service", "https://psa.example"]).isRequested, "--service pins on the node first")
        XCTAssertThrowsError(try PinOutputOptions.parse(["--api", "http://127.0.0.1:1"]))
        XCTAssertThrowsError(try PinOutputOptions.parse(["--pin", "--cid-version", "2"]))
    }

    /// The report of one outcome, line by line.
    func testReportWordsEveryCase() throws {
        let root = try CID("bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku")
        var outcome = PinSession.Outcome(queued: 3, pinned: 3, remaining: 0, journal: "/j", node: "http://n", problem: nil, report: nil,
                                         folder: .init(root: root, byPath: [:]), foldersPinned: true, remote: nil)
        XCTAssertEqual(PinRunReport(outcome).lines.map(\.message),
                       ["pinned 3 of 3 files on http://n", "folder \(root) pinned: ipfs://\(root)/"])
        outcome.pinned = 1
        outcome.remaining = 2
        outcome.foldersPinned = false
        outcome.problem = "IPFS node at http://n not reachable"
        let down = PinRunReport(outcome)
        XCTAssertEqual(down.lines.map(\.message), [
            "pinned 1 of 3 files on http://n", "folder \(root) journaled, not pinned yet: ipfs://\(root)/",
            "warning: 2 files and the folder not pinned yet (IPFS node at http://n not reachable); they stay journaled in /j: "
                + "run `granite pin --retry`",
        ])
        XCTAssertEqual(down.lines.map(\.kind), [.result, .result, .warning])
        XCTAssertFalse(down.failed, "a node that is down never fails a run")
        var remote = RemoteOutcome(service: "https://psa")
        remote.problem = "the service refused the token"
        remote.tokenRefused = true
        outcome.remote = remote
        let refused = PinRunReport(outcome)
        XCTAssertEqual(refused.lines.suffix(2).map(\.message), [
            "pinned 0 of 0 on https://psa",
            "error: the service refused the token; 0 stay journaled: run `granite pin --retry --service https://psa`",
        ])
        XCTAssertTrue(refused.failed)
    }

    /// Both programs with the node down: the same checks, the same warnings and result lines.
    func testConvertAndCamSayTheSameForTheSameOptions() throws {
        let dir = try TestSupport.tempDir(self)
        let journal = dir.appendingPathComponent("pins.jsonl").path
        let frames = dir.appendingPathComponent("frames").path, converted = dir.appendingPathComponent("converted").path
        let cam = dir.appendingPathComponent("cam").path
        // Three PNGs to convert: granite-cam's test pattern, written without pinning.
        let made = try run("granite-cam", ["--source", "testpattern", "--size", "64x48", "--fps", "100", "--frames", "3",
                                           "--no-live", "--out", frames, "--image-format", "png"])
        XCTAssertEqual(made.status, 0, made.err)
        let pin = ["--pin", "--api", "http://127.0.0.1:1", "--pin-journal", journal, "--pin-wait", "5"]
        let convert = try run("granite", ["convert", frames, "-o", converted] + pin)
        let camRun = try run("granite-cam", ["--source", "testpattern", "--size", "64x48", "--fps", "100", "--frames", "3",
                                             "--no-live", "--out", cam] + pin)
        XCTAssertEqual(convert.status, 0, convert.err)
        XCTAssertEqual(camRun.status, 0, camRun.err)
        let fromConvert = pinLines(convert.out + convert.err, program: "granite convert").sorted()
        let fromCam = pinLines(camRun.out + camRun.err, program: "granite-cam").sorted()
        XCTAssertEqual(fromConvert, fromCam)
        XCTAssertEqual(fromConvert.count, 4, "\(fromConvert)")
        XCTAssertEqual(fromConvert.filter { !$0.hasPrefix("warning: IPFS node at http://127.0.0.1:1 not reachable (") }, [
            "folder ROOT journaled, not pinned yet: ipfs://ROOT/",
            "pinned 0 of 3 files on http://127.0.0.1:1",
            "warning: 3 files and the folder not pinned yet (IPFS node at http://127.0.0.1:1 not reachable); "
                + "they stay journaled in \(journal): run `granite pin --retry`",
        ], "the probe's warning, then the report")
        // The same usage checks, word for word.
        let convertUsage = try run("granite", ["convert", frames, "-o", converted, "--api", "http://127.0.0.1:1"])
        let camUsage = try run("granite-cam", ["--frames", "1", "--out", cam, "--api", "http://127.0.0.1:1"])
        XCTAssertEqual(convertUsage.status, 64)
        XCTAssertEqual(camUsage.status, 64)
        let firstLine = { (text: String) in text.split(separator: "\n").first.map(String.init) ?? "" }
        XCTAssertEqual(firstLine(convertUsage.err), firstLine(camUsage.err))
        XCTAssertTrue(firstLine(camUsage.err).contains("need --pin (or --service)"), camUsage.err)
    }
}

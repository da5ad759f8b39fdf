import Foundation
import GraniteCodecs
import GraniteTesting
import XCTest

/// `granite-cam` as a user runs it: exit codes, messages, files, SIGINT.
final class CamCLITests: XCTestCase {
    func run(_ arguments: [String], program: String = "granite-cam") throws -> ChildProgram.Result {
        try ChildProgram.run(try ChildProgram.built(program), arguments)
    }

    func testBadOptionsExit64WithAReason() throws {
        for (arguments, reason) in [
            (["--frames", "2", "--duration", "1"], "give --frames or --duration, not both"),
            (["--size", "0x5"], "--size must be WxH"),
            (["--format", "h264"], "--format must be one of auto, yuyv, mjpeg, nv12, rgb24"),
            (["--filter", "nosuchfilter"], "nosuchfilter"),
            (["--save", "3"], "--save needs --out DIR"),
            (["--pin"], "--pin needs --out DIR"),
            (["--audio", "pipewire"], "--audio needs --record FILE or --segments DIR"),
            (["--audio", "jack", "--record", "x.mkv"], "--audio takes pipewire, pipewire:NODE, alsa or alsa:PCM (an ALSA name: default, hw:1,0, plughw:…), not jack"),
            (["--audio", "alsa:", "--record", "x.mkv"], "not alsa:"),
        ] {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 64, "\(arguments)")
            XCTAssertTrue(result.err.contains(reason), "\(arguments): \(result.err)")
        }
    }

    func testDevicesWithNoCameras() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("granite-nodev-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let result = try run(["devices", "--directory", empty.path], program: "granite")
        XCTAssertEqual(result.status, 0, result.err)
        let lines = result.out.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "no video devices in \(empty.path); granite-cam falls back to its test pattern")
        // Then the PipeWire video sources, or why there is no list (no session here).
        XCTAssertTrue(lines.dropFirst().allSatisfy { $0.hasPrefix("PipeWire") || $0.hasPrefix("  ") }, result.out)
    }

    func testMissingDeviceExits1NamingIt() throws {
        let result = try run(["--device", "/dev/video-granite-none", "--frames", "3"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.err.contains("granite-cam: error: /dev/video-granite-none: no such video device"), result.err)
    }

    /// `--audio alsa:PCM` naming no PCM (no card 99): exit 1 naming it before the camera starts, no file.
    func testAMissingALSAPCMExits1BeforeTheCameraWithNoFile() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("granite-alsa-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: out) }
        let result = try run(["--source", "testpattern", "--size", "64x48", "--frames", "5", "--audio", "alsa:hw:99,0",
                              "--record", out.appendingPathComponent("clip.mkv").path])
        XCTAssertEqual(result.status, 1, result.err)
        XCTAssertTrue(result.err.contains("granite-cam: error: --audio: hw:99,0: ALSA: no such PCM (snd_pcm_open: "), result.err)
        XCTAssertFalse(result.err.contains("frames in"), "the camera ran: \(result.err)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path), [], "a file was left")
    }

    func testPinWithTheNodeDownWarnsJournalsAndExitsZero() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("granite-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let journal = out.appendingPathComponent("pins.jsonl").path
        // Nothing listens there (the kubo stand-in is not running); default --pin-wait (10 s).
        let started = Date()
        let result = try run(["--source", "testpattern", "--size", "64x48", "--fps", "100", "--frames", "3",
                              "--out", out.path, "--pin", "--api", "http://127.0.0.1:1", "--pin-journal", journal])
        let seconds = Date().timeIntervalSince(started)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertLessThan(seconds, 6, "a node that is down is known in about a second, at start and at exit (took \(seconds) s)")
        XCTAssertTrue(result.err.contains("granite-cam: warning: 3 files and the folder not pinned yet (IPFS node at http://127.0.0.1:1 not reachable); "
                                          + "they stay journaled in \(journal): run `granite pin --retry`"), result.err)
        XCTAssertTrue(result.err.contains("warning: IPFS node at http://127.0.0.1:1 not reachable"), result.err)
        XCTAssertTrue(result.out.contains("granite-cam: pinned 0 of 3 files on http://127.0.0.1:1\n"), result.out)
        let queued = try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n").filter { $0.contains("\"queue\"") }
        XCTAssertEqual(queued.count, 4, "three frames and the --out folder journaled for granite pin --retry")
        XCTAssertTrue(result.out.contains("journaled, not pinned yet: ipfs://"), result.out)
    }

    /// `--no-live` makes the paced pattern wait instead of dropping: all frames, and the summary says so.
    func testNoLiveRunsEveryFrameAndSaysSo() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("granite-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let result = try run(["--source", "testpattern", "--size", "64x48", "--fps", "200", "--frames", "40", "--no-live",
                              "--out", out.path, "--image-format", "ppm"])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("granite-cam: 40 frames in "), result.out)
        XCTAssertTrue(result.out.contains("granite-cam: non-live run: 0 dropped\n"), result.out)
        let frames = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasSuffix(".ppm") }
        XCTAssertEqual(frames.count, 40)
        let live = try run(["--source", "testpattern", "--size", "64x48", "--fps", "100", "--frames", "5", "--live", "--unpaced"])
        XCTAssertEqual(live.status, 0, live.err)
        XCTAssertTrue(live.out.contains("granite-cam: live run: "), live.out)
    }

    func testWritesEveryNthFrameAsPNG() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("granite-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let result = try run(["--source", "testpattern", "--size", "64x48", "--fps", "100", "--frames", "12",
                              "--out", out.path, "--save", "4"])
        XCTAssertEqual(result.status, 0, result.err)
        // A loaded machine may drop a paced frame at the source; every frame is processed or dropped.
        let counts = result.out.split(separator: "\n").first { $0.hasPrefix("granite-cam: ") } ?? ""
        let numbers = counts.split(separator: " ").compactMap { Int($0) }
        XCTAssertEqual(numbers.count >= 3 ? numbers[0] + numbers[2] : -1, 12, "processed + dropped: \(counts)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
        let pngs = files.filter { $0.hasPrefix("frame_") && $0.hasSuffix(".png") }
        XCTAssertEqual(files.filter { !pngs.contains($0) }, ["frames.jsonl"])
        XCTAssertEqual(pngs.count, numbers.count >= 2 ? numbers[1] : -1, "one file per saved frame: \(counts)")
        XCTAssertTrue((2...3).contains(pngs.count), "every 4th of up to 12 frames: \(pngs)")
        let sidecar = try String(contentsOf: out.appendingPathComponent("frames.jsonl"), encoding: .utf8)
        XCTAssertEqual(sidecar.split(separator: "\n").count, pngs.count)
        XCTAssertEqual(pngs.first, "frame_00000000.png")
    }

    func testSIGINTFlushesAndExitsZero() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("granite-sigint-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let child = try ChildProgram.launch(try ChildProgram.built("granite-cam"),
                                            ["--source", "testpattern", "--size", "160x120", "--fps", "50", "--out", out.path])
        Thread.sleep(forTimeInterval: 2.0)
        kill(child.pid, SIGINT)
        let result = child.finish()
        let text = result.out
        XCTAssertEqual(result.status, 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path)
        let images = files.filter { $0.hasSuffix(".png") }
        XCTAssertGreaterThan(images.count, 5)
        XCTAssertFalse(files.contains { $0.contains(AtomicFile.temporaryMarker) }, "no half-written file is left")
        let lines = try String(contentsOf: out.appendingPathComponent("frames.jsonl"), encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, images.count, "every written frame has its sidecar line")
        XCTAssertTrue(text.contains("\(images.count) saved"), text)
    }
}

import Foundation
import GraniteMedia
import GraniteProcess
import GraniteTesting
import XCTest

@testable import GraniteCam

/// `granite-cam --record` as a user runs it, read back by Debian's ffprobe and ffmpeg: every
/// processed frame in the file at its capture time, the decoded frames against the frames the same
/// run wrote as images, a `kill -9` that leaves a file that plays, a full disk that stops cleanly.
final class RecordTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("granite-camrec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: dir) }

    func tool(_ name: String) throws -> String {
        for folder in ["/usr/bin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
            return "\(folder)/\(name)"
        }
        try Prerequisite.unmet("\(name) is not installed (Debian package ffmpeg, GRANITE_APT_TEST_PACKAGES)")
    }

    func frameCount(_ path: String) throws -> Int {
        let run = try ChildProgram.run(try tool("ffprobe"), ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                              "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path])
        XCTAssertEqual(run.status, 0, run.err)
        return Int(run.out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    func testRecordingHoldsEveryProcessedFrameAndDecodesToTheFilesWritten() throws {
        let cam = try ChildProgram.built("granite-cam")
        let w = 320, h = 240
        let file = dir.appendingPathComponent("clip.mkv").path
        let run = try ChildProgram.run(cam, ["--source", "testpattern", "--size", "\(w)x\(h)", "--fps", "30", "--frames", "30",
                                             "--out", dir.appendingPathComponent("files").path, "--image-format", "ppm",
                                             "--status-hz", "1", "--record", file])
        XCTAssertEqual(run.status, 0, run.err)
        XCTAssertTrue(run.out.contains("encoder libx264 (auto:"), "the choice and why at start: \(run.out)")
        let sidecar = try String(contentsOfFile: dir.appendingPathComponent("files/frames.jsonl").path, encoding: .utf8)
            .split(separator: "\n")
        XCTAssertTrue(run.out.contains("recorded \(sidecar.count) frames"), run.out)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("clip.partial.mkv").path))
        XCTAssertEqual(try frameCount(file), sidecar.count, "frames in the file = frames processed")

        // Decoded by ffmpeg against the files the run wrote, both in the project's one YUV conversion.
        let raw = dir.appendingPathComponent("decoded.yuv").path
        let decode = try ChildProgram.run(try tool("ffmpeg"), ["-v", "error", "-i", file, "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p", raw])
        XCTAssertEqual(decode.status, 0, decode.err)
        let decoded = try [UInt8](Data(contentsOf: URL(fileURLWithPath: raw)))
        let size = w * h * 3 / 2
        XCTAssertEqual(decoded.count, size * sidecar.count)
        var worst = Double.infinity
        for k in stride(from: 0, to: sidecar.count, by: 7) {
            let name = String(sidecar[k].split(separator: "\"file\":\"")[1].split(separator: "\"")[0])
            let ppm = try [UInt8](Data(contentsOf: dir.appendingPathComponent("files/\(name)")))
            let header = "P6\n\(w) \(h)\n255\n".utf8.count
            let rgb = try Image(width: w, height: h, format: .rgb24, bytes: Array(ppm.dropFirst(header)))
            let expected = ColorConversion.yuv(try ColorConversion.rgba(rgb), layout: .i420)
            let got = Array(decoded[(k * size)..<((k + 1) * size)])
            var sum = 0.0
            for (a, b) in zip(expected, got) { let d = Double(a) - Double(b); sum += d * d }
            let mse = sum / Double(size)
            worst = min(worst, mse == 0 ? 99 : 10 * log10(255 * 255 / mse))
        }
        print("granite-cam --record, x264 at the default quality: lowest PSNR \(worst) dB against the frames written")
        XCTAssertGreaterThanOrEqual(worst, 40)
    }

    /// `kill -9` mid-recording: nothing under the final name, the partial file plays up to its last second.
    func testAKilledRecordingStillPlays() throws {
        let cam = try ChildProgram.built("granite-cam")
        let file = dir.appendingPathComponent("killed.mp4").path
        let running = try ChildProgram.launch(cam, ["--source", "testpattern", "--size", "320x240", "--fps", "30", "--frames", "900",
                                                    "--status-hz", "1", "--record", file])
        let partial = dir.appendingPathComponent("killed.partial.mp4").path
        // Three seconds of recording after the file appears.
        var waited = 0
        while !FileManager.default.fileExists(atPath: partial) && waited < 600 { usleep(50_000); waited += 1 }
        usleep(3_000_000)
        kill(running.pid, SIGKILL)
        let result = running.finish()
        XCTAssertEqual(result.reason, .uncaughtSignal)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file), "nothing under the final name")
        let count = try frameCount(partial)
        print("killed after ~3 s: \(count) frames play in \(partial)")
        XCTAssertGreaterThanOrEqual(count, 30, "at least the first second plays")
    }

    /// A full disk (a file size limit, `ulimit -f`): exit ≠ 0, the message says what was kept, and it plays.
    func testAFullDiskStopsWithAnErrorAndWhatWasKeptPlays() throws {
        let cam = try ChildProgram.built("granite-cam")
        let file = dir.appendingPathComponent("full.mkv").path
        let run = try ChildProgram.shell("ulimit -f 300; exec '\(cam)' --source testpattern --size 640x480 --fps 30 --frames 600 "
                                         + "--unpaced --status-hz 1 --quality 0 --record '\(file)'")
        XCTAssertNotEqual(run.status, 0, run.out)
        XCTAssertEqual(run.reason, .exit, "a clean stop, not SIGXFSZ: \(run.err)")
        XCTAssertTrue(run.err.contains("disk is full") && run.err.contains("kept") && run.err.contains("full.partial.mkv"), run.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file), "nothing under the final name")
        XCTAssertGreaterThan(try frameCount(dir.appendingPathComponent("full.partial.mkv").path), 0, "what was kept plays")
    }

    func testRecordOptionsAreCheckedBeforeCapture() throws {
        let cam = try ChildProgram.built("granite-cam")
        let bad = try ChildProgram.run(cam, ["--source", "testpattern", "--frames", "1", "--record", dir.appendingPathComponent("a.avi").path])
        XCTAssertEqual(bad.status, 64, bad.err)
        XCTAssertTrue(bad.err.contains("a.avi"), bad.err)
        let webm = try ChildProgram.run(cam, ["--source", "testpattern", "--frames", "1", "--encoder", "x264",
                                              "--record", dir.appendingPathComponent("a.webm").path])
        XCTAssertNotEqual(webm.status, 0)
        XCTAssertTrue(webm.err.contains("WebM"), webm.err)
        let orphan = try ChildProgram.run(cam, ["--source", "testpattern", "--frames", "1", "--encoder", "vp9"])
        XCTAssertEqual(orphan.status, 64, orphan.err)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])
    }
}

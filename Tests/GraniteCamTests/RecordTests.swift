import Foundation
import GraniteCapture
import GraniteMedia
import GraniteRecorder
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
        // A playlist's stream is listed twice (in its program, and on its own): the same count.
        return run.out.split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? -1
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

    /// Each video packet of `path` as FFmpeg's demuxer reads it back: its size and MD5 (`framemd5`,
    /// the packets copied, not decoded), and its presentation time in seconds.
    func videoPackets(_ path: String) throws -> (hashes: [String], times: [Double]) {
        let md5 = try ChildProgram.run(try tool("ffmpeg"), ["-v", "error", "-i", path, "-map", "0:v", "-c", "copy", "-f", "framemd5", "-"])
        XCTAssertEqual(md5.status, 0, md5.err)
        // stream_index, dts, pts, duration, size, hash
        let hashes = md5.out.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            line.split(separator: ",").suffix(2).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        }
        let probe = try ChildProgram.run(try tool("ffprobe"), ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time",
                                                               "-of", "csv=p=0", path])
        XCTAssertEqual(probe.status, 0, probe.err)
        return (hashes, probe.out.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) })
    }

    /// `--record` with `--segments`: one encoder feeds both (the start line and the summary say so,
    /// the summary from the recorder's count of encoders opened); both hold every processed frame,
    /// packet for packet the same bytes at the same times (ffmpeg's `framemd5` of the copied
    /// packets, ffprobe's times). WebM (VP9 under `auto`) with segments (H.264) needs two, and says why.
    func testRecordAndSegmentsShareOneEncoderPacketForPacket() throws {
        let cam = try ChildProgram.built("granite-cam")
        let file = dir.appendingPathComponent("clip.mkv").path, live = dir.appendingPathComponent("live").path
        let run = try ChildProgram.run(cam, ["--source", "testpattern", "--size", "320x240", "--fps", "30", "--frames", "75",
                                             "--status-hz", "1", "--record", file, "--segments", live, "--segment-seconds", "1"])
        XCTAssertEqual(run.status, 0, run.err)
        XCTAssertTrue(run.out.contains("and segments \(live)/live.m3u8, encoder libx264 (auto:") && run.out.contains("one encoder for both"), run.out)
        XCTAssertTrue(run.out.contains("1 video encoder opened for 2 outputs"), run.out)
        XCTAssertTrue(run.out.contains("recorded 75 frames") && run.out.contains("segments: 75 frames"), run.out)
        let playlist = live + "/live.m3u8"
        XCTAssertTrue(try String(contentsOfFile: playlist, encoding: .utf8).contains("#EXT-X-ENDLIST"))
        XCTAssertEqual(try frameCount(file), 75)
        XCTAssertEqual(try frameCount(playlist), 75)
        let recorded = try videoPackets(file), segmented = try videoPackets(playlist)
        XCTAssertEqual(recorded.hashes.count, 75)
        XCTAssertEqual(recorded.hashes, segmented.hashes, "the same packets, byte for byte, in both")
        XCTAssertEqual(recorded.times.count, segmented.times.count)
        for (a, b) in zip(recorded.times.sorted(), segmented.times.sorted()) {
            XCTAssertEqual(a - recorded.times.min()!, b - segmented.times.min()!, accuracy: 0.001, "the same times (Matroska's 1 ms against 1/90000 s)")
        }

        let webm = try ChildProgram.run(cam, ["--source", "testpattern", "--size", "320x240", "--frames", "10", "--unpaced", "--status-hz", "1",
                                              "--record", dir.appendingPathComponent("clip.webm").path, "--segments", dir.appendingPathComponent("live2").path])
        XCTAssertEqual(webm.status, 0, webm.err)
        XCTAssertTrue(webm.out.contains("two encoders for --record and --segments: ") && webm.out.contains("libvpx-vp9")
                      && webm.out.contains("libx264"), webm.out)
        XCTAssertTrue(webm.out.contains("2 video encoders opened for 2 outputs"), webm.out)
        XCTAssertEqual(try frameCount(dir.appendingPathComponent("clip.webm").path), 10)
        XCTAssertEqual(try frameCount(dir.appendingPathComponent("live2/live.m3u8").path), 10)
    }

    /// One encoder, two outputs, and the recording's file hits its size limit (`ulimit -f`; the
    /// segments, one file per second, stay under it): the run ends with exit ≠ 0 and says what the
    /// recording kept under its partial name (which plays); the segments end cleanly — the
    /// playlist ended (`#EXT-X-ENDLIST`), every frame encoded up to the stop in them.
    func testAFullRecordingEndsTheRunAndTheSegmentsEndCleanly() throws {
        let cam = try ChildProgram.built("granite-cam")
        let file = dir.appendingPathComponent("full.mkv").path, live = dir.appendingPathComponent("live").path
        let run = try ChildProgram.shell("ulimit -f 100; exec '\(cam)' --source testpattern --size 320x240 --fps 30 --frames 900 "
                                         + "--unpaced --status-hz 1 --quality 0 --record '\(file)' --segments '\(live)' --segment-seconds 0.5")
        XCTAssertNotEqual(run.status, 0, run.out)
        XCTAssertEqual(run.reason, .exit, "a clean stop, not SIGXFSZ: \(run.err)")
        XCTAssertTrue(run.err.contains("error: --record:") && run.err.contains("disk is full") && run.err.contains("kept")
                      && run.err.contains("full.partial.mkv"), run.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file), "nothing under the final name")
        XCTAssertGreaterThan(try frameCount(dir.appendingPathComponent("full.partial.mkv").path), 0, "what was kept plays")
        let ended = run.out.split(separator: "\n").first { $0.contains("segments: ") && $0.contains(" frames, ") }
        XCTAssertNotNil(ended, "the segments ended cleanly: \(run.out)")
        let frames = ended.flatMap { Int($0.split(separator: "segments: ")[1].split(separator: " ")[0]) } ?? -1
        XCTAssertTrue(try String(contentsOfFile: live + "/live.m3u8", encoding: .utf8).contains("#EXT-X-ENDLIST"))
        XCTAssertEqual(try frameCount(live + "/live.m3u8"), frames, "every frame encoded is in the segments")
        XCTAssertLessThan(frames, 900)
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
    /// FFmpeg is opened when a recording starts, not linked: without it (fault injection: the
    /// loader asks for libavcodec under a name no system has) `--record` and `--segments` stop
    /// before capture naming the library and the package, nothing is written, and a run that does
    /// not record works.
    func testWithoutFFmpegRecordingStopsBeforeCaptureAndTheRestRuns() throws {
        let cam = try ChildProgram.built("granite-cam")
        let needed = try ChildProgram.run("/usr/bin/readelf", ["-d", cam])
        XCTAssertEqual(needed.status, 0, needed.err)
        XCTAssertTrue(needed.out.contains("(NEEDED)"), needed.out)
        for library in ["libavcodec", "libavformat", "libavutil", "libswresample"] {
            XCTAssertFalse(needed.out.contains("[\(library).so"), "granite-cam does not link \(library): \(needed.out)")
        }

        try FFmpegLibraries.load()   // here, for the version the headers are from
        let missing = "libavcodec.so.\(EncoderChoice.libavcodecVersion.split(separator: ".")[0])"
        let fault: [String: String?] = [FFmpegLibraries.faultInjectionMissing: missing]
        let files = dir.appendingPathComponent("files").path
        for output in [["--record", dir.appendingPathComponent("clip.mkv").path], ["--segments", dir.appendingPathComponent("live").path]] {
            let run = try ChildProgram.run(cam, ["--source", "testpattern", "--size", "320x240", "--frames", "5", "--out", files] + output,
                                           environment: fault)
            XCTAssertEqual(run.status, 1, "\(output): \(run.err)")
            XCTAssertTrue(run.err.contains("recording needs FFmpeg's \(missing)") && run.err.contains("install the package libavcodec"), run.err)
            XCTAssertFalse(run.out.contains("frames in"), "stopped before capture: \(run.out)")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [], "\(output): nothing written")
        }
        let plain = try ChildProgram.run(cam, ["--source", "testpattern", "--size", "320x240", "--frames", "5", "--out", files,
                                               "--image-format", "ppm"], environment: fault)
        XCTAssertEqual(plain.status, 0, plain.err)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: files).filter { $0.hasSuffix(".ppm") }.count, 5)
    }

    /// Sound handed to the sink as `--audio` does (blocks stamped on the capture clock, arriving a
    /// little after the frames), starting 0.3 s before the first frame and with 0.2 s lost in the
    /// middle: the file's sound starts with the picture, the gap is silence, and the click captured
    /// with the flash frame plays with it.
    func testSoundIsPlacedByCaptureTimeAcrossAGapAndFromTheFirstFrame() throws {
        let path = dir.appendingPathComponent("sound.mkv").path
        let sink = try RecordSink(path: path, options: RecordingOptions(fps: 30), machine: EncoderChoice.Machine(nvenc: nil, vaapi: nil))
        let rate = 48_000, block = 1024
        sink.addSound(AudioFormat(sampleRate: rate, channels: 1))
        let first: UInt64 = 9_000_000_000, frame: UInt64 = 33_333_333
        let soundStart = first - 300_000_000
        let blockNanos = Double(block) * 1e9 / Double(rate)
        var next = 0
        for k in 0..<60 {
            let t = first + UInt64(k) * frame
            // The blocks captured up to 20 ms before this frame (sound arrives a graph cycle late);
            // those captured 0.4–0.6 s after the first frame are lost.
            while Double(soundStart) + Double(next + 1) * blockNanos <= Double(t) - 20e6 {
                let start = Double(soundStart) + Double(next) * blockNanos
                let after = (start - Double(first)) / 1e9
                if !(after >= 0.4 && after < 0.6) {
                    var samples = [Float](repeating: 0.01, count: block)
                    for i in 0..<block {
                        let at = (start + Double(i) * 1e9 / Double(rate) - Double(first)) / 1e9   // seconds after the first frame
                        if at >= 1.0 && at < 1.01 { samples[i] = 0.9 * Float(sin(2 * Double.pi * 2000 * at)) }
                    }
                    sink.takeSound(AudioBlock(samples: samples, timestampNanos: UInt64(start), sampleRate: rate, channels: 1))
                }
                next += 1
            }
            let luma: UInt8 = k == 30 ? 255 : 60
            let image = try Image(width: 64, height: 48, format: .rgba8, bytes: [UInt8](repeating: luma, count: 64 * 48 * 4))
            try sink.write(Frame(image: image, sequence: UInt64(k), timestampNanos: t, source: "test"))
        }
        // The rest of the sound arrives while the recording ends.
        while Double(soundStart) + Double(next) * blockNanos < Double(first + 61 * frame) {
            sink.takeSound(AudioBlock(samples: [Float](repeating: 0.01, count: block),
                                      timestampNanos: UInt64(Double(soundStart) + Double(next) * blockNanos), sampleRate: rate, channels: 1))
            next += 1
        }
        sink.finish()
        guard case .success? = sink.outcome else { return XCTFail("\(String(describing: sink.outcome))") }
        let counts = sink.soundCounts
        XCTAssertEqual(Double(counts.gaps) / Double(rate), 0.2, accuracy: blockNanos / 1e9 + 0.001, "the lost 0.2 s, as silence")
        XCTAssertEqual(counts.dropped, 0)

        // The flash: the brightest frame's time. The click: the first loud sample, at its decoded frame's time.
        let video = try ChildProgram.run(try tool("ffprobe"), ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                               "frame=pts_time:frame_tags=lavfi.signalstats.YAVG", "-f", "lavfi",
                                                               "movie=\(path),signalstats", "-of", "csv=p=0"])
        XCTAssertEqual(video.status, 0, video.err)
        let rows = video.out.split(separator: "\n").map { $0.split(separator: ",").compactMap { Double($0) } }.filter { $0.count == 2 }
        XCTAssertEqual(rows.count, 60)
        let flash = rows.max { $0[1] < $1[1] }![0]
        let frames = try ChildProgram.run(try tool("ffprobe"), ["-v", "error", "-select_streams", "a:0", "-show_entries",
                                                                "frame=pts_time,nb_samples", "-of", "csv=p=0", path])
        XCTAssertEqual(frames.status, 0, frames.err)
        let audioFrames = frames.out.split(separator: "\n").map { $0.split(separator: ",") }.compactMap { f -> (Double, Int)? in
            f.count == 2 ? Double(f[0]).flatMap { t in Int(f[1]).map { (t, $0) } } : nil
        }
        let raw = dir.appendingPathComponent("sound.f32").path
        let decode = try ChildProgram.run(try tool("ffmpeg"), ["-v", "error", "-i", path, "-map", "0:a", "-f", "f32le", "-ac", "1", raw])
        XCTAssertEqual(decode.status, 0, decode.err)
        let samples = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        XCTAssertEqual(samples.count, audioFrames.reduce(0) { $0 + $1.1 })
        let loud = try XCTUnwrap(samples.firstIndex { abs($0) > 0.3 })
        var before = 0
        var click = Double.nan
        for (t, n) in audioFrames {
            if loud < before + n { click = t + Double(loud - before) / Double(rate); break }
            before += n
        }
        let soundStarts = try XCTUnwrap(audioFrames.first?.0), soundEnds = audioFrames.last.map { $0.0 + Double($0.1) / Double(rate) } ?? 0
        print("RecordSink sound: flash at \(flash) s, click at \(click) s; sound from \(soundStarts) s to \(soundEnds) s, picture to \(rows.last![0] + 1.0 / 30) s")
        XCTAssertEqual(click, flash, accuracy: 0.001, "the click within 1 ms of the flash (Opus's pre-skip accounted for; Matroska's times are whole ms)")
        XCTAssertEqual(soundStarts, 0, accuracy: 0.001, "the sound starts with the first frame")
        XCTAssertEqual(soundEnds, rows.last![0] + 1.0 / 30, accuracy: 1.0 / 30, "the sound ends within a frame of the picture")
    }
}

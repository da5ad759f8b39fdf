import Foundation
import GraniteMedia
import GraniteProcess
import GraniteTesting
import XCTest

@testable import GraniteRecorder

/// Recordings written through FFmpeg's libraries, read back by Debian's ffprobe and ffmpeg (a
/// different program from the one that wrote them): frame counts, timestamps, codecs, and the
/// decoded pixels against the frames written.
final class RecorderTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("granite-rec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: dir) }

    func tool(_ name: String) throws -> String {
        for folder in ["/usr/bin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
            return "\(folder)/\(name)"
        }
        try Prerequisite.unmet("\(name) is not installed (Debian package ffmpeg, GRANITE_APT_TEST_PACKAGES)")
    }

    /// A machine with neither NVENC nor VA-API: `auto` is x264 whatever this one has.
    let plain = EncoderChoice.Machine(nvenc: nil, vaapi: nil)

    /// Frame `k` of a smooth moving scene in unpadded I420 (`w`×`h`, even sides).
    static func scene(_ k: Int, width w: Int, height h: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: w * h * 3 / 2)
        for y in 0..<h {
            for x in 0..<w {
                let v = 128 + 60 * sin(Double(x + 3 * k) / 11) * cos(Double(y - 2 * k) / 13)
                bytes[y * w + x] = UInt8(max(16, min(235, v)))
            }
        }
        let cw = w / 2, ch = h / 2
        for y in 0..<ch {
            for x in 0..<cw {
                bytes[w * h + y * cw + x] = UInt8(128 + 40 * sin(Double(x + k) / 9))
                bytes[w * h + cw * ch + y * cw + x] = UInt8(128 + 40 * cos(Double(y + k) / 7))
            }
        }
        return bytes
    }

    /// Writes `times` (nanoseconds) as frames of ``scene(_:width:height:)``; returns what was written.
    @discardableResult
    func record(_ recorder: Recorder, times: [UInt64]) throws -> [[UInt8]] {
        var written: [[UInt8]] = []
        for (k, t) in times.enumerated() {
            let frame = Self.scene(k, width: recorder.width, height: recorder.height)
            try recorder.append(timestampNanos: t) { buffer in frame.withUnsafeBytes { buffer.copyMemory(from: $0) } }
            written.append(frame)
        }
        return written
    }

    func probe(_ path: String, _ entries: String) throws -> String {
        let run = try ChildProgram.run(try tool("ffprobe"), ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                              "-show_entries", entries, "-of", "default=nw=1", path])
        XCTAssertEqual(run.status, 0, run.err)
        return run.out
    }

    func value(_ text: String, _ key: String) -> String? {
        text.split(separator: "\n").first { $0.hasPrefix("\(key)=") }.map { String($0.dropFirst(key.count + 1)) }
    }

    /// Frame times at 30 fps with frame 10 dropped (a gap).
    let times: [UInt64] = (0..<31).filter { $0 != 10 }.map { 5_000_000_000 + UInt64($0) * 33_333_333 }

    func testX264MatroskaHasEveryFrameAtItsCaptureTimeAndDecodesToWhatWasWritten() throws {
        let path = dir.appendingPathComponent("clip.mkv").path
        let recorder = try Recorder(path: path, width: 160, height: 96, options: RecordingOptions(fps: 30), machine: plain)
        XCTAssertEqual(recorder.choice.codecName, "libx264")
        XCTAssertTrue(recorder.choice.reason.contains("no NVIDIA"), recorder.choice.reason)
        XCTAssertEqual(recorder.partialPath, dir.appendingPathComponent("clip.partial.mkv").path)
        let written = try record(recorder, times: times)
        XCTAssertTrue(FileManager.default.fileExists(atPath: recorder.partialPath), "written under the partial name")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "nothing under the final name before the end")
        let summary = try recorder.finish()
        XCTAssertEqual(summary.frames, 30)
        XCTAssertFalse(FileManager.default.fileExists(atPath: recorder.partialPath))

        let info = try probe(path, "stream=codec_name,width,height,nb_read_frames,pix_fmt")
        XCTAssertEqual(value(info, "codec_name"), "h264")
        XCTAssertEqual(value(info, "width"), "160")
        XCTAssertEqual(value(info, "nb_read_frames"), "30", "frames in the file = frames appended")
        // Presentation times: the capture times less the first (Matroska: milliseconds), the dropped frame a gap.
        let frames = try probe(path, "frame=pts_time")
        let pts = frames.split(separator: "\n").compactMap { $0.hasPrefix("pts_time=") ? Double($0.dropFirst(9)) : nil }.sorted()
        XCTAssertEqual(pts.count, 30)
        for (k, t) in times.enumerated() {
            XCTAssertEqual(pts[k], Double(t - times[0]) / 1e9, accuracy: 0.0011, "frame \(k)")
        }
        XCTAssertEqual(pts[10] - pts[9], 2 * 0.0333, accuracy: 0.002, "the dropped frame is a gap, not a speed-up")

        // Decoded by ffmpeg, against the bytes written: PSNR of every plane ≥ 40 dB at the default quality.
        let raw = dir.appendingPathComponent("decoded.yuv").path
        let decode = try ChildProgram.run(try tool("ffmpeg"), ["-v", "error", "-i", path, "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p", raw])
        XCTAssertEqual(decode.status, 0, decode.err)
        let decoded = try [UInt8](Data(contentsOf: URL(fileURLWithPath: raw)))
        let size = 160 * 96 * 3 / 2
        XCTAssertEqual(decoded.count, size * 30)
        var worst = Double.infinity
        for k in 0..<min(30, decoded.count / size) {
            worst = min(worst, Self.psnr(written[k], Array(decoded[(k * size)..<((k + 1) * size)])))
        }
        print("x264 quality 20: lowest PSNR over 30 frames \(worst) dB")
        XCTAssertGreaterThanOrEqual(worst, 40)
    }

    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        var sum = 0.0
        for (x, y) in zip(a, b) { let d = Double(x) - Double(y); sum += d * d }
        let mse = sum / Double(a.count)
        return mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
    }

    func testFragmentedMP4AndVP9WebMCarryEveryFrame() throws {
        for (name, codec, encoder) in [("clip.mp4", "h264", RecordingOptions.Encoder.auto), ("clip.webm", "vp9", .auto), ("av1.mkv", "av1", .svtav1)] {
            let path = dir.appendingPathComponent(name).path
            let opened = Result { () throws(RecorderError) in
                try Recorder(path: path, width: 160, height: 96, options: RecordingOptions(encoder: encoder, gop: 10, fps: 30), machine: plain)
            }
            if case let .failure(error) = opened, encoder == .svtav1 {
                print("AV1 (optional) not checked: \(error)")
                continue
            }
            let recorder = try opened.get()
            try record(recorder, times: Array(times.prefix(20)))
            try recorder.finish()
            let info = try probe(path, "stream=codec_name,nb_read_frames")
            XCTAssertEqual(value(info, "codec_name"), codec, name)
            XCTAssertEqual(value(info, "nb_read_frames"), "20", name)
        }
        // The MP4 is fragmented: a moof per fragment, the moov up front and empty.
        let mp4 = try [UInt8](Data(contentsOf: dir.appendingPathComponent("clip.mp4")))
        XCTAssertNotNil(mp4.firstRange(of: Array("moof".utf8)), "fragmented MP4")
    }

    /// What a `kill -9` leaves: the file as it stands mid-recording (every packet is handed to the
    /// kernel as it is muxed) plays up to its last second, under the partial name only.
    func testARecordingCutOffMidwayPlaysUnderItsPartialName() throws {
        for name in ["cut.mkv", "cut.mp4"] {
            let path = dir.appendingPathComponent(name).path
            let recorder = try Recorder(path: path, width: 160, height: 96, options: RecordingOptions(gop: 15, fps: 30), machine: plain)
            let long = (0..<90).map { UInt64($0) * 33_333_333 }
            try record(recorder, times: long)
            // Copy it as it is now, as a killed process would leave it.
            let copy = dir.appendingPathComponent("copy-\(name)").path
            try FileManager.default.copyItem(atPath: recorder.partialPath, toPath: copy)
            XCTAssertFalse(FileManager.default.fileExists(atPath: path))
            let info = try probe(copy, "stream=codec_name,nb_read_frames")
            let count = Int(value(info, "nb_read_frames") ?? "") ?? 0
            print("\(name) cut after 90 frames (3 s): \(count) frames play")
            XCTAssertGreaterThanOrEqual(count, 90 - 45, "\(name): all but its last ~1.5 s play")
            recorder.abandon()
        }
    }

    /// A file size limit (RLIMIT_FSIZE, as a full disk): the recording stops with ``RecorderError/diskFull(path:kept:)``,
    /// says what was kept, leaves nothing under the final name, and what it kept plays.
    func testAFullDiskStopsCleanlyAndWhatWasKeptPlays() throws {
        let path = dir.appendingPathComponent("full.mkv").path
        var old = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &old)
        let oldHandler = signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit(rlim_cur: 150_000, rlim_max: old.rlim_max)
        setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit)
        var caught: RecorderError?
        do {
            let recorder = try Recorder(path: path, width: 320, height: 192, options: RecordingOptions(quality: 0, gop: 10, fps: 30), machine: plain)
            do {
                for k in 0..<600 {
                    let frame = Self.scene(k * 7, width: 320, height: 192)
                    try recorder.append(timestampNanos: UInt64(k) * 33_333_333) { buffer in frame.withUnsafeBytes { buffer.copyMemory(from: $0) } }
                }
                try recorder.finish()
            } catch {
                caught = error
                recorder.abandon()
            }
        }
        setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &old)
        signal(SIGXFSZ, oldHandler)
        guard case let .diskFull(where_, kept)? = caught else { return XCTFail("expected a full disk, got \(String(describing: caught))") }
        print("full disk: \(caught!)")
        XCTAssertTrue(where_.hasSuffix("full.partial.mkv"), where_)
        XCTAssertTrue(kept.contains("frames") && kept.contains("full.partial.mkv"), kept)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "nothing under the final name")
        let info = try probe(Recorder.partialName(path), "stream=nb_read_frames")
        XCTAssertGreaterThan(Int(value(info, "nb_read_frames") ?? "") ?? 0, 0, "what was kept plays")
    }

    /// Live segments: fMP4 segments and an HLS playlist that ends with EXT-X-ENDLIST; every frame plays through it.
    func testSegmentsMakeAnHLSPlaylistOfFragmentedMP4() throws {
        let path = dir.appendingPathComponent("live.m3u8").path
        var options = RecordingOptions(fps: 30)
        options.segmentSeconds = 1
        let recorder = try Recorder(path: path, width: 160, height: 96, options: options, machine: plain)
        let long = (0..<120).map { UInt64($0) * 33_333_333 }
        try record(recorder, times: Array(long.prefix(70)))
        // While it runs: the segments closed so far are listed, the playlist is not ended.
        let midway = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(midway.contains("seg00000.m4s"), midway)
        XCTAssertFalse(midway.contains("#EXT-X-ENDLIST"), midway)
        for t in long.dropFirst(70) {
            let frame = Self.scene(Int(t / 33_333_333), width: 160, height: 96)
            try recorder.append(timestampNanos: t) { buffer in frame.withUnsafeBytes { buffer.copyMemory(from: $0) } }
        }
        try recorder.finish()
        let playlist = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(playlist.contains("#EXT-X-ENDLIST"), playlist)
        XCTAssertTrue(playlist.contains("#EXT-X-MAP:URI=\"init.mp4\""), playlist)
        let segments = playlist.split(separator: "\n").filter { $0.hasSuffix(".m4s") }
        XCTAssertEqual(segments.count, 4, playlist)
        for segment in segments {
            XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent(String(segment)).path), String(segment))
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".tmp") }
        XCTAssertEqual(leftovers, [])
        let info = try probe(path, "stream=codec_name,nb_read_frames")
        XCTAssertEqual(value(info, "nb_read_frames"), "120")
    }

    /// Sound beside the video, placed by both capture clocks: a click in the audio against a flash in
    /// the picture, within 1 ms of each other as a player decodes the file (Opus in Matroska with its
    /// pre-skip, AAC in MP4 and in live segments with its priming).
    func testSoundIsInSyncWithTheVideo() throws {
        for (name, codec) in [("av.mkv", "opus"), ("av.webm", "opus"), ("av.mp4", "aac"), ("av.m3u8", "aac")] {
            let path = dir.appendingPathComponent(name).path
            let recorder = try Recorder(path: path, width: 160, height: 96, options: RecordingOptions(fps: 30),
                                        audio: AudioFormat(sampleRate: 44_100, channels: 2), machine: plain)
            XCTAssertEqual(recorder.audioCodecName, codec == "opus" ? "libopus" : "aac")
            let start: UInt64 = 7_000_000_000
            // The sound starts 0.2 s before the first frame (a microphone opens faster than a camera).
            let audioStart = start - 200_000_000
            let block = 441, rate = 44_100.0
            var nextBlock = 0
            for k in 0..<60 {
                let t = start + UInt64(k) * 33_333_333
                // Audio blocks captured up to this frame's time go in first (as two capture threads would interleave).
                while audioStart + UInt64(Double(nextBlock * block) / rate * 1e9) <= t {
                    let first = nextBlock * block
                    var pcm = [Float](repeating: 0, count: block * 2)
                    for i in 0..<block {
                        let at = Double(first + i) / rate - 0.2   // seconds after the first frame
                        let v: Float = (at >= 1.0 && at < 1.005) ? 0.9 : 0.01 * Float(sin(Double(first + i) / 20))
                        pcm[2 * i] = v
                        pcm[2 * i + 1] = v
                    }
                    try pcm.withUnsafeBufferPointer { buffer in
                        try recorder.appendAudio(buffer, timestampNanos: audioStart + UInt64(Double(first) / rate * 1e9))
                    }
                    nextBlock += 1
                }
                // The flash: frame 30, one second after the first frame.
                let luma: UInt8 = k == 30 ? 235 : 40
                try recorder.append(timestampNanos: t) { buffer in
                    buffer.initializeMemory(as: UInt8.self, repeating: 128)
                    UnsafeMutableRawBufferPointer(rebasing: buffer[0..<(160 * 96)]).initializeMemory(as: UInt8.self, repeating: luma)
                }
            }
            try recorder.finish()
            // Where the flash is: the video frame with the brightest picture, at its presentation time.
            let video = try ChildProgram.run(try tool("ffprobe"), ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                                   "frame=pts_time:frame_tags=lavfi.signalstats.YAVG", "-f", "lavfi",
                                                                   "movie=\(path),signalstats", "-of", "csv=p=0"])
            XCTAssertEqual(video.status, 0, video.err)
            let rows = video.out.split(separator: "\n").map { $0.split(separator: ",").compactMap { Double($0) } }.filter { $0.count == 2 }
            XCTAssertEqual(rows.count, 60, video.out)
            let flash = rows.max { $0[1] < $1[0 + 1] }![0]
            // Where the click is: its first loud sample in the decoded sound (at the stream's own rate),
            // timed by the decoded frames' own times (each frame's time and sample count, as a player
            // plays them: the encoder's padding dropped where the file says so, Opus's pre-skip).
            let audio = try ChildProgram.run(try tool("ffprobe"), ["-v", "error", "-select_streams", "a:0", "-show_entries",
                                                                   "stream=codec_name,sample_rate", "-of", "default=nw=1", path])
            XCTAssertEqual(value(audio.out, "codec_name"), codec, audio.out)
            let decodedRate = Double(value(audio.out, "sample_rate") ?? "") ?? .nan
            let decodedFrames = try ChildProgram.run(try tool("ffprobe"), ["-v", "error", "-select_streams", "a:0", "-show_entries",
                                                                           "frame=pts_time,nb_samples", "-of", "csv=p=0", path])
            XCTAssertEqual(decodedFrames.status, 0, decodedFrames.err)
            var starts: [(sample: Int, time: Double)] = [], at = 0
            for row in decodedFrames.out.split(separator: "\n") {
                let fields = row.split(separator: ",")
                guard fields.count == 2, let time = Double(fields[0]), let count = Int(fields[1]) else { continue }
                starts.append((at, time))
                at += count
            }
            let raw = dir.appendingPathComponent("\(name).f32").path
            let decode = try ChildProgram.run(try tool("ffmpeg"), ["-v", "error", "-i", path, "-map", "0:a", "-f", "f32le", "-ac", "1", raw])
            XCTAssertEqual(decode.status, 0, decode.err)
            let samples = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            XCTAssertEqual(samples.count, at, "the decoded sound is the frames ffprobe lists")
            guard let onset = samples.firstIndex(where: { abs($0) > 0.2 }), let frame = starts.last(where: { $0.sample <= onset }) else {
                return XCTFail("\(name): no click in the decoded sound")
            }
            let click = frame.time + Double(onset - frame.sample) / decodedRate
            let apart = (click - flash) * 1000
            print("\(name): flash at \(flash) s, click at \(click) s: \(String(format: "%+.2f", apart)) ms apart")
            XCTAssertEqual(apart, 0, accuracy: 1, "\(name): sound and picture within 1 ms (the encoder's padding accounted for)")
        }
    }

    /// One recorder, two outputs: a Matroska file and live segments fed by one video encoder (the
    /// count of encoders opened goes up by one), each with its own sound encoder (Opus, AAC); both
    /// hold every frame. WebM (VP9 under `auto`) and segments (H.264) cannot share one: a clear error.
    func testOneEncoderFeedsARecordingAndSegments() throws {
        let file = dir.appendingPathComponent("both.mkv").path, playlist = dir.appendingPathComponent("live.m3u8").path
        var options = RecordingOptions(fps: 30)
        options.segmentSeconds = 1
        XCTAssertNil(try Recorder.whyNotShared([file, playlist], options: options, machine: plain))
        let before = Recorder.videoEncodersOpened
        let recorder = try Recorder(paths: [file, playlist], width: 160, height: 96, options: options,
                                    audio: AudioFormat(sampleRate: 48_000, channels: 1), machine: plain)
        XCTAssertEqual(Recorder.videoEncodersOpened - before, 1, "one video encoder for two outputs")
        XCTAssertEqual(recorder.audioCodecNames, [file: "libopus", playlist: "aac"])
        var closed: [String] = []
        recorder.onSegmentClosed = { closed.append(String($0.split(separator: "/").last!)) }
        let times = (0..<60).map { 1_000_000_000 + UInt64($0) * 33_333_333 }
        for (k, t) in times.enumerated() {
            let pcm = [Float](repeating: 0.1, count: 1600)
            try pcm.withUnsafeBufferPointer { try recorder.appendAudio($0, timestampNanos: t) }
            let frame = Self.scene(k, width: 160, height: 96)
            try recorder.append(timestampNanos: t) { buffer in frame.withUnsafeBytes { buffer.copyMemory(from: $0) } }
        }
        let results = recorder.finishEach()
        XCTAssertEqual(try results.map { try $0.get().frames }, [60, 60])
        XCTAssertEqual(closed.first, "init.mp4")
        XCTAssertTrue(closed.contains("seg00001.m4s"), "\(closed)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: Recorder.partialName(file)))
        for (path, codec) in [(file, "opus"), (playlist, "aac")] {
            XCTAssertEqual(value(try probe(path, "stream=nb_read_frames"), "nb_read_frames"), "60", path)
            let audio = try ChildProgram.run(try tool("ffprobe"), ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=codec_name",
                                                                   "-of", "default=nw=1", path])
            XCTAssertEqual(value(audio.out, "codec_name"), codec, audio.out)
        }

        let webm = dir.appendingPathComponent("both.webm").path
        let why = try Recorder.whyNotShared([webm, playlist], options: options, machine: plain)
        XCTAssertTrue(why?.contains("libvpx-vp9") == true && why?.contains("libx264") == true, why ?? "nil")
        XCTAssertThrowsError(try Recorder(paths: [webm, playlist], width: 160, height: 96, options: options, machine: plain)) { error in
            XCTAssertTrue("\(error)".contains("one encoder cannot feed"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: Recorder.partialName(webm)), "no file left by a refused start")
    }

    func testOptionsThatDoNotFitAreClearErrors() throws {
        let bad = dir.appendingPathComponent("x.avi").path
        XCTAssertThrowsError(try Recorder(path: bad, width: 64, height: 64, options: RecordingOptions(), machine: plain)) { error in
            XCTAssertTrue("\(error)".contains("x.avi") && "\(error)".contains(".mkv"), "\(error)")
        }
        let webm = dir.appendingPathComponent("x.webm").path
        XCTAssertThrowsError(try Recorder(path: webm, width: 64, height: 64, options: RecordingOptions(encoder: .x264), machine: plain)) { error in
            XCTAssertTrue("\(error)".contains("WebM"), "\(error)")
        }
        XCTAssertThrowsError(try Recorder(path: dir.appendingPathComponent("odd.mkv").path, width: 63, height: 64, options: RecordingOptions(), machine: plain)) { error in
            XCTAssertTrue("\(error)".contains("even"), "\(error)")
        }
        XCTAssertThrowsError(try EncoderChoice.resolve(RecordingOptions(encoder: .nvenc), container: .matroska, machine: plain)) { error in
            XCTAssertTrue("\(error)".contains("libnvidia-encode"), "\(error)")
        }
        XCTAssertEqual(try EncoderChoice.resolve(RecordingOptions(), container: .mp4, machine: .init(nvenc: "test", vaapi: nil)).codecName, "h264_nvenc")
        XCTAssertEqual(try EncoderChoice.resolve(RecordingOptions(), container: .mp4, machine: .init(nvenc: nil, vaapi: "/dev/dri/renderD128")).codecName, "h264_vaapi")
        XCTAssertEqual(Recorder.partialName("/a.b/c"), "/a.b/c.partial")
        XCTAssertEqual(Recorder.partialName("out/clip.mp4"), "out/clip.partial.mp4")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [], "no file left by a refused start")
    }
}

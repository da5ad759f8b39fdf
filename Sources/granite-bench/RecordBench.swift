#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import GraniteCam
import GraniteIPFS
import GraniteIPFSTesting
import GraniteMedia
import GraniteProcess
import GraniteRecorder
import GraniteSync
import Synchronization

/// `granite-bench record`: `granite-cam --record` with `blur:sigma=2 | sobel | sepia` (sepia: `colormatrix` with the sepia matrix), live, x264
/// `veryfast`, against ffmpeg doing the same job in the same run (`testsrc2`, `gblur`, `sobel`, a
/// sepia colour matrix, `-c:v libx264 -preset veryfast -crf 20`): CPU per frame, frames dropped,
/// frames in the file. Both as child programs, their CPU from `wait4`'s rusage. ffmpeg filters in
/// planar RGB (`format=gbrp`: granite-cam filters RGBA; `sobel` takes no packed RGB) on its
/// default filter threads (one per core) and hands x264 4:2:0, as granite-cam does.
/// Then, per size, the recording's PSNR against the frames granite-cam processed (a short run that
/// also writes them as images), and once the time from a live segment closing to its CID pinned
/// on the Kubo test node (granite-cam's own parts: `RecordSink` segments, `SegmentPinner`, the pin session).
struct RecordBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "granite-cam --record (filters + x264 veryfast) vs ffmpeg doing the same job: CPU per frame, drops."
    )

    @Option(help: "Frame sizes, comma-separated.") var sizes = "1280x720,1920x1080"
    @Option(help: "Frames per run (at 30 fps, live).") var frames = 150
    @Option(help: "Runs per measurement (median reported).") var runs = 3
    @Flag(help: "Run the filters on Marble's CPU reference instead of the Vulkan device.") var cpuFilters = false
    @Option(help: "Seconds of live 1280x720 segments (1 s each) pinned on the Kubo test node; 0 skips.") var segmentRun = 20
    @Option(help: "Python with the Kubo test node's packages (scripts/tiers/pre-ipfs.sh).") var python = ".venv/bin/python"

    struct Sample { var cpuMillisPerFrame: Double; var dropped: Int; var inFile: Int }

    static let filters = ["--filter", "blur:sigma=2", "--filter", "sobel", "--filter",
                          "colormatrix:rr=0.393,rg=0.769,rb=0.189,gr=0.349,gg=0.686,gb=0.168,br=0.272,bg=0.534,bb=0.131"]

    func run() async throws {
        let cam = Self.sibling("granite-cam")
        let dir = "/tmp/granite-bench-record-\(getpid())"
        mkdir(dir, 0o755)
        defer { _ = try? ChildProgram.run("/bin/rm", ["-rf", dir]) }
        print("granite-bench record: blur:sigma=2 | sobel | sepia, x264 veryfast quality 20, \(frames) frames at 30 fps, \(runs) runs, median")
        for size in sizes.split(separator: ",").map(String.init) {
            let ours = try median {
                let file = "\(dir)/granite.mkv"
                var arguments = ["--source", "testpattern", "--size", size, "--fps", "30", "--frames", String(frames)] + Self.filters
                    + ["--record", file, "--encoder", "x264", "--status-hz", "1"]
                if cpuFilters { arguments.append("--cpu-filters") }
                let run = try ChildProgram.run(cam, arguments)
                guard run.shellStatus == 0 else { throw ValidationError("granite-cam exited with status \(run.shellStatus): \(run.err)") }
                let dropped = Self.number(before: " dropped", in: run.out) ?? -1
                let processed = Self.number(before: " frames in", in: run.out) ?? frames
                return Sample(cpuMillisPerFrame: run.cpuSeconds * 1000 / Double(max(1, processed)), dropped: dropped,
                              inFile: try Self.frameCount(file))
            }
            let theirs = try median {
                let file = "\(dir)/ffmpeg.mkv"
                let run = try ChildProgram.run("ffmpeg", ["-v", "error", "-y", "-re", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30",
                                                          "-frames:v", String(frames),
                                                          "-vf", "format=gbrp,gblur=sigma=2,sobel,colorchannelmixer=.393:.769:.189:0:.349:.686:.168:0:.272:.534:.131:0,format=yuv420p",
                                                          "-c:v", "libx264", "-preset", "veryfast", "-crf", "20", file])
                guard run.shellStatus == 0 else { throw ValidationError("ffmpeg exited with status \(run.shellStatus): \(run.err)") }
                return Sample(cpuMillisPerFrame: run.cpuSeconds * 1000 / Double(frames), dropped: 0, inFile: try Self.frameCount(file))
            }
            print("\(size): granite-cam \(Self.f(ours.cpuMillisPerFrame)) ms CPU/frame, \(ours.dropped) dropped, \(ours.inFile) frames in the file; "
                  + "ffmpeg \(Self.f(theirs.cpuMillisPerFrame)) ms CPU/frame, \(theirs.inFile) frames; "
                  + "granite/ffmpeg CPU per frame \(Self.f(ours.cpuMillisPerFrame / theirs.cpuMillisPerFrame))x")
            let quality = try psnr(cam: cam, size: size, dir: dir)
            print("\(size): PSNR of the recording against the \(quality.frames) frames granite-cam processed (written as images, "
                  + "both through the one YUV conversion): lowest \(Self.f(quality.lowest)) dB, mean \(Self.f(quality.mean)) dB")
        }
        if segmentRun > 0 {
            let latencies = try await segmentLatencies(dir: dir).sorted()
            guard !latencies.isEmpty else { throw ValidationError("no segment was pinned") }
            let p = { (q: Double) in latencies[min(latencies.count - 1, Int((q * Double(latencies.count)).rounded(.up)) - 1)] }
            print("segments: \(latencies.count) closed → CID pinned on the Kubo test node (1280x720, 1 s segments, 30 fps): "
                  + "p50 \(Self.f(p(0.5) * 1000)) ms, p99 \(Self.f(p(0.99) * 1000)) ms, max \(Self.f(latencies.last! * 1000)) ms "
                  + "(polled every 10 ms)")
        }
    }

    /// A 30-frame run writing every frame as an image too: the decoded recording against them,
    /// both in the project's one RGB → YUV conversion (I420), PSNR over all three planes per frame.
    func psnr(cam: String, size: String, dir: String) throws -> (lowest: Double, mean: Double, frames: Int) {
        let parts = size.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2 else { throw ValidationError("\(size): not WxH") }
        let (w, h) = (parts[0], parts[1])
        let files = "\(dir)/quality", file = "\(dir)/quality.mkv", raw = "\(dir)/quality.yuv"
        _ = try? ChildProgram.run("/bin/rm", ["-rf", files, file, raw])
        var arguments = ["--source", "testpattern", "--size", size, "--fps", "30", "--frames", "30"] + Self.filters
            + ["--record", file, "--encoder", "x264", "--status-hz", "1", "--out", files, "--image-format", "ppm"]
        if cpuFilters { arguments.append("--cpu-filters") }
        let run = try ChildProgram.run(Self.sibling("granite-cam"), arguments)
        guard run.shellStatus == 0 else { throw ValidationError("granite-cam exited with status \(run.shellStatus): \(run.err)") }
        let decode = try ChildProgram.run("ffmpeg", ["-v", "error", "-i", file, "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p", raw])
        guard decode.shellStatus == 0 else { throw ValidationError("ffmpeg could not decode \(file): \(decode.err)") }
        let decoded = try [UInt8](Data(contentsOf: URL(fileURLWithPath: raw)))
        let sidecar = try String(contentsOfFile: "\(files)/frames.jsonl", encoding: .utf8).split(separator: "\n")
        let frameBytes = w * h * 3 / 2
        guard decoded.count == frameBytes * sidecar.count else {
            throw ValidationError("\(file): \(decoded.count / frameBytes) frames decoded, \(sidecar.count) processed")
        }
        var values: [Double] = []
        for (k, line) in sidecar.enumerated() {
            guard let name = line.split(separator: "\"file\":\"").dropFirst().first?.split(separator: "\"").first else { continue }
            let ppm = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(files)/\(name)")))
            let header = "P6\n\(w) \(h)\n255\n".utf8.count
            let rgb = try Image(width: w, height: h, format: .rgb24, bytes: Array(ppm.dropFirst(header)))
            let expected = ColorConversion.yuv(try ColorConversion.rgba(rgb), layout: .i420)
            var sum = 0.0
            for i in 0..<frameBytes { let d = Double(expected[i]) - Double(decoded[k * frameBytes + i]); sum += d * d }
            let mse = sum / Double(frameBytes)
            values.append(mse == 0 ? 99 : 10 * log10(255 * 255 / mse))
        }
        guard !values.isEmpty else { throw ValidationError("\(files): no frame written") }
        return (values.min()!, values.reduce(0, +) / Double(values.count), values.count)
    }

    /// Seconds from each live segment closing (the recorder renamed it into place) to its CID
    /// listed as pinned by the Kubo test node: synthetic moving 1280x720 frames at 30 fps into a
    /// `RecordSink` writing 1 s segments, each handed to `SegmentPinner` (journal, local CID, the
    /// session's worker pins it) as granite-cam does; `pin/ls` polled every 10 ms.
    func segmentLatencies(dir: String) async throws -> [Double] {
        let work = "\(dir)/segments"
        try FileManager.default.createDirectory(atPath: work + "/live", withIntermediateDirectories: true)
        let node = try KuboStandinProcess(python: python, folder: "scripts/ipfs/kubo-testnode", guardScript: "scripts/ipfs/standin-guard.py",
                                          repo: work + "/repo", maxSeconds: 300)
        defer { node.stop() }
        let client = KuboClient(endpoint: try KuboEndpoint(parsing: node.url))
        let pins = try CamPinning(client: client, journalPath: work + "/pins.jsonl", wait: .seconds(30), retryInterval: .milliseconds(500))
        await pins.start()
        var options = RecordingOptions(encoder: .x264, fps: 30)
        options.segmentSeconds = 1
        let sink = try RecordSink(path: work + "/live/live.m3u8", options: options, machine: EncoderChoice.Machine(nvenc: nil, vaapi: nil))
        let pinner = SegmentPinner(pins: pins, playlist: sink.path)
        let times = Times()
        sink.notifySegments { path in
            times.closed.withLock { $0[String(path.split(separator: "/").last ?? "")] = .now }
            pinner.closed(path)
        }
        let poller = Task {
            while !times.stop.load(ordering: .relaxed) {
                if let list = try? await client.pinLs(type: "recursive") {
                    let now = ContinuousClock.now
                    times.seen.withLock { seen in for cid in list.keys where seen[cid] == nil { seen[cid] = now } }
                }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
        // 30 distinct frames (a bar moving over a gradient), cycled.
        let (w, h) = (1280, 720)
        let images = try (0..<30).map { k -> Image in
            var bytes = [UInt8](repeating: 255, count: w * h * 4)
            for y in 0..<h { for x in 0..<w {
                let i = (y * w + x) * 4
                let bar = abs(x - k * w / 30) < 40
                bytes[i] = bar ? 255 : UInt8(x * 255 / w); bytes[i + 1] = UInt8(y * 255 / h); bytes[i + 2] = bar ? 0 : UInt8((x + y + k * 8) & 255)
            } }
            return try Image(width: w, height: h, format: .rgba8, bytes: bytes)
        }
        let start = ContinuousClock.now
        for k in 0..<(segmentRun * 30) {
            try await Task.sleep(until: start + .nanoseconds(Int64(k) * 33_333_333), clock: .continuous)
            try sink.write(Frame(image: images[k % 30], sequence: UInt64(k), timestampNanos: UInt64(k) * 33_333_333, source: "bench"))
        }
        sink.finish()
        guard case .success? = sink.outcome else { throw ValidationError("segments: \(String(describing: sink.outcome))") }
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let (addresses, pinned) = (pinner.addresses, times.seen.withLock { $0 })
            if addresses.values.allSatisfy({ pinned[$0] != nil }) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        times.stop.store(true, ordering: .relaxed)
        _ = await poller.value
        _ = await pins.finish()
        let (addresses, pinned, closed) = (pinner.addresses, times.seen.withLock { $0 }, times.closed.withLock { $0 })
        return addresses.compactMap { name, cid in
            guard let at = pinned[cid], let from = closed[name] else { return nil }
            let d = at - from
            return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        }
    }

    /// When each segment closed (by name) and each CID was first seen pinned.
    final class Times: Sendable {
        let closed = Locked<[String: ContinuousClock.Instant]>([:])
        let seen = Locked<[String: ContinuousClock.Instant]>([:])
        let stop = Atomic<Bool>(false)
    }

    func median(_ body: () throws -> Sample) throws -> Sample {
        var samples: [Sample] = []
        for _ in 0..<max(1, runs) { samples.append(try body()) }
        return samples.sorted { $0.cpuMillisPerFrame < $1.cpuMillisPerFrame }[samples.count / 2]
    }

    /// The program beside this one (the same build's products folder).
    static func sibling(_ name: String) -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return name }
        let me = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return String(me[..<(me.lastIndex(of: "/") ?? me.endIndex)]) + "/" + name
    }

    static func frameCount(_ file: String) throws -> Int {
        let run = try ChildProgram.run("ffprobe", ["-v", "error", "-count_packets", "-select_streams", "v:0",
                                                   "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", file])
        return Int(run.out.split(separator: "\n").first.map(String.init) ?? "") ?? -1
    }

    /// The integer right before `marker` in `text` (`… 3 dropped`).
    static func number(before marker: String, in text: String) -> Int? {
        guard let range = text.range(of: marker) else { return nil }
        let digits = text[..<range.lowerBound].reversed().prefix { $0.isNumber }
        return Int(String(digits.reversed()))
    }

    static func f(_ v: Double) -> String {
        let h = Int((v * 100).rounded())
        return "\(h / 100).\(h % 100 < 10 ? "0" : "")\(h % 100)"
    }
}

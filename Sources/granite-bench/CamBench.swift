import ArgumentParser
import GraniteProcess
import Foundation
import GraniteCam
import GraniteCapture
import GraniteMedia
import GraniteMLVulkan

/// `granite-bench cam`: `granite-cam` (test pattern → 3 Marble filters) against ffmpeg
/// generating `testsrc2` through the equivalent threaded planar graph, at each size, in the same run.
///
/// Reported per size, median of `--runs`:
/// - end to end, both as child processes, start-up included: `granite-cam --source testpattern
///   --unpaced --frames N --filter CHAIN` (non-live: every frame processed) and `ffmpeg -f lavfi
///   -i testsrc2 -frames:v N -vf GRAPH -threads 2 -f null -`: frames/s, CPU per frame (the
///   child's user + system time) and peak RSS;
/// - with `--depth`: the same granite-cam run with `--depth` on every frame and a `depth` point
///   cloud after the chain: frames/s and depth maps/s;
/// - the pipeline paced at a camera rate, in process (live): achieved fps, drops, capture →
///   processed latency p50/p99, status renders.
struct CamBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cam",
        abstract: "granite-cam pipeline (test pattern + 3 filters) vs ffmpeg testsrc2 + equivalent filters."
    )

    @Option(help: "Seconds per granite run.") var seconds: Double = 8
    @Option(help: "Sizes, comma-separated.") var sizes = "1280x720,640x480"
    @Option(help: "Marble chain.") var chain = "blur:sigma=2 | sobel | " + CamBench.sepiaMarble
    @Option(help: "ffmpeg filter graph equivalent to the chain (planar, threaded: the fair comparison).")
    var ffmpegChain = "format=gbrp,gblur=sigma=2,sobel,colorchannelmixer=" + CamBench.sepiaFFmpeg
    @Option(help: "ffmpeg -threads.") var ffmpegThreads = 2
    @Option(help: "Frames per end-to-end run.") var frames = 300
    @Option(help: "Paced rate for the sustained run.") var fps: Double = 30
    @Option(help: "Runs per measurement (median reported).") var runs = 3
    @Flag(help: "Use Marble's CPU reference instead of Vulkan.") var cpu = false
    @Flag(help: "Also run the paced pipeline with depth (FastDepth) offered every frame.") var depth = false
    @Option(help: "With --depth: where granite-cam runs the model, comma-separated to compare (auto, gpu: the Vulkan backend in the frame's stream, cpu).")
    var depthDevice = "auto"
    @Flag(help: "With --depth: only the depth runs (no ffmpeg comparison, no paced run without depth).") var depthOnly = false
    @Option(help: "Soak: run the paced pipeline this many seconds per size (and with depth, with --depth), printing RSS as it goes.")
    var soak: Double?
    @Option(help: "Soak: seconds between RSS samples.") var sampleEvery: Double = 10
    @Option(help: "Soak: save every N-th frame as JPEG (to a temporary folder, removed after).") var saveEvery: Int?
    @Option(help: "Soak: seconds of the ffmpeg -re anchor per size.") var anchorSeconds: Double = 60
    @Option(help: "Soak: seconds between malloc_trim calls in the pipeline (0: never, to see the allocator's drift).")
    var trimEvery: Double = 10
    @Option(help: "Soak: allocations of at least this many bytes get their own mmap (0: glibc's dynamic default).")
    var mmapThreshold: Int = 1 << 20

    /// The classic sepia matrix, as a Marble `colormatrix` and as ffmpeg's `colorchannelmixer`.
    static let sepiaMarble = "colormatrix:rr=0.393,rg=0.769,rb=0.189,gr=0.349,gg=0.686,gb=0.168,br=0.272,bg=0.534,bb=0.131"
    static let sepiaFFmpeg = "rr=0.393:rg=0.769:rb=0.189:gr=0.349:gg=0.686:gb=0.168:br=0.272:bg=0.534:bb=0.131"

    func validate() throws {
        if frames < 1 { throw ValidationError("--frames must be at least 1") }
        _ = try depthDevices()
        if let soak, soak <= 0 { throw ValidationError("--soak takes a positive number of seconds") }
        if sampleEvery <= 0 { throw ValidationError("--sample-every must be positive") }
        if let saveEvery, saveEvery < 1 { throw ValidationError("--save-every must be at least 1") }
        if anchorSeconds <= 0 { throw ValidationError("--anchor-seconds must be positive") }
        if mmapThreshold < 0 { throw ValidationError("--mmap-threshold must be 0 (glibc default) or positive") }
        if trimEvery < 0 { throw ValidationError("--trim-every must be 0 (never) or positive") }
    }

    func run() async throws {
        if let soak {
            let list = try sizes.split(separator: ",").map { text in
                guard let size = FrameSize(parsing: String(text)) else { throw ValidationError("bad size \(text)") }
                return size
            }
            let soaker = CamSoak(seconds: soak, sampleEvery: sampleEvery, chain: chain, ffmpegChain: ffmpegChain, fps: fps,
                                 cpu: cpu, saveEvery: saveEvery, anchorSeconds: anchorSeconds,
                                 trimInterval: trimEvery > 0 ? trimEvery : nil, mmapThreshold: mmapThreshold > 0 ? mmapThreshold : nil)
            return try await soaker.run(sizes: list, depth: depth)
        }
        print("granite-bench cam: chain \"\(chain)\" (\(cpu ? "CPU reference" : "Vulkan")) vs ffmpeg \"\(ffmpegChain)\" -threads \(ffmpegThreads); "
              + "\(frames) frames, \(runs) runs, median; \(ProcessInfo.processInfo.activeProcessorCount) cores")
        if !cpu { print("device: \(try MarbleStage(specs: [chain]).chain.deviceDescription())") }
        let rssStart = MemoryProbe.residentKiB()
        let list = try sizes.split(separator: ",").map { text in
            guard let size = FrameSize(parsing: String(text)) else { throw ValidationError("bad size \(text)") }
            return size
        }
        for size in list {
            var granite: [EndToEnd] = [], ffmpeg: [EndToEnd] = []
            for _ in 0..<(depth && depthOnly ? 0 : runs) {
                granite.append(try runGraniteCam(size: size, chain: chain, depth: false))
                ffmpeg.append(try runFFmpeg(size: size))
            }
            if let g = granite.isEmpty ? nil : EndToEnd.median(granite), let f = ffmpeg.isEmpty ? nil : EndToEnd.median(ffmpeg) {
            print("\(size): granite-cam \(g.describe(frames: frames)) | ffmpeg \(f.describe(frames: frames))"
                  + " | granite/ffmpeg \(String(format: "%.2f", g.fps / f.fps))x fps, \(String(format: "%.2f", g.cpuPerFrame / f.cpuPerFrame))x CPU/frame")
            if g.processed != UInt64(frames) { print("\(size): warning: granite-cam processed \(g.processed) of \(frames) frames") }
            }
            for device in depth ? try depthDevices() : [] {
                var withDepth: [EndToEnd] = []
                for _ in 0..<runs { withDepth.append(try runGraniteCam(size: size, chain: chain + " | depth", depth: true, depthDevice: device)) }
                let d = EndToEnd.median(withDepth)
                print("\(size): granite-cam --depth (every frame) --depth-device \(device) + depth point cloud: \(d.describe(frames: frames))"
                      + ", depth \(fmt(d.depthFPS)) maps/s")
            }
        }
        // In-process runs last: a child's peak RSS (wait4's ru_maxrss) starts from this process's
        // peak at spawn (Linux keeps it across exec), so children run while this one is small.
        // Each in-process run's parts are let go when it ends: the resident size after each run
        // (allocator trimmed) stays flat run over run.
        var afterRuns: [Int] = []
        for size in list where !(depth && depthOnly) {
            var paced: [CamSummary] = []
            for _ in 0..<runs {
                paced.append(try await runGranite(size: size))
                MemoryProbe.trim()
                afterRuns.append(MemoryProbe.residentKiB())
            }
            let p = median(paced.map { Double($0.frames) / $0.seconds })
            print("\(size): live, paced \(fmt(fps)) fps → \(fmt(p)) fps, dropped \(median(paced.map { Double($0.dropped) }))"
                  + ", latency p50 \(fmt(median(paced.compactMap(\.latencyP50)))) ms p99 \(fmt(median(paced.compactMap(\.latencyP99)))) ms"
                  + ", renders \(median(paced.map { Double($0.renders) })) in \(fmt(seconds)) s")
        }
        if !afterRuns.isEmpty {
            print("RSS after each in-process run (trimmed): \(afterRuns.map { "\($0 / 1024)" }.joined(separator: ", ")) MiB")
        }
        // Live with depth on every frame: on the device (gpu) the map is made in the frame's stream.
        for size in list where depth {
            for device in try depthDevices() {
                var live: [CamSummary] = []
                for _ in 0..<runs { live.append(try await runGranite(size: size, depthEvery: 1, depthDevice: device, chain: chain + " | depth")) }
                let p = median(live.map { Double($0.frames) / $0.seconds })
                print("\(size): live, paced \(fmt(fps)) fps, --depth-device \(device), depth every frame + point cloud → \(fmt(p)) fps"
                      + ", depth \(fmt(median(live.map { Double($0.depthFrames) / $0.seconds }))) maps/s, dropped \(median(live.map { Double($0.dropped) }))"
                      + ", latency p50 \(fmt(median(live.compactMap(\.latencyP50)))) ms p99 \(fmt(median(live.compactMap(\.latencyP99)))) ms")
            }
        }
        print("RSS (this process, paced runs): \(rssStart / 1024) MiB at start, \(MemoryProbe.residentKiB() / 1024) MiB at end")
    }

    /// One end-to-end child run: wall time, CPU time, peak RSS, frames and depth maps reported.
    struct EndToEnd {
        var seconds: Double
        var cpuSeconds: Double
        var peakKiB: Int
        var processed: UInt64
        var depthMaps: UInt64

        var fps: Double { Double(processed) / seconds }
        var depthFPS: Double { Double(depthMaps) / seconds }
        var cpuPerFrame: Double { cpuSeconds / Double(max(1, processed)) }

        func describe(frames: Int) -> String {
            String(format: "%.1f fps, %.1f ms CPU/frame, peak RSS %d MiB", fps, cpuPerFrame * 1000, peakKiB / 1024)
        }

        /// The run with the median frame rate.
        static func median(_ runs: [EndToEnd]) -> EndToEnd {
            runs.sorted { $0.fps < $1.fps }[runs.count / 2]
        }
    }

    /// `granite-cam` as a child: the unpaced (non-live) test pattern through `chain`.
    /// The `--depth-device` choices to measure.
    func depthDevices() throws -> [InferenceDevice] {
        try depthDevice.split(separator: ",").map { text in
            guard let device = InferenceDevice(rawValue: String(text)) else { throw ValidationError("--depth-device: '\(text)' is not auto, gpu or cpu") }
            return device
        }
    }

    func runGraniteCam(size: FrameSize, chain: String, depth: Bool, depthDevice: InferenceDevice = .auto) throws -> EndToEnd {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("granite-bench-cam-\(getpid()).txt").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        var arguments = ["--source", "testpattern", "--size", "\(size)", "--frames", "\(frames)", "--unpaced",
                         "--filter", chain, "--status-hz", "1"]
        if cpu { arguments.append("--cpu-filters") }
        if depth { arguments += ["--depth", "--depth-device", depthDevice.rawValue] }
        let run = try ChildProgram.run(siblingExecutable("granite-cam"), arguments, stdout: .file(log), stderr: .discard)
        guard run.shellStatus == 0 else { throw ValidationError("granite-cam exited \(run.shellStatus)") }
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return EndToEnd(seconds: run.seconds, cpuSeconds: run.cpuSeconds, peakKiB: run.peakKiB,
                        processed: Self.number(before: " frames in ", in: output) ?? 0,
                        depthMaps: Self.number(before: " depth maps", in: output) ?? 0)
    }

    /// The integer just before `marker` in `text` (`granite-cam: 300 frames in …` → 300).
    static func number(before marker: String, in text: String) -> UInt64? {
        guard let range = text.range(of: marker) else { return nil }
        let digits = text[..<range.lowerBound].reversed().prefix { $0.isNumber }
        return UInt64(String(digits.reversed()))
    }

    /// ffmpeg as a child: `frames` frames of testsrc2 through the graph, start-up included.
    func runFFmpeg(size: FrameSize) throws -> EndToEnd {
        let run = try ChildProgram.run("ffmpeg", ["-hide_banner", "-nostats", "-loglevel", "error", "-f", "lavfi",
                                                  "-i", "testsrc2=size=\(size):rate=\(Int(fps))", "-frames:v", "\(frames)",
                                                  "-vf", ffmpegChain, "-threads", "\(ffmpegThreads)", "-f", "null", "-"], stdout: .discard, stderr: .discard)
        guard run.shellStatus == 0 else { throw ValidationError("ffmpeg exited \(run.shellStatus)") }
        return EndToEnd(seconds: run.seconds, cpuSeconds: run.cpuSeconds, peakKiB: run.peakKiB, processed: UInt64(frames), depthMaps: 0)
    }

    func siblingExecutable(_ name: String) -> String { BenchData.siblingExecutable(name) }

    func runGranite(size: FrameSize, depthEvery: Int? = nil, depthDevice: InferenceDevice = .cpu, chain: String? = nil) async throws -> CamSummary {
        let chain = chain ?? self.chain
        var s = CamSettings()
        s.request = CaptureRequest(format: .auto, size: size, fps: fps)
        s.duration = seconds
        s.depthEvery = depthEvery
        let stage = try MarbleStage(specs: [chain], gpu: !cpu)
        let depthStage = try depthEvery.map { _ in try DepthEstimatorStage(backend: try depthDevice.backend()) }
        return try await CamApp(pipeline: try CamPipeline(settings: s, stages: [stage], depth: depthStage)).run()
    }

    func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    func fmt(_ value: Double) -> String { String(format: "%.1f", value) }
}

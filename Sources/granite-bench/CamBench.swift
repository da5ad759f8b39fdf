import ArgumentParser
import Foundation
import GraniteCam
import GraniteCapture
import GraniteMedia

/// `granite-bench cam`: the live pipeline (test pattern → 3 Marble filters) against ffmpeg
/// reading `testsrc2` through an equivalent filter graph, at each size, in the same run.
///
/// Reported per size: the whole pipeline paced at a camera rate (achieved fps, drops,
/// capture-to-processed latency p50/p99, status renders), then the throughput of pattern + chain
/// in a tight loop beside ffmpeg generating `testsrc2` through the equivalent graph for the same
/// number of frames (wall time, ffmpeg's default threading); RSS at start and end.
struct CamBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cam",
        abstract: "granite-cam pipeline (test pattern + 3 filters) vs ffmpeg testsrc2 + equivalent filters."
    )

    @Option(help: "Seconds per granite run.") var seconds: Double = 8
    @Option(help: "Sizes, comma-separated.") var sizes = "1280x720,640x480"
    @Option(help: "Marble chain.") var chain = "blur:sigma=2 | sobel | invert"
    @Option(help: "ffmpeg filter graph equivalent to the chain.") var ffmpegChain = "format=rgba,gblur=sigma=2,sobel,negate"
    @Option(help: "Paced rate for the sustained run.") var fps: Double = 30
    @Option(help: "Runs per measurement (median reported).") var runs = 3
    @Flag(help: "Use Marble's CPU reference instead of Vulkan.") var cpu = false
    @Flag(help: "Also run the paced pipeline with depth (FastDepth) offered every frame.") var depth = false
    @Option(help: "Soak: run the paced pipeline this many seconds per size (and with depth, with --depth), printing RSS as it goes.")
    var soak: Double?
    @Option(help: "Soak: seconds between RSS samples.") var sampleEvery: Double = 10
    @Option(help: "Soak: save every N-th frame as JPEG (to a temporary folder, removed after).") var saveEvery: Int?
    @Option(help: "Soak: seconds of the ffmpeg -re anchor per size.") var anchorSeconds: Double = 60
    @Option(help: "Soak: seconds between malloc_trim calls in the pipeline (0: never, to see the allocator's drift).")
    var trimEvery: Double = 10
    @Option(help: "Soak: allocations of at least this many bytes get their own mmap (0: glibc's dynamic default).")
    var mmapThreshold: Int = 1 << 20

    func validate() throws {
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
        print("granite-bench cam: chain \"\(chain)\" (\(cpu ? "CPU reference" : "Vulkan")) vs ffmpeg \"\(ffmpegChain)\"; "
              + "\(runs) runs, median; \(ProcessInfo.processInfo.activeProcessorCount) cores")
        let rssStart = residentKiB()
        for text in sizes.split(separator: ",") {
            guard let size = FrameSize(parsing: String(text)) else { throw ValidationError("bad size \(text)") }
            var paced: [CamSummary] = [], loop: [Double] = [], ffmpeg: [Double] = []
            for _ in 0..<runs {
                paced.append(try await runGranite(size: size))
                let (frames, rate) = try chainThroughput(size: size)
                loop.append(rate)
                ffmpeg.append(try runFFmpeg(size: size, frames: frames))
            }
            let p = median(paced.map { Double($0.frames) / $0.seconds }), u = median(loop), f = median(ffmpeg)
            print("\(size): granite paced \(fmt(fps)) fps → \(fmt(p)) fps, dropped \(median(paced.map { Double($0.dropped) }))"
                  + ", latency p50 \(fmt(median(paced.compactMap(\.latencyP50)))) ms p99 \(fmt(median(paced.compactMap(\.latencyP99)))) ms"
                  + ", renders \(median(paced.map { Double($0.renders) })) in \(fmt(seconds)) s")
            if depth {
                let runsWithDepth = try await (0..<runs).asyncMap { _ in try await runGranite(size: size, depthEvery: 1) }
                print("\(size): granite paced + depth every frame → \(fmt(median(runsWithDepth.map { Double($0.frames) / $0.seconds }))) fps"
                      + ", depth \(fmt(median(runsWithDepth.map { Double($0.depthFrames) / $0.seconds }))) fps (latest frame wins)"
                      + ", dropped \(median(runsWithDepth.map { Double($0.dropped) }))"
                      + ", latency p50 \(fmt(median(runsWithDepth.compactMap(\.latencyP50)))) ms p99 \(fmt(median(runsWithDepth.compactMap(\.latencyP99)))) ms")
            }
            print("\(size): pattern + chain loop \(fmt(u)) fps | ffmpeg testsrc2 + graph \(fmt(f)) fps | granite/ffmpeg \(fmt(u / f))x")
        }
        print("RSS: \(rssStart / 1024) MiB at start, \(residentKiB() / 1024) MiB at end")
    }

    func runGranite(size: FrameSize, depthEvery: Int? = nil) async throws -> CamSummary {
        var s = CamSettings()
        s.request = CaptureRequest(format: .auto, size: size, fps: fps)
        s.duration = seconds
        s.depthEvery = depthEvery
        let stage = try MarbleStage(specs: [chain], gpu: !cpu)
        let depthStage = try depthEvery.map { _ in try DepthEstimatorStage() }
        return try await CamApp(pipeline: try CamPipeline(settings: s, stages: [stage], depth: depthStage)).run()
    }

    /// Frames of the test pattern through the chain back to back for `seconds` (after one
    /// warm-up frame that builds the GPU plan); returns the frame count and the rate.
    func chainThroughput(size: FrameSize) throws -> (Int, Double) {
        let pattern = TestPattern(size: size, fps: fps)
        let stage = try MarbleStage(specs: [chain], gpu: !cpu)
        _ = try stage.process(pattern.render(index: 0))
        let start = monotonicNanos(), budget = UInt64(seconds * 1e9)
        var frames = 0
        while monotonicNanos() - start < budget || frames < 10 {
            _ = try stage.process(pattern.render(index: UInt64(frames)))
            frames += 1
        }
        return (frames, Double(frames) / (Double(monotonicNanos() - start) / 1e9))
    }

    /// ffmpeg's own wall time for `frames` frames of testsrc2 through the graph (fps).
    func runFFmpeg(size: FrameSize, frames: Int) throws -> Double {
        let run = try ChildProcess.run("ffmpeg", ["-hide_banner", "-nostats", "-loglevel", "error", "-f", "lavfi",
                                                  "-i", "testsrc2=size=\(size):rate=\(Int(fps))", "-frames:v", "\(frames)",
                                                  "-vf", ffmpegChain, "-f", "null", "-"])
        guard run.status == 0 else { throw ValidationError("ffmpeg exited \(run.status)") }
        return Double(frames) / run.seconds
    }

    func residentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    func fmt(_ value: Double) -> String { String(format: "%.1f", value) }
}

extension Range where Bound == Int {
    /// Runs `body` for each index, one after another.
    func asyncMap<T>(_ body: (Int) async throws -> T) async rethrows -> [T] {
        var out: [T] = []
        for i in self { out.append(try await body(i)) }
        return out
    }
}

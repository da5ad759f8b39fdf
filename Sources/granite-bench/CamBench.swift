import ArgumentParser
import Foundation
import GraniteCam
import GraniteCapture

/// `granite-bench cam`: the live pipeline (test pattern → 3 Marble filters) against ffmpeg
/// reading `testsrc2` through an equivalent filter graph, at each size, in the same run.
///
/// Reported per size: sustained fps at a paced camera rate (does it keep up, how many drops),
/// the unpaced maximum, capture-to-processed latency p50/p99, RSS at start and end; ffmpeg's
/// fps for the same frame count and size (wall time, its own default threading).
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

    func run() async throws {
        print("granite-bench cam: chain \"\(chain)\" (\(cpu ? "CPU reference" : "Vulkan")) vs ffmpeg \"\(ffmpegChain)\"; "
              + "\(runs) runs, median; \(ProcessInfo.processInfo.activeProcessorCount) cores")
        let rssStart = residentKiB()
        for text in sizes.split(separator: ",") {
            guard let size = FrameSize(parsing: String(text)) else { throw ValidationError("bad size \(text)") }
            var paced: [CamSummary] = [], unpaced: [CamSummary] = [], ffmpeg: [Double] = []
            for _ in 0..<runs {
                paced.append(try await runGranite(size: size, paced: true))
                let fast = try await runGranite(size: size, paced: false)
                unpaced.append(fast)
                ffmpeg.append(try runFFmpeg(size: size, frames: max(30, Int(fast.frames))))
            }
            let p = median(paced.map { Double($0.frames) / $0.seconds }), u = median(unpaced.map { Double($0.frames) / $0.seconds })
            let f = median(ffmpeg)
            print("\(size): granite paced \(fmt(fps)) fps → \(fmt(p)) fps, dropped \(median(paced.map { Double($0.dropped) }))"
                  + ", latency p50 \(fmt(median(paced.compactMap(\.latencyP50)))) ms p99 \(fmt(median(paced.compactMap(\.latencyP99)))) ms"
                  + ", renders \(median(paced.map { Double($0.renders) })) in \(fmt(seconds)) s")
            print("\(size): granite max \(fmt(u)) fps (latency p50 \(fmt(median(unpaced.compactMap(\.latencyP50)))) ms"
                  + " p99 \(fmt(median(unpaced.compactMap(\.latencyP99)))) ms) | ffmpeg \(fmt(f)) fps | granite/ffmpeg \(fmt(u / f))x")
        }
        print("RSS: \(rssStart / 1024) MiB at start, \(residentKiB() / 1024) MiB at end")
    }

    func runGranite(size: FrameSize, paced: Bool) async throws -> CamSummary {
        var s = CamSettings()
        s.request = CaptureRequest(format: .auto, size: size, fps: fps)
        s.duration = seconds
        s.paced = paced
        let stage = try MarbleStage(specs: [chain], gpu: !cpu)
        return try await CamApp(pipeline: try CamPipeline(settings: s, stages: [stage])).run()
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

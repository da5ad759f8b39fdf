import ArgumentParser
import GraniteProcess
import Foundation
import Granite
import GraniteCam
import GraniteCapture
import GraniteMedia
import GraniteSync

/// `granite-bench cam --soak S`: long runs of the paced pipeline (test pattern → chain, optionally
/// depth every frame and saving), printing RSS and glibc's heap totals every few seconds, then the
/// sustained numbers and RSS at start and end; ffmpeg (`-re`, same graph) in the same run.
struct CamSoak {
    var seconds: Double
    var sampleEvery: Double
    var chain: String
    var ffmpegChain: String
    var fps: Double
    var cpu: Bool
    var saveEvery: Int?
    var anchorSeconds: Double
    var trimInterval: Double?
    var mmapThreshold: Int?

    /// Memory seen during one run.
    struct Timeline {
        var start: MemorySample
        var samples: [(seconds: Double, memory: MemorySample)] = []

        /// RSS growth in MB/min over the samples after the first `warmUp` seconds (least squares).
        func growthPerMinute(after warmUp: Double) -> Double? {
            let points = samples.filter { $0.seconds >= warmUp }
                .map { ($0.seconds / 60, Double($0.memory.residentKiB) * 1024 / 1e6) }
            guard points.count >= 3 else { return nil }
            let n = Double(points.count)
            let mx = points.map(\.0).reduce(0, +) / n, my = points.map(\.1).reduce(0, +) / n
            let sxy = points.map { ($0.0 - mx) * ($0.1 - my) }.reduce(0, +)
            let sxx = points.map { ($0.0 - mx) * ($0.0 - mx) }.reduce(0, +)
            return sxx > 0 ? sxy / sxx : nil
        }
    }

    func run(sizes: [FrameSize], depth: Bool) async throws {
        print("granite-bench cam --soak \(fmt(seconds)) s: chain \"\(chain.isEmpty ? "(none: RGBA only)" : chain)\" "
              + "(\(cpu ? "CPU reference" : "Vulkan")), paced \(fmt(fps)) fps, save \(saveEvery.map { "every \($0)th frame as JPEG" } ?? "none")"
              + "; malloc_trim \(trimInterval.map { "every \(fmt($0)) s" } ?? "never")"
              + ", own mmap from \(mmapThreshold.map { "\($0) bytes" } ?? "glibc's dynamic threshold"); RSS sampled every \(fmt(sampleEvery)) s")
        for size in sizes {
            for withDepth in depth ? [false, true] : [false] {
                try await soak(size: size, depth: withDepth)
            }
            try anchor(size: size)
        }
    }

    func soak(size: FrameSize, depth: Bool) async throws {
        var settings = CamSettings()
        settings.request = CaptureRequest(format: .auto, size: size, fps: fps)
        settings.duration = seconds
        settings.depthEvery = depth ? 1 : nil
        settings.memoryTrimInterval = trimInterval
        settings.largeBlockMmapThreshold = mmapThreshold
        var folder: String?
        if let saveEvery {
            folder = NSTemporaryDirectory() + "granite-soak-\(getpid())-\(size)"
            try FileManager.default.createDirectory(atPath: folder!, withIntermediateDirectories: true)
            settings.outputDirectory = folder
            settings.save = .everyNth(saveEvery)
        }
        defer { if let folder { try? FileManager.default.removeItem(atPath: folder) } }
        let stage: any FrameStage = chain.isEmpty ? ToRGBA() : try MarbleStage(specs: [chain], gpu: !cpu)
        let depthStage = depth ? try DepthEstimatorStage() : nil
        let runtime = GraniteRuntime()
        let app = CamApp(pipeline: try CamPipeline(settings: settings, stages: [stage], encoder: CodecsEncoder(.jpg), depth: depthStage),
                         runtime: runtime)
        let label = "\(size)\(depth ? " + depth every frame" : "")"
        let timeline = Locked(Timeline(start: MemoryProbe.sample()))
        print("\(label): start \(timeline.withLock { $0.start.description })")
        let started = monotonicNanos(), every = sampleEvery
        let sampler = Task.detached { [app] in
            var next = every
            while !Task.isCancelled {
                let wait = next - Double(monotonicNanos() - started) / 1e9
                if wait > 0 { try? await Task.sleep(nanoseconds: UInt64(wait * 1e9)) }
                if Task.isCancelled { break }
                let memory = MemoryProbe.sample()
                timeline.withLock { $0.samples.append((next, memory)) }
                print("  t=\(Int(next)) s frames \(app.framesSoFar) | \(memory.description)")
                next += every
            }
        }
        let summary = try await app.run()
        sampler.cancel()
        let end = MemoryProbe.sample()
        let line = timeline.withLock { t in
            let rate = t.growthPerMinute(after: min(30, seconds / 4)).map { "\(String(format: "%+.2f", $0)) MB/min" } ?? "–"
            return "\(label): \(fmt(Double(summary.frames) / summary.seconds)) fps sustained (\(summary.frames) frames in \(fmt(summary.seconds)) s)"
                + ", dropped \(summary.dropped), latency p50 \(fmt(summary.latencyP50 ?? .nan)) ms p99 \(fmt(summary.latencyP99 ?? .nan)) ms"
                + (depth ? ", depth \(fmt(Double(summary.depthFrames) / summary.seconds)) fps" : "")
                + (saveEvery != nil ? ", saved \(summary.saved)" : "")
                + ", renders \(summary.renders)\n  RSS \(mb(t.start.residentKiB)) MB before the pipeline, "
                + "\(mb(t.samples.first?.memory.residentKiB ?? 0)) MB at \(fmt(sampleEvery)) s (running) → \(mb(end.residentKiB)) MB after \(fmt(summary.seconds)) s"
                + " (peak \(mb(t.samples.map(\.memory.residentKiB).max() ?? end.residentKiB)) MB, trend after warm-up \(rate))"
                + "; runtime errors \(runtime.errors.count)"
        }
        print(line)
    }

    /// ffmpeg reading testsrc2 in real time (`-re`) through the equivalent graph for `anchorSeconds`.
    /// Its peak RSS comes from GNU time when installed: `wait4`'s figure for a child spawned by
    /// this process starts from this process's own peak (Linux carries it over at exec).
    func anchor(size: FrameSize) throws {
        let frames = Int(anchorSeconds * fps)
        let ffmpeg = ["ffmpeg", "-hide_banner", "-nostats", "-loglevel", "error", "-re", "-f", "lavfi",
                      "-i", "testsrc2=size=\(size):rate=\(Int(fps))", "-frames:v", "\(frames)",
                      "-vf", ffmpegChain, "-f", "null", "-"]
        let run = try ChildProgram.run(ffmpeg[0], Array(ffmpeg.dropFirst()), stdout: .discard, stderr: .discard)
        guard run.shellStatus == 0 else { throw ValidationError("ffmpeg exited \(run.shellStatus)") }
        print("\(size): ffmpeg -re testsrc2 + \"\(ffmpegChain)\": \(frames) frames in \(fmt(run.seconds)) s → "
              + "\(fmt(Double(frames) / run.seconds)) fps (ffmpeg never drops; it fell behind real time by \(fmt(max(0, run.seconds - anchorSeconds))) s)"
              + ", peak RSS \(mb(run.peakKiB)) MB")
    }

    func mb(_ kib: Int) -> String { fmt(Double(kib) * 1024 / 1e6) }
    func fmt(_ value: Double) -> String { String(format: "%.1f", value) }
}

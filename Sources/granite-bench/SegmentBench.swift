#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import GraniteCam
import GraniteCapture
import GraniteML
import GraniteMLVulkan
import GraniteMedia
import GraniteProcess
import Marble

/// `granite-bench segment` (issue 38): background blur on a live stream — the granite-cam pipeline
/// at 1280×720, 30 fps, the person mask made every frame (MediaPipe's landscape selfie model) and
/// `background:mode=blur,sigma=12`, into a YUV 4:2:0 sink (the y4m pipe, written to /dev/null, as
/// a virtual camera takes it) — against what a Linux user runs today, measured in the same run: a
/// Python script with the same ONNX file on ONNX Runtime (CPU, all cores) and OpenCV's Gaussian
/// blur and composite (`scripts/bench/segment_anchor.py`, in the project's .venv), on the same frames
/// at the same pace.
///
/// The frames: a real photograph with a person (scikit-image's astronaut, from
/// `scripts/tiers/pre-ml.sh`) scaled to cover the frame by ImageMagick, played live (paced, latest
/// wins) from a folder as a camera would deliver it. Reported, median of `--runs`: frames out,
/// dropped, CPU per frame (this process's user + system time over the run), capture → processed
/// latency p50/p99; and the same pipeline without segmentation, so the latency the mask adds is
/// the difference. Goals (issue 38): ≤ 0.5× the anchor's CPU per frame, ≤ 1 frame added latency.
///
/// Then the mask's temporal stability on a still scene (goal: the smoothed mask changes at most
/// half as much from frame to frame as the unsmoothed model's): the same photo with fresh sensor
/// noise every frame (±`--noise` levels a channel, seeded), `--stability-frames` of them, each
/// through the model (the run's segmenter) and `background:mode=mask` with `smooth=0` and with the
/// default smoothing; `MaskStability.meanAbsoluteChange` of consecutive masks, averaged.
struct SegmentBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "segment",
        abstract: "granite-cam background blur (person mask every frame) live vs Python ONNX Runtime + OpenCV: CPU per frame, drops, latency."
    )

    @Option(help: "Frame size.") var size = "1280x720"
    @Option(help: "Paced rate.") var fps: Double = 30
    @Option(help: "Seconds per run.") var seconds: Double = 10
    @Option(help: "Runs per measurement (median reported).") var runs = 3
    @Option(help: "Marble chain.") var chain = "background:mode=blur,sigma=12"
    @Option(help: "Mask every N-th frame.") var segmentEvery = 1
    @Option(help: ArgumentHelp("Where granite-cam runs the model.", valueName: "auto|gpu|cpu")) var segmentDevice = "auto"
    @Option(help: "A photograph with a person (default: .build-ml-fixtures/photos/astronaut.png, made by scripts/tiers/pre-ml.sh).")
    var photo = ".build-ml-fixtures/photos/astronaut.png"
    @Option(help: "The anchor's Python (the project's .venv with onnxruntime, numpy, opencv-python-headless).")
    var python = ".venv/bin/python"
    @Option(help: "The anchor script.") var anchor = "scripts/bench/segment_anchor.py"
    @Option(help: "Threads the model runs on, on the CPU (default: granite-cam's, SegmentationStage.liveThreads).") var modelThreads: Int?
    @Flag(help: "Run the filters on Marble's CPU reference instead of Vulkan.") var cpuFilters = false
    @Flag(help: "Skip the anchor (granite only).") var noAnchor = false
    @Option(help: "Frames of the still scene for the mask's temporal stability (0: not measured).") var stabilityFrames = 30
    @Option(help: "Sensor noise of the still scene: ±levels a channel, drawn afresh every frame.") var noise = 2

    func validate() throws {
        guard FrameSize(parsing: size) != nil else { throw ValidationError("--size must be WxH") }
        if stabilityFrames < 0 || stabilityFrames == 1 || noise < 0 { throw ValidationError("--stability-frames must be 0 or at least 2, --noise not negative") }
        if fps <= 0 || seconds <= 0 || runs < 1 || segmentEvery < 1 { throw ValidationError("--fps, --seconds, --runs and --segment-every must be positive") }
        if InferenceDevice(rawValue: segmentDevice) == nil { throw ValidationError("--segment-device: '\(segmentDevice)' is not auto, gpu or cpu") }
    }

    /// One run's figures.
    struct Sample {
        var frames: Double, dropped: Double, cpuMillisPerFrame: Double, latencyP50: Double, latencyP99: Double, masks: Double
    }

    func run() async throws {
        let frameSize = FrameSize(parsing: size)!
        guard FileManager.default.fileExists(atPath: photo) else {
            throw ValidationError("no photograph at \(photo) (scripts/tiers/pre-ml.sh fetches scikit-image's astronaut; or give --photo)")
        }
        let dir = "/tmp/granite-bench-segment-\(getpid())"
        try FileManager.default.createDirectory(atPath: "\(dir)/frames", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The photo scaled to cover the frame and cropped to it, as a binary PPM (the folder source
        // reads it without a codec; the anchor reads the same file).
        let frame = "\(dir)/frames/frame.ppm"
        let convert = FileManager.default.isExecutableFile(atPath: "/usr/bin/convert") ? "/usr/bin/convert" : "convert"
        let made = try ChildProgram.run(convert, [photo, "-resize", "\(size)^", "-gravity", "center", "-extent", size, "-depth", "8", "ppm:\(frame)"])
        guard made.shellStatus == 0 else { throw ValidationError("ImageMagick could not scale \(photo): \(made.err)") }
        let mapStage = try SegmentationStage(frameSize: frameSize, threads: modelThreads ?? SegmentationStage.liveThreads,
                                             backend: try InferenceDevice(rawValue: segmentDevice)!.backend())
        let model = mapStage.segmenter.modelPath
        let device = cpuFilters ? "Marble's CPU reference" : try MarbleStage(specs: [chain]).chain.deviceDescription()
        print("granite-bench segment: \(size) at \(RecordBench.f(fps)) fps live for \(RecordBench.f(seconds)) s, \(runs) runs, median; "
              + "\(ProcessInfo.processInfo.activeProcessorCount) cores")
        print("frames: \(photo) covering \(size); model \(model) on the \(InferenceDevice.describe(mapStage.segmenter.runner)); filters on \(device)")
        var plain: [Sample] = [], masked: [Sample] = [], theirs: [Sample] = []
        for _ in 0..<runs {
            plain.append(try await granite(frames: "\(dir)/frames", size: frameSize, segmenting: nil))
            masked.append(try await granite(frames: "\(dir)/frames", size: frameSize, segmenting: mapStage))
            if !noAnchor { theirs.append(try python(frame: frame, model: model)) }
        }
        let stability = stabilityFrames > 0 ? try maskStability(frame: frame, stage: mapStage) : nil
        let p = median(plain), g = median(masked)
        print("granite-cam, no segmentation (passthrough to the sink): \(describe(p))")
        print("granite-cam, \(chain), mask every \(segmentEvery == 1 ? "frame" : "\(segmentEvery) frames"): \(describe(g)), \(RecordBench.f(g.masks)) masks/s")
        let frameMillis = 1000 / fps
        print("granite-cam: latency added by segmentation and \(chain): \(RecordBench.f(g.latencyP50 - p.latencyP50)) ms p50 "
              + "(\(RecordBench.f((g.latencyP50 - p.latencyP50) / frameMillis)) frames at \(RecordBench.f(fps)) fps)")
        if let stability { print(stability) }
        guard !theirs.isEmpty else { return }
        let a = median(theirs)
        print("anchor (Python: ONNX Runtime CPU, all cores + OpenCV GaussianBlur + composite + I420): \(describe(a))")
        print("granite/anchor CPU per frame \(RecordBench.f(g.cpuMillisPerFrame / a.cpuMillisPerFrame))x (goal ≤ 0.5x); "
              + "latency p50 granite \(RecordBench.f(g.latencyP50)) ms vs anchor \(RecordBench.f(a.latencyP50)) ms")
    }

    /// The mask's temporal stability on a still scene (the type's documentation), as a report line.
    func maskStability(frame path: String, stage: SegmentationStage) throws -> String {
        let still = try ColorConversion.rgba(try NetpbmDecoder().decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), path: path))
        let raw = try FilterChain([FilterSpec.parse("background:mode=mask,smooth=0")])
        let smoothed = try FilterChain([FilterSpec.parse("background:mode=mask")])
        var random = BenchData.Random(seed: 38)
        var previous: (model: Image, raw: Image, smoothed: Image)?
        var change = (model: 0.0, raw: 0.0, smoothed: 0.0)
        for _ in 0..<stabilityFrames {
            var bytes = still.bytes
            for i in bytes.indices where i % 4 != 3 {
                bytes[i] = UInt8(clamping: Int(bytes[i]) + Int(random.next() % UInt64(2 * noise + 1)) - noise)
            }
            let noisy = try Image(width: still.width, height: still.height, format: .rgba8, bytes: bytes)
            let mask = try stage.estimateMaps(noisy).map
            let now = (model: mask, raw: try raw.apply(noisy, depth: mask), smoothed: try smoothed.apply(noisy, depth: mask))
            if let previous {
                change.model += try MaskStability.meanAbsoluteChange(previous: previous.model, current: now.model)
                change.raw += try MaskStability.meanAbsoluteChange(previous: previous.raw, current: now.raw)
                change.smoothed += try MaskStability.meanAbsoluteChange(previous: previous.smoothed, current: now.smoothed)
            }
            previous = now
        }
        let n = Double(stabilityFrames - 1)
        let (model, unsmoothed, smooth) = (change.model / n, change.raw / n, change.smoothed / n)
        let e = { (v: Double) in String(format: "%.2e", v) }
        return "mask stability, still scene (±\(noise) levels of noise, \(stabilityFrames) frames), mean absolute change a frame: "
            + "the model's mask \(e(model)); background smooth=0 \(e(unsmoothed)); background smooth=0.5 (default) \(e(smooth)) = "
            + "\(RecordBench.f(smooth / model))x the model's, \(RecordBench.f(smooth / unsmoothed))x smooth=0's (goal ≤ 0.5x)"
    }

    func describe(_ s: Sample) -> String {
        "\(Int(s.frames)) frames, \(Int(s.dropped)) dropped, \(RecordBench.f(s.cpuMillisPerFrame)) ms CPU/frame, "
            + "latency p50 \(RecordBench.f(s.latencyP50)) ms p99 \(RecordBench.f(s.latencyP99)) ms"
    }

    /// The run with the median CPU per frame.
    func median(_ samples: [Sample]) -> Sample {
        samples.sorted { $0.cpuMillisPerFrame < $1.cpuMillisPerFrame }[samples.count / 2]
    }

    /// granite-cam's pipeline in this process: the folder played live and looped, into a y4m sink on
    /// /dev/null; with `segmenting`, the chain and the mask every `segmentEvery` frames.
    func granite(frames: String, size: FrameSize, segmenting: SegmentationStage?) async throws -> Sample {
        var s = CamSettings()
        s.source = .folder(frames)
        s.loopFolder = true
        s.live = true
        s.request = CaptureRequest(format: .auto, size: size, fps: fps)
        s.duration = seconds
        s.depthEvery = segmenting == nil ? nil : segmentEvery
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        guard null >= 0 else { throw ValidationError("cannot open /dev/null") }
        defer { close(null) }
        let stage: any FrameStage = segmenting == nil ? ToRGBA() : try MarbleStage(specs: [chain], gpu: !cpuFilters)
        let sink = Y4MSink(fd: null, chroma: .s420, fps: fps)
        _ = try stage.prepare(for: size, yuv: [sink.gpuLayout].compactMap { $0 })
        let before = Self.cpuSeconds()
        let summary = try await CamApp(pipeline: try CamPipeline(settings: s, stages: [stage], depth: segmenting, sinks: [sink])).run()
        let cpu = Self.cpuSeconds() - before
        return Sample(frames: Double(summary.frames), dropped: Double(summary.dropped),
                      cpuMillisPerFrame: cpu * 1000 / Double(max(1, summary.frames)),
                      latencyP50: summary.latencyP50 ?? .nan, latencyP99: summary.latencyP99 ?? .nan,
                      masks: Double(summary.depthFrames) / summary.seconds)
    }

    /// The anchor as a child: one JSON line of figures.
    func python(frame: String, model: String) throws -> Sample {
        let run = try ChildProgram.run(python, [anchor, "--frame", frame, "--model", model, "--fps", "\(fps)", "--seconds", "\(seconds)",
                                                "--sigma", "12", "--every", "\(segmentEvery)"])
        guard run.shellStatus == 0, let line = run.out.split(separator: "\n").last,
              let json = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Double] else {
            throw ValidationError("the anchor failed (status \(run.shellStatus)): \(run.err)")
        }
        // The child's own CPU (wait4) over the frames it processed: start-up (imports, the model's
        // session) is the script's "setup_cpu_s", taken off.
        let frames = json["frames"] ?? 0
        let cpu = run.cpuSeconds - (json["setup_cpu_s"] ?? 0)
        return Sample(frames: frames, dropped: json["dropped"] ?? .nan, cpuMillisPerFrame: cpu * 1000 / max(1, frames),
                      latencyP50: json["latency_p50_ms"] ?? .nan, latencyP99: json["latency_p99_ms"] ?? .nan, masks: 0)
    }

    /// This process's user + system CPU seconds so far.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}

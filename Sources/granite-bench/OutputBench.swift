#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import GraniteProcess
import GraniteCam
import GraniteCapture
import GraniteMedia
import Marble

/// `granite-bench outputs`: frames/s and CPU per frame of granite-cam's live outputs — the Y4M
/// pipe (`--pipe y4m`) and a V4L2 output (`--v4l2-out`, when a device is given) — against ffmpeg
/// writing the same raw stream (`testsrc2` → yuv420p → YUV4MPEG2 / V4L2), in the same run.
///
/// Both sides make the picture and convert it: granite renders its test pattern (RGBA) and the
/// sink converts and writes; ffmpeg generates `testsrc2` (YUV) and converts it with swscale.
struct OutputBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outputs",
        abstract: "granite-cam's --pipe y4m and --v4l2-out sinks vs ffmpeg writing the same raw stream."
    )

    @Option(help: "Frame size.") var size = "1280x720"
    @Option(help: "Frames per run.") var frames = 300
    @Option(help: "Runs per measurement (median reported).") var runs = 3
    @Option(name: .customLong("v4l2-out"), help: "A V4L2 output device (v4l2loopback) to measure too.") var v4l2Out: String?

    struct Sample { var fps: Double; var cpuMillisPerFrame: Double }

    func run() throws {
        guard let frameSize = FrameSize(parsing: size) else { throw ValidationError("bad --size \(size)") }
        print("granite-bench outputs: \(frameSize), \(frames) frames per run, \(runs) runs, median")
        let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(devNull) }
        let y4m = try median { try measure(Y4MSink(fd: devNull, chroma: .s420, fps: 30), size: frameSize) }
        let ffY4M = try median { try ffmpeg(["-f", "yuv4mpegpipe", "-y", "/dev/null"], size: frameSize) }
        report("y4m pipe (4:2:0) to /dev/null", y4m, ffY4M)
        gpuConversion(frameSize, devNull: devNull, ffmpeg: ffY4M)
        conversionAlone(frameSize)
        if let v4l2Out {
            do {
                let sink = try V4L2OutputSink(path: v4l2Out, size: frameSize, fps: 1000, preference: [.yuyv])
                let v4l2 = try median { try measure(sink, size: frameSize) }
                var gpu: Sample?
                if let layout = sink.gpuLayout {
                    let chain = try FilterChain([])
                    gpu = try median {
                        try measure(sink, size: frameSize) { frame in
                            var converted = frame
                            let gpuFrame = try chain.frame(frame.image)
                            defer { gpuFrame.end() }
                            converted.yuv = try gpuFrame.yuv([layout])
                            return converted
                        }
                    }
                }
                sink.finish()
                let ffV4L2 = try median { try ffmpeg(["-f", "v4l2", v4l2Out], size: frameSize, pixFmt: "yuyv422") }
                report("v4l2 out (YUYV) to \(v4l2Out)", v4l2, ffV4L2)
                if let gpu { report("v4l2 out (YUYV), YUV made on the GPU", gpu, ffV4L2) }
            } catch {
                print("v4l2 out: \(v4l2Out): \(error)")
            }
        } else {
            print("v4l2 out: not measured (no --v4l2-out device; load v4l2loopback and pass its node)")
        }
    }

    func report(_ name: String, _ ours: Sample, _ theirs: Sample) {
        func f(_ v: Double) -> String { String(Int((v * 10).rounded()) / 10) + "." + String(abs(Int((v * 10).rounded()) % 10)) }
        func g(_ v: Double) -> String { String(Int((v * 100).rounded()) / 100) + "." + String(format2(abs(Int((v * 100).rounded()) % 100))) }
        print("\(name): granite \(f(ours.fps)) fps, \(g(ours.cpuMillisPerFrame)) ms CPU/frame; "
              + "ffmpeg \(f(theirs.fps)) fps, \(g(theirs.cpuMillisPerFrame)) ms CPU/frame; "
              + "granite/ffmpeg CPU per frame \(g(ours.cpuMillisPerFrame / theirs.cpuMillisPerFrame))x")
    }

    func format2(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }

    func median(_ body: () throws -> Sample) throws -> Sample {
        var samples: [Sample] = []
        for _ in 0..<max(1, runs) { samples.append(try body()) }
        let byFPS = samples.map(\.fps).sorted(), byCPU = samples.map(\.cpuMillisPerFrame).sorted()
        return Sample(fps: byFPS[byFPS.count / 2], cpuMillisPerFrame: byCPU[byCPU.count / 2])
    }

    /// Renders the test pattern and hands every frame to `sink` (what the SinkRelay does per frame).
    /// `prepare` runs on each frame first (the GPU conversion).
    func measure(_ sink: any FrameSink, size: FrameSize, prepare: (Frame) throws -> Frame = { $0 }) throws -> Sample {
        let pattern = TestPattern(size: size)
        let cpu0 = cpuSeconds(), t0 = monotonicNanos()
        for i in 0..<frames {
            let frame = Frame(image: pattern.render(index: UInt64(i)), sequence: UInt64(i), timestampNanos: monotonicNanos(), source: "bench")
            try sink.write(try prepare(frame))
        }
        let wall = Double(monotonicNanos() - t0) / 1e9, cpu = cpuSeconds() - cpu0
        return Sample(fps: Double(frames) / wall, cpuMillisPerFrame: cpu * 1000 / Double(frames))
    }

    /// The y4m pipe with the frame's YUV made on the GPU (Marble's `yuv_out.comp`, what
    /// granite-cam does after a GPU chain): each RGBA frame goes up, is converted there and only
    /// the 4:2:0 bytes come back. CPU time counts the driver's threads too (lavapipe is the CPU).
    func gpuConversion(_ size: FrameSize, devNull: Int32, ffmpeg: Sample) {
        do {
            let chain = try FilterChain([])
            let sink = Y4MSink(fd: devNull, chroma: .s420, fps: 30)
            let sample = try median {
                try measure(sink, size: size) { frame in
                    let gpuFrame = try chain.frame(frame.image)
                    defer { gpuFrame.end() }
                    var converted = frame
                    converted.yuv = try gpuFrame.yuv([.i420])
                    return converted
                }
            }
            report("y4m pipe (4:2:0), YUV made on the GPU", sample, ffmpeg)
        } catch {
            print("y4m pipe, YUV made on the GPU: not measured: \(error)")
        }
    }

    /// The RGB → YUV 4:2:0 and YUYV conversions by themselves, vectorised and the scalar reference (the formulas
    /// pixel by pixel, as the outputs had them before), on one test-pattern frame, median of `runs`.
    func conversionAlone(_ size: FrameSize) {
        let image = TestPattern(size: size).render(index: 7)
        guard let rgba = try? ColorConversion.rgba(image) else { return }
        var out = [UInt8](repeating: 0, count: size.width * size.height * 2)
        func time(_ convert: (UnsafeMutablePointer<UInt8>) -> Void) -> Double {
            var samples: [Double] = []
            for _ in 0..<max(1, runs) {
                let t0 = monotonicNanos()
                for _ in 0..<50 { out.withUnsafeMutableBufferPointer { convert($0.baseAddress!) } }
                samples.append(Double(monotonicNanos() - t0) / 1e6 / 50)
            }
            return samples.sorted()[samples.count / 2]
        }
        let cw = (size.width + 1) / 2
        let simd = time { ColorConversion.planarYUV(rgba, subsampled: true, into: $0, lumaStride: size.width, chromaStride: cw) }
        let scalar = time { ColorConversion.planarYUVReference(rgba, subsampled: true, into: $0, lumaStride: size.width, chromaStride: cw) }
        func g(_ v: Double) -> String { String(Int((v * 100).rounded()) / 100) + "." + format2(abs(Int((v * 100).rounded()) % 100)) }
        print("RGB→YUV 4:2:0 alone: vectorised \(g(simd)) ms/frame, scalar reference \(g(scalar)) ms/frame (\(g(scalar / simd))x)")
        let yuyv = time { ColorConversion.packedYUYV(rgba, into: $0, stride: size.width * 2) }
        let yuyvScalar = time { ColorConversion.packedYUYVReference(rgba, into: $0, stride: size.width * 2) }
        print("RGB→YUYV alone: vectorised \(g(yuyv)) ms/frame, scalar reference \(g(yuyvScalar)) ms/frame (\(g(yuyvScalar / yuyv))x)")
    }

    func ffmpeg(_ output: [String], size: FrameSize, pixFmt: String = "yuv420p") throws -> Sample {
        let arguments = ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(size.width)x\(size.height):rate=30",
                         "-frames:v", String(frames), "-pix_fmt", pixFmt] + output
        let run = try ChildProgram.run("ffmpeg", arguments, stdout: .discard, stderr: .discard)
        guard run.shellStatus == 0 else { throw ValidationError("ffmpeg exited with status \(run.shellStatus)") }
        return Sample(fps: Double(frames) / run.seconds, cpuMillisPerFrame: run.cpuSeconds * 1000 / Double(frames))
    }

    func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}

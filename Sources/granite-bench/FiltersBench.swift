import ArgumentParser
import Foundation
import GraniteCapture
import GraniteGPU
import GraniteMedia
import Marble

/// `granite-bench filters`: Marble chains on the Vulkan device next to ffmpeg's CPU filters, same run.
///
/// ```
///  YUYV 1280x720 ─► ChainFrames, 2 in flight (frame N+1 runs while N is read back) / FilterChain.apply (upload, one
///                   submission, wait, download) ─► fps, ms/frame
///  ffmpeg -f lavfi testsrc2 ─► gblur, edgedetect, colorchannelmixer (-threads 2) ─► -f null
///  (ffmpeg per frame = (time for N+1 frames − time for 1 frame) / N: start-up excluded)
/// ```
struct FiltersBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "filters",
        abstract: "Frames/s of Marble filter chains on Vulkan beside ffmpeg, measured in the same run.")

    @Option(help: "Frame width.") var width = 1280
    @Option(help: "Frame height.") var height = 720
    @Option(help: "Frames per timed run.") var frames = 60
    @Option(help: "Timed runs; the median is reported.") var runs = 5
    @Option(help: "Extra chains to time (repeatable), e.g. --chain 'blur:sigma=2'.") var chain: [String] = []
    @Flag(help: "Only the extra chains, no ffmpeg.") var onlyExtra = false
    @Flag(help: "Also time the gaussian blur (sigma 2) in each shader style.") var styles = false
    @Flag(help: "Also print each chain's cost per GPU command (device timestamps, median of the runs).") var passes = false
    @Flag(help: "Feed rgba8 frames (as granite-cam's test pattern is) instead of YUYV.") var rgba = false
    @Flag(help: "Also time each chain with every filter its own step (no blur + sobel/ink fusion).") var unfused = false
    @Option(help: "Give the chains a person mask of this size (WxH, e.g. 256x144: an ellipse, grayF32) as their map, as granite-cam's segmenter does (for `background`).")
    var mask: String?

    static let sepia = "rr=0.393,rg=0.769,rb=0.189,gr=0.349,gg=0.686,gb=0.168,br=0.272,bg=0.534,bb=0.131"
    static let ffmpegSepia = ".393:.769:.189:0:.349:.686:.168:0:.272:.534:.131"

    func run() throws {
        let context = try GPUContext.shared()
        print("device: \(context.deviceName) (\(context.deviceKind)); \(width)x\(height), \(frames) frames x \(runs) runs "
              + "interleaved, median")
        print("memory: \(context.memoryPolicy.summary)")
        let yuyv = FiltersBench.pattern(width: width, height: height)
        let input = rgba ? try ColorConversion.rgba(yuyv) : yuyv
        let map = try mask.map(FiltersBench.personMask)
        var cases: [(String, () throws -> Cost)] = []
        var chains: [(String, String)] = onlyExtra ? [] : [
            ("yuyv→rgba + blur σ2 + sobel + colormatrix", "blur:sigma=2 | sobel | colormatrix:\(FiltersBench.sepia)"),
            ("yuyv→rgba + ink + godRay + analog", "ink | godRay | analog"),
        ]
        chains += chain.map { ((rgba ? "rgba8 + " : "yuyv→rgba + ") + ($0.isEmpty ? "nothing" : $0), $0) }
        if unfused { chains += chains.map { ("unfused: " + $0.0, $0.1) } }
        for (label, text) in chains {
            let specs = text.isEmpty ? [] : try FilterSpec.parseChain(text)
            let filters = try FilterChain(specs, context: context, fuseStencilTails: !label.hasPrefix("unfused: "))
            if passes { try FiltersBench.printPasses(label, filters, input, map, runs: max(runs, 5) * 3) }
            try FiltersBench.printCosts(label, filters, input, map)
            var index = 0
            // Throughput with two frames in flight, then one synchronous apply per frame.
            cases.append((label + ", pipelined", {
                try FiltersBench.seconds {
                    var previous: ChainFrame?
                    for _ in 0..<frames {
                        let frame = try filters.frame(input, time: Float(index) / 30, depth: map.map { .map($0) } ?? .none)
                        try frame.run()
                        index += 1
                        _ = try previous?.rgba()
                        previous?.end()
                        previous = frame
                    }
                    _ = try previous?.rgba()
                    previous?.end()
                }
            }))
            cases.append((label + ", apply", {
                try FiltersBench.seconds { for _ in 0..<frames { _ = try filters.apply(input, depth: map, time: Float(index) / 30); index += 1 } }
            }))
        }
        if styles {
            for style in GaussianBlur.Style.allCases {
                let probe = try FilterChain.blurStyleProbe(sigma: 2, style: style, context: context)
                cases.append(("yuyv→rgba + blur σ2, style \(style)", {
                    try FiltersBench.seconds { for _ in 0..<frames { _ = try probe.apply(input) } }
                }))
            }
        }
        let anchorLabel = "ffmpeg gblur σ2 + edgedetect + colorchannelmixer (-threads 2)"
        if !onlyExtra {
            let filters = "gblur=sigma=2,edgedetect,colorchannelmixer=\(FiltersBench.ffmpegSepia)"
            // ffmpeg's start-up (process, filter graph) is taken out: time(frames + 1) - time(1).
            cases.append((anchorLabel, {
                let run = { (count: Int) in try FiltersBench.seconds { try FiltersBench.ffmpeg(width: width, height: height, frames: count, filters: filters) } }
                return try run(frames + 1) - run(1)
            }))
        }
        // Warm up every case once (pipelines, plans), then interleave the timed runs so a busy
        // machine slows every case alike.
        for (_, body) in cases { _ = try body() }
        var wall = [[Double]](repeating: [], count: cases.count)
        var cpu = [[Double]](repeating: [], count: cases.count)
        for _ in 0..<runs {
            for (index, (_, body)) in cases.enumerated() {
                let cost = try body()
                wall[index].append(cost.wall / Double(frames))
                cpu[index].append(cost.cpu / Double(frames))
            }
        }
        let perFrame = wall.map(median), cpuPerFrame = cpu.map(median)
        let anchor = cases.firstIndex { $0.0 == anchorLabel }
        print("(cpu ms/frame: CPU time of all threads — ours incl. lavapipe's, ffmpeg's as a child — less sensitive to a busy machine)")
        for (index, (label, _)) in cases.enumerated() {
            let name = label.padding(toLength: 74, withPad: " ", startingAt: 0)
            let ratio = anchor.map { String(format: "  %5.2fx ffmpeg fps, %5.2fx its cpu/frame", perFrame[$0] / perFrame[index],
                                            cpuPerFrame[$0] / cpuPerFrame[index]) } ?? ""
            print(name + String(format: " %8.1f fps %8.2f ms/frame %8.2f cpu ms/frame", 1 / perFrame[index], perFrame[index] * 1000,
                                cpuPerFrame[index] * 1000) + ratio)
        }
    }

    /// Prints what one frame of `chain` costs besides wall time: device time (the sum of its
    /// commands' timestamps, median of 9) and the bytes it moves between host and device.
    static func printCosts(_ label: String, _ chain: FilterChain, _ input: Image, _ map: Image?) throws {
        let before = chain.transfers
        _ = try chain.apply(input, depth: map, time: 1)
        let after = chain.transfers
        let timings = try chain.profile(input, depth: map, time: 1, runs: 9)
        let device = timings.isEmpty ? "no timestamps" : String(format: "%.3f ms device time", timings.map(\.seconds).reduce(0, +) * 1000)
        print("\(label): \(device), \(after.uploadBytes - before.uploadBytes) B up + \(after.downloadBytes - before.downloadBytes) B down per frame")
    }

    /// Prints the device time of every command of `chain` on `input` (timestamps after each one).
    static func printPasses(_ label: String, _ chain: FilterChain, _ input: Image, _ map: Image?, runs: Int) throws {
        let timings = try chain.profile(input, depth: map, time: 1, runs: runs)
        guard !timings.isEmpty else { print("\(label): the device writes no timestamps"); return }
        print("\(label): device ms per command (median of \(runs)), total \(String(format: "%.2f", timings.map(\.seconds).reduce(0, +) * 1000))")
        for (index, timing) in timings.enumerated() {
            print(String(format: "  %2d  %-48@ %7.3f ms", index + 1, timing.label as NSString, timing.seconds * 1000))
        }
    }

    /// A `WxH` person mask: 1 inside an ellipse in the lower middle (a head and shoulders), 0
    /// outside, a soft edge two cells wide.
    static func personMask(_ size: String) throws -> Image {
        guard let parsed = FrameSize(parsing: size) else { throw ValidationError("--mask takes WxH, e.g. 256x144, not \(size)") }
        let (w, h) = (parsed.width, parsed.height)
        let values = (0..<(w * h)).map { i -> Float in
            let dx = (Float(i % w) + 0.5 - Float(w) / 2) / (Float(w) * 0.22), dy = (Float(i / w) + 0.5 - Float(h) * 0.7) / (Float(h) * 0.55)
            let r = (dx * dx + dy * dy).squareRoot()
            return min(max((1 - r) * Float(min(w, h)) / 4 + 0.5, 0), 1)
        }
        return try Image(width: w, height: h, floats: values)
    }

    /// Wall-clock and CPU seconds (this process's threads plus reaped children's) `body` takes.
    static func seconds(_ body: () throws -> Void) rethrows -> Cost {
        let start = monotonicNanos(), cpuStart = Cost.cpuNow()
        try body()
        return Cost(wall: Double(monotonicNanos() - start) / 1e9, cpu: Cost.cpuNow() - cpuStart)
    }

    /// Time spent on a case: wall clock and CPU.
    struct Cost {
        var wall: Double
        var cpu: Double

        static func - (a: Cost, b: Cost) -> Cost { Cost(wall: max(0, a.wall - b.wall), cpu: max(0, a.cpu - b.cpu)) }

        /// User + system seconds of this process and of its waited-for children.
        static func cpuNow() -> Double {
            var own = rusage(), children = rusage()
            getrusage(RUSAGE_SELF.rawValue, &own)
            getrusage(RUSAGE_CHILDREN.rawValue, &children)
            let seconds = { (t: timeval) in Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
            return seconds(own.ru_utime) + seconds(own.ru_stime) + seconds(children.ru_utime) + seconds(children.ru_stime)
        }
    }

    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    /// A moving-color YUYV test frame (bars, gradient, a circle) like a camera would send.
    static func pattern(width: Int, height: Int) -> Image {
        var bytes = [UInt8](repeating: 0, count: PixelFormat.yuyv.byteCount(width: width, height: height))
        let stride = ((width + 1) / 2) * 4
        for y in 0..<height {
            for pair in 0..<((width + 1) / 2) {
                let x = pair * 2
                let inCircle = (x - width / 2) * (x - width / 2) + (y - height / 2) * (y - height / 2) < (height / 4) * (height / 4)
                let luma = inCircle ? 220 : 16 + (x * 200 / width + y * 19 / height) % 220
                let base = y * stride + pair * 4
                bytes[base] = UInt8(luma)
                bytes[base + 1] = UInt8(64 + (x * 128 / width))
                bytes[base + 2] = UInt8(min(235, luma + 4))
                bytes[base + 3] = UInt8(64 + (y * 128 / height))
            }
        }
        return try! Image(width: width, height: height, format: .yuyv, bytes: bytes)
    }

    /// Runs ffmpeg generating and filtering `frames` frames with 2 threads (timed by the caller).
    /// Its start-up is measured separately (one frame) and subtracted by the caller.
    static func ffmpeg(width: Int, height: Int, frames: Int, filters: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=s=\(width)x\(height)",
                             "-frames:v", "\(frames)", "-vf", filters, "-threads", "2", "-filter_threads", "2", "-f", "null", "-"]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError("ffmpeg exited with \(process.terminationStatus); is it installed (apt-get install ffmpeg)?")
        }
    }
}

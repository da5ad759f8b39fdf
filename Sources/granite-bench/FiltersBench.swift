import ArgumentParser
import Foundation
import GraniteGPU
import GraniteMedia
import Marble

/// `granite-bench filters`: Marble chains on the Vulkan device next to ffmpeg's CPU filters, same run.
///
/// ```
///  YUYV 1280x720 ─► FilterChain.apply (upload, one submission, download) ─► fps, ms/frame
///  ffmpeg -f lavfi testsrc2 ─► gblur, edgedetect, colorchannelmixer (-threads 2) ─► -f null
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

    static let sepia = "rr=0.393,rg=0.769,rb=0.189,gr=0.349,gg=0.686,gb=0.168,br=0.272,bg=0.534,bb=0.131"
    static let ffmpegSepia = ".393:.769:.189:0:.349:.686:.168:0:.272:.534:.131"

    func run() throws {
        let context = try GPUContext.shared()
        print("device: \(context.deviceName) (\(context.deviceKind)); \(width)x\(height), \(frames) frames x \(runs) runs "
              + "interleaved, median")
        let input = FiltersBench.pattern(width: width, height: height)
        var cases: [(String, () throws -> Void)] = []
        var chains: [(String, String)] = onlyExtra ? [] : [
            ("yuyv→rgba + blur σ2 + sobel + colormatrix", "blur:sigma=2 | sobel | colormatrix:\(FiltersBench.sepia)"),
            ("yuyv→rgba + ink + godRay + analog", "ink | godRay | analog"),
        ]
        chains += chain.map { ("yuyv→rgba + " + ($0.isEmpty ? "nothing" : $0), $0) }
        for (label, text) in chains {
            let filters = try FilterChain(text.isEmpty ? [] : FilterSpec.parseChain(text), context: context)
            var index = 0
            cases.append((label, {
                for _ in 0..<frames { _ = try filters.apply(input, time: Float(index) / 30); index += 1 }
            }))
        }
        if styles {
            for style in GaussianBlur.Style.allCases {
                let probe = try FilterChain.blurStyleProbe(sigma: 2, style: style, context: context)
                cases.append(("yuyv→rgba + blur σ2, style \(style)", { for _ in 0..<frames { _ = try probe.apply(input) } }))
            }
        }
        let anchorLabel = "ffmpeg gblur σ2 + edgedetect + colorchannelmixer (-threads 2)"
        if !onlyExtra {
            let filters = "gblur=sigma=2,edgedetect,colorchannelmixer=\(FiltersBench.ffmpegSepia)"
            cases.append((anchorLabel, { try FiltersBench.ffmpeg(width: width, height: height, frames: frames, filters: filters) }))
        }
        // Warm up every case once (pipelines, plans), then interleave the timed runs so a busy
        // machine slows every case alike.
        for (_, body) in cases { try body() }
        var seconds = [[Double]](repeating: [], count: cases.count)
        for _ in 0..<runs {
            for (index, (_, body)) in cases.enumerated() {
                let start = monotonicNanos()
                try body()
                seconds[index].append(Double(monotonicNanos() - start) / 1e9 / Double(frames))
            }
        }
        let perFrame = seconds.map(median)
        let anchor = cases.firstIndex { $0.0 == anchorLabel }.map { perFrame[$0] }
        for (index, (label, _)) in cases.enumerated() {
            let name = label.padding(toLength: 64, withPad: " ", startingAt: 0)
            let ratio = anchor.map { String(format: "  %5.2fx ffmpeg", $0 / perFrame[index]) } ?? ""
            print(name + String(format: " %8.1f fps %8.2f ms/frame", 1 / perFrame[index], perFrame[index] * 1000) + ratio)
        }
    }

    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    /// A moving-colour YUYV test frame (bars, gradient, a circle) like a camera would send.
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

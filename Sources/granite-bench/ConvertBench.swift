import ArgumentParser
import GraniteProcess
import Foundation
import GraniteCodecs
import GraniteMedia

/// `granite-bench convert`: `granite convert` against libvips and ImageMagick on the same folder.
///
/// Workload (issue 4): N JPEGs of 1920×1080, resize 50% + sharpen + JPEG q85. Every tool runs as
/// a child process (so peak RSS comes from `wait4`), runs are interleaved, medians printed.
struct ConvertBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "granite convert vs vipsthumbnail / vips / mogrify: images/s and peak RSS (median of runs)."
    )

    @Option(help: "Number of input JPEGs.") var count = 60
    @Option(help: "Runs per tool (the median is reported).") var runs = 3
    @Option(help: "Work folder (default: a fresh folder in /tmp).") var workDir: String?
    @Option(help: "Input width.") var width = 1920
    @Option(help: "Input height.") var height = 1080
    @Flag(help: "Skip the slow per-image `vips` command-line chain.") var skipVipsCLI = false
    @Flag(name: .customLong("skip-webp"), help: "Skip the WebP tools (granite, vipsthumbnail and cwebp writing WebP).") var skipWebP = false
    @Flag(name: .customLong("skip-avif"), help: "Skip the AVIF tools (granite and vipsthumbnail writing AVIF).") var skipAVIF = false

    struct Tool {
        var name: String
        var note: String
        var command: (String, String, [String]) -> (String, [String])  // (inputDir, outDir, files) → program, args
        /// The extension of the outputs it writes.
        var ext = "jpg"
        /// The tool its speed and memory are compared with.
        var anchor = "vipsthumbnail"
        /// Further tools it is compared with, each on a line of its own under the table.
        var alsoAnchors: [String] = []
    }

    func run() async throws {
        let dir = workDir ?? NSTemporaryDirectory() + "granite-bench-convert-\(getpid())"
        let input = dir + "/in"
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        let files = try makeInputs(input)
        let granite = siblingExecutable("granite")
        let halfW = width / 2, halfH = height / 2
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let parallelVips = "vipsthumb x\(cores)"
        var tools = [
            Tool(name: "granite convert", note: "resize 50% + sharpen + q85, --jobs = cores") { i, o, _ in
                (granite, ["convert", i, "-o", o, "--resize", "50%", "--filter", "sharpen", "--quality", "85"])
            },
            Tool(name: "granite resize", note: "resize 50% + q85 only, metadata kept: vipsthumbnail's work", command: { i, o, _ in
                (granite, ["convert", i, "-o", o, "--resize", "50%", "--quality", "85"])
            }, alsoAnchors: [parallelVips]),
            Tool(name: "vipsthumbnail", note: "resize + q85 only (no sharpen option), metadata kept: one process, its own threads") { _, o, f in
                ("vipsthumbnail", f + ["--size", "\(halfW)x\(halfH)", "-o", o + "/%s.jpg[Q=85]"])
            },
            // vipsthumbnail's best configuration on a loaded machine: one single-threaded process per
            // core, each given its share of the files (peak RSS: the largest process times their number).
            Tool(name: parallelVips, note: "\(cores) vipsthumbnail processes (VIPS_CONCURRENCY=1), files split between them") { _, o, f in
                let script = "printf '%s\\0' \"$@\" | VIPS_CONCURRENCY=1 xargs -0 -P \(cores) -n \((f.count + cores - 1) / cores) "
                    + "vipsthumbnail --size \(halfW)x\(halfH) -o '\(o)/%s.jpg[Q=85]'"
                return ("/bin/sh", ["-c", script, "sh"] + f)
            },
            Tool(name: "mogrify", note: "-resize 50% -sharpen 0x1 -quality 85") { _, o, f in
                ("mogrify", ["-path", o, "-resize", "50%", "-sharpen", "0x1", "-quality", "85"] + f)
            },
        ]
        let root = repositoryRoot()
        let python = root + "/.venv/bin/python"
        let script = root + "/scripts/bench/vips_convert.py"
        if FileManager.default.isExecutableFile(atPath: python), FileManager.default.fileExists(atPath: script),
           (try? ChildProgram.run(python, ["-c", "import pyvips"]))?.status == 0 {
            tools.insert(Tool(name: "pyvips", note: "libvips in one process: thumbnail + the same unsharp mask (7x7) + Q85") { _, o, f in
                (python, [script, o, "\(halfW)", "\(halfH)"] + f)
            }, at: 1)
        } else {
            print("pyvips anchor skipped: no pyvips in \(python) (run scripts/bench-convert, which installs it into .venv)")
        }
        /// granite converting to `format` at `quality` and vipsthumbnail saving the same format with
        /// `vipsOptions`, the second the first's anchor.
        func formatRows(_ format: String, quality: Int, graniteNote: String, vipsOptions: String, vipsNote: String = "") {
            let anchor = "vipsthumb \(format)"
            tools.append(Tool(name: "granite \(format)", note: "resize 50% + q\(quality) \(graniteNote)", command: { i, o, _ in
                (granite, ["convert", i, "-o", o, "--resize", "50%", "--format", format, "--quality", "\(quality)"])
            }, ext: format, anchor: anchor))
            tools.append(vipsRow(anchor, format: format, options: vipsOptions, anchor: anchor, note: vipsNote))
        }
        func vipsRow(_ name: String, format: String, options: String, anchor: String, note: String = "") -> Tool {
            Tool(name: name, note: "vipsthumbnail -o %s.\(format)[\(options)]\(note)", command: { _, o, f in
                ("vipsthumbnail", f + ["--size", "\(halfW)x\(halfH)", "-o", o + "/%s.\(format)[\(options)]"])
            }, ext: format, anchor: anchor)
        }
        // WebP output (issue 16), same run: granite against vipsthumbnail's WebP saver and cwebp, all Q80.
        if !skipWebP {
            formatRows("webp", quality: 80, graniteNote: "WebP (metadata kept)", vipsOptions: "Q=80")
            if !FileManager.default.isExecutableFile(atPath: "/usr/bin/cwebp") { print("cwebp anchor skipped: /usr/bin/cwebp missing (Debian package webp)") } else {
            tools.append(Tool(name: "cwebp", note: "cwebp -q 80 -resize, one process per image", command: { _, o, f in
                let script = "for f in \"$@\"; do b=$(basename \"$f\" .jpg); cwebp -quiet -q 80 -resize \(halfW) \(halfH) \"$f\" -o \"\(o)/$b.webp\" || exit 1; done"
                return ("/bin/sh", ["-c", script, "sh"] + f)
            }, ext: "webp", anchor: "vipsthumb webp"))
            }
        }
        // AVIF output (issue 16), same run: granite (libavif + libaom, speed 8) against vipsthumbnail's
        // heifsave (libheif + libaom) at its default effort 4 (aom speed 5) and at effort 1 (speed 8,
        // granite's), all Q60; the output sizes say what each speed costs.
        if !skipAVIF {
            formatRows("avif", quality: 60, graniteNote: "AVIF (metadata kept, aom speed 8)", vipsOptions: "Q=60", vipsNote: " (effort 4)")
            tools.append(vipsRow("vipsthumb avif e1", format: "avif", options: "Q=60,effort=1", anchor: "vipsthumb avif"))
        }
        if !skipVipsCLI {
            tools.append(Tool(name: "vips CLI chain", note: "vips resize 0.5 | vips sharpen, q85: one process pair per image") { _, o, f in
                let script = "for f in \"$@\"; do b=$(basename \"$f\" .jpg); vips resize \"$f\" \"\(o)/$b.v\" 0.5 && vips sharpen \"\(o)/$b.v\" \"\(o)/$b.jpg[Q=85]\" && rm \"\(o)/$b.v\"; done"
                return ("/bin/sh", ["-c", script, "sh"] + f)
            })
        }
        var load = [Double](repeating: 0, count: 3)
        _ = getloadavg(&load, 3)
        print("load average at start: \(fixed(load[0]))")
        try printCeiling(dir, files[0], cores: cores)
        print("granite-bench convert: \(count) JPEGs \(width)x\(height), resize 50% + sharpen + q85, \(runs) runs, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        var results = [String: [ChildProgram.Result]]()
        var loads = [String: [Double]]()  // the 1-minute load average as each run started
        var outputBytes = [String: Int]()  // the last run's outputs, all files
        for r in 0..<runs {
            for tool in tools {
                let out = dir + "/out-\(r)-\(tool.name.replacingOccurrences(of: " ", with: "-"))"
                try? FileManager.default.removeItem(atPath: out)
                try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
                let (program, args) = tool.command(input, out, files)
                _ = getloadavg(&load, 3)
                loads[tool.name, default: []].append(load[0])
                let run = try ChildProgram.run(program, args, stdout: .discard, stderr: .discard)
                let produced = (try? FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasSuffix("." + tool.ext) }.count) ?? 0
                if run.shellStatus != 0 || produced != count {
                    print("  \(tool.name): run \(r + 1) exit \(run.shellStatus), \(produced)/\(count) outputs")
                }
                results[tool.name, default: []].append(run)
                let names = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
                outputBytes[tool.name] = names.filter { $0.hasSuffix("." + tool.ext) }.reduce(0) {
                    $0 + (((try? FileManager.default.attributesOfItem(atPath: out + "/" + $1))?[.size] as? Int) ?? 0)
                }
                try? FileManager.default.removeItem(atPath: out)
            }
        }
        print(pad("tool", 18) + pad("images/s", 10) + pad("(min-max)", 14) + pad("img/CPU-s", 10) + pad("peak RSS", 12) + pad("load", 6) + pad("output", 10)
              + pad("vs its anchor", 28) + "notes")
        /// Median rate and peak RSS (KiB; for the parallel vipsthumbnail row, the largest process times their number).
        func figures(_ name: String) -> (rate: Double, peak: Int)? {
            guard let runs = results[name] else { return nil }
            let s = summarize(runs)
            return (s.rate, name == parallelVips ? s.peak * cores : s.peak)
        }
        func ratio(_ name: String, _ anchor: String) -> String {
            guard let s = figures(name), let a = figures(anchor), name != anchor else { return "-" }
            return "\(fixed(s.rate / a.rate))x speed, \(fixed(Double(s.peak) / Double(a.peak)))x mem (\(anchor))"
        }
        for tool in tools {
            let s = figures(tool.name)!
            let rates = results[tool.name]!.map { Double(count) / $0.seconds }
            let range = "\(fixed(rates.min()!))-\(fixed(rates.max()!))"
            let load = loads[tool.name]!.sorted()[loads[tool.name]!.count / 2]
            let perCPU = results[tool.name]!.map { Double(count) / max($0.cpuSeconds, 1e-9) }.sorted()
            print(pad(tool.name, 18) + pad(fixed(s.rate), 10) + pad(range, 14) + pad(fixed(perCPU[perCPU.count / 2]), 10) + pad("\(s.peak / 1024) MiB", 12) + pad(String(format: "%.1f", load), 6)
                  + pad("\(fixed(Double(outputBytes[tool.name] ?? 0) / 1_048_576)) MiB", 10) + pad(ratio(tool.name, tool.anchor), 28) + tool.note)
        }
        // Side by side with each vipsthumbnail configuration (speed goal 2x the best, memory goal 1.5x).
        for tool in tools where !tool.alsoAnchors.isEmpty {
            for anchor in [tool.anchor] + tool.alsoAnchors where figures(anchor) != nil {
                let s = figures(tool.name)!, a = figures(anchor)!
                print("\(tool.name) vs \(anchor): \(fixed(s.rate)) vs \(fixed(a.rate)) images/s, \(s.peak / 1024) vs \(a.peak / 1024) MiB peak RSS: "
                      + ratio(tool.name, anchor))
            }
        }
        _ = getloadavg(&load, 3)
        print("load average at end: \(fixed(load[0])) (1 min), \(fixed(load[1])) (5 min)")
        if workDir == nil { try? FileManager.default.removeItem(atPath: dir) }
    }

    /// The ceiling of "JPEG in, half-size JPEG out" on this machine, from libjpeg-turbo's own
    /// `tjbench` (Debian libjpeg-turbo-progs): one core decoding `jpeg` at scale 1/2 plus encoding a
    /// half-size image at Q85 4:2:0, the two rates combined (per CPU-second, to compare with the
    /// img/CPU-s column), times `cores`. No resampling, no file I/O, no metadata.
    func printCeiling(_ dir: String, _ jpeg: String, cores: Int) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tjbench") else {
            print("tjbench ceiling skipped: /usr/bin/tjbench missing (Debian package libjpeg-turbo-progs)")
            return
        }
        var options = DecodeOptions()
        options.minimumSize = (width / 2, height / 2)
        let half = try Codecs.decode(try FileBytes.read(jpeg), options: options)
        var ppm = Array("P6 \(half.width) \(half.height) 255\n".utf8)
        for p in 0..<half.pixelCount { ppm += half.bytes[p * 4..<p * 4 + 3] }
        try AtomicFile.write(ppm, to: dir + "/half.ppm")
        /// The first "Frame rate: N fps" tjbench prints, per CPU-second: tjbench counts wall-clock
        /// time, which on a loaded machine is more than the one core it ran on gave it.
        func fps(_ arguments: [String]) throws -> Double? {
            let r = try ChildProgram.run("/bin/sh", ["-c", "cd \"$1\" && shift && exec /usr/bin/tjbench \"$@\"", "sh", dir] + arguments)
            guard let line = r.out.split(separator: "\n").first(where: { $0.contains("Frame rate:") }),
                  let wall = Double(line.split(separator: " ").dropLast().last ?? ""), r.cpuSeconds > 0 else { return nil }
            return wall * r.seconds / r.cpuSeconds
        }
        let timing = ["-benchtime", "2", "-warmup", "0.5"]
        guard let decode = try fps([jpeg, "-scale", "1/2"] + timing),
              let encode = try fps([dir + "/half.ppm", "85", "-subsamp", "420", "-componly"] + timing) else {
            print("tjbench ceiling: could not read tjbench's frame rates")
            return
        }
        let perCore = 1 / (1 / decode + 1 / encode)
        print("ceiling (tjbench, per CPU-second): decode 1/2 \(fixed(decode)) fps + encode \(half.width)x\(half.height) Q85 \(fixed(encode)) fps = "
              + "\(fixed(perCore)) images/CPU-s; x\(cores) cores = \(fixed(perCore * Double(cores))) images/s on an idle machine")
    }

    /// Median images/s and median peak RSS (KiB) of the runs.
    func summarize(_ runs: [ChildProgram.Result]) -> (rate: Double, peak: Int) {
        let rates = runs.map { Double(count) / $0.seconds }.sorted()
        let peaks = runs.map(\.peakKiB).sorted()
        return (rates[rates.count / 2], peaks[peaks.count / 2])
    }

    /// Photo-like inputs: smooth color fields, edges and noise, so the encoders do real work.
    func makeInputs(_ folder: String) throws -> [String] {
        var paths = [String]()
        for i in 0..<count {
            let path = folder + "/photo\(i < 10 ? "0" : "")\(i).jpg"
            paths.append(path)
            if FileManager.default.fileExists(atPath: path) { continue }
            var bytes = [UInt8](repeating: 255, count: width * height * 4)
            var state = UInt64(i + 1) &* 0x9E37_79B9_7F4A_7C15
            let cx = (i * 97) % width, cy = (i * 53) % height
            for y in 0..<height {
                for x in 0..<width {
                    state ^= state << 13; state ^= state >> 7; state ^= state << 17
                    let n = Int(state & 15)
                    let dx = x - cx, dy = y - cy
                    let ring = ((dx * dx + dy * dy) >> 10) & 63
                    let p = (y * width + x) * 4
                    bytes[p] = UInt8(truncatingIfNeeded: x / 8 + ring + n + i * 3)
                    bytes[p + 1] = UInt8(truncatingIfNeeded: y / 5 + (x > width / 2 ? 60 : 0) + n)
                    bytes[p + 2] = UInt8(truncatingIfNeeded: (x + y) / 12 + ring * 2 + n)
                }
            }
            let image = try Image(width: width, height: height, format: .rgba8, bytes: bytes)
            try AtomicFile.write(try Codecs.encodeJPEG(image, quality: 90), to: path)
        }
        return paths
    }

    func siblingExecutable(_ name: String) -> String { BenchData.siblingExecutable(name) }

    /// The package folder above the build products (where `.venv` and `scripts/` live).
    func repositoryRoot() -> String {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) { return dir.path }
            dir = dir.deletingLastPathComponent()
        }
        return FileManager.default.currentDirectoryPath
    }

    func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count) }
    func fixed(_ v: Double) -> String { String(format: "%.2f", v) }
}

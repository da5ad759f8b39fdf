#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import GraniteProcess

/// `granite-bench record`: `granite-cam --record` with `blur:sigma=2 | sobel | sepia` (sepia: `colormatrix` with the sepia matrix), live, x264
/// `veryfast`, against ffmpeg doing the same job in the same run (`testsrc2`, `gblur`, `sobel`, a
/// sepia colour matrix, `-c:v libx264 -preset veryfast -crf 20`): CPU per frame, frames dropped,
/// frames in the file. Both as child programs, their CPU from `wait4`'s rusage.
struct RecordBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "granite-cam --record (filters + x264 veryfast) vs ffmpeg doing the same job: CPU per frame, drops."
    )

    @Option(help: "Frame sizes, comma-separated.") var sizes = "1280x720,1920x1080"
    @Option(help: "Frames per run (at 30 fps, live).") var frames = 150
    @Option(help: "Runs per measurement (median reported).") var runs = 3
    @Flag(help: "Run the filters on Marble's CPU reference instead of the Vulkan device.") var cpuFilters = false

    struct Sample { var cpuMillisPerFrame: Double; var dropped: Int; var inFile: Int }

    func run() throws {
        let cam = Self.sibling("granite-cam")
        let dir = "/tmp/granite-bench-record-\(getpid())"
        mkdir(dir, 0o755)
        defer { _ = try? ChildProgram.run("/bin/rm", ["-rf", dir]) }
        print("granite-bench record: blur:sigma=2 | sobel | sepia, x264 veryfast quality 20, \(frames) frames at 30 fps, \(runs) runs, median")
        for size in sizes.split(separator: ",").map(String.init) {
            let ours = try median {
                let file = "\(dir)/granite.mkv"
                var arguments = ["--source", "testpattern", "--size", size, "--fps", "30", "--frames", String(frames),
                                 "--filter", "blur:sigma=2", "--filter", "sobel", "--filter", "colormatrix:rr=0.393,rg=0.769,rb=0.189,gr=0.349,gg=0.686,gb=0.168,br=0.272,bg=0.534,bb=0.131",
                                 "--record", file, "--encoder", "x264", "--status-hz", "1"]
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
                                                          "-vf", "gblur=sigma=2,sobel,colorchannelmixer=.393:.769:.189:0:.349:.686:.168:0:.272:.534:.131:0",
                                                          "-c:v", "libx264", "-preset", "veryfast", "-crf", "20", file])
                guard run.shellStatus == 0 else { throw ValidationError("ffmpeg exited with status \(run.shellStatus): \(run.err)") }
                return Sample(cpuMillisPerFrame: run.cpuSeconds * 1000 / Double(frames), dropped: 0, inFile: try Self.frameCount(file))
            }
            print("\(size): granite-cam \(Self.f(ours.cpuMillisPerFrame)) ms CPU/frame, \(ours.dropped) dropped, \(ours.inFile) frames in the file; "
                  + "ffmpeg \(Self.f(theirs.cpuMillisPerFrame)) ms CPU/frame, \(theirs.inFile) frames; "
                  + "granite/ffmpeg CPU per frame \(Self.f(ours.cpuMillisPerFrame / theirs.cpuMillisPerFrame))x")
        }
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

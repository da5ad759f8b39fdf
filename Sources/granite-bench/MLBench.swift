import ArgumentParser
import Foundation
import GraniteMedia
import GraniteGPU
import GraniteML
import GraniteMLVulkan

/// `granite-bench ml`: GraniteML against ONNX Runtime's CPU provider on the same models, inputs
/// and thread counts, in the same run (ORT in a child Python process, run after GraniteML so the
/// two never compete for the cores).
struct MLBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ml",
        abstract: "GraniteML vs ONNX Runtime (CPU): median ms per inference for FastDepth-224 and PP-OCRv4 det 640×640."
    )

    @Option(help: "Timed runs per case (the median is reported).") var runs = 50
    @Option(help: "Untimed warm-up runs per case.") var warmup = 5
    @Option(help: "Folder with the models (default: Models/, then .build-ml-fixtures/models, where scripts/tiers/pre-ml.sh puts PP-OCR).")
    var models: String?
    @Option(help: "Python with onnxruntime (default: .venv/bin/python).") var python = ".venv/bin/python"
    @Option(parsing: .upToNextOption, help: "Thread counts to measure.") var threads: [Int] = [1, 2]
    @Flag(help: "Also print GraniteML's time per op type (one timed run each); with --device gpu, the Vulkan backend's device time per kernel too.")
    var profile = false
    @Option(parsing: .upToNextOption, help: "Only the models whose file name contains one of these.") var only: [String] = []
    @Option(help: "gpu: also time GraniteML's Vulkan backend (GraniteMLVulkan) on each model, in the same run; cpu: the CPU runtime only.")
    var device = "cpu"

    func validate() throws {
        guard ["cpu", "gpu"].contains(device) else { throw ValidationError("--device must be cpu or gpu, got '\(device)'") }
    }

    struct Case {
        let label: String
        let file: String
        let input: String
        let shape: [Int]
        let type: Tensor.ElementType
    }

    static let cases = [
        Case(label: "FastDepth-224 int8", file: "fastdepth-224-int8.onnx", input: "serving_default_input_1:0",
             shape: [1, 224, 224, 3], type: .uint8),
        Case(label: "PP-OCRv4 det 640x640", file: "ppocr-v4-det.onnx", input: "x", shape: [1, 3, 640, 640], type: .float32),
        Case(label: "Selfie segmentation 144x256", file: "selfie-segmentation-landscape-144x256.onnx", input: "input_1",
             shape: [1, 144, 256, 3], type: .float32),
        Case(label: "MiDaS small replica 256", file: "midas-small-replica-opset13.onnx", input: "input", shape: [1, 3, 256, 256], type: .float32),
    ]

    /// `file` in `--models`, else the first of the default folders that has it.
    func modelPath(_ file: String) throws -> String {
        let folders = models.map { [$0] } ?? ["Models", ".build-ml-fixtures/models"]
        for folder in folders {
            let path = (folder as NSString).appendingPathComponent(file)
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        throw ValidationError("\(file) is in none of \(folders) (run scripts/tiers/pre-ml.sh)")
    }

    func run() async throws {
        print("model                  threads  GraniteML ms  ORT ms   GraniteML/ORT")
        var ortVersion = "?"
        let loadBefore = Self.loadAverage()
        for c in Self.cases where only.isEmpty || only.contains(where: { c.file.contains($0) }) {
            let path = try modelPath(c.file)
            for t in threads {
                let model = try Model(path: path, threads: t)
                let feeds = [c.input: try input(c)]
                if profile {
                    for p in try model.profile(feeds).prefix(8) {
                        print("    " + p.op.padding(toLength: 26, withPad: " ", startingAt: 0) + String(format: "%8.2f ms  (%d steps)", p.milliseconds, p.steps))
                    }
                }
                for _ in 0..<warmup { _ = try model.run(feeds) }
                let server = try? ORTServer(python: python, model: path, c, threads: t, warmup: warmup)
                if let server { ortVersion = server.version }
                // Alternate rounds so that both runtimes see the same load on a shared machine.
                var ours: [Double] = [], theirs: [Double] = []
                let rounds = max(1, runs / 5)
                for round in 0..<rounds {
                    let n = round < rounds - 1 ? runs / rounds : runs - (rounds - 1) * (runs / rounds)
                    for _ in 0..<n {
                        let start = monotonicNanos()
                        _ = try model.run(feeds)
                        ours.append(Double(monotonicNanos() - start) / 1e6)
                    }
                    if let server { theirs += (try? server.time(n)) ?? [] }
                }
                let a = Self.median(ours)
                let b = theirs.isEmpty ? nil : Self.median(theirs)
                let ratio = b.map { String(format: "%.2f", a / $0) } ?? "n/a"
                let ort = b.map { String(format: "%7.2f", $0) } ?? "    n/a"
                let label = c.label.padding(toLength: 22, withPad: " ", startingAt: 0)
                print("\(label) " + String(format: "%7d  %12.2f  ", t, a) + "\(ort)  \(ratio)")
                if device == "gpu" && t == threads.first { try timeGPU(c, model: model, feeds: feeds, cpu: a) }
                if server == nil {
                    FileHandle.standardError.write(Data("granite-bench ml: ONNX Runtime not available at \(python); run scripts/tiers/pre-ml.sh\n".utf8))
                }
            }
        }
        print("median of \(runs) runs each after \(warmup) warm-up runs, GraniteML and ONNX Runtime \(ortVersion) in alternating rounds of 5; "
              + "OPENBLAS_CORETYPE=\(ProcessInfo.processInfo.environment["OPENBLAS_CORETYPE"] ?? "unset"); "
              + "int8 kernels: \(Model.kernelInstructionSet); load average \(loadBefore) before, \(Self.loadAverage()) after")
    }

    /// The Vulkan backend on the same model and input: median ms per inference (one submission
    /// each, inputs written and outputs read back), beside the CPU runtime's median `cpu`.
    private func timeGPU(_ c: Case, model: Model, feeds: [String: Tensor], cpu: Double) throws {
        let label = "  Vulkan".padding(toLength: 22, withPad: " ", startingAt: 0)
        let context: GPUContext
        do { context = try GPUContext.shared() } catch {
            print("\(label) n/a: \(error)")
            return
        }
        let gpu: VulkanModel
        do { gpu = try VulkanModel(model: model, context: context) } catch {
            print("\(label) n/a: \(error)")
            return
        }
        for _ in 0..<warmup { _ = try gpu.run(feeds) }
        var times: [Double] = []
        for _ in 0..<runs {
            let start = monotonicNanos()
            _ = try gpu.run(feeds)
            times.append(Double(monotonicNanos() - start) / 1e6)
        }
        let m = Self.median(times)
        print("\(label)    gpu  \(String(format: "%12.2f", m))  CPU/GPU \(String(format: "%.2f", cpu / m))  "
              + "(\(context.deviceName), \(context.deviceKind); \(gpu.dispatchCount) dispatches, \(gpu.constantBytes >> 10) KiB constants, "
              + "\(gpu.arenaBytes >> 10) KiB activations)")
        guard profile else { return }
        // Device time per kernel (timestamps around every dispatch, median of 3 submissions).
        let dispatches = try gpu.profile(feeds)
        guard !dispatches.isEmpty else { print("    (\(context.deviceName) writes no timestamps: no per-kernel split)"); return }
        var totals: [String: (seconds: Double, count: Int)] = [:]
        for d in dispatches { totals[d.kernel, default: (0, 0)].seconds += d.seconds; totals[d.kernel, default: (0, 0)].count += 1 }
        let sum = dispatches.map(\.seconds).reduce(0, +)
        for (kernel, t) in totals.sorted(by: { $0.value.seconds > $1.value.seconds }) {
            print("    " + "gpu \(kernel)".padding(toLength: 26, withPad: " ", startingAt: 0)
                  + String(format: "%8.2f ms  (%d dispatches, %4.1f%%)", t.seconds * 1e3, t.count, 100 * t.seconds / max(sum, 1e-12)))
        }
        print("    " + "gpu device total".padding(toLength: 26, withPad: " ", startingAt: 0)
              + String(format: "%8.2f ms  (%d of %d dispatches timed)", sum * 1e3, dispatches.count, gpu.dispatchCount))
    }

    /// The 1-minute load average (Linux), or "?".
    static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "?" }
        return String(text.split(separator: " ").first ?? "?")
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    private func input(_ c: Case) throws -> Tensor {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let count = c.shape.reduce(1, *)
        let values = (0..<count).map { _ -> Float in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let u = Float(state >> 40) / Float(1 << 24)
            return c.type == .uint8 ? (u * 255).rounded() : u * 2 - 1
        }
        return try Tensor(shape: c.shape, values: values, elementType: c.type)
    }
}

/// ONNX Runtime in a child Python process (scripts/ml/ort_bench.py), timed on request.
final class ORTServer {
    private let process = Process()
    private let input = Pipe(), output = Pipe()
    private var buffer = Data()
    private(set) var version: String

    init(python: String, model: String, _ c: MLBench.Case, threads: Int, warmup: Int) throws {
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["scripts/ml/ort_bench.py", model, c.input, c.shape.map(String.init).joined(separator: ","),
                             c.type.rawValue, String(threads), String(warmup)]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        version = "?"
        let ready = try JSONSerialization.jsonObject(with: try readLine()) as? [String: Any]
        version = ready?["version"] as? String ?? "?"
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// Runs `n` timed inferences in ONNX Runtime; their times in ms.
    func time(_ n: Int) throws -> [Double] {
        input.fileHandleForWriting.write(Data("\(n)\n".utf8))
        return try JSONSerialization.jsonObject(with: try readLine()) as? [Double] ?? []
    }

    private func readLine() throws -> Data {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[(newline + 1)...])
                return Data(line)
            }
            // availableData returns as soon as some bytes arrive (read(upToCount:) waits for all).
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw CocoaError(.fileReadUnknown) }
            buffer += chunk
        }
    }
}

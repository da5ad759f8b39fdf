import ArgumentParser
import Foundation
import GraniteMedia
import GraniteML

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
    @Option(help: "Folder with the models (default: ../shared/models).") var models = "../shared/models"
    @Option(help: "Python with onnxruntime (default: .venv/bin/python).") var python = ".venv/bin/python"
    @Option(parsing: .upToNextOption, help: "Thread counts to measure.") var threads: [Int] = [1, 2]
    @Flag(help: "Also print GraniteML's time per op type (one timed run each).") var profile = false

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
    ]

    func run() async throws {
        print("model                  threads  GraniteML ms  ORT ms   GraniteML/ORT")
        for c in Self.cases {
            let path = (models as NSString).appendingPathComponent(c.file)
            for t in threads {
                let ours = try graniteMedian(c, path: path, threads: t)
                if profile {
                    for p in try Model(path: path, threads: t).profile([c.input: try input(c)]).prefix(8) {
                        print("    " + p.op.padding(toLength: 26, withPad: " ", startingAt: 0) + String(format: "%8.2f ms  (%d steps)", p.milliseconds, p.steps))
                    }
                }
                let theirs = try ortMedian(c, path: path, threads: t)
                let ratio = theirs.map { String(format: "%.2f", ours / $0) } ?? "n/a"
                let ort = theirs.map { String(format: "%7.2f", $0) } ?? "    n/a"
                let label = c.label.padding(toLength: 22, withPad: " ", startingAt: 0)
                print("\(label) " + String(format: "%7d  %12.2f  ", t, ours) + "\(ort)  \(ratio)")
            }
        }
        print("median of \(runs) runs after \(warmup) warm-up runs; OPENBLAS_CORETYPE=\(ProcessInfo.processInfo.environment["OPENBLAS_CORETYPE"] ?? "unset")")
    }

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

    private func graniteMedian(_ c: Case, path: String, threads: Int) throws -> Double {
        let model = try Model(path: path, threads: threads)
        let feeds = [c.input: try input(c)]
        for _ in 0..<warmup { _ = try model.run(feeds) }
        var times: [Double] = []
        for _ in 0..<runs {
            let start = monotonicNanos()
            _ = try model.run(feeds)
            times.append(Double(monotonicNanos() - start) / 1e6)
        }
        return times.sorted()[times.count / 2]
    }

    /// ONNX Runtime's median, or nil (with the reason on stderr) when the helper cannot run.
    private func ortMedian(_ c: Case, path: String, threads: Int) throws -> Double? {
        let out = NSTemporaryDirectory() + "granite-ml-bench-\(getpid()).json"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let script = "scripts/ml/ort_bench.py"
        let args = [script, path, c.input, c.shape.map(String.init).joined(separator: ","), c.type.rawValue,
                    String(threads), String(runs), String(warmup), out]
        let result = try ChildProcess.run(python, args, quiet: false)
        guard result.status == 0, let data = FileManager.default.contents(atPath: out),
              let json = try JSONSerialization.jsonObject(with: data) as? [String: Any], let ms = json["median_ms"] as? Double else {
            FileHandle.standardError.write(Data("granite-bench ml: ONNX Runtime helper failed (status \(result.status)); run scripts/tiers/pre-ml.sh for .venv\n".utf8))
            return nil
        }
        return ms
    }
}

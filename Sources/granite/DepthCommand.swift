import ArgumentParser
import Foundation
import GraniteCodecs
import GraniteConvert
import GraniteMedia
import GraniteML
import GraniteMLVulkan

/// `granite depth`: a depth map (16-bit PNG) and a color preview for each input image.
struct DepthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "depth",
        abstract: "Estimate depth for images: a 16-bit depth PNG and a color preview each.",
        discussion: """
        For each INPUT (JPEG or PNG file, or a folder of them) writes OUTDIR/NAME.depth.png \
        (16-bit gray: millimetres for metric models such as the default FastDepth 224, else \
        relative depth with larger = farther) and OUTDIR/NAME.preview.png (8-bit indexed viridis, yellow = near). \
        Photos are decoded reduced (JPEG DCT scaling to just above the model's input size), resized \
        antialiased (bilinear) to the input, and the maps scaled back to the photo's size (--depth-size \
        model keeps the model's). Files are written atomically. The model is found by --model, then GRANITE_MODEL_PATH, \
        $XDG_DATA_HOME/granite/models (~/.local/share/granite/models), PREFIX/share/granite/models \
        beside an installed PREFIX/bin/granite, then the Models/ folder of the checkout the program \
        was built in; its description (NAME.json beside it, or a *.json in those folders) says how to feed it.

        Exit status: 0 all done; 1 the model could not be loaded or OUTDIR not created; 2 some \
        inputs failed (each reported on stderr), the others were written; 64 usage error; 66 an \
        INPUT does not exist.
        """
    )

    @Argument(help: "Image files or folders.")
    var inputs: [String]

    @Option(name: .shortAndLong, help: ArgumentHelp("Output folder (created if missing).", valueName: "outdir"))
    var output: String

    @Option(help: ArgumentHelp("The ONNX model file (or a folder holding it).", valueName: "path"))
    var model: String?

    @Option(help: ArgumentHelp("Size of the depth PNG and preview: input (the photo's own, default) or model (the model's output, e.g. 224x224).",
                               valueName: "input|model"))
    var depthSize = "input"

    @Option(help: "Threads for inference (default: the number of cores).")
    var threads: Int?

    @Option(help: ArgumentHelp("Where the model runs: gpu (Vulkan), cpu, or auto (the GPU on discrete and integrated GPUs, the CPU on CPU drivers such as lavapipe).",
                               valueName: "auto|gpu|cpu"))
    var depthDevice: InferenceDevice = .auto

    @Option(help: "Photos in flight at once (default 2, or 1 on one core: one photo's single-threaded steps, decoding and inference, overlap the other's PNG deflating).")
    var jobs: Int?

    func validate() throws {
        if let threads, !(1...256).contains(threads) { throw ValidationError("--threads must be in 1...256, got \(threads)") }
        if let jobs, !(1...256).contains(jobs) { throw ValidationError("--jobs must be in 1...256, got \(jobs)") }
        guard ["input", "model"].contains(depthSize) else { throw ValidationError("--depth-size must be input or model, got '\(depthSize)'") }
    }

    func run() async throws {
        let files = try Self.expand(inputs)
        let estimator: DepthEstimator
        do {
            try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
            estimator = try DepthEstimator(modelPath: model, threads: threads ?? Model.defaultThreads, backend: try depthDevice.backend())
        } catch {
            Self.report("granite depth: \(error)")
            throw ExitCode(1)
        }
        if depthDevice != .cpu { print("depth runs on the \(InferenceDevice.describe(estimator.runner))") }
        if estimator.normalizesInside {
            print("\((estimator.modelPath as NSString).lastPathComponent) normalises its input itself: feeding pixels scaled only")
        }
        // `jobs` photos in flight (decode, resize, infer, upscale and PNG encoding are per photo).
        let modelSize = depthSize == "model", output = output
        let jobs = max(1, min(self.jobs ?? min(2, ProcessInfo.processInfo.activeProcessorCount), files.count))
        var failed = 0
        await withTaskGroup(of: (String, Result<(String, String), any Error>).self) { group in
            var next = 0
            func start() {
                guard next < files.count else { return }
                let file = files[next]
                next += 1
                group.addTask {
                    (file, Result { try DepthImages.process(file, into: output, with: estimator, modelSize: modelSize) })
                }
            }
            for _ in 0..<jobs { start() }
            for await (file, result) in group {
                switch result {
                case let .success((depthPath, previewPath)):
                    print("\(file) -> \(depthPath), \(previewPath)")
                case let .failure(error):
                    let message = "\(error)"  // codec errors already start with the path
                    Self.report("granite depth: " + (message.hasPrefix(file) ? message : "\(file): \(message)"))
                    failed += 1
                }
                start()
            }
        }
        print("\(files.count - failed) of \(files.count) images done with \((estimator.modelPath as NSString).lastPathComponent)")
        if failed > 0 { throw ExitCode(2) }
    }

    /// Files named directly, plus the JPEG and PNG files directly inside named folders (sorted).
    static func expand(_ inputs: [String]) throws -> [String] {
        var files: [String] = []
        let fm = FileManager.default
        for input in inputs {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: input, isDirectory: &isDirectory) else {
                report("granite depth: \(input): no such file or folder")
                throw ExitCode(66)
            }
            if !isDirectory.boolValue { files.append(input); continue }
            let names = (try? fm.contentsOfDirectory(atPath: input)) ?? []
            for name in names.sorted() where !name.hasPrefix(".") {
                let ext = (name as NSString).pathExtension.lowercased()
                if ["jpg", "jpeg", "jpe", "png"].contains(ext) { files.append((input as NSString).appendingPathComponent(name)) }
            }
        }
        return files
    }

    static func report(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

extension InferenceDevice: ExpressibleByArgument {}

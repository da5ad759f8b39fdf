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

    @OptionGroup var batch: PhotoBatchOptions

    @Option(help: ArgumentHelp("Size of the depth PNG and preview: input (the photo's own, default) or model (the model's output, e.g. 224x224).",
                               valueName: "input|model"))
    var depthSize = "input"

    @Option(help: ArgumentHelp("Where the model runs: gpu (Vulkan), cpu, or auto (the GPU on discrete and integrated GPUs, the CPU on CPU drivers such as lavapipe).",
                               valueName: "auto|gpu|cpu"))
    var depthDevice: InferenceDevice = .auto

    func validate() throws {
        guard ["input", "model"].contains(depthSize) else { throw ValidationError("--depth-size must be input or model, got '\(depthSize)'") }
    }

    func run() async throws {
        let modelSize = depthSize == "model", output = batch.output, batch = batch, device = depthDevice
        try await PhotoJobs.runBatch(
            batch, command: "granite depth",
            load: { try DepthEstimator(modelPath: batch.model, threads: batch.threads ?? Model.defaultThreads, backend: try device.backend()) },
            modelPath: \.modelPath,
            announce: { estimator in
                if device != .cpu { print("depth runs on the \(InferenceDevice.describe(estimator.runner))") }
                if estimator.normalizesInside {
                    print("\((estimator.modelPath as NSString).lastPathComponent) normalises its input itself: feeding pixels scaled only")
                }
            }
        ) { file, estimator in
            let (depthPath, previewPath) = try DepthImages.process(file, into: output, with: estimator, modelSize: modelSize)
            return "\(depthPath), \(previewPath)"
        }
    }
}

extension InferenceDevice: ExpressibleByArgument {}

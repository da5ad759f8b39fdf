import ArgumentParser
import Foundation
import GraniteConvert
import GraniteML
import GraniteMLVulkan

/// `granite segment`: a person mask (8-bit gray PNG, 255 = person) for each input image.
struct SegmentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "segment",
        abstract: "Segment people in images: an 8-bit mask PNG each (255 = person).",
        discussion: """
        For each INPUT (JPEG or PNG file, or a folder of them) writes OUTDIR/NAME.mask.png: 8-bit \
        gray, the model's person probability × 255 (255 = person, 0 = background), at the photo's \
        size (--mask-size model keeps the model's). The default model is MediaPipe's selfie \
        segmentation (256×256; selfie-segmentation-landscape-144x256.onnx is the 16:9 variant), \
        found as `granite depth` finds its model (--model, GRANITE_MODEL_PATH, \
        $XDG_DATA_HOME/granite/models, PREFIX/share/granite/models, the checkout's Models/). \
        Photos are decoded and resized as for `granite depth`. Files are written atomically.

        Exit status: 0 all done; 1 the model could not be loaded or OUTDIR not created; 2 some \
        inputs failed (each reported on stderr), the others were written; 64 usage error; 66 an \
        INPUT does not exist.
        """
    )

    @OptionGroup var batch: PhotoBatchOptions

    @Option(help: ArgumentHelp("Size of the mask PNG: input (the photo's own, default) or model (the model's output).",
                               valueName: "input|model"))
    var maskSize = "input"

    @Option(help: ArgumentHelp("Where the model runs: gpu (Vulkan), cpu, or auto (the GPU on discrete and integrated GPUs, the CPU on CPU drivers such as lavapipe).",
                               valueName: "auto|gpu|cpu"))
    var segmentDevice: InferenceDevice = .auto

    func validate() throws {
        guard ["input", "model"].contains(maskSize) else { throw ValidationError("--mask-size must be input or model, got '\(maskSize)'") }
    }

    func run() async throws {
        let modelSize = maskSize == "model", output = batch.output, batch = batch, device = segmentDevice
        try await PhotoJobs.runBatch(
            batch, command: "granite segment",
            load: { try PersonSegmenter(modelPath: batch.model, threads: batch.threads ?? Model.defaultThreads, backend: try device.backend()) },
            modelPath: \.modelPath,
            announce: { if device != .cpu { print("segmentation runs on the \(InferenceDevice.describe($0.runner))") } }
        ) { file, segmenter in
            try MaskImages.process(file, into: output, with: segmenter, modelSize: modelSize)
        }
    }
}

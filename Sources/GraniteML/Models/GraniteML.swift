import Crypto
import Foundation
import GraniteMedia

/// What a prediction is turned into: a type built from the model's outputs.
public protocol ModelOutput: Sendable {
    /// Builds the output from the raw tensors and what was known about the input.
    init(outputs: [String: Tensor], context: PredictionContext) throws(MLError)
}

/// What an output conversion knows about the prediction.
public struct PredictionContext: Sendable {
    /// The model's description.
    public let description: ModelDescription
    /// The name of the output the description points at (or the model's first output).
    public let outputName: String
    /// The size outputs are scaled to: the fed image's, or the size the caller asked for
    /// (e.g. the photo's own when a JPEG was decoded at a reduced scale).
    public let sourceWidth: Int
    public let sourceHeight: Int
    /// True when the output keeps the model's own size (`sourceWidth`/`sourceHeight` are then ignored).
    public var keepsModelSize = false
}

/// The size a prediction's image outputs (a depth map) come at.
public enum OutputSize: Sendable, Equatable {
    /// The size of the image fed in.
    case input
    /// The model's own output size (no resampling).
    case model
    /// This size (e.g. the original photo's, when a reduced decode was fed in).
    case exactly(width: Int, height: Int)
}

/// Makes the runner of a loaded model (a GPU backend); nil runs it on the CPU.
public typealias Backend = @Sendable (Model) throws(MLError) -> any ModelRunner

/// How `predict` takes its input.
public enum InputKind: Sendable {
    /// An image (or a frame's image), resized and normalised as the description says.
    case frame
}

/// A model loaded once, predicting a typed output from frames: the seed's
/// `GraniteML<Output>(model, input: .frame)` / `predict(frame)`, safe to share across tasks.
///
/// ```swift
/// let depth = try GraniteML<DepthMap>(ModelDescription.fastDepth224)
/// let map = try depth.predict(frame)
/// ```
public final class GraniteML<Output: ModelOutput>: Sendable {
    /// The loaded model.
    public let model: Model
    /// What runs it: the model itself on the CPU, or a backend made from it (``Backend``).
    public let runner: any ModelRunner
    /// How images are fed to it and its output read.
    public let description: ModelDescription
    /// The input kind (`.frame`).
    public let input: InputKind
    /// True when the model normalises its input itself with the description's mean/std (as
    /// MiDaS's own ONNX export does); images are then only scaled by `pixelScale`, so the
    /// same description serves both kinds of export without normalising twice.
    public let normalizesInside: Bool
    /// The input preparation actually applied (the description's, less a normalisation the
    /// model does itself): what a backend that makes the input on a device must do too.
    public let feed: ModelDescription.Input

    /// Loads the model at `modelPath`, described by `description` (looked up by file name when nil).
    public init(_ modelPath: String, description: ModelDescription? = nil, input: InputKind = .frame,
                threads: Int = Model.defaultThreads, backend: Backend? = nil) throws(MLError) {
        let found: ModelDescription? = if let description { description } else { try ModelLocator.description(forModelAt: modelPath) }
        guard let d = found else {
            throw .invalidDescription(path: modelPath, reason: "no description for this model; put NAME.json beside it (see Models/README.md)")
        }
        try d.validate(path: modelPath)
        let bytes: Data
        do { bytes = try Data(contentsOf: URL(fileURLWithPath: modelPath), options: .mappedIfSafe) } catch {
            throw .unreadableFile(path: modelPath, reason: error.localizedDescription)
        }
        try Self.checkHash(of: bytes, at: modelPath, against: d)
        model = try Model(data: bytes, name: modelPath, threads: threads)
        runner = try backend?(model) ?? model
        self.description = d
        self.input = input
        guard let first = model.inputs.first, model.inputs.count == 1 else {
            throw .invalidDescription(path: modelPath, reason: "frame models need exactly one input, this one has \(model.inputs.count)")
        }
        if let name = d.input.name, name != first.name {
            throw .invalidDescription(path: modelPath, reason: "the description names input '\(name)', the model has '\(first.name)'")
        }
        guard first.elementType == d.input.dtype else {
            throw .invalidDescription(path: modelPath, reason: "the description says \(d.input.dtype) input, the model takes \(first.elementType)")
        }
        var feed = d.input
        normalizesInside = model.inputNormalization?.matches(d.input) ?? false
        if normalizesInside {
            feed.mean = [0, 0, 0]
            feed.std = [1, 1, 1]
        }
        self.feed = feed
    }

    /// Checks a described model file's SHA-256 (when the description records one and the file
    /// carries the described name: a model of the user's own under another name is not checked).
    static func checkHash(of bytes: Data, at path: String, against description: ModelDescription) throws(MLError) {
        guard let expected = description.sha256?.lowercased(),
              (path as NSString).lastPathComponent == description.file else { return }
        let actual = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        guard actual == expected else { throw .modelHashMismatch(path: path, expected: expected, actual: actual) }
    }

    /// Finds the described model along the search path (see ``ModelLocator``) and loads it.
    public convenience init(_ description: ModelDescription, explicitPath: String? = nil, input: InputKind = .frame,
                            threads: Int = Model.defaultThreads, backend: Backend? = nil) throws(MLError) {
        try self.init(try ModelLocator.locate(description, explicit: explicitPath), description: description,
                      input: input, threads: threads, backend: backend)
    }

    /// Loads `modelPath` when given (its description from a sibling JSON, the search folders or
    /// the built-ins, else `description`), otherwise `description`'s file along the search path:
    /// how the depth estimator and the person segmenter load their model.
    public convenience init(modelPath: String?, description: ModelDescription, threads: Int = Model.defaultThreads,
                            backend: Backend? = nil) throws(MLError) {
        if let modelPath {
            try self.init(modelPath, description: try ModelLocator.description(forModelAt: modelPath) ?? description,
                          threads: threads, backend: backend)
        } else {
            try self.init(description, threads: threads, backend: backend)
        }
    }

    /// Runs the model on an image (resized to the model's input with the shared antialiased
    /// resampler); image outputs come at `size`.
    public func predict(_ image: Image, size: OutputSize = .input) throws(MLError) -> Output {
        let tensor = try ImageTensor.input(image, feed)
        let outputs = try runner.run([model.inputs[0].name: tensor])
        let outputName = description.output.name ?? model.outputs[0].name
        let (w, h) = if case let .exactly(w, h) = size { (w, h) } else { (image.width, image.height) }
        guard w > 0, h > 0 else { throw .unsupportedImage(reason: "output size \(w)x\(h) is empty") }
        var context = PredictionContext(description: description, outputName: outputName, sourceWidth: w, sourceHeight: h)
        context.keepsModelSize = size == .model
        return try Output(outputs: outputs, context: context)
    }

    /// Runs the model on a frame's image.
    public func predict(_ frame: Frame) throws(MLError) -> Output {
        try predict(frame.image)
    }
}

extension Tensor: ModelOutput {
    /// The described output tensor, as the model gave it.
    public init(outputs: [String: Tensor], context: PredictionContext) throws(MLError) {
        guard let t = outputs[context.outputName] else { throw .unexpectedOutput(reason: "no output '\(context.outputName)'") }
        self = t
    }
}

extension DepthMap: ModelOutput {
    /// The described output plane, scaled to metres when the model is metric and resized to the source image.
    public init(outputs: [String: Tensor], context: PredictionContext) throws(MLError) {
        guard let t = outputs[context.outputName] else { throw .unexpectedOutput(reason: "no output '\(context.outputName)'") }
        let (w, h, raw) = try ImageTensor.plane(t)
        let scale = context.description.output.metricScale
        let values = scale.map { s in raw.map { $0 * s } } ?? raw
        let (tw, th) = context.keepsModelSize ? (w, h) : (context.sourceWidth, context.sourceHeight)
        let resized = Resampler.resize(floats: values, width: w, height: h, channels: 1, toWidth: tw, toHeight: th, filter: DepthMap.scaleFilter)
        try self.init(width: tw, height: th, values: resized,
                      meaning: context.description.output.meaning, isMetric: scale != nil)
    }
}

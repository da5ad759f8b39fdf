import GraniteMedia

/// Person segmentation from a single image: resize and normalise for the model, run it, and
/// return the person probability at the size asked for. Default model: MediaPipe's selfie
/// segmentation (256×256, Apache-2.0, shipped in `Models/`); its landscape variant (144×256)
/// suits 16:9 video.
public final class PersonSegmenter: Sendable {
    private let ml: GraniteML<PersonMask>

    /// The description in use.
    public var description: ModelDescription { ml.description }
    /// What runs the model (the CPU ``Model``, or a GPU backend).
    public var runner: any ModelRunner { ml.runner }
    /// The model file in use.
    public var modelPath: String { ml.model.path }
    /// The input preparation applied to a picture at ``inputSize``.
    public var feed: ModelDescription.Input { ml.feed }
    /// The model's input size (images are resized to it).
    public var inputSize: (width: Int, height: Int) { (description.input.width, description.input.height) }
    /// The output the mask is read from (the description's, else the model's first).
    public var outputName: String { description.output.name ?? ml.model.outputs[0].name }

    /// Loads a segmentation model: `modelPath` when given (its description from a sibling JSON,
    /// `Models/` or the built-ins), else `description` along the search path. The description's
    /// output must be a `probability`.
    public init(modelPath: String? = nil, description: ModelDescription = .selfieSegmentation256,
                threads: Int = Model.defaultThreads, backend: Backend? = nil) throws(MLError) {
        ml = try GraniteML<PersonMask>(modelPath: modelPath, description: description, threads: threads, backend: backend)
        guard ml.description.output.meaning == .probability else {
            throw .invalidDescription(path: ml.model.path, reason: "the model's output is \(ml.description.output.meaning), not a person probability")
        }
    }

    /// The person mask of `image` (rgba8, rgb24 or gray8), at `size` (the image's by default).
    public func segment(_ image: Image, size: OutputSize = .input) throws(MLError) -> PersonMask {
        try ml.predict(image, size: size)
    }
}

/// A per-pixel person probability (0 background … 1 person), row-major.
public struct PersonMask: Sendable, Equatable, ModelOutput {
    public let width: Int
    public let height: Int
    public let values: [Float]

    /// A mask from its parts; throws when the count does not match the size.
    public init(width: Int, height: Int, values: [Float]) throws(MLError) {
        guard width > 0, height > 0, values.count == width * height else {
            throw .unexpectedOutput(reason: "a \(width)x\(height) mask needs \(width * height) values, got \(values.count)")
        }
        self.width = width; self.height = height; self.values = values
    }

    /// The described output plane, resized (bilinear, the resampler depth maps use) to the source image.
    public init(outputs: [String: Tensor], context: PredictionContext) throws(MLError) {
        guard let t = outputs[context.outputName] else { throw .unexpectedOutput(reason: "no output '\(context.outputName)'") }
        let (w, h, raw) = try ImageTensor.plane(t)
        let (tw, th) = context.keepsModelSize ? (w, h) : (context.sourceWidth, context.sourceHeight)
        let resized = (tw, th) == (w, h) ? raw
            : Resampler.resize(floats: raw, width: w, height: h, channels: 1, toWidth: tw, toHeight: th, filter: DepthMap.scaleFilter)
        try self.init(width: tw, height: th, values: resized)
    }

    /// The mask as 8-bit samples: round(p × 255) clamped, 255 = person.
    public func samples8() -> [UInt8] {
        values.map { UInt8(min(max($0 * 255, 0), 255).rounded()) }
    }

    /// The mask as a `gray8` image (255 = person).
    public func grayImage() -> Image {
        (try? Image(width: width, height: height, format: .gray8, bytes: samples8()))!
    }

    /// The share of pixels above one half (the person's area, 0…1).
    public var personFraction: Double {
        Double(values.lazy.filter { $0 > 0.5 }.count) / Double(values.count)
    }
}

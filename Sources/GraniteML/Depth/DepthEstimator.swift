import GraniteMedia

/// Depth from a single image: resize and normalise for the model, run it, and return a depth
/// map at the input's size. Default model: FastDepth 224 (metric, int8); MiDaS v2.1 small
/// works too for users who download it.
public final class DepthEstimator: Sendable {
    private let ml: GraniteML<DepthMap>

    /// The description in use.
    public var description: ModelDescription { ml.description }
    /// What runs the model (the CPU ``Model``, or a GPU backend).
    public var runner: any ModelRunner { ml.runner }
    /// The model file in use.
    public var modelPath: String { ml.model.path }
    /// True when the model normalises its input itself (see ``GraniteML/normalizesInside``).
    public var normalizesInside: Bool { ml.normalizesInside }

    /// Loads a depth model: `modelPath` when given (its description from a sibling JSON,
    /// `Models/` or the built-ins), else `description` along the search path.
    public init(modelPath: String? = nil, description: ModelDescription = .fastDepth224,
                threads: Int = Model.defaultThreads, backend: Backend? = nil) throws(MLError) {
        ml = try GraniteML<DepthMap>(modelPath: modelPath, description: description, threads: threads, backend: backend)
        guard ml.description.output.meaning != .probability else {
            throw .invalidDescription(path: ml.model.path, reason: "the model's output is a probability map, not depth")
        }
    }

    /// Estimates depth for `image` (rgba8, rgb24 or gray8); the map comes at `size` (the image's by default).
    public func estimate(_ image: Image, size: OutputSize = .input) throws(MLError) -> DepthMap {
        try ml.predict(image, size: size)
    }

    /// The input preparation actually applied to a picture at ``inputSize`` (the description's,
    /// less a normalisation the model does itself).
    public var feed: ModelDescription.Input { ml.feed }

    /// The output the map is read from (the description's, else the model's first).
    public var outputName: String { description.output.name ?? ml.model.outputs[0].name }

    /// The model's input size (images are resized to it).
    public var inputSize: (width: Int, height: Int) { (description.input.width, description.input.height) }
}

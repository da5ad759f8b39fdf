import GraniteCapture
import GraniteCodecs
import GraniteMedia
import GraniteML
import Marble

/// A Marble filter chain as a pipeline stage (GPU through Vulkan, or its CPU reference).
/// Marble converts camera formats (YUYV, NV12, RGB24) itself, so no `ToRGBA` is needed before it.
public struct MarbleStage: FrameStage {
    /// The chain.
    public let chain: FilterChain
    /// Whether to run on the GPU (Vulkan; lavapipe when there is no GPU) or the CPU reference.
    public let gpu: Bool

    /// A stage from filter specs (`blur:sigma=2`, `sobel`, or chains joined with `|`).
    public init(specs: [String], gpu: Bool = true) throws {
        chain = try FilterChain(specs.flatMap { try FilterSpec.parseChain($0) })
        self.gpu = gpu
    }

    public var name: String { "marble: " + chain.specs.map(\.description).joined(separator: " | ") }

    /// Whether a filter of the chain reads a depth map (`depthmask`, the `depth` point cloud).
    public var usesDepth: Bool { chain.specs.contains { ["depthmask", "depth"].contains($0.name) } }

    public func process(_ image: Image) throws -> Image {
        try process(image, depth: nil)
    }

    /// Runs the chain; `depthmask` and `depth` read `depth` when given (else the frame's luma).
    public func process(_ image: Image, depth: Image?) throws -> Image {
        gpu ? try chain.apply(image, depth: depth) : try chain.applyCPU(image, depth: depth)
    }
}

extension MarbleStage: DepthInputStage {
    /// On the GPU the frame goes up once and the chain resizes it for the model on the device
    /// (``FilterChain/apply(_:time:depthInput:estimate:)``); the CPU reference resizes with the
    /// same resampler on the CPU.
    public func process(_ image: Image, depthInput: (width: Int, height: Int), estimate: (Image) -> Image?) throws -> Image {
        if gpu { return try chain.apply(image, depthInput: depthInput, estimate: estimate) }
        let small = try DepthImage.modelInput(image, size: depthInput, range: chain.range)
        return try chain.applyCPU(image, depth: estimate(small))
    }

    /// On the GPU one upload of the frame (the model's input resized there and read back, small;
    /// the map written to the device only when it is a new one, see
    /// ``FilterChain/apply(_:time:depth:depthVersion:depthInput:)``); the CPU reference resizes with
    /// the same resampler on the CPU.
    public func process(_ image: Image, depth: Image?, depthVersion: UInt64,
                        depthInput: (width: Int, height: Int)?) throws -> (image: Image, modelInput: Image?) {
        if gpu { return try chain.apply(image, depth: depth, depthVersion: depthVersion, depthInput: depthInput) }
        let small = try depthInput.map { try DepthImage.modelInput(image, size: $0, range: chain.range) }
        return (try chain.applyCPU(image, depth: usesDepth ? depth : nil), small)
    }
}

/// PNG or JPEG output through GraniteCodecs.
public struct CodecsEncoder: FrameEncoder {
    /// The container.
    public enum Kind: String, Sendable, CaseIterable {
        case png, jpg
    }

    /// Which one.
    public let kind: Kind
    /// JPEG quality (1–100).
    public let quality: Int

    /// An encoder.
    public init(_ kind: Kind, quality: Int = 90) {
        self.kind = kind
        self.quality = quality
    }

    public var fileExtension: String { kind.rawValue }

    public func encode(_ image: Image) throws -> [UInt8] {
        let ready = [.rgba8, .rgb24, .gray8].contains(image.format) ? image : try ColorConversion.rgba(image)
        switch kind {
        case .png: return try Codecs.encodePNG(ready)
        case .jpg: return try Codecs.encodeJPEG(ready, quality: quality)
        }
    }
}

/// JPEG and PNG decoding through GraniteCodecs, for folder sources and MJPEG cameras.
public struct CodecsDecoder: ImageDecoder {
    /// A decoder.
    public init() {}

    public var fileExtensions: Set<String> { ["jpg", "jpeg", "png"] }

    public func decode(_ bytes: [UInt8], path: String) throws(CaptureError) -> Image {
        do {
            return try Codecs.decode(bytes, path: path)
        } catch {
            throw .decodeFailed(path: path, reason: "\(error)")
        }
    }
}

extension DecoderSet {
    /// Everything this build reads: JPEG and PNG (GraniteCodecs), then Netpbm.
    public static var all: DecoderSet { DecoderSet([CodecsDecoder(), NetpbmDecoder()]) }
}

/// GraniteML's `DepthEstimator` (FastDepth by default) as the pipeline's depth stage.
public struct DepthEstimatorStage: DepthStage {
    /// The estimator (model loaded once).
    public let estimator: DepthEstimator

    /// Loads the model at `modelPath`, or the default depth model from the search path.
    public init(modelPath: String? = nil) throws {
        estimator = try DepthEstimator(modelPath: modelPath)
    }

    public func estimate(_ image: Image) throws -> Image {
        let input = [.rgba8, .rgb24, .gray8].contains(image.format) ? image : try ColorConversion.rgba(image)
        return try estimator.estimate(input).floatImage()
    }

    /// The map as GraniteML writes it: millimetres when metric, else normalised with larger = farther.
    public func estimate16Bit(_ image: Image) throws -> Image {
        let input = [.rgba8, .rgb24, .gray8].contains(image.format) ? image : try ColorConversion.rgba(image)
        return try estimator.estimate(input).to16BitPNGImage()
    }

    /// The model's input size (FastDepth: 224×224).
    public var modelInputSize: (width: Int, height: Int)? { estimator.inputSize }

    /// One run of the model on a picture already at its input size; both maps at `width`×`height`.
    public func estimateMaps(modelInput: Image, width: Int, height: Int) throws -> DepthMaps {
        let result = try estimator.estimate(modelInput, size: .exactly(width: width, height: height))
        return DepthMaps(map: result.floatImage(), png: result.to16BitPNGImage())
    }

    /// One run of the model, as the float map and the 16-bit image GraniteML writes.
    public func estimateMaps(_ image: Image) throws -> DepthMaps {
        let input = [.rgba8, .rgb24, .gray8].contains(image.format) ? image : try ColorConversion.rgba(image)
        let result = try estimator.estimate(input)
        return DepthMaps(map: result.floatImage(), png: result.to16BitPNGImage())
    }
}

import Foundation

/// How to feed a model an image and read its answer: the per-model JSON in `Models/`.
///
/// Pixels (0...255) become `(p * pixelScale - mean[c]) / std[c]`, laid out NHWC or NCHW and
/// stored as the input's element type (rounded and clamped for integer inputs).
public struct ModelDescription: Sendable, Codable, Equatable {
    /// Memory order of the image tensor.
    public enum Layout: String, Sendable, Codable { case nhwc = "NHWC", nchw = "NCHW" }

    /// What the output values mean.
    public enum Meaning: String, Sendable, Codable {
        /// Larger is farther; metres when `metricScale` is set.
        case depth
        /// Larger is nearer (relative inverse depth, as MiDaS gives).
        case inverseDepth
        /// A per-pixel probability (text maps and such).
        case probability
    }

    /// The model input: name, size, layout, type and normalisation.
    public struct Input: Sendable, Codable, Equatable {
        public var name: String?
        public var width: Int
        public var height: Int
        public var layout: Layout
        public var dtype: Tensor.ElementType
        public var pixelScale: Float
        public var mean: [Float]
        public var std: [Float]

        /// An input description; `mean` and `std` have three values (R, G, B).
        public init(name: String? = nil, width: Int, height: Int, layout: Layout, dtype: Tensor.ElementType,
                    pixelScale: Float, mean: [Float], std: [Float]) {
            self.name = name; self.width = width; self.height = height; self.layout = layout
            self.dtype = dtype; self.pixelScale = pixelScale; self.mean = mean; self.std = std
        }
    }

    /// The model output: name, meaning and metric scale.
    public struct Output: Sendable, Codable, Equatable {
        public var name: String?
        public var meaning: Meaning
        /// Metres per output unit, for metric depth models.
        public var metricScale: Float?

        /// An output description.
        public init(name: String? = nil, meaning: Meaning, metricScale: Float? = nil) {
            self.name = name; self.meaning = meaning; self.metricScale = metricScale
        }
    }

    /// A short identifier (`fastdepth-224-int8`).
    public var name: String
    /// The model file name looked up along the search path.
    public var file: String
    /// The file's SHA-256 where known and checked.
    public var sha256: String?
    /// Where the file comes from.
    public var source: String?
    public var input: Input
    public var output: Output

    /// A description from its parts.
    public init(name: String, file: String, sha256: String? = nil, source: String? = nil, input: Input, output: Output) {
        self.name = name; self.file = file; self.sha256 = sha256; self.source = source
        self.input = input; self.output = output
    }

    /// FastDepth 224 (int8, NHWC uint8 input 0...255, metres = value × 0.0716998); the default.
    public static let fastDepth224 = ModelDescription(
        name: "fastdepth-224-int8", file: "fastdepth-224-int8.onnx",
        sha256: "47cb4db8208a9977a3d5555fb7b96865603f6ec4766fe9eb9c6752aaf05ce13d",
        source: "FastDepth (Wofk et al. 2019) from openmv/openmv fast_depth_224.tflite, converted with tf2onnx 1.17",
        input: Input(name: "serving_default_input_1:0", width: 224, height: 224, layout: .nhwc, dtype: .uint8,
                     pixelScale: 1, mean: [0, 0, 0], std: [1, 1, 1]),
        output: Output(name: "StatefulPartitionedCall:0", meaning: .depth, metricScale: 0.0716998))

    /// MiDaS v2.1 small (`model-small.onnx`, 256×256 NCHW float, ImageNet mean/std, inverse depth).
    public static let midasSmall = ModelDescription(
        name: "midas-v2.1-small", file: "model-small.onnx", sha256: nil,
        source: "isl-org/MiDaS release v2_1, asset model-small.onnx (see Models/README.md)",
        input: Input(width: 256, height: 256, layout: .nchw, dtype: .float32, pixelScale: 1.0 / 255,
                     mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225]),
        output: Output(meaning: .inverseDepth))

    /// MediaPipe selfie segmentation, general model (256×256 NHWC float 0…1, person probability
    /// out, shipped in `Models/`); the default of ``PersonSegmenter``.
    public static let selfieSegmentation256 = ModelDescription(
        name: "selfie-segmentation-256", file: "selfie-segmentation-256.onnx",
        sha256: "85045d3d2cfc6be913353de6aa7eae57d7f62aea883883c7fdf725f2606431f9",
        source: "MediaPipe selfie segmentation (general, 256x256) from the mediapipe 0.10.21 wheel, converted with tf2onnx 1.17 and scripts/ml/convert_selfie_segmentation.py",
        input: Input(name: "input_1", width: 256, height: 256, layout: .nhwc, dtype: .float32, pixelScale: 0.003921569,
                     mean: [0, 0, 0], std: [1, 1, 1]),
        output: Output(name: "activation_10", meaning: .probability))

    /// MediaPipe selfie segmentation, landscape model (144×256, for 16:9 video; shipped in `Models/`).
    public static let selfieSegmentationLandscape = ModelDescription(
        name: "selfie-segmentation-landscape-144x256", file: "selfie-segmentation-landscape-144x256.onnx",
        sha256: "b4df4f05d672d3a1fdc1d8cad4fab402db33452293091c667d41bc3b00c24ebb",
        source: "MediaPipe selfie segmentation (landscape, 144x256) from the mediapipe 0.10.21 wheel, converted with tf2onnx 1.17 and scripts/ml/convert_selfie_segmentation.py",
        input: Input(name: "input_1", width: 256, height: 144, layout: .nhwc, dtype: .float32, pixelScale: 0.003921569,
                     mean: [0, 0, 0], std: [1, 1, 1]),
        output: Output(name: "segment_back", meaning: .probability))

    /// The descriptions compiled in (the same as the JSON files in `Models/`).
    public static let builtIn: [ModelDescription] = [.fastDepth224, .midasSmall, .selfieSegmentation256, .selfieSegmentationLandscape]

    /// Reads a description from a JSON file.
    public static func load(path: String) throws(MLError) -> ModelDescription {
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let d = try JSONDecoder().decode(ModelDescription.self, from: data)
            try d.validate(path: path)
            return d
        } catch let error as MLError {
            throw error
        } catch {
            throw .invalidDescription(path: path, reason: "\(error)")
        }
    }

    /// Checks sizes and normalisation values.
    func validate(path: String) throws(MLError) {
        guard input.width > 0, input.height > 0 else { throw .invalidDescription(path: path, reason: "input size must be positive") }
        guard input.mean.count == 3, input.std.count == 3, input.std.allSatisfy({ $0 != 0 }) else {
            throw .invalidDescription(path: path, reason: "mean and std need three values each, std non-zero")
        }
        guard input.dtype == .float32 || input.dtype == .uint8 || input.dtype == .int8 else {
            throw .invalidDescription(path: path, reason: "input dtype must be float32, uint8 or int8")
        }
    }
}

extension Tensor.ElementType: Codable {}

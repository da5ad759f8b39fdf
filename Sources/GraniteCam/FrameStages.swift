import GraniteCapture
import GraniteMedia

/// One processing step a frame goes through on its way out: a filter chain, a color conversion.
///
/// The seam to Marble: wrap `FilterChain(specs).apply(image)` in a type conforming to this.
public protocol FrameStage: Sendable {
    /// A short name for status and errors (`marble: blur(2) | sobel`).
    var name: String { get }
    /// Processes one image.
    func process(_ image: Image) throws -> Image
    /// Processes one image with the frame's depth map (`grayF32`, any size), when there is one.
    /// Stages that use no depth keep the default, which ignores it.
    func process(_ image: Image, depth: Image?) throws -> Image
    /// Whether ``process(_:depth:)`` reads the depth map (the run hands it one only then).
    var usesDepth: Bool { get }
}

extension FrameStage {
    public func process(_ image: Image, depth: Image?) throws -> Image { try process(image) }
    public var usesDepth: Bool { false }
}

/// Encodes an image for disk: the seam to GraniteCodecs (PNG/JPEG).
public protocol FrameEncoder: Sendable {
    /// File extension without the dot (`ppm`, `png`, `jpg`).
    var fileExtension: String { get }
    /// Encodes one image.
    func encode(_ image: Image) throws -> [UInt8]
}

/// Estimates depth from a frame: the seam to GraniteML's `DepthEstimator`.
public protocol DepthStage: Sendable {
    /// Returns a depth map (any format; `grayF32` by convention).
    func estimate(_ image: Image) throws -> Image
    /// Returns the depth map as a `gray16` image for a 16-bit PNG (default: ``DepthStage/estimate(_:)``
    /// widened by ``DepthImage/gray16(_:)``).
    func estimate16Bit(_ image: Image) throws -> Image
    /// One estimate as both: the `grayF32` map for the filters and the `gray16` image to write
    /// (default: ``DepthStage/estimate(_:)`` once, widened by ``DepthImage/gray16(_:)``).
    func estimateMaps(_ image: Image) throws -> DepthMaps
    /// The size the model takes its input at, when it can be handed a picture already resized
    /// to it (a GPU chain makes it on the device, see ``DepthInputStage``); nil by default.
    var modelInputSize: (width: Int, height: Int)? { get }
    /// One estimate from `modelInput` (`rgba8`, already ``modelInputSize``), both maps at
    /// `width`×`height` (the frame's size). Default: `modelInput` scaled up to the frame and
    /// ``estimateMaps(_:)``.
    func estimateMaps(modelInput: Image, width: Int, height: Int) throws -> DepthMaps
}

/// A stage that makes the depth model's input itself from the frame it holds — a GPU chain
/// resizes the frame it already uploaded — so a frame due for depth goes to the device once:
/// up, converted, resized to the model's input (read back, small), the map up, the result down.
public protocol DepthInputStage: FrameStage {
    /// Processes `image` with a depth map made from it: `estimate` gets the frame resized to
    /// `depthInput` (`rgba8`) and returns the `grayF32` map at the frame's size (nil: none).
    func process(_ image: Image, depthInput: (width: Int, height: Int), estimate: (Image) -> Image?) throws -> Image
    /// Processes a live frame with the newest depth map (`depth`, named by `depthVersion`: a GPU
    /// chain keeps it on the device and sends a map up once however many frames read it) and, when
    /// `depthInput` is given, also returns the frame resized to the model's input (`rgba8`; made
    /// on the device from the frame already uploaded, so only that small picture comes back).
    func process(_ image: Image, depth: Image?, depthVersion: UInt64,
                 depthInput: (width: Int, height: Int)?) throws -> (image: Image, modelInput: Image?)
}

/// One depth estimate in the two shapes the run uses.
public struct DepthMaps: Sendable {
    /// `grayF32`, for `depthmask` and the `depth` point cloud.
    public var map: Image
    /// `gray16`, for the 16-bit PNG.
    public var png: Image

    /// Both shapes.
    public init(map: Image, png: Image) {
        self.map = map
        self.png = png
    }
}

extension DepthStage {
    /// The map from ``estimate(_:)``, widened to `gray16`.
    public func estimate16Bit(_ image: Image) throws -> Image {
        try DepthImage.gray16(try estimate(image))
    }

    public func estimateMaps(_ image: Image) throws -> DepthMaps {
        let map = try estimate(image)
        return DepthMaps(map: map, png: try DepthImage.gray16(map))
    }

    public var modelInputSize: (width: Int, height: Int)? { nil }

    public func estimateMaps(modelInput: Image, width: Int, height: Int) throws -> DepthMaps {
        try estimateMaps(try Resampler.resize(modelInput, width: width, height: height, filter: .bilinear))
    }
}

/// Camera formats to `rgba8` on the CPU (BT.601 limited range for YUV), the working format.
public struct ToRGBA: FrameStage {
    /// A converter.
    public init() {}

    public var name: String { "to-rgba" }

    public func process(_ image: Image) throws -> Image {
        try ColorConversion.rgba(image)
    }
}

/// Binary Netpbm output (`P6` from any color image, `P5` from gray): needs no codec library.
public struct NetpbmEncoder: FrameEncoder {
    /// An encoder.
    public init() {}

    public var fileExtension: String { "ppm" }

    public func encode(_ image: Image) throws -> [UInt8] {
        if image.format == .gray8 {
            return Array("P5\n\(image.width) \(image.height)\n255\n".utf8) + image.bytes
        }
        let rgba = try ColorConversion.rgba(image)
        var out = Array("P6\n\(image.width) \(image.height)\n255\n".utf8)
        out.reserveCapacity(out.count + image.pixelCount * 3)
        rgba.bytes.withUnsafeBufferPointer { p in
            for i in stride(from: 0, to: p.count, by: 4) {
                out.append(p[i]); out.append(p[i + 1]); out.append(p[i + 2])
            }
        }
        return out
    }
}

import Foundation
import GraniteCodecs
import GraniteMedia
import GraniteML

/// The two files made from a depth map: a 16-bit gray PNG of the depth and a colorised
/// preview PNG; shared by `granite depth` and `granite convert --depth`.
public struct DepthImages: Sendable {
    /// The encoded 16-bit gray depth PNG (`DepthMap.to16BitPNGImage()`).
    public let depthPNG: [UInt8]
    /// The encoded color preview PNG (`DepthMap.colorized()`).
    public let previewPNG: [UInt8]

    /// Encodes `map`; the paths only name the files in errors.
    public init(_ map: DepthMap, depthPath: String, previewPath: String) throws(CodecError) {
        depthPNG = try Codecs.encodePNG(map.to16BitPNGImage(), path: depthPath)
        previewPNG = try Codecs.encodePNG(map.colorized(), path: previewPath)
    }

    /// Writes both files atomically (each appears complete under its final name, or not at all).
    public func write(depthPath: String, previewPath: String) throws(CodecError) {
        try AtomicFile.write(depthPNG, to: depthPath)
        try AtomicFile.write(previewPNG, to: previewPath)
    }

    /// An image file decoded for `inputSize` (a model's input): a JPEG at the smallest DCT scale
    /// (1/8, 1/4, 3/8, 1/2…) still at least twice that size in both directions, so a 12 MP photo never
    /// becomes a full-size buffer; other formats whole. Also the file's own upright size.
    public static func decode(_ path: String, for inputSize: (width: Int, height: Int),
                              maxPixels: Int = DecodeOptions.defaultMaxPixels) throws(CodecError)
        -> (image: Image, width: Int, height: Int) {
        let bytes = try FileBytes.read(path)
        let info = try Codecs.info(bytes, path: path, options: DecodeOptions(maxPixels: maxPixels))
        // Twice the input size: the decoder's reduction is a plain 8×8 (or 4×4…) block average, so
        // leaving the last factor of 2 or more to the antialiased resize keeps its kernel Pillow's.
        let minimum = (width: 2 * inputSize.width, height: 2 * inputSize.height)
        let image = try Codecs.decode(bytes, path: path, options: DecodeOptions(maxPixels: maxPixels, minimumSize: minimum))
        return (image, info.width, info.height)
    }

    /// Depth for the image file at `path`: decoded reduced (``decode(_:for:maxPixels:)``), resized
    /// antialiased to the model's input, and the map scaled back to the file's own size (or kept at
    /// the model's with `modelSize`).
    public static func estimate(_ path: String, with estimator: DepthEstimator, modelSize: Bool = false) throws -> DepthMap {
        let (image, width, height) = try decode(path, for: estimator.inputSize)
        return try estimator.estimate(image, size: modelSize ? .model : .exactly(width: width, height: height))
    }

    /// `granite depth`'s work for one photo: ``estimate(_:with:modelSize:)``, then `NAME.depth.png`
    /// and `NAME.preview.png` written atomically into `folder`; returns their paths.
    public static func process(_ path: String, into folder: String, with estimator: DepthEstimator,
                               modelSize: Bool = false) throws -> (depth: String, preview: String) {
        let map = try estimate(path, with: estimator, modelSize: modelSize)
        let stem = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        let depthPath = (folder as NSString).appendingPathComponent("\(stem).depth.png")
        let previewPath = (folder as NSString).appendingPathComponent("\(stem).preview.png")
        try DepthImages(map, depthPath: depthPath, previewPath: previewPath).write(depthPath: depthPath, previewPath: previewPath)
        return (depthPath, previewPath)
    }

    /// `NAME.depth.png` and `NAME.depth-preview.png` beside `output` (its extension dropped).
    public static func names(beside output: String) -> (depth: String, preview: String) {
        let stem = (output as NSString).deletingPathExtension
        return (stem + ".depth.png", stem + ".depth-preview.png")
    }
}

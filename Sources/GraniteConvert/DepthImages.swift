import Foundation
import GraniteCodecs
import GraniteMedia
import GraniteML

/// The two files made from a depth map: a 16-bit gray PNG of the depth and a colorised
/// preview PNG; shared by `granite depth` and `granite convert --depth`.
public struct DepthImages: Sendable {
    /// The encoded 16-bit gray depth PNG (the samples of `DepthMap.to16BitPNGImage()`).
    public let depthPNG: [UInt8]
    /// The encoded color preview PNG: 8-bit indexed, `ColorMap.palette` (the colors of `DepthMap.colorized()`).
    public let previewPNG: [UInt8]

    /// zlib level of the depth PNG: 2, as fast as 1 on its Sub-filtered rows (with the row encoder's
    /// small hash table: 36 ms for a 12 MP map) and ~13 % smaller (~0.73 MB instead of ~0.83 MB).
    public static let depthZlibLevel: Int32 = 2
    /// zlib level of the preview PNG: 1 (run-length coding has no further levels).
    public static let previewZlibLevel: Int32 = 1

    /// Encodes `map` at its own size; the paths only name the files in errors.
    public init(_ map: DepthMap, depthPath: String, previewPath: String) throws(CodecError) {
        let scaled: ScaledDepthMap
        do { scaled = try ScaledDepthMap(map, width: map.width, height: map.height) } catch {
            throw .encode(path: depthPath, reason: "\(error)")
        }
        try self.init(scaled, depthPath: depthPath, previewPath: previewPath)
    }

    /// Encodes `map` at its scaled size, row by row: no full-size map, image or pixel buffer is
    /// made, each scaled row is computed once for both PNGs, and their rows are deflated in bands
    /// on all cores.
    public init(_ map: ScaledDepthMap, depthPath: String, previewPath: String) throws(CodecError) {
        let width = map.width, scale = map.scale, metric = map.source.isMetric
        var depth = try PNGRowEncoder(width: width, height: map.height, layout: .gray16, path: depthPath)
        depth.level = Self.depthZlibLevel
        depth.filter = .sub  // smooth 16-bit samples: the differences are small (~0.7 MB for 12 MP)
        var preview = try PNGRowEncoder(width: width, height: map.height, layout: .indexed(palette: ColorMap.palette), path: previewPath)
        preview.level = Self.previewZlibLevel
        // Palette indices of an upscaled map repeat the row above for long stretches: the Up filter
        // turns them into runs of zeros, which zlib's run-length strategy codes as well as its
        // default matching does and faster (a 12 MP preview: ~0.3 MB, half of unfiltered level 1).
        preview.filter = .up
        preview.strategy = .rle
        let pngs = try PNGRowEncoder.encode([depth, preview], paths: [depthPath, previewPath]) { y, outs in
            withUnsafeTemporaryAllocation(of: Float.self, capacity: width) { line in
                map.values(row: y, into: line.baseAddress!)
                scale.samples16BigEndian(line.baseAddress!, count: width, metric: metric, into: outs[0])
                scale.paletteIndices(line.baseAddress!, count: width, into: outs[1])
            }
        }
        depthPNG = pngs[0]
        previewPNG = pngs[1]
    }

    /// Writes both files atomically (each appears complete under its final name, or not at all).
    public func write(depthPath: String, previewPath: String) throws(CodecError) {
        try AtomicFile.write(depthPNG, to: depthPath)
        try AtomicFile.write(previewPNG, to: previewPath)
    }

    /// How much larger than the model's input a JPEG is decoded (its DCT scale is the smallest
    /// giving at least this many times the input in both directions): 4, so the antialiased
    /// resize does most of the reduction, as Pillow's resize of the full photo does. At 2 (the
    /// decoder's 8×8 block reduction doing all but the last halving) a low-contrast macro photo's
    /// map reached Pearson 0.948 against ONNX Runtime fed by Pillow, at 4 0.953 (a 12 MP photo is
    /// then decoded at 3/8, about 1500×1125, instead of 1/4).
    public static let decodeFactor = 4

    /// An image file decoded for `inputSize` (a model's input): a JPEG at the smallest DCT scale
    /// (1/8, 1/4, 3/8, 1/2…) still at least ``decodeFactor`` times that size in both directions, so a
    /// 12 MP photo never becomes a full-size buffer; other formats whole. Also the file's own upright size.
    public static func decode(_ path: String, for inputSize: (width: Int, height: Int),
                              maxPixels: Int = DecodeOptions.defaultMaxPixels) throws(CodecError)
        -> (image: Image, width: Int, height: Int) {
        let bytes = try FileBytes.read(path)
        let info = try Codecs.info(bytes, path: path, options: DecodeOptions(maxPixels: maxPixels))
        // The decoder's reduction is a plain 8×8 (or 4×4…) block average: leaving a factor of 4 or
        // more to the antialiased resize keeps the result close to Pillow's resize of the whole photo.
        let minimum = (width: decodeFactor * inputSize.width, height: decodeFactor * inputSize.height)
        let image = try Codecs.decode(bytes, path: path, options: DecodeOptions(maxPixels: maxPixels, minimumSize: minimum))
        return (image, info.width, info.height)
    }

    /// Depth for the image file at `path`: decoded reduced (``decode(_:for:maxPixels:)``), resized
    /// antialiased to the model's input, and the map scaled back to the file's own size (or kept at
    /// the model's with `modelSize`).
    public static func estimate(_ path: String, with estimator: DepthEstimator, modelSize: Bool = false) throws -> DepthMap {
        let scaled = try estimateScaled(path, with: estimator, modelSize: modelSize)
        return modelSize ? scaled.source : scaled.materialized()
    }

    /// ``estimate(_:with:modelSize:)`` as a model-size map read scaled row by row (never a
    /// full-size float map).
    public static func estimateScaled(_ path: String, with estimator: DepthEstimator, modelSize: Bool = false) throws -> ScaledDepthMap {
        let (image, width, height) = try decode(path, for: estimator.inputSize)
        let map = try estimator.estimate(image, size: .model)
        return try modelSize ? ScaledDepthMap(map, width: map.width, height: map.height) : ScaledDepthMap(map, width: width, height: height)
    }

    /// `granite depth`'s work for one photo: ``estimate(_:with:modelSize:)``, then `NAME.depth.png`
    /// and `NAME.preview.png` written atomically into `folder`; returns their paths.
    public static func process(_ path: String, into folder: String, with estimator: DepthEstimator,
                               modelSize: Bool = false) throws -> (depth: String, preview: String) {
        let map = try estimateScaled(path, with: estimator, modelSize: modelSize)
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

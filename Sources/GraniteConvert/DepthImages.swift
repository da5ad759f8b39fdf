import Foundation
import GraniteCodecs
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

    /// `NAME.depth.png` and `NAME.depth-preview.png` beside `output` (its extension dropped).
    public static func names(beside output: String) -> (depth: String, preview: String) {
        let stem = (output as NSString).deletingPathExtension
        return (stem + ".depth.png", stem + ".depth-preview.png")
    }
}

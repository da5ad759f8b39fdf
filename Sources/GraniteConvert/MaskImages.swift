import Foundation
import GraniteCodecs
import GraniteMedia
import GraniteML

/// `granite segment`'s work for one photo: the person mask as an 8-bit gray PNG (255 = person).
/// Decoding (reduced JPEG decode, antialiased resize to the model's input) is depth's
/// (``DepthImages/decode(_:for:maxPixels:)``).
public enum MaskImages {
    /// The mask of the image file at `path`, at the file's own size (or the model's with `modelSize`).
    public static func segment(_ path: String, with segmenter: PersonSegmenter, modelSize: Bool = false) throws -> PersonMask {
        let (image, width, height) = try DepthImages.decode(path, for: segmenter.inputSize)
        return try segmenter.segment(image, size: modelSize ? .model : .exactly(width: width, height: height))
    }

    /// `NAME.mask.png` written atomically into `folder`; returns its path.
    public static func process(_ path: String, into folder: String, with segmenter: PersonSegmenter,
                               modelSize: Bool = false) throws -> String {
        let mask = try segment(path, with: segmenter, modelSize: modelSize)
        let stem = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        let maskPath = (folder as NSString).appendingPathComponent("\(stem).mask.png")
        try AtomicFile.write(try Codecs.encodePNG(mask.grayImage(), path: maskPath), to: maskPath)
        return maskPath
    }
}

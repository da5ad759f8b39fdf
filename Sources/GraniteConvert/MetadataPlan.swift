import GraniteCodecs
import GraniteMedia

/// What `granite convert` does with one image's metadata.
///
/// ```
/// input bytes ─► ImageMetadata.read ─► (broken blocks dropped: warnings)
///      Exif also gets the output's size in PixelXDimension/PixelYDimension where it has them
///      decode (Exif/XMP orientation applied unless --no-auto-orient) ─► resize ─► color: --colorspace srgb? lcms ─► filters ─► encode
///      output blocks: ICC (input's, or sRGB) · Exif (thumbnail dropped, orientation 1 if turned) · XMP (same) · comments
///      ─► --keep / --strip ─► what the format holds (a comment in WebP/AVIF/TIFF/JPEG XL: dropped, warned)
///      ─► embedded into the encoded bytes ─► kept kinds (manifest)
/// ```
struct MetadataPlan: Sendable {
    /// What the input carried (validated blocks only).
    let source: ImageMetadata
    /// Whether decoding turned the pixels (auto-orientation on, and an Exif or XMP orientation other than 1).
    private(set) var rotated: Bool
    let settings: ConvertSettings
    /// Problems to report with the input's path (each drops a block, never the image).
    private(set) var warnings: [String]
    /// Whether the pixels are now in sRGB because of `--colorspace srgb`.
    private var convertedToSRGB = false

    init(bytes: [UInt8], settings: ConvertSettings) {
        let (metadata, problems) = ImageMetadata.read(bytes)
        source = metadata
        self.settings = settings
        // A broken block that would not be kept anyway (`--strip`, `--keep`) is not worth a warning.
        let needed = settings.keptKinds.union(settings.colorspace == .sRGB ? [.icc] : [])
        warnings = problems.filter { needed.contains($0.kind) }.map(\.description)
        rotated = settings.autoOrients && EXIFOrientation.read(bytes) != .up
    }

    /// The pixels were not turned (an animation's frames): the orientation tags are kept as they are.
    mutating func keepOrientationTag() { rotated = false }

    /// The pixels in sRGB when `--colorspace srgb` asks for it and the input has a profile; else unchanged.
    mutating func convertColor(_ image: Image, path: String) -> Image {
        guard settings.colorspace == .sRGB else { return image }
        convertedToSRGB = true
        guard let icc = source.icc else { return image }  // untagged pixels are taken as sRGB already
        do {
            return try ColorTransform.toSRGB(image, profile: icc, path: path)
        } catch {
            warnings.append("ICC profile not applied (\(error.reason)); pixels left as they are")
            return image
        }
    }

    /// The blocks the output gets, before `--keep`.
    mutating func outputBlocks(size: (width: Int, height: Int)) -> ImageMetadata {
        var out = ImageMetadata()
        if convertedToSRGB {
            out.icc = ColorTransform.sRGBProfile
        } else if let icc = source.icc {
            // Decoding gives RGB pixels: a gray or CMYK profile would describe data the output does not hold.
            if let profile = try? ICCProfile.parse(icc), profile.colorSpace != "RGB" {
                warnings.append("ICC profile for \(profile.colorSpace) data dropped: the output is RGB")
            } else {
                out.icc = icc
            }
        }
        if let exif = source.exif, let block = try? EXIFBlock.parse(exif) {
            out.exif = block.sanitized(resetOrientation: rotated, size: size)
        }
        if let xmp = source.xmp, let packet = try? XMPPacket.parse(xmp) {
            out.xmp = rotated ? packet.resettingOrientation().bytes : packet.bytes
        }
        out.comments = source.comments
        return out
    }

    /// The blocks an output in `format` gets after `--keep` (for encoders that take them: AVIF,
    /// TIFF, JPEG XL); a kept block the format has no place for (a comment) is a warning.
    mutating func keptBlocks(size: (width: Int, height: Int), format: ImageFormat) -> ImageMetadata {
        let keep = settings.keptKinds
        guard !keep.isEmpty else { return ImageMetadata() }
        let (held, dropped) = outputBlocks(size: size).keeping(keep).held(by: format)
        warnings += dropped.map(\.description)
        return held
    }

    /// `encoded` (an image of `size`) with the kept blocks inserted, and the kinds written.
    mutating func embed(in encoded: [UInt8], size: (width: Int, height: Int)) -> (bytes: [UInt8], kept: [MetadataKind]) {
        guard !settings.keptKinds.isEmpty else { return (encoded, []) }
        let blocks = settings.keptKinds.isEmpty ? ImageMetadata() : outputBlocks(size: size).keeping(settings.keptKinds)
        let (bytes, written, problems) = blocks.embedded(in: encoded)
        warnings += problems.map(\.description)
        return (bytes, written.sorted())
    }
}

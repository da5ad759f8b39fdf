import Foundation
import GraniteCodecs
import GraniteMedia

/// The options that decide what an output looks like; recorded in the manifest.
public struct ConvertSettings: Codable, Sendable, Equatable {
    /// Resize before filtering (nil: keep the size).
    public var resize: ResizeSpec?
    /// Output format (nil: the input's own format, sniffed from its bytes).
    public var format: ImageFormat?
    /// JPEG and lossy WebP quality, 1...100.
    public var quality: Int
    /// The processor's fingerprint (the `--filter` chain).
    public var filters: String
    /// The decompression-bomb limit in pixels.
    public var maxPixels: Int
    /// The metadata outputs keep (`--keep`, `--strip`); nil keeps everything: ICC profile, Exif, XMP, comments.
    public var keep: [MetadataKind]?
    /// The color space outputs are converted to (`--colorspace`); nil leaves pixels as they are.
    public var colorspace: OutputColorspace?
    /// Write progressive JPEGs (`--progressive`); nil or false: baseline.
    public var progressive: Bool?
    /// Write lossless WebP (`--lossless`); nil or false: lossy at `quality`.
    public var lossless: Bool?
    /// The output file-name template (`--name`); nil: the input's name (extension per `format`).
    public var name: OutputName?
    /// The resampling kernel of `resize` (`--resize-filter`); nil: ``defaultResizeFilter``.
    public var resizeFilter: ResizeFilter?

    /// Which damage stops an input (`--fail-on`); nil: GraniteCodecs `FailOn.default` (truncated files).
    /// Not part of the fingerprint: it decides whether an input converts, not how.
    public var failOn: FailOn?
    /// Turn pixels upright from the Exif/XMP orientation and reset the tags to 1; nil: yes.
    /// `--no-auto-orient` sets false: pixels and tags are kept as they are.
    public var autoOrient: Bool?

    /// What outputs without alpha (JPEG) are composited onto (`--background`); nil: white.
    public var background: RGBColor?

    /// Whether inputs are turned upright.
    public var autoOrients: Bool { autoOrient ?? true }

    /// The kernel used when none is chosen: Lanczos-3, as libvips and sharp.
    public static let defaultResizeFilter = ResizeFilter.lanczos3
    /// The kernel `resize` uses.
    public var effectiveResizeFilter: ResizeFilter { resizeFilter ?? Self.defaultResizeFilter }

    /// Settings with the defaults of `granite convert` (quality 85, 100 MP limit).
    public init(resize: ResizeSpec? = nil, format: ImageFormat? = nil, quality: Int = 85, filters: String = "",
                maxPixels: Int = DecodeOptions.defaultMaxPixels) {
        self.resize = resize
        self.format = format
        self.quality = quality
        self.filters = filters
        self.maxPixels = maxPixels
    }

    /// The metadata kinds outputs keep (all when `keep` is nil).
    public var keptKinds: Set<MetadataKind> { keep.map(Set.init) ?? Set(MetadataKind.allCases) }

    /// Parses `--keep`: a comma-separated list of `icc`, `exif`, `xmp`, `comment` (or `none`, or `all`).
    public static func parseKeep(_ text: String) throws(ConvertError) -> [MetadataKind] {
        var kinds = Set<MetadataKind>()
        for part in text.lowercased().split(separator: ",", omittingEmptySubsequences: false) {
            let word = part.trimmingCharacters(in: .whitespaces)
            switch word {
            case "none": continue
            case "all": kinds.formUnion(MetadataKind.allCases)
            default:
                guard let kind = MetadataKind(rawValue: word) else {
                    throw .badOption(option: "--keep", value: text, reason: "'\(word)' is not one of icc, exif, xmp, comment, all, none")
                }
                kinds.insert(kind)
            }
        }
        return kinds.sorted()
    }

    /// Parses `--colorspace`: `srgb` converts, `keep` (the default) leaves pixels and profile as they are.
    public static func parseColorspace(_ text: String) throws(ConvertError) -> OutputColorspace? {
        switch text.lowercased() {
        case "srgb": return .sRGB
        case "keep": return nil
        default: throw .badOption(option: "--colorspace", value: text, reason: "expected srgb or keep")
        }
    }

    /// Parses `--resize-filter`: `lanczos3` (the default), `bilinear` or `box` (also `lanczos`, `linear`, `area`).
    public static func parseResizeFilter(_ text: String) throws(ConvertError) -> ResizeFilter {
        guard let filter = ResizeFilter(name: text) else {
            throw .badOption(option: "--resize-filter", value: text, reason: "expected lanczos3, bilinear or box")
        }
        return filter
    }

    /// Parses `--background`: `#RRGGBB`, `#RGB`, `R,G,B`, `white` or `black`.
    public static func parseBackground(_ text: String) throws(ConvertError) -> RGBColor {
        guard let color = RGBColor(parsing: text) else {
            throw .badOption(option: "--background", value: text, reason: "expected #RRGGBB, #RGB, R,G,B, white or black")
        }
        return color
    }

    /// Parses `--fail-on`: `none`, `truncated`, `error` or `warning`.
    public static func parseFailOn(_ text: String) throws(ConvertError) -> FailOn {
        guard let level = FailOn(name: text) else {
            throw .badOption(option: "--fail-on", value: text, reason: "expected none, truncated, error or warning")
        }
        return level
    }

    /// Parses `jpg`, `jpeg`, `png`, `webp`, `avif`, `tif`/`tiff` or `jxl`.
    public static func parseFormat(_ text: String) throws(ConvertError) -> ImageFormat {
        switch text.lowercased() {
        case "jpg", "jpeg": return .jpeg
        case "png": return .png
        case "webp": return .webp
        case "avif": return .avif
        case "tif", "tiff": return .tiff
        case "jxl": return .jxl
        default: throw .badOption(option: "--format", value: text, reason: "expected jpg, png, webp, avif, tiff or jxl")
        }
    }

    /// What an output in `format` made with these settings is recorded as.
    func fingerprint(for format: ImageFormat) -> String {
        var parts = ["format=\(format.fileExtension)"]
        if format == .jpeg || format == .avif || format == .jxl || (format == .webp && lossless != true) { parts.append("quality=\(quality)") }
        if format == .webp, lossless == true { parts.append("lossless") }
        if let resize {
            parts.append("resize=\(resize)")
            if let resizeFilter, resizeFilter != Self.defaultResizeFilter { parts.append("resizeFilter=\(resizeFilter.rawValue)") }
        }
        if !filters.isEmpty { parts.append("filters=\(filters)") }
        // Only non-default metadata settings are named, so manifests from before them stay valid.
        if keptKinds != Set(MetadataKind.allCases) {
            parts.append("keep=" + (keptKinds.isEmpty ? "none" : keptKinds.sorted().map(\.rawValue).joined(separator: ",")))
        }
        if let colorspace { parts.append("colorspace=\(colorspace.rawValue)") }
        if format == .jpeg, progressive == true { parts.append("progressive") }
        if !autoOrients { parts.append("no-auto-orient") }
        if !format.holdsAlpha, let background, background != .white { parts.append("background=\(background)") }
        return parts.joined(separator: ";")
    }
}

/// A color space `granite convert` can convert outputs to.
public enum OutputColorspace: String, Codable, Sendable, Equatable {
    /// sRGB: pixels converted from the input's ICC profile (inputs without one are taken as
    /// sRGB already), and the output tagged with lcms's sRGB profile.
    case sRGB = "srgb"
}

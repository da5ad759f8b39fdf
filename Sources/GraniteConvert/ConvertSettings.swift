import GraniteCodecs

/// The options that decide what an output looks like; recorded in the manifest.
public struct ConvertSettings: Codable, Sendable, Equatable {
    /// Resize before filtering (nil: keep the size).
    public var resize: ResizeSpec?
    /// Output format (nil: the input's own format, sniffed from its bytes).
    public var format: ImageFormat?
    /// JPEG quality, 1...100.
    public var quality: Int
    /// The processor's fingerprint (the `--filter` chain).
    public var filters: String
    /// The decompression-bomb limit in pixels.
    public var maxPixels: Int

    /// Settings with the defaults of `granite convert` (quality 85, 100 MP limit).
    public init(resize: ResizeSpec? = nil, format: ImageFormat? = nil, quality: Int = 85, filters: String = "",
                maxPixels: Int = DecodeOptions.defaultMaxPixels) {
        self.resize = resize
        self.format = format
        self.quality = quality
        self.filters = filters
        self.maxPixels = maxPixels
    }

    /// Parses `jpg`, `jpeg` or `png`.
    public static func parseFormat(_ text: String) throws(ConvertError) -> ImageFormat {
        switch text.lowercased() {
        case "jpg", "jpeg": return .jpeg
        case "png": return .png
        default: throw .badOption(option: "--format", value: text, reason: "expected jpg or png")
        }
    }

    /// What an output in `format` made with these settings is recorded as.
    func fingerprint(for format: ImageFormat) -> String {
        var parts = ["format=\(format.fileExtension)"]
        if format == .jpeg { parts.append("quality=\(quality)") }
        if let resize { parts.append("resize=\(resize)") }
        if !filters.isEmpty { parts.append("filters=\(filters)") }
        return parts.joined(separator: ";")
    }
}

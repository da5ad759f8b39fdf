/// The container formats the codecs read and write, as sniffed from the bytes.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// JPEG (JFIF / Exif), starts with `FF D8 FF`.
    case jpeg
    /// PNG, starts with the 8-byte signature `89 50 4E 47 0D 0A 1A 0A`.
    case png
    /// WebP, a RIFF container: `RIFF`, size, `WEBP`.
    case webp
    /// AVIF, an ISO BMFF file: size, `ftyp`, major brand `avif` (or `avis`).
    case avif
    /// HEIC/HEIF (read only), an ISO BMFF file with brand `heic`, `heix`, `heim`, `heis`, `hevc`,
    /// `hevx`, `mif1` or `msf1`.
    case heic
    /// TIFF, starts with `II*\0` (Intel) or `MM\0*` (Motorola).
    case tiff
    /// JPEG XL: a bare codestream (`FF 0A`) or the ISO BMFF container (`JXL ` signature box).
    case jxl
    /// GIF (read only: the first frame), starts with `GIF87a` or `GIF89a`.
    case gif

    /// The usual file extension, without the dot.
    public var fileExtension: String {
        switch self {
        case .jpeg: return "jpg"
        case .png: return "png"
        case .webp: return "webp"
        case .avif: return "avif"
        case .heic: return "heic"
        case .gif: return "gif"
        case .tiff: return "tif"
        case .jxl: return "jxl"
        }
    }

    /// Whether `granite convert` can write the format.
    public var isWritable: Bool { self != .heic && self != .gif }

    /// The output format when none is asked for: the input's own, JPEG for HEIC photos, PNG for
    /// GIF (which may be transparent).
    public var defaultOutput: ImageFormat { isWritable ? self : self == .gif ? .png : .jpeg }

    /// Whether the format stores alpha (JPEG does not: its outputs are flattened onto a background).
    public var holdsAlpha: Bool { self != .jpeg }

    public var description: String { rawValue }

    /// How messages name the format.
    var displayName: String {
        switch self {
        case .jpeg: return "JPEG"
        case .png: return "PNG"
        case .webp: return "WebP"
        case .avif: return "AVIF"
        case .heic: return "HEIC"
        case .gif: return "GIF"
        case .tiff: return "TIFF"
        case .jxl: return "JPEG XL"
        }
    }

    /// The formats decoding reads, as messages name them.
    public static let readableNames = "JPEG, PNG, WebP, AVIF, JPEG XL, TIFF, HEIC or GIF"

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The format the leading bytes announce, or nil.
    static func sniff(_ bytes: [UInt8]) -> ImageFormat? {
        if bytes.count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF { return .jpeg }
        if bytes.count >= 8, Array(bytes[0..<8]) == pngSignature { return .png }
        if bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8) { return .webp }
        if bytes.count >= 12, bytes[4..<8].elementsEqual("ftyp".utf8),
           bytes[8..<12].elementsEqual("avif".utf8) || bytes[8..<12].elementsEqual("avis".utf8) { return .avif }
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] == 0x0A { return .jxl }
        if bytes.count >= 12, bytes[0..<12].elementsEqual([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) { return .jxl }
        if bytes.count >= 8, bytes[0..<4].elementsEqual([0x49, 0x49, 42, 0]) || bytes[0..<4].elementsEqual([0x4D, 0x4D, 0, 42]) { return .tiff }
        if bytes.count >= 6, bytes[0..<6].elementsEqual("GIF87a".utf8) || bytes[0..<6].elementsEqual("GIF89a".utf8) { return .gif }
        if bytes.count >= 12, bytes[4..<8].elementsEqual("ftyp".utf8),
           ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"].contains(where: { bytes[8..<12].elementsEqual($0.utf8) }) {
            return .heic
        }
        return nil
    }
}

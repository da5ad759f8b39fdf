/// The container formats the codecs read and write, as sniffed from the bytes.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// JPEG (JFIF / Exif), starts with `FF D8 FF`.
    case jpeg
    /// PNG, starts with the 8-byte signature `89 50 4E 47 0D 0A 1A 0A`.
    case png
    /// WebP, a RIFF container: `RIFF`, size, `WEBP`.
    case webp
    /// AVIF (written only), an ISO BMFF file: size, `ftyp`, major brand `avif` (or `avis`).
    case avif

    /// The usual file extension, without the dot.
    public var fileExtension: String {
        switch self {
        case .jpeg: return "jpg"
        case .png: return "png"
        case .webp: return "webp"
        case .avif: return "avif"
        }
    }

    public var description: String { rawValue }

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The format the leading bytes announce, or nil.
    static func sniff(_ bytes: [UInt8]) -> ImageFormat? {
        if bytes.count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF { return .jpeg }
        if bytes.count >= 8, Array(bytes[0..<8]) == pngSignature { return .png }
        if bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8) { return .webp }
        if bytes.count >= 12, bytes[4..<8].elementsEqual("ftyp".utf8),
           bytes[8..<12].elementsEqual("avif".utf8) || bytes[8..<12].elementsEqual("avis".utf8) { return .avif }
        return nil
    }
}

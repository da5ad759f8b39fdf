/// An ICC color profile's bytes, with the header fields checked (size, `acsp` signature, tag table).
///
/// `parse` is a pure function: a profile whose declared size, signature or tag table does not fit
/// its bytes is a `MetadataError`. The bytes are kept as they are (outputs embed them unchanged).
public struct ICCProfile: Sendable, Equatable {
    /// The whole profile, as embedded.
    public let bytes: [UInt8]
    /// The data color space signature (`RGB `, `GRAY`, `CMYK`, ...), trailing spaces trimmed.
    public let colorSpace: String
    /// The device class signature (`mntr`, `scnr`, `prtr`, `spac`, ...).
    public let deviceClass: String
    /// The profile's description is not parsed; the version is: major.minor (e.g. 2.1, 4.3).
    public let version: (major: Int, minor: Int)

    /// The largest profile accepted (real ones are a few hundred bytes to a few MB).
    public static let maxBytes = 16 << 20

    /// Parses and checks an ICC profile's header and tag table.
    public static func parse(_ bytes: [UInt8]) throws(MetadataError) -> ICCProfile {
        guard bytes.count >= 132 else { throw .tooShort(what: "ICC profile", count: bytes.count, needed: 132) }
        guard bytes.count <= maxBytes else { throw .tooLarge(what: "ICC profile bytes", count: bytes.count, limit: maxBytes) }
        func u32(_ at: Int) -> Int { Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]) }
        let declared = u32(0)
        guard declared == bytes.count else {
            throw .badField(what: "ICC profile", reason: "header gives size \(declared), the profile has \(bytes.count) bytes")
        }
        guard bytes[36..<40].elementsEqual("acsp".utf8) else {
            throw .badField(what: "ICC profile", reason: "no 'acsp' signature at offset 36")
        }
        let tags = u32(128)
        guard tags <= (bytes.count - 132) / 12 else {
            throw .outOfBounds(what: "ICC tag table", offset: 132, length: tags * 12, size: bytes.count)
        }
        for i in 0..<tags {
            let at = 132 + 12 * i
            let offset = u32(at + 4), size = u32(at + 8)
            guard offset >= 128, offset <= bytes.count, size <= bytes.count - offset else {
                throw .outOfBounds(what: "ICC tag '\(signature(bytes, at))'", offset: offset, length: size, size: bytes.count)
            }
        }
        return ICCProfile(bytes: bytes, colorSpace: signature(bytes, 16).trimmingSpaces, deviceClass: signature(bytes, 12),
                          version: (Int(bytes[8]), Int(bytes[9] >> 4)))
    }

    public static func == (a: ICCProfile, b: ICCProfile) -> Bool { a.bytes == b.bytes }

    static func signature(_ b: [UInt8], _ at: Int) -> String {
        String(decoding: b[at..<at + 4].map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}

/// An XMP packet (UTF-8 RDF/XML), as JPEG APP1 `http://ns.adobe.com/xap/1.0/\0` and PNG iTXt
/// `XML:com.adobe.xmp` carry it. Checked to be UTF-8 holding an `x:xmpmeta` or `rdf:RDF` element;
/// the XML itself is not parsed (it is kept byte for byte, except the orientation reset below).
public struct XMPPacket: Sendable, Equatable {
    /// The packet's bytes.
    public let bytes: [UInt8]

    /// The largest packet accepted (JPEG's standard XMP segment holds at most 65504 bytes;
    /// PNG iTXt has no limit, so this is a sanity bound).
    public static let maxBytes = 16 << 20

    /// Checks that the bytes look like an XMP packet.
    public static func parse(_ bytes: [UInt8]) throws(MetadataError) -> XMPPacket {
        guard !bytes.isEmpty else { throw .tooShort(what: "XMP packet", count: 0, needed: 1) }
        guard bytes.count <= maxBytes else { throw .tooLarge(what: "XMP packet bytes", count: bytes.count, limit: maxBytes) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .badField(what: "XMP packet", reason: "not valid UTF-8")
        }
        guard text.contains("xmpmeta") || text.contains("rdf:RDF") else {
            throw .badField(what: "XMP packet", reason: "no x:xmpmeta or rdf:RDF element")
        }
        return XMPPacket(bytes: bytes)
    }

    /// The packet at the start of `raw`, cut after its `<?xpacket end=...?>` (or, without one,
    /// after `</x:xmpmeta>`): for containers that store it followed by other bytes (GIF's trailer).
    static func cut(_ raw: [UInt8]) -> [UInt8]? {
        if let end = raw.firstRange(of: Array("<?xpacket end".utf8), startingAt: 0),
           let close = raw.firstRange(of: Array("?>".utf8), startingAt: end.upperBound) {
            return Array(raw[..<close.upperBound])
        }
        if let close = raw.firstRange(of: Array("</x:xmpmeta>".utf8), startingAt: 0) { return Array(raw[..<close.upperBound]) }
        return nil
    }

    /// The `tiff:Orientation` value (attribute or element form), when the packet has a valid one.
    public var orientation: EXIFOrientation? {
        Self.orientationDigits(bytes).first.flatMap { EXIFOrientation(rawValue: Int($0.value - UInt8(ascii: "0"))) }
    }

    /// The packet with `tiff:Orientation` (attribute or element form) set to 1, same length.
    ///
    /// Viewers that read XMP would otherwise turn pixels that were already turned upright.
    public func resettingOrientation() -> XMPPacket {
        var out = bytes
        for digit in Self.orientationDigits(bytes) { out[digit.index] = UInt8(ascii: "1") }
        return XMPPacket(bytes: out)
    }

    /// Where each `tiff:Orientation` value sits: after the name, `="`, `='` or `>` (and spaces),
    /// a single digit 1-8.
    static func orientationDigits(_ bytes: [UInt8]) -> [(index: Int, value: UInt8)] {
        var found = [(index: Int, value: UInt8)]()
        let name = Array("tiff:Orientation".utf8)
        let skipped: [UInt8] = [UInt8(ascii: "="), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: ">"), UInt8(ascii: " ")]
        var i = 0
        while let start = bytes.firstRange(of: name, startingAt: i) {
            i = start.upperBound
            var j = i
            while j < bytes.count, skipped.contains(bytes[j]) { j += 1 }
            if j < bytes.count, (UInt8(ascii: "1")...UInt8(ascii: "8")).contains(bytes[j]),
               j + 1 < bytes.count, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[j + 1]) {
                found.append((j, bytes[j]))
            }
        }
        return found
    }
}

extension Array where Element == UInt8 {
    /// The first occurrence of `needle` at or after `start`.
    func firstRange(of needle: [UInt8], startingAt start: Int) -> Range<Int>? {
        guard !needle.isEmpty, count >= needle.count, start <= count - needle.count else { return nil }
        var i = start
        while i <= count - needle.count {
            if self[i] == needle[0], self[i..<i + needle.count].elementsEqual(needle) { return i..<i + needle.count }
            i += 1
        }
        return nil
    }
}

/// WebP RIFF chunks: reading ICCP / EXIF / XMP, and writing them by turning a simple file into
/// the extended format (VP8X first, ICCP before the image data, EXIF and XMP after it).
extension ImageMetadata {
    /// The chunks after `RIFF size WEBP`: (fourcc, data range). Stops quietly at a chunk that
    /// runs past the end; the decoder reports a broken stream itself.
    static func webpChunks(_ b: [UInt8]) -> [(type: String, data: Range<Int>)] {
        var result = [(String, Range<Int>)]()
        var i = 12
        while i <= b.count - 8 {
            let size = Int(b[i + 4]) | Int(b[i + 5]) << 8 | Int(b[i + 6]) << 16 | Int(b[i + 7]) << 24
            guard size <= b.count - i - 8 else { break }
            result.append((String(decoding: b[i..<i + 4], as: UTF8.self), i + 8..<i + 8 + size))
            i += 8 + size + size % 2
        }
        return result
    }

    static func readWebP(_ b: [UInt8]) -> (metadata: ImageMetadata, problems: [Problem]) {
        var m = ImageMetadata()
        for (type, r) in webpChunks(b) {
            switch type {
            case "ICCP" where m.icc == nil: m.icc = Array(b[r])
            case "EXIF" where m.exif == nil:
                m.exif = Array(b[r].starts(with: exifSignature) ? b[r].dropFirst(exifSignature.count) : b[r])
            case "XMP " where m.xmp == nil: m.xmp = Array(b[r])
            default: continue
            }
        }
        return (m, [])
    }

    static func webpChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let n = data.count
        return Array(type.utf8) + [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24 & 0xFF)]
            + data + (n % 2 == 1 ? [0] : [])
    }

    /// Canvas size and alpha from the image chunk of a simple (VP8 / VP8L) file.
    static func webpCanvas(_ b: [UInt8], _ chunks: [(type: String, data: Range<Int>)]) -> (width: Int, height: Int, alpha: Bool)? {
        if let c = chunks.first(where: { $0.type == "VP8L" }), c.data.count >= 5, b[c.data.lowerBound] == 0x2F {
            let at = c.data.lowerBound + 1
            let bits = Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 | Int(b[at + 3]) << 24
            return ((bits & 0x3FFF) + 1, (bits >> 14 & 0x3FFF) + 1, bits >> 28 & 1 == 1)
        }
        if let c = chunks.first(where: { $0.type == "VP8 " }), c.data.count >= 10 {
            let at = c.data.lowerBound
            guard b[at + 3] == 0x9D, b[at + 4] == 0x01, b[at + 5] == 0x2A else { return nil }
            return ((Int(b[at + 6]) | Int(b[at + 7]) << 8) & 0x3FFF, (Int(b[at + 8]) | Int(b[at + 9]) << 8) & 0x3FFF, false)
        }
        return nil
    }

    func embeddedWebP(_ webp: [UInt8]) -> (bytes: [UInt8], written: [MetadataKind], problems: [Problem]) {
        guard icc != nil || exif != nil || xmp != nil else { return (webp, [], []) }
        let chunks = Self.webpChunks(webp)
        var flags: UInt8 = 0
        var canvas: [UInt8]
        if let x = chunks.first(where: { $0.type == "VP8X" }), x.data.count >= 10 {
            flags = webp[x.data.lowerBound]
            canvas = Array(webp[(x.data.lowerBound + 4)..<(x.data.lowerBound + 10)])
        } else if let size = Self.webpCanvas(webp, chunks) {
            let (w, h) = (size.width - 1, size.height - 1)
            canvas = [UInt8(w & 0xFF), UInt8(w >> 8 & 0xFF), UInt8(w >> 16 & 0xFF), UInt8(h & 0xFF), UInt8(h >> 8 & 0xFF), UInt8(h >> 16 & 0xFF)]
            if size.alpha { flags |= 0x10 }
        } else {
            return (webp, [], kinds.map { Problem(kind: $0, error: .badField(what: "WebP", reason: "no VP8X, VP8 or VP8L chunk to size the canvas")) })
        }
        if icc != nil { flags |= 0x20 }
        if exif != nil { flags |= 0x08 }
        if xmp != nil { flags |= 0x04 }
        var body = Array("WEBP".utf8) + Self.webpChunk("VP8X", [flags, 0, 0, 0] + canvas)
        if let icc { body += Self.webpChunk("ICCP", icc) }
        for c in chunks where !["VP8X", "ICCP", "EXIF", "XMP "].contains(c.type) {
            body += Self.webpChunk(c.type, Array(webp[c.data]))
        }
        if let exif { body += Self.webpChunk("EXIF", exif) }
        if let xmp { body += Self.webpChunk("XMP ", xmp) }
        let n = body.count
        return (Array("RIFF".utf8) + [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24 & 0xFF)] + body,
                kinds, [])
    }
}

/// PNG chunks: reading iCCP / eXIf / iTXt XMP / text chunks with keyword `Comment`, writing them
/// after IHDR (with CRCs).
extension ImageMetadata {
    static let xmpKeyword: [UInt8] = Array("XML:com.adobe.xmp".utf8)
    /// PNG's registered keyword for a comment (keywords are case-sensitive).
    static let commentKeyword: [UInt8] = Array("Comment".utf8)
    /// The profile name written in iCCP (any 1-79 Latin-1 characters are allowed).
    static let iccName: [UInt8] = Array("ICC profile".utf8)

    /// The chunks of a PNG: (type, data range, CRC good). Stops quietly at a chunk that runs past
    /// the end; the decoder reports a broken stream itself.
    static func pngChunks(_ b: [UInt8]) -> [(type: String, data: Range<Int>, crcOK: Bool)] {
        var result = [(String, Range<Int>, Bool)]()
        var i = 8
        while i <= b.count - 12 {
            let length = Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
            guard length <= b.count - i - 12 else { break }
            let type = String(decoding: b[i + 4..<i + 8], as: UTF8.self)
            let end = i + 8 + length
            let stored = UInt32(b[end]) << 24 | UInt32(b[end + 1]) << 16 | UInt32(b[end + 2]) << 8 | UInt32(b[end + 3])
            let wanted = ["iCCP", "eXIf", "iTXt", "tEXt", "zTXt"].contains(type)
            result.append((type, i + 8..<end, !wanted || Zlib.crc32(b[i + 4..<end]) == stored))
            if type == "IEND" { break }
            i = end + 4
        }
        return result
    }

    static func readPNG(_ b: [UInt8]) -> (metadata: ImageMetadata, problems: [Problem]) {
        var m = ImageMetadata()
        var problems = [Problem]()
        var rawProfiles = ImageMetadata()
        for (type, r, crcOK) in pngChunks(b) {
            if ["tEXt", "zTXt", "iTXt"].contains(type), b[r].starts(with: rawProfilePrefix) {
                let rawKind: MetadataKind = b[r].dropFirst(rawProfilePrefix.count).starts(with: "xmp".utf8) ? .xmp : .exif
                guard crcOK else {
                    problems.append(Problem(kind: rawKind, error: .badField(what: "PNG \(type) raw profile chunk", reason: "CRC does not match")))
                    continue
                }
                do { try readRawProfile(type, b[r], into: &rawProfiles) } catch { problems.append(Problem(kind: rawKind, error: error)) }
                continue
            }
            if ["tEXt", "zTXt", "iTXt"].contains(type), b[r].starts(with: commentKeyword + [0]) {
                let what = "PNG \(type) Comment chunk"
                guard crcOK else {
                    problems.append(Problem(kind: .comment, error: .badField(what: what, reason: "CRC does not match")))
                    continue
                }
                do {
                    m.comments.append(try textChunkText(type, b[r], keywordEnd: r.lowerBound + commentKeyword.count, what: what,
                                                        limit: commentMaxBytes))
                } catch {
                    problems.append(Problem(kind: .comment, error: error))
                }
                continue
            }
            let kind: MetadataKind
            switch type {
            case "iCCP" where m.icc == nil: kind = .icc
            case "eXIf" where m.exif == nil: kind = .exif
            case "iTXt" where m.xmp == nil && b[r].starts(with: xmpKeyword + [0]): kind = .xmp
            default: continue
            }
            guard crcOK else {
                problems.append(Problem(kind: kind, error: .badField(what: "PNG \(type) chunk", reason: "CRC does not match")))
                continue
            }
            do {
                switch kind {
                case .icc: m.icc = try iccpProfile(b[r])
                case .exif:
                    // Some writers keep JPEG's "Exif\0\0" prefix in eXIf; the TIFF structure follows it.
                    m.exif = Array(b[r].starts(with: exifSignature) ? b[r].dropFirst(exifSignature.count) : b[r])
                case .xmp: m.xmp = try iTXtText(b[r])
                case .comment: break  // read above
                }
            } catch {
                problems.append(Problem(kind: kind, error: error))
            }
        }
        // eXIf and the XMP iTXt win over ImageMagick's text copies, wherever the chunks stand.
        if m.exif == nil { m.exif = rawProfiles.exif }
        if m.xmp == nil { m.xmp = rawProfiles.xmp }
        return (m, problems)
    }

    static let rawProfilePrefix: [UInt8] = Array("Raw profile type ".utf8)

    /// ImageMagick's text chunk holding a profile (keyword `Raw profile type exif`, `xmp` or `APP1`):
    /// `\nNAME\n  LENGTH\nHEX...` in tEXt, zTXt (zlib) or iTXt. APP1 holds Exif or XMP, told by its signature.
    static func readRawProfile(_ type: String, _ d: ArraySlice<UInt8>, into m: inout ImageMetadata) throws(MetadataError) {
        guard let nul = d.firstIndex(of: 0) else { throw .badField(what: "PNG \(type) raw profile", reason: "keyword not terminated") }
        let name = String(decoding: d[d.startIndex + rawProfilePrefix.count..<nul], as: UTF8.self).lowercased()
        let what = "PNG \(type) 'Raw profile type \(name)'"
        guard ["exif", "xmp", "app1"].contains(name) else { return }
        let text = try textChunkText(type, d, keywordEnd: nul, what: what, limit: 4 * XMPPacket.maxBytes)
        // Tokens: the profile's name, its length in bytes, then hex digits across lines.
        let tokens = text.split(whereSeparator: { $0 == 0x0A || $0 == 0x20 || $0 == 0x0D || $0 == 0x09 })
        guard tokens.count >= 2, let length = Int(String(decoding: tokens[1], as: UTF8.self)), length > 0,
              length <= XMPPacket.maxBytes else {
            throw .badField(what: what, reason: "no profile length after the name")
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(length)
        var high: UInt8?
        outer: for token in tokens.dropFirst(2) {
            for c in token {
                guard let v = hexValue(c) else { throw .badField(what: what, reason: "'\(Character(Unicode.Scalar(c)))' is not a hex digit") }
                if let h = high {
                    bytes.append(h << 4 | v)
                    high = nil
                    if bytes.count == length { break outer }
                } else {
                    high = v
                }
            }
        }
        guard bytes.count == length else { throw .tooShort(what: what, count: bytes.count, needed: length) }
        if bytes.starts(with: exifSignature) || name == "exif" {
            m.exif = bytes.starts(with: exifSignature) ? Array(bytes.dropFirst(exifSignature.count)) : bytes
        } else if bytes.starts(with: xmpSignature) {
            m.xmp = Array(bytes.dropFirst(xmpSignature.count))
        } else if name == "xmp" {
            m.xmp = bytes
        }
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// iCCP: name (1-79 bytes), NUL, method 0, zlib stream.
    static func iccpProfile(_ d: ArraySlice<UInt8>) throws(MetadataError) -> [UInt8] {
        guard let nul = d.prefix(80).firstIndex(of: 0), nul > d.startIndex else {
            throw .badField(what: "PNG iCCP chunk", reason: "no profile name of 1-79 bytes")
        }
        guard nul + 1 < d.endIndex, d[nul + 1] == 0 else {
            throw .badField(what: "PNG iCCP chunk", reason: "compression method is not 0 (zlib)")
        }
        return try Zlib.inflate(Array(d[(nul + 2)...]), limit: ICCProfile.maxBytes, what: "PNG iCCP chunk")
    }

    /// The XMP packet of an iTXt `XML:com.adobe.xmp` chunk.
    static func iTXtText(_ d: ArraySlice<UInt8>) throws(MetadataError) -> [UInt8] {
        try textChunkText("iTXt", d, keywordEnd: d.startIndex + xmpKeyword.count, what: "PNG iTXt XML:com.adobe.xmp chunk",
                          limit: XMPPacket.maxBytes)
    }

    /// The text of a text chunk whose keyword's NUL is at `nul`, inflated (to at most `limit` bytes)
    /// when compressed. tEXt: keyword, NUL, text. zTXt: keyword, NUL, method 0, zlib stream.
    /// iTXt: keyword, NUL, compression flag, method, language tag, NUL, translated keyword, NUL, text.
    static func textChunkText(_ type: String, _ d: ArraySlice<UInt8>, keywordEnd nul: Int, what: String,
                              limit: Int) throws(MetadataError) -> [UInt8] {
        switch type {
        case "tEXt": return Array(d[(nul + 1)...])
        case "zTXt":
            guard nul + 1 < d.endIndex, d[nul + 1] == 0 else { throw .badField(what: what, reason: "compression method is not 0 (zlib)") }
            return try Zlib.inflate(Array(d[(nul + 2)...]), limit: limit, what: what)
        default:
            var i = nul + 1
            guard i + 2 <= d.endIndex else { throw .tooShort(what: what, count: d.count, needed: nul + 3 - d.startIndex) }
            let compressed = d[i], method = d[i + 1]
            i += 2
            guard let langEnd = d[i...].firstIndex(of: 0), let keyEnd = d[(langEnd + 1)...].firstIndex(of: 0) else {
                throw .badField(what: what, reason: "language tag or translated keyword not terminated")
            }
            let text = Array(d[(keyEnd + 1)...])
            switch (compressed, method) {
            case (0, _): return text
            case (1, 0): return try Zlib.inflate(text, limit: limit, what: what)
            default: throw .badField(what: what, reason: "compression flag \(compressed), method \(method)")
            }
        }
    }

    static func chunk(_ type: String, _ parts: [UInt8]...) -> [UInt8] {
        let data = parts.reduce(into: [UInt8]()) { $0 += $1 }
        let tag = Array(type.utf8)
        let n = data.count, crc = Zlib.crc32(tag[...], data[...])
        return [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + tag + data
            + [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
    }

    func embeddedPNG(_ png: [UInt8]) -> (bytes: [UInt8], written: [MetadataKind], problems: [Problem]) {
        let chunks = Self.pngChunks(png)
        guard let ihdr = chunks.first, ihdr.type == "IHDR" else { return (png, [], []) }
        var insert = [UInt8]()
        var written = [MetadataKind]()
        if let icc {
            insert += Self.chunk("iCCP", Self.iccName, [0, 0], Zlib.deflate(icc))
            written.append(.icc)
        }
        if let exif {
            insert += Self.chunk("eXIf", exif)
            written.append(.exif)
        }
        if let xmp {
            // Uncompressed, no language: what Adobe and exiftool write, so the packet can be found by a byte scan.
            insert += Self.chunk("iTXt", Self.xmpKeyword, [0, 0, 0, 0, 0], xmp)
            written.append(.xmp)
        }
        for comment in comments {
            // tEXt holds Latin-1: ASCII and bytes that are not UTF-8 (taken as Latin-1) go there as
            // they are; UTF-8 text goes to iTXt (uncompressed, no language), so every byte comes back.
            if comment.allSatisfy({ $0 < 0x80 }) || String(validating: comment, as: UTF8.self) == nil {
                insert += Self.chunk("tEXt", Self.commentKeyword, [0], comment)
            } else {
                insert += Self.chunk("iTXt", Self.commentKeyword, [0, 0, 0, 0, 0], comment)
            }
        }
        if !comments.isEmpty { written.append(.comment) }
        guard !insert.isEmpty else { return (png, [], []) }
        let at = ihdr.data.upperBound + 4
        var out = Array(png[0..<at]) + insert
        // An sRGB chunk must not stand beside iCCP: the profile is what the pixels are in.
        var i = at
        for c in chunks.dropFirst() {
            let start = c.data.lowerBound - 8, end = c.data.upperBound + 4
            if !(icc != nil && c.type == "sRGB") { out += png[start..<end] }
            i = end
        }
        out += png[i...]
        return (out, written, [])
    }
}

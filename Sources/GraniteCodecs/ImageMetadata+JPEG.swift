/// JPEG marker segments: reading APP1/APP2 metadata and COM comments, writing them after SOI (and JFIF APP0).
extension ImageMetadata {
    static let exifSignature: [UInt8] = Array("Exif".utf8) + [0, 0]
    static let xmpSignature: [UInt8] = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0]
    static let iccSignature: [UInt8] = Array("ICC_PROFILE".utf8) + [0]
    /// Payload bytes one marker segment holds (65535 less the 2-byte length).
    static let segmentPayload = 65533
    /// ICC bytes per APP2 chunk (the payload less signature, sequence number and count).
    public static let iccChunkBytes = 65533 - 14

    /// The marker segments before the first scan: (marker, payload range). Stray bytes between
    /// segments are skipped as libjpeg skips them (with its "extraneous bytes" warning); stops
    /// quietly at anything else malformed, the decoder reports a broken stream itself.
    static func jpegSegments(_ b: [UInt8]) -> [(marker: UInt8, payload: Range<Int>)] {
        var result = [(UInt8, Range<Int>)]()
        var i = 2
        while i + 4 <= b.count {
            if b[i] != 0xFF { i += 1; continue }
            let marker = b[i + 1]
            if marker == 0xFF { i += 1; continue }  // fill byte
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { i += 2; continue }
            if marker == 0xDA || marker == 0xD9 { break }
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            guard length >= 2, length <= b.count - i - 2 else { break }
            result.append((marker, i + 4..<i + 2 + length))
            i += 2 + length
        }
        return result
    }

    static func readJPEG(_ b: [UInt8]) -> (metadata: ImageMetadata, problems: [Problem]) {
        var m = ImageMetadata()
        var problems = [Problem]()
        var iccChunks = [(seq: Int, count: Int, data: ArraySlice<UInt8>)]()
        // A comment longer than one segment is written as full COM segments in a row (as exiftool
        // and this writer split it): a COM right after a full one continues it. Only the markers
        // before the first scan are read, as libjpeg's jpeg_save_markers does.
        var continues = false
        for (marker, r) in jpegSegments(b) {
            let payload = b[r]
            if marker == 0xFE {
                if continues { m.comments[m.comments.count - 1] += payload } else { m.comments.append(Array(payload)) }
                continues = payload.count == segmentPayload
                continue
            }
            continues = false
            if marker == 0xE1, m.exif == nil, payload.starts(with: exifSignature) {
                m.exif = Array(payload.dropFirst(exifSignature.count))
            } else if marker == 0xE1, m.xmp == nil, payload.starts(with: xmpSignature) {
                m.xmp = Array(payload.dropFirst(xmpSignature.count))
            } else if marker == 0xE2, payload.starts(with: iccSignature) {
                let at = payload.startIndex + iccSignature.count
                guard payload.count >= iccSignature.count + 2 else {
                    problems.append(Problem(kind: .icc, error: .tooShort(what: "ICC_PROFILE APP2 segment", count: payload.count,
                                                                         needed: iccSignature.count + 2)))
                    iccChunks = []
                    continue
                }
                iccChunks.append((Int(b[at]), Int(b[at + 1]), b[(at + 2)..<r.upperBound]))
            }
        }
        if !iccChunks.isEmpty {
            do { m.icc = try assembleICC(iccChunks) } catch { problems.append(Problem(kind: .icc, error: error)) }
        }
        return (m, problems)
    }

    /// Puts ICC_PROFILE chunks back together: every chunk agrees on the count, and 1...count each appear once.
    static func assembleICC(_ chunks: [(seq: Int, count: Int, data: ArraySlice<UInt8>)]) throws(MetadataError) -> [UInt8] {
        let what = "ICC_PROFILE APP2 chunks"
        let count = chunks[0].count
        guard count >= 1, chunks.allSatisfy({ $0.count == count }) else {
            throw .badField(what: what, reason: "chunks disagree on the count (\(chunks.map(\.count)))")
        }
        guard chunks.count == count else { throw .badField(what: what, reason: "\(chunks.count) chunks where \(count) are announced") }
        var ordered = [ArraySlice<UInt8>?](repeating: nil, count: count)
        for c in chunks {
            guard (1...count).contains(c.seq), ordered[c.seq - 1] == nil else {
                throw .badField(what: what, reason: "sequence number \(c.seq) is out of 1...\(count) or repeated")
            }
            ordered[c.seq - 1] = c.data
        }
        return ordered.reduce(into: [UInt8]()) { $0 += $1! }
    }

    /// The segments for these blocks, in the order Exif, XMP, ICC (APPn), comments (COM, each split
    /// into segments of 65533 bytes; a comment of exactly such a multiple followed by another one
    /// reads back as one).
    func jpegSegmentsToWrite() -> (bytes: [UInt8], written: [MetadataKind], problems: [Problem]) {
        var out = [UInt8]()
        var written = [MetadataKind]()
        var problems = [Problem]()
        func segment(_ marker: UInt8, _ parts: [UInt8]...) {
            let length = parts.reduce(2) { $0 + $1.count }
            out += [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)]
            for p in parts { out += p }
        }
        /// Exif and XMP each fit one APP1 segment after their signature, or are reported and left out.
        func app1(_ kind: MetadataKind, _ label: String, _ signature: [UInt8], _ block: [UInt8]?) {
            guard let block else { return }
            guard block.count + signature.count <= Self.segmentPayload else {
                problems.append(Problem(kind: kind, error: .tooLarge(what: "\(label) bytes for one JPEG APP1 segment",
                                                                     count: block.count, limit: Self.segmentPayload - signature.count)))
                return
            }
            segment(0xE1, signature, block)
            written.append(kind)
        }
        app1(.exif, "Exif", Self.exifSignature, exif)
        app1(.xmp, "XMP", Self.xmpSignature, xmp)
        if let icc {
            let chunks = (icc.count + Self.iccChunkBytes - 1) / Self.iccChunkBytes
            if (1...255).contains(chunks) {
                for n in 0..<chunks {
                    let part = Array(icc[n * Self.iccChunkBytes..<min(icc.count, (n + 1) * Self.iccChunkBytes)])
                    segment(0xE2, Self.iccSignature, [UInt8(n + 1), UInt8(chunks)], part)
                }
                written.append(.icc)
            } else {
                problems.append(Problem(kind: .icc, error: .tooLarge(what: "ICC profile bytes for JPEG (255 APP2 chunks)",
                                                                     count: icc.count, limit: 255 * Self.iccChunkBytes)))
            }
        }
        for comment in comments {
            var at = 0
            repeat {
                let end = min(comment.count, at + Self.segmentPayload)
                segment(0xFE, Array(comment[at..<end]))
                at = end
            } while at < comment.count
        }
        if !comments.isEmpty { written.append(.comment) }
        return (out, written, problems)
    }

    func embeddedJPEG(_ jpeg: [UInt8]) -> (bytes: [UInt8], written: [MetadataKind], problems: [Problem]) {
        let (segments, written, problems) = jpegSegmentsToWrite()
        guard !segments.isEmpty else { return (jpeg, written, problems) }
        // After SOI, and after a JFIF APP0 when the encoder wrote one (JFIF wants to be first).
        var at = 2
        if let first = Self.jpegSegments(jpeg).first, first.marker == 0xE0, first.payload.lowerBound == 6 {
            at = first.payload.upperBound
        }
        var out = [UInt8]()
        out.reserveCapacity(jpeg.count + segments.count)
        out += jpeg[0..<at]
        out += segments
        out += jpeg[at...]
        return (out, written, problems)
    }
}

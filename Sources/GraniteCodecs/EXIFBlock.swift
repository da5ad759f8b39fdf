/// An Exif block: the TIFF structure (`II*\0` or `MM\0*`, then IFDs) as JPEG APP1 after
/// `Exif\0\0` and PNG `eXIf` carry it, parsed with every offset bounds-checked.
///
/// ```
/// header (byte order, 42, IFD0 offset) ─► IFD0 ─┬─► Exif IFD (0x8769) ─► Interop IFD (0xA005)
///                                               ├─► GPS IFD (0x8825)
///                                               └─► next: IFD1 (thumbnail: 0x0201 offset, 0x0202 length)
/// ```
/// `parse` is a pure function of the bytes: anything out of bounds, looping or of a bad type in
/// the IFDs it follows is a `MetadataError`. IFD1 (the thumbnail) is read leniently, since it is
/// only ever dropped.
public struct EXIFBlock: Sendable, Equatable {
    /// The TIFF bytes, starting at the byte-order mark.
    public let bytes: [UInt8]
    /// Intel (`II`) byte order.
    public let littleEndian: Bool
    /// The primary image's IFD.
    public let ifd0: TIFFIFD
    /// The Exif sub-IFD (exposure, dates, maker note), if any.
    public let exif: TIFFIFD?
    /// The GPS sub-IFD, if any.
    public let gps: TIFFIFD?
    /// The interoperability sub-IFD, if any.
    public let interop: TIFFIFD?
    /// The thumbnail's IFD (IFD0's next), if it could be read.
    public let ifd1: TIFFIFD?
    /// The embedded JPEG thumbnail's bytes, if IFD1 names them within bounds.
    public let thumbnail: Range<Int>?

    /// Tags this type knows by name.
    public enum Tag {
        public static let make: UInt16 = 0x010F
        public static let model: UInt16 = 0x0110
        public static let orientation: UInt16 = 0x0112
        public static let dateTime: UInt16 = 0x0132
        public static let copyright: UInt16 = 0x8298
        public static let exifIFD: UInt16 = 0x8769
        public static let gpsIFD: UInt16 = 0x8825
        public static let interopIFD: UInt16 = 0xA005
        public static let dateTimeOriginal: UInt16 = 0x9003
        public static let pixelXDimension: UInt16 = 0xA002
        public static let pixelYDimension: UInt16 = 0xA003
        public static let thumbnailOffset: UInt16 = 0x0201
        public static let thumbnailLength: UInt16 = 0x0202
    }

    /// The most entries one IFD may have (real files have a few dozen).
    public static let maxEntries = 1024

    /// Parses a TIFF structure. Throws `MetadataError` naming the IFD or tag that is broken.
    public static func parse(_ bytes: [UInt8]) throws(MetadataError) -> EXIFBlock {
        guard bytes.count >= 8 else { throw .tooShort(what: "Exif TIFF header", count: bytes.count, needed: 8) }
        let little: Bool
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default:
            throw .badField(what: "Exif TIFF header", reason: "byte order mark is \(hex(bytes[0])) \(hex(bytes[1])), not II or MM")
        }
        let reader = TIFFReader(bytes: bytes, littleEndian: little)
        let magic = try reader.u16(2, "Exif TIFF header")
        guard magic == 42 else { throw .badField(what: "Exif TIFF header", reason: "magic number is \(magic), not 42") }
        var seen = Set<Int>()
        let ifd0 = try reader.ifd(at: Int(try reader.u32(4, "Exif TIFF header")), name: "IFD0", seen: &seen)
        let exif = try reader.subIFD(of: ifd0, tag: Tag.exifIFD, name: "Exif IFD", seen: &seen)
        let gps = try reader.subIFD(of: ifd0, tag: Tag.gpsIFD, name: "GPS IFD", seen: &seen)
        let interop = try exif.flatMap { (e) throws(MetadataError) in
            try reader.subIFD(of: e, tag: Tag.interopIFD, name: "Interop IFD", seen: &seen)
        }
        var ifd1: TIFFIFD?
        var thumbnail: Range<Int>?
        if ifd0.next != 0 {
            ifd1 = try? reader.ifd(at: ifd0.next, name: "IFD1", seen: &seen)
            if let ifd1, let start = ifd1.entry(Tag.thumbnailOffset).flatMap({ try? reader.scalar($0) }),
               let length = ifd1.entry(Tag.thumbnailLength).flatMap({ try? reader.scalar($0) }),
               start >= 8, length > 0, start <= bytes.count, length <= bytes.count - start {
                thumbnail = start..<start + length
            }
        }
        return EXIFBlock(bytes: bytes, littleEndian: little, ifd0: ifd0, exif: exif, gps: gps, interop: interop,
                         ifd1: ifd1, thumbnail: thumbnail)
    }

    /// The orientation tag of IFD0, if present and valid.
    public var orientation: EXIFOrientation? {
        guard let e = ifd0.entry(Tag.orientation), let v = try? reader.scalar(e) else { return nil }
        return EXIFOrientation(rawValue: v)
    }

    /// An ASCII tag's text (up to its first NUL), looked up in IFD0, then the Exif and GPS IFDs.
    public func string(_ tag: UInt16) -> String? {
        for ifd in [ifd0, exif, gps].compactMap({ $0 }) {
            guard let e = ifd.entry(tag), e.type == 2, let size = e.valueSize else { continue }
            let value = bytes[e.valueOffset..<e.valueOffset + size].prefix { $0 != 0 }
            return String(decoding: value, as: UTF8.self)
        }
        return nil
    }

    /// The block to keep in an output: IFD1 and its thumbnail removed (unlinked, zeroed, and cut off
    /// when they are the tail), the orientation set to 1 when `resetOrientation`, and the Exif
    /// IFD's pixel dimensions (0xA002/0xA003, where present) set to `size`.
    ///
    /// Everything else keeps its offset, so maker notes that point into the block stay valid.
    public func sanitized(resetOrientation: Bool, size: (width: Int, height: Int)? = nil) -> [UInt8] {
        var out = bytes
        let w = TIFFWriter(littleEndian: littleEndian)
        if resetOrientation, let e = ifd0.entry(Tag.orientation), e.type == 3, e.count == 1 {
            w.put16(1, at: e.valueOffset, in: &out)
        }
        if let size, let exif {
            for (tag, value) in [(Tag.pixelXDimension, size.width), (Tag.pixelYDimension, size.height)] {
                guard let e = exif.entry(tag), e.count == 1 else { continue }
                if e.type == 4 { w.put32(value, at: e.valueOffset, in: &out) }
                if e.type == 3, value <= 0xFFFF { w.put16(value, at: e.valueOffset, in: &out) }
            }
        }
        guard ifd0.next != 0 else { return out }
        w.put32(0, at: ifd0.nextFieldOffset, in: &out)
        var keptRanges = [0..<8]
        for ifd in [ifd0, exif, gps, interop].compactMap({ $0 }) {
            keptRanges.append(ifd.byteRange)
            keptRanges += ifd.entries.compactMap(\.outOfLineRange)
        }
        var removed = [Range<Int>]()
        if let ifd1 {
            removed.append(ifd1.byteRange)
            removed += ifd1.entries.compactMap(\.outOfLineRange)
        }
        if let thumbnail { removed.append(thumbnail) }
        // Zero what only the thumbnail used (a crafted block may share bytes with kept data: left as is).
        for r in removed where !keptRanges.contains(where: { $0.overlaps(r) }) {
            for i in r { out[i] = 0 }
        }
        // Cut the tail when nothing kept lives there (only removed or zero bytes).
        let end = keptRanges.map(\.upperBound).max() ?? 8
        if end < out.count, out[end...].allSatisfy({ $0 == 0 }) { out.removeSubrange(end...) }
        return out
    }

    var reader: TIFFReader { TIFFReader(bytes: bytes, littleEndian: littleEndian) }
}

/// One image file directory: its entries and the offset of the next IFD (0 when last).
public struct TIFFIFD: Sendable, Equatable {
    /// Where the IFD starts in the TIFF block.
    public let offset: Int
    /// The entries, in file order.
    public let entries: [TIFFEntry]
    /// The next IFD's offset, 0 when this is the last.
    public let next: Int

    /// The bytes the IFD itself takes (count, entries, next offset).
    public var byteRange: Range<Int> { offset..<nextFieldOffset + 4 }
    /// Where the next-IFD offset is stored.
    public var nextFieldOffset: Int { offset + 2 + 12 * entries.count }

    /// The first entry with this tag.
    public func entry(_ tag: UInt16) -> TIFFEntry? { entries.first { $0.tag == tag } }
}

/// One 12-byte IFD entry, with where its value lives (checked to be inside the block).
public struct TIFFEntry: Sendable, Equatable {
    /// The tag number.
    public let tag: UInt16
    /// The TIFF field type (1 BYTE, 2 ASCII, 3 SHORT, 4 LONG, 5 RATIONAL, ...).
    public let type: UInt16
    /// The number of values.
    public let count: Int
    /// Where the value's bytes start: inside the entry when they fit in 4 bytes.
    public let valueOffset: Int
    /// The value's size in bytes; nil for a type this reader does not know (its value is never read).
    public let valueSize: Int?
    /// Whether the value lives outside the entry.
    public let outOfLine: Bool

    /// The value's bytes when they live outside the entry.
    public var outOfLineRange: Range<Int>? {
        guard outOfLine, let valueSize else { return nil }
        return valueOffset..<valueOffset + valueSize
    }

    /// Bytes per value of each TIFF type.
    static func typeSize(_ type: UInt16) -> Int? {
        switch type {
        case 1, 2, 6, 7: return 1
        case 3, 8: return 2
        case 4, 9, 11, 13: return 4
        case 5, 10, 12: return 8
        default: return nil
        }
    }
}

/// Bounds-checked reads of a TIFF block in one byte order.
struct TIFFReader {
    let bytes: [UInt8]
    let littleEndian: Bool

    func u16(_ at: Int, _ what: String) throws(MetadataError) -> Int {
        guard at >= 0, at <= bytes.count - 2 else { throw .outOfBounds(what: what, offset: at, length: 2, size: bytes.count) }
        return littleEndian ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : Int(bytes[at]) << 8 | Int(bytes[at + 1])
    }

    func u32(_ at: Int, _ what: String) throws(MetadataError) -> Int {
        guard at >= 0, at <= bytes.count - 4 else { throw .outOfBounds(what: what, offset: at, length: 4, size: bytes.count) }
        let b = (Int(bytes[at]), Int(bytes[at + 1]), Int(bytes[at + 2]), Int(bytes[at + 3]))
        return littleEndian ? b.0 | b.1 << 8 | b.2 << 16 | b.3 << 24 : b.0 << 24 | b.1 << 16 | b.2 << 8 | b.3
    }

    /// A SHORT or LONG entry's first value.
    func scalar(_ e: TIFFEntry) throws(MetadataError) -> Int {
        let what = "tag 0x\(String(e.tag, radix: 16))"
        switch e.type {
        case 3: return try u16(e.valueOffset, what)
        case 4, 13: return try u32(e.valueOffset, what)
        default: throw .badField(what: what, reason: "type \(e.type) where SHORT or LONG was expected")
        }
    }

    /// The IFD at `offset`, every entry's value checked to lie inside the block.
    func ifd(at offset: Int, name: String, seen: inout Set<Int>) throws(MetadataError) -> TIFFIFD {
        guard offset >= 8 else { throw .badField(what: name, reason: "offset \(offset) points into the TIFF header") }
        guard seen.insert(offset).inserted else { throw .loop(what: name, offset: offset) }
        let n = try u16(offset, name)
        guard n <= EXIFBlock.maxEntries else { throw .tooLarge(what: "\(name) entries", count: n, limit: EXIFBlock.maxEntries) }
        let size = 2 + 12 * n + 4
        guard offset <= bytes.count - size else { throw .outOfBounds(what: name, offset: offset, length: size, size: bytes.count) }
        var entries = [TIFFEntry]()
        entries.reserveCapacity(n)
        for i in 0..<n {
            let at = offset + 2 + 12 * i
            let tag = UInt16(try u16(at, name)), type = UInt16(try u16(at + 2, name)), count = try u32(at + 4, name)
            let what = "\(name) tag 0x\(String(tag, radix: 16))"
            var valueSize: Int?
            var valueOffset = at + 8
            var outOfLine = false
            if let unit = TIFFEntry.typeSize(type) {
                guard count <= bytes.count / unit else {
                    throw .outOfBounds(what: what, offset: at + 8, length: count * unit, size: bytes.count)
                }
                valueSize = count * unit
                if count * unit > 4 {
                    valueOffset = try u32(at + 8, what)
                    outOfLine = true
                    guard valueOffset <= bytes.count - count * unit else {
                        throw .outOfBounds(what: what, offset: valueOffset, length: count * unit, size: bytes.count)
                    }
                }
            }
            entries.append(TIFFEntry(tag: tag, type: type, count: count, valueOffset: valueOffset,
                                     valueSize: valueSize, outOfLine: outOfLine))
        }
        return TIFFIFD(offset: offset, entries: entries, next: try u32(offset + 2 + 12 * n, name))
    }

    /// The IFD a pointer tag of `parent` names, or nil when the tag is absent.
    func subIFD(of parent: TIFFIFD, tag: UInt16, name: String, seen: inout Set<Int>) throws(MetadataError) -> TIFFIFD? {
        guard let e = parent.entry(tag) else { return nil }
        guard e.count == 1 else { throw .badField(what: "\(name) pointer", reason: "count \(e.count), not 1") }
        return try ifd(at: try scalar(e), name: name, seen: &seen)
    }
}

/// In-place writes in one byte order (offsets already checked by the reader).
struct TIFFWriter {
    let littleEndian: Bool

    func put16(_ v: Int, at: Int, in b: inout [UInt8]) {
        let (hi, lo) = (UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF))
        (b[at], b[at + 1]) = littleEndian ? (lo, hi) : (hi, lo)
    }

    func put32(_ v: Int, at: Int, in b: inout [UInt8]) {
        let bytes = (0..<4).map { UInt8(v >> (8 * $0) & 0xFF) }
        for i in 0..<4 { b[at + i] = littleEndian ? bytes[i] : bytes[3 - i] }
    }
}

func hex(_ b: UInt8) -> String { (b < 16 ? "0" : "") + String(b, radix: 16) }

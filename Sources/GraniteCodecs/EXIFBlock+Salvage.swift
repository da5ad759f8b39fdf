/// Salvaging a damaged Exif block entry by entry, as exiftool and Pillow keep what they can read.
///
/// ```
/// bytes ─► byte order (the mark, or whichever order reads 42) ─► IFD0 ─┬─► Exif IFD ─► Interop IFD
///   each entry: known type? value inside the block? ─ no ─► dropped   ├─► GPS IFD
///                                                   └ yes ─► kept     └─ (IFD1, the thumbnail: dropped)
/// kept entries ─► a new TIFF structure: IFD0 at 8, each IFD followed by its values, pointers rewritten
/// ```
/// Only used when ``EXIFBlock/parse(_:)`` refuses a block: a whole block keeps its offsets (maker
/// notes point into it), a salvaged one is laid out afresh.
extension EXIFBlock {
    /// One readable entry and its value's bytes.
    struct SalvagedEntry {
        var tag: UInt16
        var type: UInt16
        var count: Int
        var value: [UInt8]
        /// The entry's own 4-byte value field (the offset, when the value lies elsewhere).
        var field: [UInt8] = []
    }

    /// The sub-IFDs followed, by pointer tag, in the order they are laid out.
    static let subIFDs: [(tag: UInt16, name: String, parent: String)] = [
        (Tag.exifIFD, "Exif IFD", "IFD0"), (Tag.interopIFD, "Interop IFD", "Exif IFD"), (Tag.gpsIFD, "GPS IFD", "IFD0"),
    ]

    /// The readable part of `bytes` as a new, consistent TIFF structure (nil when not even the
    /// header and IFD0's entry count can be read), and what was dropped, each naming the IFD and tag.
    public static func salvage(_ bytes: [UInt8]) -> (bytes: [UInt8]?, dropped: [MetadataError]) {
        let read = salvagedIFDs(bytes)
        return (read.ifds.map { layout($0, littleEndian: read.littleEndian) }, read.dropped)
    }

    /// The readable entries of IFD0 and the Exif, Interop and GPS IFDs of `bytes`, by IFD name
    /// (nil when not even the header and IFD0's entry count can be read); with `ifd0Keeping`, only
    /// IFD0's entries it accepts (and the sub-IFD pointers) are kept.
    static func salvagedIFDs(_ bytes: [UInt8], ifd0Keeping keep: ((UInt16) -> Bool)? = nil)
        -> (ifds: [String: [SalvagedEntry]]?, littleEndian: Bool, dropped: [MetadataError]) {
        guard bytes.count >= 8 else { return (nil, true, [.tooShort(what: "Exif TIFF header", count: bytes.count, needed: 8)]) }
        var dropped = [MetadataError]()
        // The order whose magic number reads 42; the mark's own order first.
        let marked: Bool? = bytes[0] == 0x49 && bytes[1] == 0x49 ? true : bytes[0] == 0x4D && bytes[1] == 0x4D ? false : nil
        let orders = marked.map { [$0, !$0] } ?? [true, false]
        guard let little = orders.first(where: { (try? TIFFReader(bytes: bytes, littleEndian: $0).u16(2, "")) == 42 }) else {
            return (nil, true, [.badField(what: "Exif TIFF header", reason: "magic number 42 in neither byte order")])
        }
        if little != marked {
            dropped.append(.badField(what: "Exif TIFF header", reason: "byte order mark \(hex(bytes[0])) \(hex(bytes[1])) does not match the data; read as \(little ? "II" : "MM")"))
        }
        let reader = TIFFReader(bytes: bytes, littleEndian: little)
        var seen = Set<Int>()
        guard let ifd0Offset = try? reader.u32(4, ""),
              var ifd0 = reader.salvagedIFD(at: ifd0Offset, name: "IFD0", seen: &seen, dropped: &dropped) else {
            return (nil, little, dropped)
        }
        if let keep { ifd0 = ifd0.filter { keep($0.tag) || $0.tag == Tag.exifIFD || $0.tag == Tag.gpsIFD } }
        var ifds: [String: [SalvagedEntry]] = ["IFD0": ifd0]
        for sub in subIFDs {
            guard var parent = ifds[sub.parent], let k = parent.firstIndex(where: { $0.tag == sub.tag }) else { continue }
            let pointer = parent[k]
            let target = reader.firstScalar(pointer)
            if let target, let entries = reader.salvagedIFD(at: target, name: sub.name, seen: &seen, dropped: &dropped) {
                ifds[sub.name] = entries
                continue
            }
            if target == nil {
                dropped.append(.badField(what: "\(sub.parent) tag 0x\(String(sub.tag, radix: 16))", reason: "\(sub.name) pointer is not a SHORT or LONG"))
            }
            parent.remove(at: k)
            ifds[sub.parent] = parent
        }
        return (ifds, little, dropped)
    }

    /// Writes IFD0, Exif, Interop and GPS IFDs (those present) one after the other, each entry
    /// sorted by tag, values over 4 bytes right after their IFD (even offsets), pointers aimed at
    /// their IFD's new place; no IFD1.
    static func layout(_ ifds: [String: [SalvagedEntry]], littleEndian: Bool) -> [UInt8] {
        var out: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0]
        out[0] = littleEndian ? 0x49 : 0x4D
        out[1] = out[0]
        let w = TIFFWriter(littleEndian: littleEndian)
        w.put16(42, at: 2, in: &out)
        w.put32(8, at: 4, in: &out)
        return out + layoutIFDs(ifds, littleEndian: littleEndian, base: 8)
    }

    /// The IFDs as ``layout(_:littleEndian:)`` lays them out, as bytes to be placed at offset
    /// `base` (even) of a file: every offset in them counts from the file's start.
    static func layoutIFDs(_ ifds: [String: [SalvagedEntry]], littleEndian: Bool, base: Int) -> [UInt8] {
        let order = ["IFD0"] + subIFDs.map(\.name)
        let present = order.filter { ifds[$0] != nil }
        func size(_ entries: [SalvagedEntry]) -> Int {
            2 + 12 * entries.count + 4 + entries.reduce(0) { $0 + ($1.value.count > 4 ? ($1.value.count + 1) & ~1 : 0) }
        }
        var offsets = [String: Int]()
        var at = base
        for name in present {
            offsets[name] = at
            at += size(ifds[name]!)
        }
        let w = TIFFWriter(littleEndian: littleEndian)
        var out = [UInt8](repeating: 0, count: at - base)
        for name in present {
            let start = offsets[name]! - base
            var entries = ifds[name]!.sorted { $0.tag < $1.tag }
            for (k, e) in entries.enumerated() {
                if let sub = subIFDs.first(where: { $0.tag == e.tag && $0.parent == name }), let target = offsets[sub.name] {
                    entries[k] = SalvagedEntry(tag: e.tag, type: 4, count: 1, value: [])
                    entries[k].value = [UInt8](repeating: 0, count: 4)
                    w.put32(target, at: 0, in: &entries[k].value)
                }
            }
            w.put16(entries.count, at: start, in: &out)
            var valueAt = start + 2 + 12 * entries.count + 4
            for (k, e) in entries.enumerated() {
                let at = start + 2 + 12 * k
                w.put16(Int(e.tag), at: at, in: &out)
                w.put16(Int(e.type), at: at + 2, in: &out)
                w.put32(e.count, at: at + 4, in: &out)
                if e.value.count > 4 {
                    w.put32(base + valueAt, at: at + 8, in: &out)
                    out.replaceSubrange(valueAt..<valueAt + e.value.count, with: e.value)
                    valueAt += (e.value.count + 1) & ~1
                } else {
                    out.replaceSubrange(at + 8..<at + 8 + e.value.count, with: e.value)
                }
            }
            // The next-IFD field stays 0: the thumbnail's IFD1 is never kept.
        }
        return out
    }
}

extension TIFFReader {
    /// The entries of the IFD at `offset` that can be read; each one that cannot (unknown type,
    /// value past the end) is left out and added to `dropped`. Nil (with the reason) when the IFD's
    /// own entry count is unreadable or it links back to an IFD already read.
    func salvagedIFD(at offset: Int, name: String, seen: inout Set<Int>, dropped: inout [MetadataError]) -> [EXIFBlock.SalvagedEntry]? {
        guard offset >= 8 else {
            dropped.append(.badField(what: name, reason: "offset \(offset) points into the TIFF header"))
            return nil
        }
        guard seen.insert(offset).inserted else {
            dropped.append(.loop(what: name, offset: offset))
            return nil
        }
        guard let n = try? u16(offset, name) else {
            dropped.append(.outOfBounds(what: name, offset: offset, length: 2, size: bytes.count))
            return nil
        }
        let fitting = max(0, (bytes.count - offset - 2) / 12)
        if n > fitting {
            dropped.append(.outOfBounds(what: "\(name) entries \(fitting)...\(n - 1)", offset: offset + 2 + 12 * fitting,
                                        length: 12 * (n - fitting), size: bytes.count))
        }
        var entries = [EXIFBlock.SalvagedEntry]()
        for i in 0..<min(n, fitting, EXIFBlock.maxEntries) {
            let at = offset + 2 + 12 * i
            guard let tag = try? u16(at, name), let type = try? u16(at + 2, name), let count = try? u32(at + 4, name) else { break }
            let what = "\(name) tag 0x\(String(tag, radix: 16))"
            guard let unit = TIFFEntry.typeSize(UInt16(type)) else {
                dropped.append(.badField(what: what, reason: "unknown type \(type)"))
                continue
            }
            guard count <= bytes.count / unit else {
                dropped.append(.outOfBounds(what: what, offset: at + 8, length: count * unit, size: bytes.count))
                continue
            }
            let size = count * unit
            var valueAt = at + 8
            if size > 4 {
                guard let pointer = try? u32(at + 8, what), pointer <= bytes.count - size else {
                    dropped.append(.outOfBounds(what: what, offset: (try? u32(at + 8, what)) ?? at + 8, length: size, size: bytes.count))
                    continue
                }
                valueAt = pointer
            }
            // A tag twice in one IFD: the first is kept (a second IFD pointer would aim at nothing).
            guard !entries.contains(where: { $0.tag == UInt16(tag) }) else {
                dropped.append(.badField(what: what, reason: "the tag again in the same IFD (the first is kept)"))
                continue
            }
            entries.append(EXIFBlock.SalvagedEntry(tag: UInt16(tag), type: UInt16(type), count: count,
                                                   value: Array(bytes[valueAt..<valueAt + size]), field: Array(bytes[at + 8..<at + 12])))
        }
        return entries
    }

    /// A pointer entry's target: its SHORT or LONG value; with a wrong count (as some writers get it)
    /// the 4-byte field itself, where a count of 1 would have put it.
    func firstScalar(_ e: EXIFBlock.SalvagedEntry) -> Int? {
        if e.count != 1, e.type == 4 || e.type == 13, e.field.count == 4 {
            return TIFFReader(bytes: e.field, littleEndian: littleEndian).u32OrNil(0)
        }
        switch e.type {
        case 3 where e.value.count >= 2:
            return littleEndian ? Int(e.value[0]) | Int(e.value[1]) << 8 : Int(e.value[0]) << 8 | Int(e.value[1])
        case 4 where e.value.count >= 4, 13 where e.value.count >= 4:
            return TIFFReader(bytes: e.value, littleEndian: littleEndian).u32OrNil(0)
        default: return nil
        }
    }

    func u32OrNil(_ at: Int) -> Int? { try? u32(at, "") }
}

/// Exif in TIFF files, where it is not a block but part of the file's own structure: the
/// descriptive tags of IFD0 (make, model, date, copyright...) and IFD0's pointers to the Exif and
/// GPS IFDs.
///
/// ```
/// read:  TIFF file ─► IFD0 (descriptive tags only) + Exif/GPS/Interop IFDs ─► a TIFF structure laid out afresh (an Exif block)
/// write: encoded TIFF + Exif block ─► IFD0 of the file ∪ the block's descriptive IFD0 tags, ICC, XMP,
///        pointers ─► a new IFD0 and its sub-IFDs appended, the header aimed at it (strips stay where they are)
/// ```
extension EXIFBlock {
    /// IFD0 tags that describe the picture rather than how its pixels are stored.
    static let descriptiveTags: Set<UInt16> = [
        0x010E /* ImageDescription */, Tag.make, Tag.model, Tag.orientation, 0x011A /* XResolution */, 0x011B /* YResolution */,
        0x0128 /* ResolutionUnit */, 0x0131 /* Software */, Tag.dateTime, 0x013B /* Artist */, Tag.copyright,
    ]
    static let iccTag: UInt16 = 34675
    static let xmpTag: UInt16 = 700

    /// The Exif block of a TIFF file (its descriptive IFD0 tags and its Exif, GPS and Interop
    /// IFDs, each entry that can be read), or nil when it has nothing beyond orientation and resolution.
    static func fromTIFFFile(_ file: [UInt8]) -> [UInt8]? {
        let read = salvagedIFDs(file, ifd0Keeping: descriptiveTags.contains)
        guard let ifds = read.ifds else { return nil }
        let layoutOnly: Set<UInt16> = [Tag.orientation, 0x011A, 0x011B, 0x0128]
        guard ifds.count > 1 || ifds["IFD0"]!.contains(where: { !layoutOnly.contains($0.tag) }) else { return nil }
        return layout(ifds, littleEndian: read.littleEndian)
    }

    /// `tiff` (one image, as ``TIFFCodec`` writes it) with `exif`'s descriptive IFD0 tags (its
    /// orientation replacing the file's), its Exif and GPS IFDs, and the ICC profile and XMP packet
    /// as IFD0 tags; nil when either cannot be read or their byte orders differ (the encoder
    /// writes the file in the block's order).
    static func tiffAdding(exif: [UInt8], icc: [UInt8]?, xmp: [UInt8]?, to tiff: [UInt8]) -> [UInt8]? {
        let file = salvagedIFDs(tiff)
        let block = salvagedIFDs(exif, ifd0Keeping: descriptiveTags.contains)
        guard var ifds = block.ifds, let own = file.ifds?["IFD0"], file.littleEndian == block.littleEndian else { return nil }
        var extra = ifds["IFD0"]!
        if let icc { extra.append(SalvagedEntry(tag: iccTag, type: 7, count: icc.count, value: icc)) }
        if let xmp { extra.append(SalvagedEntry(tag: xmpTag, type: 1, count: xmp.count, value: xmp)) }
        let replaced = Set(extra.map(\.tag))
        ifds["IFD0"] = own.filter { !replaced.contains($0.tag) } + extra
        let base = (tiff.count + 1) & ~1
        var out = tiff + [UInt8](repeating: 0, count: base - tiff.count)
        out += layoutIFDs(ifds, littleEndian: block.littleEndian, base: base)
        TIFFWriter(littleEndian: block.littleEndian).put32(base, at: 4, in: &out)
        return out
    }
}

/// The Exif orientation tag (0x0112): how the stored pixels must be turned to stand upright.
///
/// Values 1–8 as TIFF defines them; 5–8 swap width and height.
public enum EXIFOrientation: Int, Sendable, Equatable, CaseIterable {
    case up = 1, upMirrored, down, downMirrored, leftMirrored, right, rightMirrored, left

    /// Whether the upright image has width and height swapped relative to the stored pixels.
    public var swapsAxes: Bool { rawValue >= 5 }

    /// The orientation of JPEG, PNG or WebP bytes: Exif's tag (JPEG APP1, PNG `eXIf` or
    /// ImageMagick's "Raw profile type exif" text, WebP `EXIF`), else XMP's `tiff:Orientation`;
    /// `.up` when neither has a valid one. Blocks are read leniently, as in ``read(jpeg:)``.
    public static func read(_ bytes: [UInt8]) -> EXIFOrientation {
        let raw = ImageMetadata.readRaw(bytes).metadata
        if let exif = raw.exif, let value = fromTIFF(exif) { return value }
        if let xmp = raw.xmp, let value = XMPPacket(bytes: xmp).orientation { return value }
        return .up
    }

    /// Finds the orientation in a JPEG's APP1 Exif segment; `.up` when absent or unreadable.
    ///
    /// Walks the marker segments up to the first scan (`ImageMetadata.jpegSegments`), then reads
    /// only IFD0 of the TIFF structure, in either byte order, through the bounds-checked
    /// `TIFFReader`: a damaged Exif block elsewhere does not stop the pixels from being turned.
    public static func read(jpeg bytes: [UInt8]) -> EXIFOrientation {
        for (marker, r) in ImageMetadata.jpegSegments(bytes)
        where marker == 0xE1 && bytes[r].starts(with: ImageMetadata.exifSignature) {
            if let value = fromTIFF(Array(bytes[r].dropFirst(ImageMetadata.exifSignature.count))) { return value }
        }
        return .up
    }

    /// The orientation entry of IFD0, read leniently (entries before it are not checked).
    static func fromTIFF(_ b: [UInt8]) -> EXIFOrientation? {
        guard b.count >= 8 else { return nil }
        let little: Bool
        switch (b[0], b[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        let r = TIFFReader(bytes: b, littleEndian: little)
        guard (try? r.u16(2, "")) == 42, let ifd = try? r.u32(4, ""), let count = try? r.u16(ifd, "") else { return nil }
        for entry in 0..<min(count, EXIFBlock.maxEntries) {
            let at = ifd + 2 + entry * 12
            guard let tag = try? r.u16(at, "") else { return nil }
            if tag == Int(EXIFBlock.Tag.orientation) {
                guard (try? r.u16(at + 2, "")) == 3, let value = try? r.u16(at + 8, "") else { return nil }
                return EXIFOrientation(rawValue: value)
            }
        }
        return nil
    }
}

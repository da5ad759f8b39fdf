/// The Exif orientation tag (0x0112): how the stored pixels must be turned to stand upright.
///
/// Values 1–8 as TIFF defines them; 5–8 swap width and height.
public enum EXIFOrientation: Int, Sendable, Equatable, CaseIterable {
    case up = 1, upMirrored, down, downMirrored, leftMirrored, right, rightMirrored, left

    /// Whether the upright image has width and height swapped relative to the stored pixels.
    public var swapsAxes: Bool { rawValue >= 5 }

    /// Finds the orientation in a JPEG's APP1 Exif segment; `.up` when absent or unreadable.
    ///
    /// Walks the marker segments up to the first scan, then reads IFD0 of the TIFF structure in
    /// either byte order. Every offset is bounds-checked: a damaged Exif block is just ignored.
    public static func read(jpeg bytes: [UInt8]) -> EXIFOrientation {
        var i = 2
        while i + 4 <= bytes.count, bytes[i] == 0xFF {
            let marker = bytes[i + 1]
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 || marker == 0xFF {
                i += marker == 0xFF ? 1 : 2
                continue
            }
            if marker == 0xDA || marker == 0xD9 { break }  // start of scan / end: no more metadata
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            guard length >= 2, i + 2 + length <= bytes.count else { break }
            if marker == 0xE1, let value = fromExif(bytes, start: i + 4, end: i + 2 + length) {
                return value
            }
            i += 2 + length
        }
        return .up
    }

    static func fromExif(_ b: [UInt8], start: Int, end: Int) -> EXIFOrientation? {
        let header: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]  // "Exif\0\0"
        guard end - start >= 14, Array(b[start..<start + 6]) == header else { return nil }
        let tiff = start + 6
        let little: Bool
        switch (b[tiff], b[tiff + 1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= tiff, at + 2 <= end else { return nil }
            return little ? Int(b[at]) | Int(b[at + 1]) << 8 : Int(b[at]) << 8 | Int(b[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let lo = u16(little ? at : at + 2), let hi = u16(little ? at + 2 : at) else { return nil }
            return hi << 16 | lo
        }
        guard u16(tiff + 2) == 42, let ifd = u32(tiff + 4), let count = u16(tiff + ifd) else { return nil }
        for entry in 0..<min(count, 512) {
            let at = tiff + ifd + 2 + entry * 12
            guard let tag = u16(at) else { return nil }
            if tag == 0x0112 {
                guard let type = u16(at + 2), type == 3, let value = u16(at + 8) else { return nil }
                return EXIFOrientation(rawValue: value)
            }
        }
        return nil
    }
}

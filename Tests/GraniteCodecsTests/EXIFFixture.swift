/// Builds Exif TIFF structures for the tests, in either byte order: IFD0 (make, model,
/// orientation, copyright, Exif and GPS pointers), an Exif IFD (date), a GPS IFD (latitude) and,
/// when asked, IFD1 with a JPEG thumbnail at the end — the layout cameras write.
struct EXIFFixture {
    var littleEndian = true
    var make = "Granite Camera Co"
    var model = "GC-1 Mark II"
    var copyright = "(c) 2026 Test Author"
    var date = "2026:11:24 14:30:00"
    var orientation = 6
    var thumbnail: [UInt8]? = [0xFF, 0xD8, 0xFF, 0xDB] + [UInt8](repeating: 0x42, count: 200) + [0xFF, 0xD9]

    struct Entry { var tag: UInt16; var type: UInt16; var count: Int; var data: [UInt8] }

    func u16(_ v: Int) -> [UInt8] { littleEndian ? [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] : [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    func u32(_ v: Int) -> [UInt8] { littleEndian ? u16(v & 0xFFFF) + u16(v >> 16) : u16(v >> 16) + u16(v & 0xFFFF) }
    func ascii(_ tag: UInt16, _ s: String) -> Entry { Entry(tag: tag, type: 2, count: s.utf8.count + 1, data: Array(s.utf8) + [0]) }
    func short(_ tag: UInt16, _ v: Int) -> Entry { Entry(tag: tag, type: 3, count: 1, data: u16(v) + [0, 0]) }
    func long(_ tag: UInt16, _ v: Int) -> Entry { Entry(tag: tag, type: 4, count: 1, data: u32(v)) }

    /// Lays out IFDs one after the other, each followed by its out-of-line values.
    func build() -> [UInt8] {
        var out = (littleEndian ? [0x49, 0x49] : [0x4D, 0x4D]) + u16(42) + u32(8)
        func ifdSize(_ entries: [Entry]) -> Int {
            2 + 12 * entries.count + 4 + entries.reduce(0) { $0 + ($1.data.count > 4 ? $1.data.count + $1.data.count % 2 : 0) }
        }
        func emit(_ entries: [Entry], next: Int) {
            let start = out.count
            var values = [UInt8]()
            var valueAt = start + 2 + 12 * entries.count + 4
            out += u16(entries.count)
            for e in entries.sorted(by: { $0.tag < $1.tag }) {
                out += u16(Int(e.tag)) + u16(Int(e.type)) + u32(e.count)
                if e.data.count > 4 {
                    out += u32(valueAt)
                    values += e.data + (e.data.count % 2 == 1 ? [0] : [])
                    valueAt += e.data.count + e.data.count % 2
                } else {
                    out += e.data + [UInt8](repeating: 0, count: 4 - e.data.count)
                }
            }
            out += u32(next)
            out += values
        }
        let exifEntries = [ascii(0x9003, date)]
        let gpsEntries = [ascii(0x0001, "N"),
                          Entry(tag: 0x0002, type: 5, count: 3, data: u32(48) + u32(1) + u32(51) + u32(1) + u32(3000) + u32(100))]
        var ifd0 = [ascii(0x010F, make), ascii(0x0110, model), short(0x0112, orientation), ascii(0x8298, copyright),
                    long(0x8769, 0), long(0x8825, 0)]
        let ifd0Size = ifdSize(ifd0)
        let exifAt = 8 + ifd0Size, gpsAt = exifAt + ifdSize(exifEntries), ifd1At = gpsAt + ifdSize(gpsEntries)
        ifd0[4] = long(0x8769, exifAt)
        ifd0[5] = long(0x8825, gpsAt)
        emit(ifd0, next: thumbnail == nil ? 0 : ifd1At)
        emit(exifEntries, next: 0)
        emit(gpsEntries, next: 0)
        if let thumbnail {
            let ifd1 = [short(0x0103, 6), long(0x0201, 0), long(0x0202, thumbnail.count)]
            let thumbAt = ifd1At + ifdSize(ifd1)
            emit([short(0x0103, 6), long(0x0201, thumbAt), long(0x0202, thumbnail.count)], next: 0)
            out += thumbnail
        }
        return out
    }
}

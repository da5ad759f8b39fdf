#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CZlib
import Dispatch

/// A PNG written from rows produced on demand, with a chosen zlib level and row filter, the rows
/// deflated in horizontal bands on several cores at once.
///
/// For large generated images (a depth map and its preview at a 12 MP photo's size): no
/// whole-image pixel buffer exists, only each band's current rows and the compressed bytes.
/// libpng's simplified API (``Codecs/encodePNG(_:path:)``) takes a whole image and always
/// deflates at zlib's default level with its own filter choice; this writer is the fast path.
///
/// Each band is a raw deflate stream of its filtered rows ending in a sync flush (the last band
/// finishes the stream), so the bands concatenated after one zlib header, with the Adler-32s
/// combined, form one valid zlib stream (as pigz joins its blocks); a band's first row may
/// still use the row above it (the Up filter), which the band produces again for itself.
///
/// ```
/// rows(y) ─► filter ─► deflate (band 0 on core 0) ┐
/// rows(y) ─► filter ─► deflate (band 1 on core 1) ┴► zlib header + bands + Adler-32 ─► IDAT chunks
/// ```
public struct PNGRowEncoder: Sendable {
    /// The pixel layout of the file.
    public enum Layout: Sendable, Equatable {
        /// 8-bit gray.
        case gray8
        /// 16-bit gray; rows hold big-endian samples (PNG's byte order).
        case gray16
        /// 8-bit RGB.
        case rgb8
        /// 8-bit RGBA (not premultiplied).
        case rgba8
        /// 8-bit indices into `palette` (RGB triples, 1 to 256 entries).
        case indexed(palette: [UInt8])

        /// Bytes per pixel in a row.
        public var bytesPerPixel: Int {
            switch self {
            case .gray8, .indexed: 1
            case .gray16: 2
            case .rgb8: 3
            case .rgba8: 4
            }
        }

        var colorType: UInt8 {
            switch self {
            case .gray8, .gray16: 0
            case .rgb8: 2
            case .indexed: 3
            case .rgba8: 6
            }
        }

        var bitDepth: UInt8 { self == .gray16 ? 16 : 8 }
    }

    /// The PNG row filter applied to every row (PNG filter types 0–2).
    public enum RowFilter: UInt8, Sendable {
        /// Bytes as they are (best for palette indices).
        case none = 0
        /// Each byte minus the same byte of the pixel to its left (smooth images, cheapest).
        case sub = 1
        /// Each byte minus the same byte of the row above.
        case up = 2
    }

    /// zlib's compression strategy (`deflateInit2`'s `strategy`).
    public enum Strategy: Int32, Sendable {
        /// String matching at any distance (zlib's default).
        case `default` = 0
        /// Matching, favouring Huffman coding of small values (filtered rows).
        case filtered = 1
        /// Huffman coding only, no matching.
        case huffmanOnly = 2
        /// Runs of one byte only (distance 1): fast, and as good where the data is runs.
        case rle = 3
    }

    /// The image size.
    public let width: Int, height: Int
    /// The pixel layout.
    public let layout: Layout
    /// zlib's compression level, 0 (stored) to 9; 1 is the fastest that compresses.
    public var level: Int32 = 1
    /// The row filter.
    public var filter: RowFilter = .sub
    /// zlib's strategy.
    public var strategy: Strategy = .default
    /// Bands compressed at once (default: the online cores); fewer when the image is short.
    public var bands: Int = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))

    /// Bytes in one row of pixels (without the filter byte).
    public var rowBytes: Int { width * layout.bytesPerPixel }

    /// An encoder for `width`×`height` pixels of `layout`; throws for an empty size, an image
    /// larger than PNG allows, or a palette that is empty, too long or not RGB triples.
    public init(width: Int, height: Int, layout: Layout, path: String = "(memory)") throws(CodecError) {
        guard width > 0, height > 0, width <= Int(Int32.max), height <= Int(Int32.max) else {
            throw .encode(path: path, reason: "PNG size \(width)x\(height) is empty or too large")
        }
        if case let .indexed(palette) = layout {
            guard !palette.isEmpty, palette.count <= 768, palette.count % 3 == 0 else {
                throw .encode(path: path, reason: "a PNG palette holds 1 to 256 RGB entries, got \(palette.count) bytes")
            }
        }
        self.width = width; self.height = height; self.layout = layout
    }

    /// Encodes the image; `rows(y, out)` writes row `y`'s `rowBytes` bytes to `out`. Rows are asked
    /// for in increasing order within a band, bands run on several threads at once, and a band may
    /// ask again for the row just above its first one.
    public func encode(path: String = "(memory)",
                       rows: @Sendable (_ y: Int, _ out: UnsafeMutablePointer<UInt8>) -> Void) throws(CodecError) -> [UInt8] {
        guard (0...9).contains(level) else { throw .encode(path: path, reason: "zlib level must be 0...9, got \(level)") }
        let count = max(1, min(bands, height / 16))
        let results = UnsafeMutableBufferPointer<Band?>.allocate(capacity: count)
        results.initialize(repeating: nil)
        defer { results.deinitialize(); results.deallocate() }
        let slots = UncheckedSendable(results)
        let encoder = self
        if count == 1 {
            results[0] = encoder.band(0, of: 1, rows: rows)
        } else {
            DispatchQueue.concurrentPerform(iterations: count) { b in
                slots.value[b] = encoder.band(b, of: count, rows: rows)
            }
        }
        // The zlib stream: header (deflate, 32 KiB window, level hint), the bands, Adler-32.
        let levelHint: UInt16 = level <= 1 ? 0 : level <= 5 ? 1 : level == 6 ? 2 : 3
        var head = UInt16(0x78) << 8 | levelHint << 6
        head += (31 - head % 31) % 31
        var zlib: [UInt8] = [UInt8(head >> 8), UInt8(head & 0xFF)]
        zlib.reserveCapacity(2 + results.reduce(0) { $0 + ($1?.bytes.count ?? 0) } + 4)
        var adler = adler32(0, nil, 0)
        for case let band? in results {
            guard band.failure == nil else { throw .encode(path: path, reason: "PNG: \(band.failure!)") }
            zlib += band.bytes
            adler = granite_adler32_combine(adler, band.adler, band.length)
        }
        zlib += Self.bigEndian(UInt32(truncatingIfNeeded: adler))

        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png.reserveCapacity(zlib.count + 1024)
        var header = Self.bigEndian(UInt32(width)) + Self.bigEndian(UInt32(height))
        header += [layout.bitDepth, layout.colorType, 0, 0, 0]
        Self.appendChunk("IHDR", header[...], to: &png)
        if case let .indexed(palette) = layout { Self.appendChunk("PLTE", palette[...], to: &png) }
        let most = 1 << 20  // IDAT chunks of at most 1 MiB, as encoders commonly write them
        var offset = 0
        while offset < zlib.count {
            let end = min(offset + most, zlib.count)
            Self.appendChunk("IDAT", zlib[offset..<end], to: &png)
            offset = end
        }
        Self.appendChunk("IEND", [][...], to: &png)
        return png
    }

    /// One band's compressed rows, or why zlib failed.
    struct Band {
        var bytes: [UInt8] = []
        var adler: uLong = 0
        var length = 0
        var failure: String?
    }

    /// Filters and deflates rows `height × b / count ..< height × (b + 1) / count`.
    func band(_ b: Int, of count: Int, rows: (Int, UnsafeMutablePointer<UInt8>) -> Void) -> Band {
        let y0 = height * b / count, y1 = height * (b + 1) / count
        let last = b == count - 1
        var result = Band()
        var stream = z_stream()
        guard granite_deflateInit2(&stream, level, -15, 8, strategy.rawValue) == Z_OK else {
            result.failure = "zlib deflateInit2 failed"
            return result
        }
        defer { deflateEnd(&stream) }
        let n = rowBytes, bpp = layout.bytesPerPixel
        let buffers = UnsafeMutablePointer<UInt8>.allocate(capacity: 3 * n + 1)
        defer { buffers.deallocate() }
        var current = buffers, previous = buffers + n
        let filtered = buffers + 2 * n
        previous.initialize(repeating: 0, count: n)
        if filter == .up && y0 > 0 { rows(y0 - 1, previous) }
        let chunk = 256 * 1024
        let out = UnsafeMutablePointer<UInt8>.allocate(capacity: chunk)
        defer { out.deallocate() }
        var adler = adler32(0, nil, 0)
        for y in y0..<y1 {
            rows(y, current)
            filtered[0] = filter.rawValue
            let f = filtered + 1
            switch filter {
            case .none:
                f.update(from: current, count: n)
            case .sub:
                for i in 0..<min(bpp, n) { f[i] = current[i] }
                if n > bpp { for i in bpp..<n { f[i] = current[i] &- current[i - bpp] } }
            case .up:
                for i in 0..<n { f[i] = current[i] &- previous[i] }
            }
            adler = adler32(adler, filtered, uInt(n + 1))
            let flush = y == y1 - 1 ? (last ? Z_FINISH : Z_SYNC_FLUSH) : Z_NO_FLUSH
            stream.next_in = filtered
            stream.avail_in = uInt(n + 1)
            while true {
                stream.next_out = out
                stream.avail_out = uInt(chunk)
                let rc = deflate(&stream, flush)
                guard rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR else {
                    result.failure = "zlib deflate failed (\(rc))"
                    return result
                }
                result.bytes.append(contentsOf: UnsafeBufferPointer(start: out, count: chunk - Int(stream.avail_out)))
                // Done with this row once zlib took all of it and had room to spare (a flush
                // that filled the buffer exactly may have more to give); Z_FINISH until the end.
                if flush == Z_FINISH ? rc == Z_STREAM_END : (stream.avail_in == 0 && stream.avail_out > 0) { break }
            }
            swap(&current, &previous)
        }
        result.adler = adler
        result.length = (y1 - y0) * (n + 1)
        return result
    }

    static func bigEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }

    /// Appends a chunk: length, type, data, CRC-32 of type and data.
    static func appendChunk(_ type: String, _ data: ArraySlice<UInt8>, to png: inout [UInt8]) {
        let tag = Array(type.utf8)
        png += bigEndian(UInt32(data.count))
        png += tag
        png += data
        png += bigEndian(Zlib.crc32(tag[...], data))
    }
}

/// Carries a value into `concurrentPerform`, whose iterations touch disjoint parts of it.
struct UncheckedSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

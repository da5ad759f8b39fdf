#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CDeflate
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
/// still use the row above it (the Up filter), which the band produces again for itself. The
/// Adler-32s are libdeflate's (vectorised; zlib's is a scalar loop, 7.8 ms against 1.4 ms on a
/// 12 MP depth map's rows). Several images of one height can come from one pass over the rows
/// (``encode(_:paths:rows:)``: a depth PNG and its preview from each scaled row computed once).
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
        try Self.encode([self], paths: [path]) { y, outs in rows(y, outs[0]) }[0]
    }

    /// Encodes several images of one height from one pass over their rows: `rows(y, outs)` writes
    /// row `y` of image `i` (its `rowBytes` bytes) to `outs[i]`, so what the images share per row
    /// (a depth map's scaled row, for the depth PNG and its preview) is computed once. Rows are
    /// asked for as in ``encode(path:rows:)``, the bands of `encoders[0]`. Returns the PNGs in order.
    public static func encode(_ encoders: [PNGRowEncoder], paths: [String],
                              rows: @Sendable (_ y: Int, _ outs: UnsafeBufferPointer<UnsafeMutablePointer<UInt8>>) -> Void)
        throws(CodecError) -> [[UInt8]] {
        precondition(!encoders.isEmpty && paths.count == encoders.count, "one path per encoder")
        let height = encoders[0].height
        for (encoder, path) in zip(encoders, paths) {
            guard (0...9).contains(encoder.level) else { throw .encode(path: path, reason: "zlib level must be 0...9, got \(encoder.level)") }
            guard encoder.height == height else {
                throw .encode(path: path, reason: "PNGs encoded together need one height, got \(encoder.height) and \(height)")
            }
        }
        let count = max(1, min(encoders[0].bands, height / 16))
        let results = UnsafeMutableBufferPointer<[Band]>.allocate(capacity: count)
        results.initialize(repeating: [])
        defer { results.deinitialize(); results.deallocate() }
        let slots = UncheckedSendable(results)
        if count == 1 {
            results[0] = band(0, of: 1, encoders, rows: rows)
        } else {
            DispatchQueue.concurrentPerform(iterations: count) { b in
                slots.value[b] = band(b, of: count, encoders, rows: rows)
            }
        }
        var pngs = [[UInt8]]()
        for (i, encoder) in encoders.enumerated() {
            // The zlib stream: header (deflate, 32 KiB window, level hint), the bands, Adler-32.
            let levelHint: UInt16 = encoder.level <= 1 ? 0 : encoder.level <= 5 ? 1 : encoder.level == 6 ? 2 : 3
            var head = UInt16(0x78) << 8 | levelHint << 6
            head += (31 - head % 31) % 31
            var zlib: [UInt8] = [UInt8(head >> 8), UInt8(head & 0xFF)]
            zlib.reserveCapacity(2 + results.reduce(0) { $0 + $1[i].bytes.count } + 4)
            var adler = adler32(0, nil, 0)
            for band in results {
                if let failure = band[i].failure { throw .encode(path: paths[i], reason: "PNG: \(failure)") }
                zlib += band[i].bytes
                adler = granite_adler32_combine(adler, uLong(band[i].adler), band[i].length)
            }
            zlib += Self.bigEndian(UInt32(truncatingIfNeeded: adler))
            pngs.append(encoder.png(zlib))
        }
        return pngs
    }

    /// zlib's `memLevel` for the row bands: 5 (a 4096-entry hash table that stays in cache) instead
    /// of zlib's default 8; on a 12 MP depth map's filtered rows level 1 then takes 36 ms instead of
    /// 44 ms for a stream 0.1 % larger, and the preview's run-length coding 19.5 instead of 22.5 ms.
    static let memoryLevel: Int32 = 5

    /// One image's compressed rows of one band, or why zlib failed.
    struct Band {
        var bytes: [UInt8] = []
        var adler: UInt32 = 1
        var length = 0
        var failure: String?
    }

    /// Makes, filters and deflates rows `height × b / count ..< height × (b + 1) / count` of every image.
    static func band(_ b: Int, of count: Int, _ encoders: [PNGRowEncoder],
                     rows: (Int, UnsafeBufferPointer<UnsafeMutablePointer<UInt8>>) -> Void) -> [Band] {
        let height = encoders[0].height
        let y0 = height * b / count, y1 = height * (b + 1) / count
        let last = b == count - 1
        var results = [Band](repeating: Band(), count: encoders.count)
        // zlib keeps a pointer back to its z_stream: each stays at one heap address.
        let streams = UnsafeMutablePointer<z_stream>.allocate(capacity: encoders.count)
        streams.initialize(repeating: z_stream(), count: encoders.count)
        var opened = 0
        defer {
            for i in 0..<opened { deflateEnd(streams + i) }
            streams.deinitialize(count: encoders.count)
            streams.deallocate()
        }
        for (i, encoder) in encoders.enumerated() {
            guard granite_deflateInit2(streams + i, encoder.level, -15, memoryLevel, encoder.strategy.rawValue) == Z_OK else {
                results[i].failure = "zlib deflateInit2 failed"
                return results
            }
            opened += 1
        }
        // Per image: the row being made, the row above it, the filtered row (filter byte first).
        let sizes = encoders.map(\.rowBytes)
        let scratch = sizes.map { UnsafeMutablePointer<UInt8>.allocate(capacity: 3 * $0 + 1) }
        defer { for s in scratch { s.deallocate() } }
        var current = scratch, previous = zip(scratch, sizes).map { $0 + $1 }
        for (p, n) in zip(previous, sizes) { p.initialize(repeating: 0, count: n) }
        if y0 > 0 && encoders.contains(where: { $0.filter == .up }) { previous.withUnsafeBufferPointer { rows(y0 - 1, $0) } }
        let chunk = 256 * 1024
        let out = UnsafeMutablePointer<UInt8>.allocate(capacity: chunk)
        defer { out.deallocate() }
        for y in y0..<y1 {
            current.withUnsafeBufferPointer { rows(y, $0) }
            let flush = y == y1 - 1 ? (last ? Z_FINISH : Z_SYNC_FLUSH) : Z_NO_FLUSH
            for (i, encoder) in encoders.enumerated() {
                let n = sizes[i], filtered = scratch[i] + 2 * n
                encoder.filterRow(current[i], above: previous[i], into: filtered)
                results[i].adler = libdeflate_adler32(results[i].adler, filtered, n + 1)
                let stream = streams + i
                stream.pointee.next_in = filtered
                stream.pointee.avail_in = uInt(n + 1)
                while true {
                    stream.pointee.next_out = out
                    stream.pointee.avail_out = uInt(chunk)
                    let rc = deflate(stream, flush)
                    guard rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR else {
                        results[i].failure = "zlib deflate failed (\(rc))"
                        return results
                    }
                    results[i].bytes.append(contentsOf: UnsafeBufferPointer(start: out, count: chunk - Int(stream.pointee.avail_out)))
                    // Done with this row once zlib took all of it and had room to spare (a flush
                    // that filled the buffer exactly may have more to give); Z_FINISH until the end.
                    if flush == Z_FINISH ? rc == Z_STREAM_END : (stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0) { break }
                }
            }
            swap(&current, &previous)
        }
        for i in results.indices { results[i].length = (y1 - y0) * (sizes[i] + 1) }
        return results
    }

    /// Writes the filter byte and the filtered bytes of `row` (`above`: the row before it, zeros above the first).
    @inline(__always)
    func filterRow(_ row: UnsafePointer<UInt8>, above: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>) {
        let n = rowBytes, bpp = layout.bytesPerPixel
        out[0] = filter.rawValue
        let f = out + 1
        switch filter {
        case .none:
            f.update(from: row, count: n)
        case .sub:
            for i in 0..<min(bpp, n) { f[i] = row[i] }
            if n > bpp { Self.subtract(row + bpp, row, count: n - bpp, into: f + bpp) }
        case .up:
            Self.subtract(row, above, count: n, into: f)
        }
    }

    /// `out[i] = a[i] &- b[i]` for `count` bytes, sixteen at a time (the plain loop was not
    /// vectorised: ~17 ms a 12 MP depth map and its preview).
    @inline(__always)
    static func subtract(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, count: Int, into out: UnsafeMutablePointer<UInt8>) {
        var i = 0
        while i + 16 <= count {
            let d = UnsafeRawPointer(a + i).loadUnaligned(as: SIMD16<UInt8>.self) &- UnsafeRawPointer(b + i).loadUnaligned(as: SIMD16<UInt8>.self)
            UnsafeMutableRawPointer(out + i).storeBytes(of: d, as: SIMD16<UInt8>.self)
            i += 16
        }
        while i < count { out[i] = a[i] &- b[i]; i += 1 }
    }

    /// The PNG file around a zlib stream of the filtered rows: IHDR, PLTE, IDAT chunks of at most 1 MiB, IEND.
    func png(_ zlib: [UInt8]) -> [UInt8] {
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png.reserveCapacity(zlib.count + 1024 + (zlib.count >> 20) * 12)
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

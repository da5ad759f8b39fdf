#if canImport(Glibc)
import Glibc
#endif
import CTIFF
import GraniteMedia

/// TIFF through libtiff over memory (`granite_tiff_stream`, per-handle message buffers).
///
/// ```
/// read:  bytes ─► TIFFClientOpenExt ─► size check ─► TIFFReadRGBAImageOriented (stored order) ─► un-premultiply ─► Orientation tag ─► Image
/// write: Image ─► RGB(A) 8-bit, Deflate + horizontal predictor, ICC and XMP tags ─► bytes
/// ```
/// The first image of the file is read (any photometric libtiff's RGBA interface knows: RGB, gray,
/// palette, CMYK, YCbCr, 16-bit); a libtiff warning goes to `warnings` as other decoders' do.
enum TIFFCodec {
    /// The stream over `bytes` and the open handle, closed when `body` returns.
    static func withReader<R>(_ bytes: [UInt8], path: String, maxPixels: Int,
                              _ body: (OpaquePointer, UnsafeMutablePointer<granite_tiff_stream>) throws(CodecError) -> R) throws(CodecError) -> R {
        try bytes.withUnsafeBufferPointer { (raw) throws(CodecError) -> R in
            var stream = granite_tiff_stream()
            stream.data = UnsafeMutablePointer(mutating: raw.baseAddress)
            stream.size = raw.count
            return try withUnsafeMutablePointer(to: &stream) { (s) throws(CodecError) -> R in
                guard let tif = granite_tiff_open(s, "rm", tmsize_t(min(maxPixels, Int(Int32.max) / 8) * 8)) else {
                    throw .header(path: path, reason: "TIFF header: \(text(&s.pointee.error, or: "not a TIFF file"))")
                }
                defer { TIFFClose(tif) }
                return try body(tif, s)
            }
        }
    }

    static func text<T>(_ buffer: inout T, or fallback: String) -> String {
        let s = withUnsafeBytes(of: &buffer) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        return s.isEmpty ? fallback : s
    }

    static func dimensions(_ tif: OpaquePointer, path: String) throws(CodecError) -> (width: Int, height: Int, orientation: EXIFOrientation) {
        var w: UInt32 = 0, h: UInt32 = 0, o: UInt16 = 1
        guard granite_tiff_get_u32(tif, UInt32(TIFFTAG_IMAGEWIDTH), &w) == 1, granite_tiff_get_u32(tif, UInt32(TIFFTAG_IMAGELENGTH), &h) == 1,
              w > 0, h > 0 else {
            throw .header(path: path, reason: "TIFF has no image width and length")
        }
        _ = granite_tiff_get_u16_default(tif, UInt32(TIFFTAG_ORIENTATION), &o)
        return (Int(w), Int(h), EXIFOrientation(rawValue: Int(o)) ?? .up)
    }

    /// The size decoding gives (turned by the Orientation tag when `upright`).
    static func size(_ bytes: [UInt8], path: String, options: DecodeOptions) throws(CodecError) -> (width: Int, height: Int) {
        try withReader(bytes, path: path, maxPixels: options.maxPixels) { (tif, _) throws(CodecError) -> (width: Int, height: Int) in
            let d = try dimensions(tif, path: path)
            return options.applyEXIFOrientation && d.orientation.swapsAxes ? (d.height, d.width) : (d.width, d.height)
        }
    }

    static func decode(_ bytes: [UInt8], path: String, options: DecodeOptions, warnings: inout [String]) throws(CodecError) -> Image {
        var found = [String]()
        let image = try withReader(bytes, path: path, maxPixels: options.maxPixels) { (tif, s) throws(CodecError) -> Image in
            let (w, h, orientation) = try dimensions(tif, path: path)
            let pixels = w.multipliedReportingOverflow(by: h)
            guard !pixels.overflow, pixels.partialValue <= options.maxPixels else {
                throw .header(path: path, reason: "TIFF is \(w)x\(h), over the limit of \(options.maxPixels) pixels")
            }
            var raster = [UInt32](repeating: 0, count: w * h)
            // Asking for the file's own orientation reads rows in stored order (libtiff only flips, never
            // transposes); the turn is applied below, like every other format's.
            let ok = raster.withUnsafeMutableBufferPointer { r in
                TIFFReadRGBAImageOriented(tif, UInt32(w), UInt32(h), r.baseAddress, Int32(orientation.rawValue), 0)
            }
            if s.pointee.warning.0 != 0 { found.append("TIFF: \(text(&s.pointee.warning, or: ""))") }
            guard ok == 1 else { throw .decode(path: path, reason: "TIFF data: \(text(&s.pointee.error, or: "cannot be read as RGBA"))") }
            // ABGR packed, i.e. R, G, B, A bytes in memory on little-endian; alpha comes premultiplied.
            var out = [UInt8](repeating: 0, count: w * h * 4)
            out.withUnsafeMutableBufferPointer { o in
                for i in 0..<(w * h) {
                    let v = raster[i]
                    let r = Int(v & 0xFF), g = Int(v >> 8 & 0xFF), b = Int(v >> 16 & 0xFF), a = Int(v >> 24)
                    if a == 255 || a == 0 {
                        o[i * 4] = UInt8(a == 0 ? 0 : r); o[i * 4 + 1] = UInt8(a == 0 ? 0 : g); o[i * 4 + 2] = UInt8(a == 0 ? 0 : b)
                    } else {
                        o[i * 4] = UInt8(min(255, (r * 255 + a / 2) / a))
                        o[i * 4 + 1] = UInt8(min(255, (g * 255 + a / 2) / a))
                        o[i * 4 + 2] = UInt8(min(255, (b * 255 + a / 2) / a))
                    }
                    o[i * 4 + 3] = UInt8(a)
                }
            }
            let stored = try! Image(width: w, height: h, format: .rgba8, bytes: out)
            return options.applyEXIFOrientation ? stored.applying(orientation) : stored
        }
        for warning in found { try options.failOn.check(warning, truncated: false, path: path, into: &warnings) }
        return image
    }

    /// The ICC profile and XMP packet tags of the first image, and its Exif (``EXIFBlock/fromTIFFFile(_:)``).
    static func metadata(_ bytes: [UInt8]) -> ImageMetadata {
        (try? withReader(bytes, path: "", maxPixels: 1 << 30) { tif, _ in
            func tag(_ t: Int32) -> [UInt8]? {
                var count: UInt32 = 0
                var data: UnsafeMutableRawPointer?
                guard granite_tiff_get_bytes(tif, UInt32(t), &count, &data) == 1, let data, count > 0 else { return nil }
                return Array(UnsafeRawBufferPointer(start: data, count: Int(count)))
            }
            return ImageMetadata(icc: tag(TIFFTAG_ICCPROFILE), exif: EXIFBlock.fromTIFFFile(bytes), xmp: tag(TIFFTAG_XMLPACKET))
        }) ?? ImageMetadata()
    }

    /// `rgba8` (alpha kept when not opaque), `rgb24` or `gray8`, Deflate-compressed, with the ICC
    /// profile and XMP of `metadata` as tags (TIFF keeps them inside the image's IFD), and its Exif
    /// as IFD0 tags and an Exif IFD (``EXIFBlock/tiffAdding(exif:icc:xmp:to:)``, the file in the
    /// block's byte order).
    static func encode(_ image: Image, metadata: ImageMetadata, path: String) throws(CodecError) -> [UInt8] {
        guard let exif = metadata.exif, let order = exif.first, order == 0x49 || order == 0x4D else {
            return try encodePlain(image, metadata: metadata, littleEndian: true, path: path)
        }
        let plain = try encodePlain(image, metadata: ImageMetadata(), littleEndian: order == 0x49, path: path)
        guard let tagged = EXIFBlock.tiffAdding(exif: exif, icc: metadata.icc, xmp: metadata.xmp, to: plain) else {
            throw .encode(path: path, reason: "TIFF: the Exif block could not be merged into the file's tags")
        }
        return tagged
    }

    static func encodePlain(_ image: Image, metadata: ImageMetadata, littleEndian: Bool, path: String) throws(CodecError) -> [UInt8] {
        let channels: Int, source: Image
        switch image.format {
        case .gray8: (channels, source) = (1, image)
        case .rgb24: (channels, source) = (3, image)
        case .rgba8: (channels, source) = image.isOpaque ? (3, dropAlpha(image)) : (4, image)
        default: throw .encode(path: path, reason: "TIFF cannot hold pixel format \(image.format)")
        }
        var stream = granite_tiff_stream()
        stream.owned = 1
        defer { free(stream.data) }
        return try withUnsafeMutablePointer(to: &stream) { (s) throws(CodecError) -> [UInt8] in
            guard let tif = granite_tiff_open(s, littleEndian ? "wl" : "wb", 0) else {
                throw .encode(path: path, reason: "TIFF: \(text(&s.pointee.error, or: "libtiff could not start a file"))")
            }
            var closed = false
            defer { if !closed { TIFFClose(tif) } }
            let w = UInt32(source.width), h = UInt32(source.height)
            var ok = granite_tiff_set_u32(tif, UInt32(TIFFTAG_IMAGEWIDTH), w) == 1
            ok = ok && granite_tiff_set_u32(tif, UInt32(TIFFTAG_IMAGELENGTH), h) == 1
            ok = ok && granite_tiff_set_u16(tif, UInt32(TIFFTAG_SAMPLESPERPIXEL), UInt16(channels)) == 1
            ok = ok && granite_tiff_set_u16(tif, UInt32(TIFFTAG_BITSPERSAMPLE), 8) == 1
            ok = ok && granite_tiff_set_u16(tif, UInt32(TIFFTAG_PHOTOMETRIC), UInt16(channels == 1 ? PHOTOMETRIC_MINISBLACK : PHOTOMETRIC_RGB)) == 1
            ok = ok && granite_tiff_set_u16(tif, UInt32(TIFFTAG_PLANARCONFIG), UInt16(PLANARCONFIG_CONTIG)) == 1
            ok = ok && granite_tiff_set_u16(tif, UInt32(TIFFTAG_COMPRESSION), UInt16(COMPRESSION_ADOBE_DEFLATE)) == 1
            ok = ok && granite_tiff_set_u16(tif, UInt32(TIFFTAG_PREDICTOR), UInt16(PREDICTOR_HORIZONTAL)) == 1
            ok = ok && granite_tiff_set_u16(tif, UInt32(TIFFTAG_ORIENTATION), UInt16(ORIENTATION_TOPLEFT)) == 1
            if channels == 4 { ok = ok && granite_tiff_set_extrasample_unassociated(tif) == 1 }
            ok = ok && granite_tiff_set_u32(tif, UInt32(TIFFTAG_ROWSPERSTRIP), TIFFDefaultStripSize(tif, 0)) == 1
            if let icc = metadata.icc {
                ok = ok && icc.withUnsafeBytes { granite_tiff_set_bytes(tif, UInt32(TIFFTAG_ICCPROFILE), UInt32($0.count), $0.baseAddress) } == 1
            }
            if let xmp = metadata.xmp {
                ok = ok && xmp.withUnsafeBytes { granite_tiff_set_bytes(tif, UInt32(TIFFTAG_XMLPACKET), UInt32($0.count), $0.baseAddress) } == 1
            }
            guard ok else { throw .encode(path: path, reason: "TIFF tags: \(text(&s.pointee.error, or: "refused"))") }
            var row = [UInt8](repeating: 0, count: source.width * channels)
            for y in 0..<source.height {
                let start = y * source.width * channels
                row.withUnsafeMutableBufferPointer { r in
                    source.bytes.withUnsafeBufferPointer { b in r.baseAddress!.update(from: b.baseAddress! + start, count: r.count) }
                }
                let written = row.withUnsafeMutableBytes { TIFFWriteScanline(tif, $0.baseAddress, UInt32(y), 0) }
                guard written == 1 else { throw .encode(path: path, reason: "TIFF row \(y): \(text(&s.pointee.error, or: "not written"))") }
            }
            closed = true
            TIFFClose(tif)  // flushes the directory into the stream
            guard s.pointee.error.0 == 0, let data = s.pointee.data else {
                throw .encode(path: path, reason: "TIFF: \(text(&s.pointee.error, or: "nothing written"))")
            }
            return Array(UnsafeBufferPointer(start: data, count: s.pointee.size))
        }
    }

    static func dropAlpha(_ image: Image) -> Image {
        var rgb = [UInt8](repeating: 0, count: image.pixelCount * 3)
        for p in 0..<image.pixelCount { for c in 0..<3 { rgb[p * 3 + c] = image.bytes[p * 4 + c] } }
        return try! Image(width: image.width, height: image.height, format: .rgb24, bytes: rgb)
    }
}

import CPNG
import GraniteMedia

/// PNG through libpng's simplified API (`png_image_*`): libpng catches its own errors internally,
/// so no longjmp ever crosses a Swift frame.
enum PNGCodec {
    static func message(_ image: png_image) -> String {
        var copy = image.message
        return withUnsafeBytes(of: &copy) { raw in
            let chars = raw.prefix { $0 != 0 }
            return String(decoding: chars, as: UTF8.self)
        }
    }

    static func newImage() -> png_image {
        var image = png_image()
        image.version = png_uint_32(granite_png_image_version)
        return image
    }

    /// The header's size (the simplified API reads up to the first IDAT).
    static func decodeHeader(_ bytes: [UInt8], path: String) throws(CodecError) -> (width: Int, height: Int) {
        let bytes = cuttingOverrunningChunk(bytes)
        var image = newImage()
        let begun = bytes.withUnsafeBytes { raw in
            png_image_begin_read_from_memory(&image, raw.baseAddress, raw.count)
        }
        defer { png_image_free(&image) }
        guard begun != 0 else { throw .header(path: path, reason: "PNG header: \(message(image))") }
        return (Int(image.width), Int(image.height))
    }

    /// Decodes; libpng's warnings, and a file whose pixels are whole but whose IEND is cut off,
    /// go to `warnings` unless `options.failOn` stops them.
    static func decode(_ bytes: [UInt8], path: String, options: DecodeOptions, warnings: inout [String]) throws(CodecError) -> Image {
        // gAMA and cHRM are not applied: the stored values are the pixels, as libvips, Pillow and
        // ImageMagick read them (libpng's simplified API would re-encode a gAMA other than 1/2.2).
        let whole = cuttingOverrunningChunk(bytes)
        let bytes = hasGammaChunks(whole) ? removingChunk("gAMA", "cHRM", from: whole) : whole
        var image = newImage()
        let begun = bytes.withUnsafeBytes { raw in
            png_image_begin_read_from_memory(&image, raw.baseAddress, raw.count)
        }
        guard begun != 0 else {
            let reason = message(image)
            png_image_free(&image)
            throw .header(path: path, reason: "PNG header: \(reason)")
        }
        defer { png_image_free(&image) }
        let width = Int(image.width), height = Int(image.height)
        let pixels = width.multipliedReportingOverflow(by: height)
        guard width > 0, height > 0, !pixels.overflow, pixels.partialValue <= options.maxPixels else {
            throw .header(path: path, reason: "PNG is \(width)x\(height), over the limit of \(options.maxPixels) pixels")
        }
        let fileFormat = image.format
        let isColor = fileFormat & granite_png_format_flag_color != 0 || fileFormat & granite_png_format_flag_colormap != 0
        let hasAlpha = fileFormat & granite_png_format_flag_alpha != 0
        let sixteen = fileFormat & granite_png_format_flag_linear != 0

        let target: PixelFormat
        if options.keepGray && !isColor && !hasAlpha {
            target = sixteen ? .gray16 : .gray8
            image.format = sixteen ? granite_png_format_linear_y : granite_png_format_gray
        } else {
            target = .rgba8
            image.format = granite_png_format_rgba
            // 16-bit files with no gamma information: treat them as sRGB when narrowing to 8 bits,
            // as every other viewer does (libpng's default would assume linear and brighten them).
            image.flags |= granite_png_image_flag_16bit_sRGB
        }
        // libpng's row stride counts components (bytes for 8-bit formats, UInt16s for gray16).
        let components = target == .rgba8 ? 4 : 1
        var out = [UInt8](repeating: 0, count: target.byteCount(width: width, height: height))
        let finished = out.withUnsafeMutableBytes { raw in
            png_image_finish_read(&image, nil, raw.baseAddress, Int32(width * components), nil)
        }
        guard finished != 0 else { throw .decode(path: path, reason: "PNG data: \(message(image))") }
        if image.warning_or_error & granite_png_image_warning != 0 {
            try options.failOn.check("PNG: \(message(image))", truncated: false, path: path, into: &warnings)
        }
        // libpng stops once it has every pixel; a file cut inside its final chunk is still truncated.
        if !hasEnd(bytes) {
            try options.failOn.check("PNG is truncated: no IEND chunk at the end", truncated: true, path: path, into: &warnings)
        }
        do {
            return try Image(width: width, height: height, format: target, bytes: out)
        } catch {
            throw .decode(path: path, reason: "\(error)")
        }
    }

    static func encode(_ source: Image, path: String) throws(CodecError) -> [UInt8] {
        var image = newImage()
        image.width = png_uint_32(source.width)
        image.height = png_uint_32(source.height)
        switch source.format {
        case .rgba8: image.format = granite_png_format_rgba
        case .rgb24: image.format = granite_png_format_rgb
        case .gray8: image.format = granite_png_format_gray
        case .gray16: image.format = granite_png_format_linear_y  // 16-bit samples, written as-is
        default: throw .encode(path: path, reason: "PNG cannot hold pixel format \(source.format)")
        }
        let stride = Int32(source.format == .gray16 ? source.width : source.bytesPerRow)  // in components
        let capacity = granite_png_image_png_size_max(&image)
        // The worst-case size is larger than the image itself: left uninitialised (not zero-filled),
        // so only the pages libpng writes are touched (a 12 MP preview no longer costs ~50 MB of memset).
        var ok: Int32 = 0
        let out = [UInt8](unsafeUninitializedCapacity: capacity) { dst, count in
            var written = capacity
            ok = source.bytes.withUnsafeBytes { src in
                png_image_write_to_memory(&image, dst.baseAddress, &written, 0, src.baseAddress, stride, nil)
            }
            count = ok != 0 ? written : 0
        }
        defer { png_image_free(&image) }
        guard ok != 0 else { throw .encode(path: path, reason: "PNG: \(message(image))") }
        // 16-bit gray is data (depth), not light: drop the gAMA 1.0 chunk libpng adds for linear
        // formats, so viewers and readers take the samples as they are.
        return source.format == .gray16 ? removingChunk("gAMA", from: out) : out
    }

    /// Whether an IEND chunk with its CRC appears near the end (trailing bytes after it are tolerated).
    static func hasEnd(_ png: [UInt8]) -> Bool {
        let iend: [UInt8] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]
        let lowest = max(8, png.count - 65536)
        var i = png.count - iend.count
        while i >= lowest {
            if png[i + 4] == 0x49, Array(png[i..<i + 12]) == iend { return true }
            i -= 1
        }
        return false
    }

    /// `png` without chunks of the given types (other chunks and their CRCs are untouched).
    static func removingChunk(_ types: String..., from png: [UInt8]) -> [UInt8] {
        let tags = types.map { Array($0.utf8) }
        var result = Array(png.prefix(8))
        var i = 8
        while i + 12 <= png.count {
            let length = Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3])
            let end = i + 12 + length
            guard end <= png.count else { break }
            if !tags.contains(where: { png[i + 4..<i + 8].elementsEqual($0) }) { result += png[i..<end] }
            i = end
        }
        result += png[i...]
        return result
    }

    /// `png` cut before the first chunk other than IDAT whose declared length runs past the end
    /// of the data: libpng allocates such a chunk's whole declared length before it reads it (a
    /// 184-byte file declaring a 1.3 GB text chunk), and the chunk cannot be whole anyway. What
    /// libpng then sees is a file that ends there — the same error, or the same "IEND cut off"
    /// warning, it gave before, without the allocation. IDAT is streamed, not allocated: a cut-off
    /// IDAT is left for libpng to report.
    static func cuttingOverrunningChunk(_ png: [UInt8]) -> [UInt8] {
        var i = 8
        while i + 8 <= png.count {
            let length = Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3])
            if length > png.count - i - 12 {
                return png[i + 4..<i + 8].elementsEqual("IDAT".utf8) ? png : Array(png[..<i])
            }
            i += 12 + length
        }
        return png
    }

    /// Whether a `gAMA` or `cHRM` chunk comes before the image data (where PNG requires them).
    static func hasGammaChunks(_ png: [UInt8]) -> Bool {
        var i = 8
        while i + 12 <= png.count {
            let length = Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3])
            let type = png[i + 4..<i + 8]
            if type.elementsEqual("IDAT".utf8) { return false }
            if type.elementsEqual("gAMA".utf8) || type.elementsEqual("cHRM".utf8) { return true }
            guard length <= png.count - i - 12 else { return false }
            i += 12 + length
        }
        return false
    }
}

import CGIF
import GraniteMedia

/// GIF reading through giflib: the first frame, on the logical screen, as `rgba8` (the
/// transparent colour index and the area outside the frame have alpha 0). Later frames of an
/// animation are not read.
///
/// ```
/// bytes ─► DGifOpen (reads from memory) ─► records: GCE (transparent index) … first image ─► rows (de-interlaced) ─► palette ─► Image
/// ```
enum GIFCodec {
    /// An open decoder over `bytes` (closed when `body` returns).
    static func withDecoder<R>(_ bytes: [UInt8], path: String,
                               _ body: (UnsafeMutablePointer<GifFileType>) throws(CodecError) -> R) throws(CodecError) -> R {
        try bytes.withUnsafeBufferPointer { (raw) throws(CodecError) -> R in
            var source = granite_gif_source(data: raw.baseAddress, size: raw.count, offset: 0)
            return try withUnsafeMutablePointer(to: &source) { (src) throws(CodecError) -> R in
                var error: Int32 = 0
                guard let gif = granite_gif_open(src, &error) else {
                    throw .header(path: path, reason: "GIF header: \(message(error))")
                }
                defer { var e: Int32 = 0; DGifCloseFile(gif, &e) }
                return try body(gif)
            }
        }
    }

    static func message(_ code: Int32) -> String {
        GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
    }

    /// The logical screen's size (the frame's when the screen claims none).
    static func size(_ bytes: [UInt8], path: String) throws(CodecError) -> (width: Int, height: Int) {
        try withDecoder(bytes, path: path) { (gif) throws(CodecError) in
            let w = Int(gif.pointee.SWidth), h = Int(gif.pointee.SHeight)
            guard w > 0, h > 0 else { throw .header(path: path, reason: "GIF screen is \(w)x\(h)") }
            return (w, h)
        }
    }

    static func decode(_ bytes: [UInt8], path: String, options: DecodeOptions) throws(CodecError) -> Image {
        try withDecoder(bytes, path: path) { (gif) throws(CodecError) -> Image in
            let w = Int(gif.pointee.SWidth), h = Int(gif.pointee.SHeight)
            guard w > 0, h > 0, w * h <= options.maxPixels else {
                throw .header(path: path, reason: "GIF is \(w)x\(h), over the limit of \(options.maxPixels) pixels (or empty)")
            }
            var transparent = Int(granite_gif_no_transparent)
            while true {
                var record = UNDEFINED_RECORD_TYPE
                guard DGifGetRecordType(gif, &record) == GIF_OK else {
                    throw .decode(path: path, reason: "GIF data: \(message(gif.pointee.Error))")
                }
                switch record {
                case EXTENSION_RECORD_TYPE:
                    var code: Int32 = 0
                    var block: UnsafeMutablePointer<GifByteType>?
                    guard DGifGetExtension(gif, &code, &block) == GIF_OK else {
                        throw .decode(path: path, reason: "GIF extension: \(message(gif.pointee.Error))")
                    }
                    // Graphics control: length 4, flags (bit 0: transparency), delay, index.
                    if code == granite_gif_graphics_ext, let b = block, b[0] >= 4, b[1] & 1 != 0 { transparent = Int(b[4]) }
                    while block != nil {
                        guard DGifGetExtensionNext(gif, &block) == GIF_OK else {
                            throw .decode(path: path, reason: "GIF extension: \(message(gif.pointee.Error))")
                        }
                    }
                case IMAGE_DESC_RECORD_TYPE:
                    return try firstFrame(gif, width: w, height: h, transparent: transparent, path: path)
                case TERMINATE_RECORD_TYPE:
                    throw .decode(path: path, reason: "GIF has no image")
                default:
                    throw .decode(path: path, reason: "GIF record type \(record.rawValue) is not valid here")
                }
            }
        }
    }

    static func firstFrame(_ gif: UnsafeMutablePointer<GifFileType>, width w: Int, height h: Int, transparent: Int,
                           path: String) throws(CodecError) -> Image {
        guard DGifGetImageDesc(gif) == GIF_OK else { throw .decode(path: path, reason: "GIF image: \(message(gif.pointee.Error))") }
        let desc = gif.pointee.Image
        let fx = Int(desc.Left), fy = Int(desc.Top), fw = Int(desc.Width), fh = Int(desc.Height)
        guard fw > 0, fh > 0, fw <= 65535, fh <= 65535 else { throw .decode(path: path, reason: "GIF frame is \(fw)x\(fh)") }
        guard let map = desc.ColorMap ?? gif.pointee.SColorMap, let colors = map.pointee.Colors else {
            throw .decode(path: path, reason: "GIF has no colour map")
        }
        let count = Int(map.pointee.ColorCount)
        var palette = [UInt8](repeating: 0, count: 256 * 4)
        for i in 0..<min(count, 256) {
            let c = colors[i]
            palette.replaceSubrange(i * 4..<i * 4 + 4, with: [c.Red, c.Green, c.Blue, i == transparent ? 0 : 255])
        }
        if (0..<256).contains(transparent) { palette[transparent * 4 + 3] = 0 }
        // Rows in file order: interlaced GIFs store every 8th row from 0, from 4, every 4th from 2, every 2nd from 1.
        let order: [Int] = desc.Interlace
            ? [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { stride(from: $0.0, to: fh, by: $0.1) }
            : Array(0..<fh)
        var out = [UInt8](repeating: 0, count: w * h * 4)
        var line = [GifPixelType](repeating: 0, count: fw)
        for row in order {
            guard DGifGetLine(gif, &line, Int32(fw)) == GIF_OK else {
                throw .decode(path: path, reason: "GIF data: \(message(gif.pointee.Error))")
            }
            let y = fy + row
            guard y < h else { continue }
            for x in 0..<fw where fx + x < w {
                let p = Int(line[x]) * 4, d = (y * w + fx + x) * 4
                out[d] = palette[p]; out[d + 1] = palette[p + 1]; out[d + 2] = palette[p + 2]; out[d + 3] = palette[p + 3]
            }
        }
        return try! Image(width: w, height: h, format: .rgba8, bytes: out)
    }
}

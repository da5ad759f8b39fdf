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

    /// The first frame.
    static func decode(_ bytes: [UInt8], path: String, options: DecodeOptions) throws(CodecError) -> Image {
        try frames(bytes, path: path, options: options, limit: 1)[0].image
    }

    /// Up to `limit` frames, each the canvas as it shows: frames drawn in turn (their transparent
    /// index leaves the canvas as it was), then disposed of as their graphics control says
    /// (2: cleared to transparent, 3: the canvas restored). A delay under 2/100 s shows for 100 ms,
    /// as browsers do. All frames together hold at most `options.maxPixels` pixels.
    static func frames(_ bytes: [UInt8], path: String, options: DecodeOptions, limit: Int = .max) throws(CodecError) -> [AnimationFrame] {
        try withDecoder(bytes, path: path) { (gif) throws(CodecError) -> [AnimationFrame] in
            let w = Int(gif.pointee.SWidth), h = Int(gif.pointee.SHeight)
            guard w > 0, h > 0, w * h <= options.maxPixels else {
                throw .header(path: path, reason: "GIF is \(w)x\(h), over the limit of \(options.maxPixels) pixels (or empty)")
            }
            var canvas = [UInt8](repeating: 0, count: w * h * 4)
            var frames = [AnimationFrame]()
            var transparent = Int(granite_gif_no_transparent), disposal = 0, delay = 0
            while frames.count < limit {
                var record = UNDEFINED_RECORD_TYPE
                guard DGifGetRecordType(gif, &record) == GIF_OK else {
                    if !frames.isEmpty { break }  // a damaged tail after whole frames: keep those
                    throw .decode(path: path, reason: "GIF data: \(message(gif.pointee.Error))")
                }
                switch record {
                case EXTENSION_RECORD_TYPE:
                    var code: Int32 = 0
                    var block: UnsafeMutablePointer<GifByteType>?
                    guard DGifGetExtension(gif, &code, &block) == GIF_OK else {
                        throw .decode(path: path, reason: "GIF extension: \(message(gif.pointee.Error))")
                    }
                    // Graphics control: length 4, flags (disposal in bits 2-4, bit 0: transparency), delay, index.
                    if code == granite_gif_graphics_ext, let b = block, b[0] >= 4 {
                        disposal = Int(b[1] >> 2 & 7)
                        delay = Int(b[2]) | Int(b[3]) << 8
                        transparent = b[1] & 1 != 0 ? Int(b[4]) : Int(granite_gif_no_transparent)
                    }
                    while block != nil {
                        guard DGifGetExtensionNext(gif, &block) == GIF_OK else {
                            throw .decode(path: path, reason: "GIF extension: \(message(gif.pointee.Error))")
                        }
                    }
                case IMAGE_DESC_RECORD_TYPE:
                    guard (frames.count + 1) * w * h <= options.maxPixels else {
                        throw .header(path: path, reason: "GIF animation is over the limit of \(options.maxPixels) pixels (\(frames.count + 1) frames of \(w)x\(h))")
                    }
                    let saved = disposal == 3 ? canvas : nil
                    let rect = try drawFrame(gif, onto: &canvas, width: w, height: h, transparent: transparent, path: path)
                    frames.append(AnimationFrame(image: try! Image(width: w, height: h, format: .rgba8, bytes: canvas),
                                                 durationMs: delay < 2 ? 100 : delay * 10))
                    if let saved { canvas = saved }
                    if disposal == 2 {
                        for y in rect.y..<rect.y + rect.height { for x in rect.x..<rect.x + rect.width { for c in 0..<4 { canvas[(y * w + x) * 4 + c] = 0 } } }
                    }
                    transparent = Int(granite_gif_no_transparent); disposal = 0; delay = 0
                case TERMINATE_RECORD_TYPE:
                    guard !frames.isEmpty else { throw .decode(path: path, reason: "GIF has no image") }
                    return frames
                default:
                    throw .decode(path: path, reason: "GIF record type \(record.rawValue) is not valid here")
                }
            }
            return frames
        }
    }

    /// Reads the next image's rows and draws them onto `canvas`; returns the part of the canvas it covers.
    static func drawFrame(_ gif: UnsafeMutablePointer<GifFileType>, onto canvas: inout [UInt8], width w: Int, height h: Int,
                          transparent: Int, path: String) throws(CodecError) -> (x: Int, y: Int, width: Int, height: Int) {
        guard DGifGetImageDesc(gif) == GIF_OK else { throw .decode(path: path, reason: "GIF image: \(message(gif.pointee.Error))") }
        let desc = gif.pointee.Image
        let fx = Int(desc.Left), fy = Int(desc.Top), fw = Int(desc.Width), fh = Int(desc.Height)
        guard fw > 0, fh > 0, fw <= 65535, fh <= 65535 else { throw .decode(path: path, reason: "GIF frame is \(fw)x\(fh)") }
        guard let map = desc.ColorMap ?? gif.pointee.SColorMap, let colors = map.pointee.Colors else {
            throw .decode(path: path, reason: "GIF has no colour map")
        }
        var palette = [UInt8](repeating: 0, count: 256 * 3)
        for i in 0..<min(Int(map.pointee.ColorCount), 256) {
            let c = colors[i]
            palette[i * 3] = c.Red; palette[i * 3 + 1] = c.Green; palette[i * 3 + 2] = c.Blue
        }
        // Rows in file order: interlaced GIFs store every 8th row from 0, from 4, every 4th from 2, every 2nd from 1.
        let order: [Int] = desc.Interlace
            ? [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { stride(from: $0.0, to: fh, by: $0.1) }
            : Array(0..<fh)
        var line = [GifPixelType](repeating: 0, count: fw)
        for row in order {
            guard DGifGetLine(gif, &line, Int32(fw)) == GIF_OK else {
                throw .decode(path: path, reason: "GIF data: \(message(gif.pointee.Error))")
            }
            let y = fy + row
            guard y < h else { continue }
            for x in 0..<fw where fx + x < w && Int(line[x]) != transparent {
                let p = Int(line[x]) * 3, d = (y * w + fx + x) * 4
                canvas[d] = palette[p]; canvas[d + 1] = palette[p + 1]; canvas[d + 2] = palette[p + 2]; canvas[d + 3] = 255
            }
        }
        let cw = max(0, min(fw, w - fx)), ch = max(0, min(fh, h - fy))
        return (min(fx, w), min(fy, h), cw, ch)
    }

    /// The XMP packet and the comments of a GIF. The XMP packet is the "XMP DataXMP" application
    /// extension's, stored raw (its bytes read as sub-block lengths; a 258-byte "magic trailer"
    /// brings any such walk to the terminator). Each comment extension (before, between or after
    /// the frames) is one comment, its sub-blocks joined. Blocks are walked bounds-checked up to
    /// the trailer or the first damage; a comment cut short by the end of the file is reported.
    static func metadata(_ b: [UInt8]) -> (metadata: ImageMetadata, problems: [ImageMetadata.Problem]) {
        var out = ImageMetadata()
        guard b.count >= 13 else { return (out, []) }
        var i = 13
        if b[10] & 0x80 != 0 { i += 3 << (Int(b[10] & 7) + 1) }
        /// The sub-blocks from `j`: where their terminator is.
        func terminator(_ j: Int) -> Int? {
            var k = j
            while k < b.count {
                if b[k] == 0 { return k }
                k += 1 + Int(b[k])
            }
            return nil
        }
        let signature = Array("XMP DataXMP".utf8)
        while i < b.count {
            switch b[i] {
            case 0x21:
                guard i + 2 < b.count else { return (out, []) }
                let start = i + 3 + Int(b[i + 2])
                if b[i + 1] == 0xFF, b[i + 2] == 11, start <= b.count, b[i + 3..<start].elementsEqual(signature) {
                    guard let end = terminator(start) else { return (out, []) }
                    out.xmp = XMPPacket.cut(Array(b[start..<end]))
                    i = end + 1
                } else if b[i + 1] == 0xFE {
                    var comment = [UInt8](), k = i + 2
                    while k < b.count, b[k] != 0, k + 1 + Int(b[k]) <= b.count {
                        comment += b[(k + 1)...(k + Int(b[k]))]
                        k += 1 + Int(b[k])
                    }
                    guard k < b.count, b[k] == 0 else {
                        let length = k < b.count ? 1 + Int(b[k]) : 1
                        let error = MetadataError.outOfBounds(what: "GIF comment sub-block", offset: k, length: length, size: b.count)
                        return (out, [ImageMetadata.Problem(kind: .comment, error: error)])
                    }
                    out.comments.append(comment)
                    i = k + 1
                } else {
                    guard let end = terminator(i + 2) else { return (out, []) }
                    i = end + 1
                }
            case 0x2C:
                guard i + 10 <= b.count else { return (out, []) }
                var j = i + 10
                if b[i + 9] & 0x80 != 0 { j += 3 << (Int(b[i + 9] & 7) + 1) }
                guard let end = terminator(j + 1) else { return (out, []) }  // after the LZW code size
                i = end + 1
            default:
                return (out, [])  // the trailer (0x3B), or damage
            }
        }
        return (out, [])
    }
}

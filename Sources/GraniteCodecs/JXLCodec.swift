#if canImport(Glibc)
import Glibc
#endif
import CJXL
import GraniteMedia

/// JPEG XL through libjxl: the first frame read as 8-bit RGBA (orientation applied by libjxl
/// unless asked not to), and 8-bit RGB(A) or gray written, lossy at a distance from `quality`
/// (lossless at 100), with the ICC profile, Exif and XMP (as `Exif` and `xml ` boxes).
///
/// ```
/// read:  bytes ─► JxlDecoder (basic info: size check) ─► RGBA8 buffer ─► first full frame ─► Image
/// write: Image ─► basic info, sRGB or ICC ─► frame (distance | lossless) ─► boxes ─► bytes
/// ```
enum JXLCodec {
    /// Interleaved 8-bit samples, `channels` a pixel.
    static func format(_ channels: UInt32) -> JxlPixelFormat {
        JxlPixelFormat(num_channels: channels, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
    }

    /// Runs the decoder over `bytes` up to the basic info (and, with `pixels`, the first frame).
    static func run(_ bytes: [UInt8], path: String, options: DecodeOptions, pixels: Bool) throws(CodecError) -> (width: Int, height: Int, rgba: [UInt8]) {
        guard let dec = JxlDecoderCreate(nil) else { throw .header(path: path, reason: "JPEG XL: libjxl could not create a decoder") }
        defer { JxlDecoderDestroy(dec) }
        let events = Int32(JXL_DEC_BASIC_INFO.rawValue | (pixels ? JXL_DEC_FULL_IMAGE.rawValue : 0))
        guard JxlDecoderSubscribeEvents(dec, events) == JXL_DEC_SUCCESS,
              JxlDecoderSetKeepOrientation(dec, options.applyEXIFOrientation ? granite_jxl_false : granite_jxl_true) == JXL_DEC_SUCCESS else {
            throw .header(path: path, reason: "JPEG XL: decoder setup refused")
        }
        return try bytes.withUnsafeBufferPointer { (raw) throws(CodecError) -> (width: Int, height: Int, rgba: [UInt8]) in
            guard JxlDecoderSetInput(dec, raw.baseAddress, raw.count) == JXL_DEC_SUCCESS else {
                throw .header(path: path, reason: "JPEG XL: input refused")
            }
            JxlDecoderCloseInput(dec)
            var w = 0, h = 0
            var out = [UInt8]()
            var pf = format(4)
            while true {
                let status = JxlDecoderProcessInput(dec)
                switch status {
                case JXL_DEC_BASIC_INFO:
                    var info = JxlBasicInfo()
                    guard JxlDecoderGetBasicInfo(dec, &info) == JXL_DEC_SUCCESS else { throw .header(path: path, reason: "JPEG XL: no basic info") }
                    w = Int(info.xsize); h = Int(info.ysize)
                    guard w > 0, h > 0, w * h <= options.maxPixels else {
                        throw .header(path: path, reason: "JPEG XL is \(w)x\(h), over the limit of \(options.maxPixels) pixels")
                    }
                    // Orientations 5-8 swap the sides of the upright image.
                    if options.applyEXIFOrientation, info.orientation.rawValue >= 5 { swap(&w, &h) }
                    if !pixels { return (w, h, []) }
                case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                    var size = 0
                    guard JxlDecoderImageOutBufferSize(dec, &pf, &size) == JXL_DEC_SUCCESS, size == w * h * 4 else {
                        throw .decode(path: path, reason: "JPEG XL: unexpected output size")
                    }
                    out = [UInt8](repeating: 0, count: size)
                    let set = out.withUnsafeMutableBytes { JxlDecoderSetImageOutBuffer(dec, &pf, $0.baseAddress, $0.count) }
                    guard set == JXL_DEC_SUCCESS else { throw .decode(path: path, reason: "JPEG XL: output buffer refused") }
                case JXL_DEC_FULL_IMAGE, JXL_DEC_SUCCESS:
                    guard !out.isEmpty else { throw .decode(path: path, reason: "JPEG XL has no frame") }
                    return (w, h, out)
                case JXL_DEC_NEED_MORE_INPUT:
                    throw w == 0 ? .header(path: path, reason: "JPEG XL header is truncated") : .decode(path: path, reason: "JPEG XL is truncated")
                case JXL_DEC_ERROR:
                    throw w == 0 ? .header(path: path, reason: "JPEG XL header is invalid") : .decode(path: path, reason: "JPEG XL data is invalid")
                default:
                    throw .decode(path: path, reason: "JPEG XL: unexpected decoder status \(status.rawValue)")
                }
            }
        }
    }

    static func size(_ bytes: [UInt8], path: String, options: DecodeOptions) throws(CodecError) -> (width: Int, height: Int) {
        let r = try run(bytes, path: path, options: options, pixels: false)
        return (r.width, r.height)
    }

    static func decode(_ bytes: [UInt8], path: String, options: DecodeOptions) throws(CodecError) -> Image {
        let r = try run(bytes, path: path, options: options, pixels: true)
        return try! Image(width: r.width, height: r.height, format: .rgba8, bytes: r.rgba)
    }

    /// libjxl's distance for a 1-99 quality, as `cjxl -q` maps it (q 90 → 1.0, "visually lossless").
    static func distance(quality: Int) -> Float {
        quality >= 30 ? 0.1 + Float(100 - quality) * 0.09 : 6.4 + Float(pow(2.5, Double(30 - quality) / 5)) / 6.25
    }

    static func encode(_ image: Image, quality: Int, metadata: ImageMetadata, path: String) throws(CodecError) -> [UInt8] {
        guard (1...100).contains(quality) else { throw .encode(path: path, reason: "JPEG XL quality \(quality) is not in 1...100") }
        let channels: UInt32, source: Image
        switch image.format {
        case .gray8: (channels, source) = (1, image)
        case .rgb24: (channels, source) = (3, image)
        case .rgba8: (channels, source) = image.isOpaque ? (3, TIFFCodec.dropAlpha(image)) : (4, image)
        default: throw .encode(path: path, reason: "JPEG XL cannot hold pixel format \(image.format)")
        }
        guard let enc = JxlEncoderCreate(nil) else { throw .encode(path: path, reason: "JPEG XL: libjxl could not create an encoder") }
        defer { JxlEncoderDestroy(enc) }
        let lossless = quality == 100
        var info = JxlBasicInfo()
        JxlEncoderInitBasicInfo(&info)
        info.xsize = UInt32(source.width)
        info.ysize = UInt32(source.height)
        info.bits_per_sample = 8
        info.num_color_channels = channels == 1 ? 1 : 3
        info.num_extra_channels = channels == 4 ? 1 : 0
        info.alpha_bits = channels == 4 ? 8 : 0
        info.uses_original_profile = lossless ? granite_jxl_true : granite_jxl_false
        func check(_ status: JxlEncoderStatus, _ what: String) throws(CodecError) {
            guard status == JXL_ENC_SUCCESS else { throw .encode(path: path, reason: "JPEG XL: \(what) refused") }
        }
        if metadata.exif != nil || metadata.xmp != nil { try check(JxlEncoderUseBoxes(enc), "boxes") }
        try check(JxlEncoderSetBasicInfo(enc, &info), "basic info")
        if let icc = metadata.icc, (try? ICCProfile.parse(icc))?.colorSpace == (channels == 1 ? "GRAY" : "RGB") {
            try check(icc.withUnsafeBufferPointer { JxlEncoderSetICCProfile(enc, $0.baseAddress, $0.count) }, "ICC profile")
        } else {
            var color = JxlColorEncoding()
            JxlColorEncodingSetToSRGB(&color, channels == 1 ? granite_jxl_true : granite_jxl_false)
            try check(JxlEncoderSetColorEncoding(enc, &color), "sRGB colour encoding")
        }
        guard let settings = JxlEncoderFrameSettingsCreate(enc, nil) else { throw .encode(path: path, reason: "JPEG XL: no frame settings") }
        // Effort 3 (of 1-9): libjxl's default 7 is several times slower for a few percent.
        try check(JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, 3), "effort")
        if lossless {
            try check(JxlEncoderSetFrameLossless(settings, granite_jxl_true), "lossless")
        } else {
            try check(JxlEncoderSetFrameDistance(settings, distance(quality: quality)), "distance")
        }
        var pf = format(channels)
        try check(source.bytes.withUnsafeBytes { JxlEncoderAddImageFrame(settings, &pf, $0.baseAddress, $0.count) }, "frame")
        // Exif boxes start with the offset of the TIFF header after this field (0 here).
        for (type, data) in [("Exif", metadata.exif.map { [0, 0, 0, 0] + $0 }), ("xml ", metadata.xmp)] {
            guard let data else { continue }
            let box = type.utf8.map { CChar(bitPattern: $0) }
            try check(data.withUnsafeBufferPointer { JxlEncoderAddBox(enc, box, $0.baseAddress, $0.count, granite_jxl_false) }, "\(type) box")
        }
        JxlEncoderCloseInput(enc)
        var out = [UInt8](repeating: 0, count: 64 * 1024)
        var used = 0
        while true {
            var avail = out.count - used
            let status = out.withUnsafeMutableBufferPointer { (buf) -> JxlEncoderStatus in
                var next: UnsafeMutablePointer<UInt8>? = buf.baseAddress! + used
                let s = JxlEncoderProcessOutput(enc, &next, &avail)
                used = next! - buf.baseAddress!
                return s
            }
            if status == JXL_ENC_NEED_MORE_OUTPUT {
                out += [UInt8](repeating: 0, count: out.count)
                continue
            }
            try check(status, "encoding")
            return Array(out[..<used])
        }
    }

    /// The ICC profile of the pixels ``decode(_:path:options:)`` returns (libjxl's profile of its
    /// output: the file's own profile for a lossless image, the space it renders an XYB image
    /// into otherwise), so an image in Display P3 or linear light keeps saying so; nil when those
    /// pixels are sRGB (no profile needed), gray, or the header cannot be read.
    static func pixelProfile(_ bytes: [UInt8]) -> [UInt8]? {
        guard let dec = JxlDecoderCreate(nil) else { return nil }
        defer { JxlDecoderDestroy(dec) }
        guard JxlDecoderSubscribeEvents(dec, Int32(JXL_DEC_COLOR_ENCODING.rawValue)) == JXL_DEC_SUCCESS else { return nil }
        return bytes.withUnsafeBufferPointer { raw -> [UInt8]? in
            guard JxlDecoderSetInput(dec, raw.baseAddress, raw.count) == JXL_DEC_SUCCESS else { return nil }
            JxlDecoderCloseInput(dec)
            guard JxlDecoderProcessInput(dec) == JXL_DEC_COLOR_ENCODING else { return nil }
            var encoding = JxlColorEncoding()
            if JxlDecoderGetColorAsEncodedProfile(dec, nil, JXL_COLOR_PROFILE_TARGET_DATA, &encoding) == JXL_DEC_SUCCESS,
               encoding.color_space == JXL_COLOR_SPACE_RGB, encoding.white_point == JXL_WHITE_POINT_D65,
               encoding.primaries == JXL_PRIMARIES_SRGB, encoding.transfer_function == JXL_TRANSFER_FUNCTION_SRGB {
                return nil
            }
            var size = 0
            guard JxlDecoderGetICCProfileSize(dec, nil, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS, size > 0 else { return nil }
            var icc = [UInt8](repeating: 0, count: size)
            let got = icc.withUnsafeMutableBufferPointer { JxlDecoderGetColorAsICCProfile(dec, nil, JXL_COLOR_PROFILE_TARGET_DATA, $0.baseAddress, size) }
            // The decoder's pixels are RGBA: a gray profile would not describe them.
            guard got == JXL_DEC_SUCCESS, (try? ICCProfile.parse(icc))?.colorSpace == "RGB" else { return nil }
            return icc
        }
    }

    /// The container's signature box (a bare codestream, `FF 0A`, holds no metadata).
    static let containerSignature: [UInt8] = [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]

    /// The ICC profile of the decoded pixels (``pixelProfile(_:)``), and the Exif (`Exif` box,
    /// after its 4-byte offset field, or from its start when a writer left that field out, as
    /// pillow-jxl-plugin does) and XMP (`xml ` box) of a JPEG XL container, read from its
    /// top-level boxes (bounds-checked; brotli-compressed `brob` boxes are not read).
    static func metadata(_ b: [UInt8]) -> ImageMetadata {
        var out = ImageMetadata()
        out.icc = pixelProfile(b)
        guard b.starts(with: containerSignature) else { return out }
        func be(_ at: Int, _ n: Int) -> Int { b[at..<at + n].reduce(0) { $0 << 8 | Int($1) } }
        var i = 0
        while i + 8 <= b.count {
            var size = be(i, 4), header = 8
            if size == 1 {
                guard i + 16 <= b.count, b[i + 8] == 0, b[i + 9] == 0 else { break }
                size = be(i + 8, 8)
                header = 16
            } else if size == 0 {
                size = b.count - i
            }
            guard size >= header, size <= b.count - i else { break }
            let type = String(decoding: b[i + 4..<i + 8], as: UTF8.self)
            let payload = i + header..<i + size
            if type == "Exif", payload.count >= 4 {
                let skip = be(payload.lowerBound, 4)
                let tiff = b[payload.lowerBound..<payload.lowerBound + 4]
                if tiff.elementsEqual([0x49, 0x49, 0x2A, 0]) || tiff.elementsEqual([0x4D, 0x4D, 0, 0x2A]) {
                    out.exif = Array(b[payload])  // no offset field (as some writers leave it out)
                } else if skip <= payload.count - 4 {
                    out.exif = Array(b[payload.lowerBound + 4 + skip..<payload.upperBound])
                }
            } else if type == "xml " {
                out.xmp = Array(b[payload])
            }
            i += size
        }
        return out
    }
}

import CTurboJPEG
import GraniteMedia

/// JPEG through TurboJPEG's handle API: errors come back as return codes, never as longjmp.
enum JPEGCodec {
    struct Header {
        var width: Int
        var height: Int
        var colorspace: Int32
        /// TurboJPEG's `TJSAMP` of the file.
        var subsampling: Int32
    }

    /// A TurboJPEG handle, destroyed when the scope ends.
    static func withHandle<R>(compress: Bool, _ path: String, phase: (String, String) -> CodecError,
                              _ body: (tjhandle) throws(CodecError) -> R) throws(CodecError) -> R {
        guard let handle = compress ? tjInitCompress() : tjInitDecompress() else {
            throw phase(path, "cannot create a TurboJPEG handle: \(String(cString: tjGetErrorStr2(nil)))")
        }
        defer { tjDestroy(handle) }
        return try body(handle)
    }

    static func message(_ handle: tjhandle) -> String {
        String(cString: tjGetErrorStr2(handle))
    }

    /// Whether TurboJPEG's last failure on `handle` was a libjpeg warning (the call still finished).
    static func isWarning(_ handle: tjhandle) -> Bool {
        tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue)
    }

    /// The header; a libjpeg warning met on the way (extraneous bytes before a marker) goes to
    /// `warnings`, or is thrown when `failOn` says so.
    static func header(_ bytes: [UInt8], path: String, handle: tjhandle, failOn: FailOn = .none,
                       warnings: inout [String]) throws(CodecError) -> Header {
        var w: Int32 = 0, h: Int32 = 0, samp: Int32 = 0, cs: Int32 = 0
        let rc = bytes.withUnsafeBufferPointer { buf in
            tjDecompressHeader3(handle, buf.baseAddress, UInt(buf.count), &w, &h, &samp, &cs)
        }
        if rc != 0 {
            guard isWarning(handle), w > 0, h > 0 else { throw .header(path: path, reason: "JPEG header: \(message(handle))") }
            // libjpeg's own text ("Corrupt JPEG data: ..."); the full decode meets it again and adds it once.
            try failOn.check(message(handle), truncated: false, path: path, into: &warnings)
        }
        guard w > 0, h > 0 else { throw .header(path: path, reason: "JPEG header gives size \(w)x\(h)") }
        return Header(width: Int(w), height: Int(h), colorspace: cs, subsampling: samp)
    }

    /// Whether the file ends before its end-of-image marker. Entropy-coded data never holds
    /// `FF D9` (a data byte FF is always followed by 00), so the marker anywhere after the headers
    /// means the scans are complete; what follows it (camera trailers) does not matter.
    static func isTruncated(_ b: [UInt8]) -> Bool {
        let scan = ImageMetadata.jpegSegments(b).last?.payload.upperBound ?? 2
        var i = b.count - 2
        while i >= scan {
            if b[i] == 0xFF, b[i + 1] == 0xD9 { return false }
            i -= 1
        }
        return true
    }

    /// The largest DCT reduction (1/8, 1/4, 3/8, 1/2...) keeping the image at least `minimum` big.
    static func scalingFactor(width: Int, height: Int, minimum: (width: Int, height: Int)?) -> tjscalingfactor {
        let one = tjscalingfactor(num: 1, denom: 1)
        guard let minimum else { return one }
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count) else { return one }
        var best = one
        var bestWidth = width
        for i in 0..<Int(count) {
            let f = factors[i]
            guard f.num <= f.denom else { continue }  // never upscale in the decoder
            let sw = Int(granite_tjScaled(Int32(width), f)), sh = Int(granite_tjScaled(Int32(height), f))
            if sw >= minimum.width, sh >= minimum.height, sw < bestWidth {
                best = f
                bestWidth = sw
            }
        }
        return best
    }

    /// Decodes upright (`orientation` applied), at the smallest DCT scale `options.minimumSize`
    /// allows; libjpeg's warnings and truncation go to `warnings` unless `options.failOn` stops them.
    static func decode(_ bytes: [UInt8], path: String, options: DecodeOptions, orientation: EXIFOrientation,
                       warnings: inout [String]) throws(CodecError) -> Image {
        try withHandle(compress: false, path, phase: CodecError.header) { (handle) throws(CodecError) -> Image in
            let head = try header(bytes, path: path, handle: handle, failOn: options.failOn, warnings: &warnings)
            try checkLimit(head, path: path, options: options)
            var minimum = options.minimumSize
            if orientation.swapsAxes, let m = minimum { minimum = (m.height, m.width) }
            let factor = scalingFactor(width: head.width, height: head.height, minimum: minimum)
            let w = Int(granite_tjScaled(Int32(head.width), factor))
            let h = Int(granite_tjScaled(Int32(head.height), factor))

            let gray = head.colorspace == Int32(TJCS_GRAY.rawValue)
            let cmyk = head.colorspace == Int32(TJCS_CMYK.rawValue) || head.colorspace == Int32(TJCS_YCCK.rawValue)
            let (pixelFormat, channels): (TJPF, Int) =
                cmyk ? (TJPF_CMYK, 4) : (gray && options.keepGray) ? (TJPF_GRAY, 1) : (TJPF_RGBA, 4)
            var out = [UInt8](unsafeUninitializedCapacity: w * h * channels) { _, n in n = w * h * channels }
            try decompress(bytes, path: path, handle: handle, options: options, warnings: &warnings) {
                bytes.withUnsafeBufferPointer { src in
                    out.withUnsafeMutableBufferPointer { dst in
                        tjDecompress2(handle, src.baseAddress, UInt(src.count), dst.baseAddress,
                                      Int32(w), Int32(w * channels), Int32(h), Int32(pixelFormat.rawValue),
                                      granite_tjflag_limitScans)
                    }
                }
            }
            if cmyk { out = cmykToRGBA(out, inverted: hasAdobeMarker(bytes)) }
            let format: PixelFormat = channels == 1 ? .gray8 : .rgba8
            let image: Image
            do { image = try Image(width: w, height: h, format: format, bytes: out) } catch {
                throw .decode(path: path, reason: "\(error)")
            }
            return image.applying(orientation)
        }
    }

    /// Refuses a header over `options.maxPixels` (a decompression bomb).
    static func checkLimit(_ head: Header, path: String, options: DecodeOptions) throws(CodecError) {
        let pixels = head.width.multipliedReportingOverflow(by: head.height)
        guard !pixels.overflow, pixels.partialValue <= options.maxPixels else {
            throw .header(path: path, reason: "JPEG is \(head.width)x\(head.height), over the limit of \(options.maxPixels) pixels")
        }
    }

    /// Runs a TurboJPEG decompression `call` on `bytes`: truncation (told by the bytes, before any
    /// pixel is decoded: TurboJPEG keeps only the first warning's text) and libjpeg's warnings go
    /// to `warnings`, or are thrown when `options.failOn` says so; a missing row is gray.
    static func decompress(_ bytes: [UInt8], path: String, handle: tjhandle, options: DecodeOptions,
                           warnings: inout [String], _ call: () -> Int32) throws(CodecError) {
        let truncated = isTruncated(bytes)
        if truncated {
            try options.failOn.check("JPEG is truncated: no end-of-image marker (missing rows are gray)",
                                     truncated: true, path: path, into: &warnings)
        }
        guard call() != 0 else { return }
        guard isWarning(handle) else { throw .decode(path: path, reason: "JPEG data: \(message(handle))") }
        let text = message(handle)
        if !(truncated && text.hasPrefix("Premature end")) {
            try options.failOn.check(text, truncated: false, path: path, into: &warnings)
        }
    }

    /// CMYK (or YCCK, which TurboJPEG turns into CMYK) to RGBA; Adobe files store the inks inverted.
    static func cmykToRGBA(_ cmyk: [UInt8], inverted: Bool) -> [UInt8] {
        var rgba = cmyk
        rgba.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i < p.count {
                var c = Int(p[i]), m = Int(p[i + 1]), y = Int(p[i + 2]), k = Int(p[i + 3])
                if !inverted { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k }
                // Now each value is "amount of paper showing": 255 means no ink.
                p[i] = UInt8((c * k + 127) / 255)
                p[i + 1] = UInt8((m * k + 127) / 255)
                p[i + 2] = UInt8((y * k + 127) / 255)
                p[i + 3] = 255
                i += 4
            }
        }
        return rgba
    }

    /// Whether the JPEG carries an Adobe APP14 segment (Photoshop writes CMYK inverted then).
    static func hasAdobeMarker(_ b: [UInt8]) -> Bool {
        var i = 2
        while i + 9 <= b.count, b[i] == 0xFF {
            let marker = b[i + 1]
            if marker == 0xDA || marker == 0xD9 { return false }
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            if marker == 0xEE, Array(b[i + 4..<i + 9]) == [0x41, 0x64, 0x6F, 0x62, 0x65] { return true }
            guard length >= 2 else { return false }
            i += 2 + length
        }
        return false
    }

    static func encode(_ image: Image, quality: Int, subsampling: ChromaSubsampling, progressive: Bool,
                       path: String) throws(CodecError) -> [UInt8] {
        guard (1...100).contains(quality) else { throw .encode(path: path, reason: "JPEG quality \(quality) is not in 1...100") }
        let (pf, samp): (TJPF, Int32)
        switch image.format {
        case .rgba8: (pf, samp) = (TJPF_RGBA, subsampling.tj)
        case .rgb24: (pf, samp) = (TJPF_RGB, subsampling.tj)
        case .gray8: (pf, samp) = (TJPF_GRAY, Int32(TJSAMP_GRAY.rawValue))
        default: throw .encode(path: path, reason: "JPEG cannot hold pixel format \(image.format)")
        }
        return try withHandle(compress: true, path, phase: CodecError.encode) { (handle) throws(CodecError) -> [UInt8] in
            var flags = granite_tjflag_accurateDCT
            if progressive { flags |= granite_tjflag_progressive }
            return try compressed(handle, path: path) { buffer, size in
                image.bytes.withUnsafeBufferPointer { src in
                    tjCompress2(handle, src.baseAddress, Int32(image.width), Int32(image.bytesPerRow),
                                Int32(image.height), Int32(pf.rawValue), buffer, size, samp, Int32(quality), flags)
                }
            }
        }
    }
}

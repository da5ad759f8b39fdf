import CTurboJPEG
import GraniteMedia

/// JPEG to resized JPEG without leaving YCbCr: the DCT-scaled decode gives the Y, Cb and Cr planes
/// (no upsampling of chroma, no colour conversion), each plane is resampled on its own to the
/// target size, and the encoder takes the planes as they are (no conversion back, no chroma
/// downsampling). Less work than going through RGB (the entropy decoding, most of the time, is the
/// same either way), and a quarter of the memory of an `rgba8`
/// image (4:2:0 planes are 1.5 bytes a pixel).
///
/// ```
/// JPEG ─► header: YCbCr, its subsampling = the output's? ─► tjDecompressToYUVPlanes (DCT scale)
///      ─► Y to W×H, Cb and Cr to the chroma planes' size (Lanczos, per plane) ─► edge padding
///      ─► tjCompressFromYUVPlanes ─► JPEG
/// ```
/// Resampling commutes with the (affine) YCbCr↔RGB conversion, so the result matches the RGB path
/// up to rounding; it only runs where nothing else needs RGB (see ``Codecs/transcodeJPEG``).
extension JPEGCodec {
    /// Y, Cb, Cr planes of a `width`×`height` image, in one buffer, each padded as TurboJPEG wants.
    struct Planes {
        let width: Int, height: Int
        let subsampling: Int32
        /// Each plane's padded width (its stride) and height.
        let widths: [Int], heights: [Int]
        let offsets: [Int]
        var bytes: [UInt8]

        init(width: Int, height: Int, subsampling: Int32) {
            self.width = width
            self.height = height
            self.subsampling = subsampling
            let w = Int32(width), h = Int32(height)
            widths = (0..<3).map { Int(tjPlaneWidth(Int32($0), w, subsampling)) }
            heights = (0..<3).map { Int(tjPlaneHeight(Int32($0), h, subsampling)) }
            offsets = [0, widths[0] * heights[0], widths[0] * heights[0] + widths[1] * heights[1]]
            let count = offsets[2] + widths[2] * heights[2]
            // Every byte is written by the decoder or the resampler before it is read.
            bytes = [UInt8](unsafeUninitializedCapacity: count) { _, n in n = count }
        }

        /// The width and height of plane `c` that hold image content (the rest is padding).
        func contentSize(_ c: Int) -> (width: Int, height: Int) {
            c == 0 ? (width, height) : (widths[c], heights[c])
        }

        /// The plane's content, tightly packed.
        func content(_ c: Int) -> [UInt8] {
            let (w, h) = contentSize(c)
            if w == widths[c], h == heights[c] { return Array(bytes[offsets[c]..<offsets[c] + w * h]) }
            var out = [UInt8]()
            out.reserveCapacity(w * h)
            for y in 0..<h { out += bytes[offsets[c] + y * widths[c]..<offsets[c] + y * widths[c] + w] }
            return out
        }

        /// Writes packed `rows` (the plane's content size) into plane `c`, repeating the last
        /// column and row into the padding.
        mutating func setContent(_ c: Int, _ rows: [UInt8]) {
            let (w, h) = contentSize(c)
            let stride = widths[c], base = offsets[c], padded = heights[c]
            bytes.withUnsafeMutableBufferPointer { dst in
                rows.withUnsafeBufferPointer { src in
                    for y in 0..<padded {
                        let sy = min(y, h - 1)
                        let row = base + y * stride
                        for x in 0..<w { dst[row + x] = src[sy * w + x] }
                        for x in w..<stride { dst[row + x] = src[sy * w + w - 1] }
                    }
                }
            }
        }

        /// The three planes' pointers and strides.
        mutating func withPlanes<R>(_ body: ([UnsafeMutablePointer<UInt8>?], [Int32]) -> R) -> R {
            let offsets = offsets, strides = widths.map(Int32.init)
            return bytes.withUnsafeMutableBufferPointer { b in
                body(offsets.map { b.baseAddress! + $0 }, strides)
            }
        }
    }

    /// `bytes` decoded, resized to `size` and encoded again through YCbCr planes, or nil when the
    /// file is not a 3-component YCbCr JPEG with the output's `subsampling` (the caller then takes
    /// the RGB path). Warnings and truncation are handled as ``decode(_:path:options:orientation:warnings:)`` does.
    static func transcode(_ bytes: [UInt8], path: String, options: DecodeOptions, size: (width: Int, height: Int),
                          filter: ResizeFilter, quality: Int, subsampling: ChromaSubsampling, progressive: Bool,
                          outputPath: String, warnings: inout [String]) throws(CodecError) -> [UInt8]? {
        guard (1...100).contains(quality) else { throw .encode(path: outputPath, reason: "JPEG quality \(quality) is not in 1...100") }
        let decoded = try withHandle(compress: false, path, phase: CodecError.header) { (handle) throws(CodecError) -> Planes? in
            var local = [String]()
            let head = try header(bytes, path: path, handle: handle, failOn: options.failOn, warnings: &local)
            guard head.colorspace == Int32(TJCS_YCbCr.rawValue), head.subsampling == subsampling.tj else { return nil }
            try checkLimit(head, path: path, options: options)
            let factor = scalingFactor(width: head.width, height: head.height, minimum: size)
            var planes = Planes(width: Int(granite_tjScaled(Int32(head.width), factor)), height: Int(granite_tjScaled(Int32(head.height), factor)),
                                subsampling: head.subsampling)
            let (w, h) = (Int32(planes.width), Int32(planes.height))
            try decompress(bytes, path: path, handle: handle, options: options, warnings: &local) {
                planes.withPlanes { pointers, strides in
                    var pointers = pointers, strides = strides
                    return bytes.withUnsafeBufferPointer { src in
                        tjDecompressToYUVPlanes(handle, src.baseAddress, UInt(src.count), &pointers, w, &strides, h, granite_tjflag_limitScans)
                    }
                }
            }
            warnings += local
            return planes
        }
        guard var planes = decoded else { return nil }
        if planes.width != size.width || planes.height != size.height {
            var out = Planes(width: size.width, height: size.height, subsampling: planes.subsampling)
            for c in 0..<3 {
                let from = planes.contentSize(c), to = out.contentSize(c)
                let xs = ResampleAxis(source: from.width, target: to.width, filter: filter)
                let ys = ResampleAxis(source: from.height, target: to.height, filter: filter)
                out.setContent(c, Resampler.resize8(planes.content(c), channels: 1, xs: xs, ys: ys))
            }
            planes = out
        }
        return try withHandle(compress: true, outputPath, phase: CodecError.encode) { (handle) throws(CodecError) -> [UInt8] in
            var flags = granite_tjflag_accurateDCT
            if progressive { flags |= granite_tjflag_progressive }
            let (w, h, samp) = (Int32(planes.width), Int32(planes.height), planes.subsampling)
            return try compressed(handle, path: outputPath) { buffer, size in
                planes.withPlanes { pointers, strides in
                    var sources = pointers.map { UnsafePointer<UInt8>($0) }
                    return tjCompressFromYUVPlanes(handle, &sources, w, strides, h, samp, buffer, size, Int32(quality), flags)
                }
            }
        }
    }

    /// The bytes of a TurboJPEG compression `call` makes into a buffer it allocates and grows
    /// itself (so memory follows the output's size, not the worst case), copied out and freed.
    static func compressed(_ handle: tjhandle, path: String,
                           _ call: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<UInt>) -> Int32)
        throws(CodecError) -> [UInt8] {
        var buffer: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let rc = call(&buffer, &size)
        defer { tjFree(buffer) }
        guard rc == 0, let buffer else { throw .encode(path: path, reason: "JPEG: \(message(handle))") }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(size)))
    }
}

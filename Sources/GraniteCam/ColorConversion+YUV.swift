import GraniteCapture
import GraniteMedia

/// The one RGB → YUV conversion of `granite-cam`'s outputs (the Y4M pipe and the V4L2 output):
/// BT.601, limited range — the inverse of ``ColorConversion/rgba(_:)``'s YUV decode, and what
/// ffmpeg assumes for YUV4MPEG2 and V4L2 streams that say nothing else.
///
/// 4:2:0 chroma is the mean of each 2×2 block (chroma sited between the luma samples: Y4M's
/// `C420jpeg`); 4:2:2 (YUYV) the mean of each horizontal pair. Odd edges repeat the last pixel.
extension ColorConversion {
    /// Whether the outputs take GraniteMedia's vectorised rows. Release builds do; debug builds
    /// (the binaries the tests and tiers run) take the scalar formulas, because Swift's SIMD types
    /// are not specialised without optimisation and run 5–20× slower than scalar code there. The
    /// tests check that both give the same bytes (`YUVPlanesTests`).
    #if DEBUG
    static let vectorised = false
    #else
    static let vectorised = true
    #endif

    /// Appends `image` as planar Y, U, V (4:2:0 when `subsampled`, else 4:4:4) to `out`
    /// (GraniteMedia's vectorised ``ColorConversion/planarYUV(_:subsampled:into:lumaStride:chromaStride:)`` in release builds).
    static func appendPlanarYUV(_ image: Image, subsampled: Bool, to out: inout [UInt8]) throws(MediaError) {
        out += yuv(try rgba(image), layout: subsampled ? .i420 : .planar444, vectorised: vectorised)
    }

    /// The bytes ``pack(_:as:bytesPerLine:into:)`` writes for a `width`×`height` frame.
    static func packedByteCount(width w: Int, height h: Int, as format: VideoOutputFormat, bytesPerLine: Int = 0) -> Int {
        if let layout = V4L2OutputSink.layout(format, bytesPerLine: bytesPerLine) { return layout.byteCount(width: w, height: h) }
        return max(bytesPerLine, format.minimumBytesPerLine(width: w)) * h
    }

    /// `image` in a V4L2 output's pixel layout, rows `bytesPerLine` apart (0: packed).
    static func packed(_ image: Image, as format: VideoOutputFormat, bytesPerLine: Int = 0) throws(MediaError) -> [UInt8] {
        let rgba = try rgba(image)
        let count = packedByteCount(width: rgba.width, height: rgba.height, as: format, bytesPerLine: bytesPerLine)
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialised in
            pack(rgba, as: format, bytesPerLine: bytesPerLine, into: UnsafeMutableRawBufferPointer(buffer))
            initialised = count
        }
    }

    /// Writes `rgba` (`rgba8`) into `out` (``packedByteCount(width:height:as:bytesPerLine:)``
    /// bytes, e.g. a device's mmap buffer) in a V4L2 output's layout, rows `bytesPerLine` apart
    /// (0: packed); padding bytes are zero. Every byte is set.
    static func pack(_ rgba: Image, as format: VideoOutputFormat, bytesPerLine: Int, into out: UnsafeMutableRawBufferPointer) {
        precondition(rgba.format == .rgba8)
        let w = rgba.width, h = rgba.height
        precondition(out.count >= packedByteCount(width: w, height: h, as: format, bytesPerLine: bytesPerLine))
        let base = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
        if let layout = V4L2OutputSink.layout(format, bytesPerLine: bytesPerLine) {
            yuv(rgba, layout: layout, into: base, vectorised: vectorised)
            return
        }
        switch format {
        case .yu12, .yuyv:
            preconditionFailure("YUV formats are written above")
        case .rgb24, .bgr24:
            let row = max(bytesPerLine, format.minimumBytesPerLine(width: w))
            if row > format.minimumBytesPerLine(width: w) { out.initializeMemory(as: UInt8.self, repeating: 0) }
            let (first, last) = format == .rgb24 ? (0, 2) : (2, 0)
            rgba.bytes.withUnsafeBufferPointer { src in
                for yy in 0..<h {
                    let s = yy * w * 4, d = yy * row
                    for x in 0..<w {
                        base[d + x * 3] = src[s + x * 4 + first]
                        base[d + x * 3 + 1] = src[s + x * 4 + 1]
                        base[d + x * 3 + 2] = src[s + x * 4 + last]
                    }
                }
            }
        }
    }
}

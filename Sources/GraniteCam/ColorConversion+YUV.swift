import GraniteCapture
import GraniteMedia

/// The one RGB → YUV conversion of `granite-cam`'s outputs (the Y4M pipe and the V4L2 output):
/// BT.601, limited range — the inverse of ``ColorConversion/rgba(_:)``'s YUV decode, and what
/// ffmpeg assumes for YUV4MPEG2 and V4L2 streams that say nothing else.
///
/// 4:2:0 chroma is the mean of each 2×2 block (chroma sited between the luma samples: Y4M's
/// `C420jpeg`); 4:2:2 (YUYV) the mean of each horizontal pair. Odd edges repeat the last pixel.
extension ColorConversion {
    /// Appends `image` as planar Y, U, V (4:2:0 when `subsampled`, else 4:4:4) to `out`.
    public static func appendPlanarYUV(_ image: Image, subsampled: Bool, to out: inout [UInt8]) throws(MediaError) {
        let rgba = try rgba(image)
        let w = rgba.width, h = rgba.height
        let cw = subsampled ? (w + 1) / 2 : w, ch = subsampled ? (h + 1) / 2 : h
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: w * h + 2 * cw * ch))
        rgba.bytes.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { all in
                let y = all.baseAddress! + start, u = y + w * h, v = u + cw * ch
                for i in 0..<(w * h) {
                    y[i] = luma(Int(src[i * 4]), Int(src[i * 4 + 1]), Int(src[i * 4 + 2]))
                }
                if !subsampled {
                    for i in 0..<(w * h) {
                        let r = Int(src[i * 4]), g = Int(src[i * 4 + 1]), b = Int(src[i * 4 + 2])
                        u[i] = cb(r * 4, g * 4, b * 4)
                        v[i] = cr(r * 4, g * 4, b * 4)
                    }
                    return
                }
                for cy in 0..<ch {
                    let y0 = cy * 2, y1 = min(y0 + 1, h - 1)
                    for cx in 0..<cw {
                        let x0 = cx * 2, x1 = min(x0 + 1, w - 1)
                        var r = 0, g = 0, b = 0
                        for p in [y0 * w + x0, y0 * w + x1, y1 * w + x0, y1 * w + x1] {
                            r += Int(src[p * 4]); g += Int(src[p * 4 + 1]); b += Int(src[p * 4 + 2])
                        }
                        u[cy * cw + cx] = cb(r, g, b)
                        v[cy * cw + cx] = cr(r, g, b)
                    }
                }
            }
        }
    }

    /// `image` in a V4L2 output's pixel layout, rows `bytesPerLine` apart (0: packed).
    public static func packed(_ image: Image, as format: VideoOutputFormat, bytesPerLine: Int = 0) throws(MediaError) -> [UInt8] {
        if format == .yu12 {
            var out: [UInt8] = []
            out.reserveCapacity(image.pixelCount * 3 / 2 + image.width + image.height + 2)
            try appendPlanarYUV(image, subsampled: true, to: &out)
            return out
        }
        let rgba = try rgba(image)
        let w = rgba.width, h = rgba.height
        let row = max(bytesPerLine, format.minimumBytesPerLine(width: w))
        var out = [UInt8](repeating: 0, count: row * h)
        rgba.bytes.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for yy in 0..<h {
                    let s = yy * w * 4, d = yy * row
                    switch format {
                    case .rgb24, .bgr24:
                        let (first, last) = format == .rgb24 ? (0, 2) : (2, 0)
                        for x in 0..<w {
                            dst[d + x * 3] = src[s + x * 4 + first]
                            dst[d + x * 3 + 1] = src[s + x * 4 + 1]
                            dst[d + x * 3 + 2] = src[s + x * 4 + last]
                        }
                    case .yuyv:
                        for pair in 0..<((w + 1) / 2) {
                            let a = s + pair * 8, b = s + min(pair * 2 + 1, w - 1) * 4
                            let r0 = Int(src[a]), g0 = Int(src[a + 1]), b0 = Int(src[a + 2])
                            let r1 = Int(src[b]), g1 = Int(src[b + 1]), b1 = Int(src[b + 2])
                            dst[d + pair * 4] = luma(r0, g0, b0)
                            dst[d + pair * 4 + 1] = cb((r0 + r1) * 2, (g0 + g1) * 2, (b0 + b1) * 2)
                            dst[d + pair * 4 + 2] = luma(r1, g1, b1)
                            dst[d + pair * 4 + 3] = cr((r0 + r1) * 2, (g0 + g1) * 2, (b0 + b1) * 2)
                        }
                    case .yu12:
                        break
                    }
                }
            }
        }
        return out
    }
}

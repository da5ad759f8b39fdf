import GraniteMedia

/// CPU unsharp mask with a 3×3 binomial blur: `out = in + amount × (in − blur(in))`.
///
/// The stopgap until Marble's GPU `sharpen` lands, and its CPU reference. Edges clamp; the
/// alpha channel of `rgba8` is left as it is.
public enum CPUSharpen {
    /// `image` sharpened by `amount` (1.0 is a moderate sharpen; 0 returns the image unchanged).
    public static func sharpen(_ image: Image, amount: Double = 1.0) throws(MediaError) -> Image {
        let channels: Int, color: Int
        switch image.format {
        case .rgba8: (channels, color) = (4, 3)
        case .rgb24: (channels, color) = (3, 3)
        case .gray8: (channels, color) = (1, 1)
        default: throw .unsupportedFormat(image.format, operation: "CPU sharpen")
        }
        if amount == 0 { return image }
        let k = Int32((amount * 256).rounded())
        let w = image.width, h = image.height, stride = w * channels
        var out = image.bytes
        // Per row: a vertical 1-2-1 sum over all bytes, then the horizontal 1-2-1 on that sum;
        // both loops are straight runs the compiler vectorises.
        var vertical = [Int32](repeating: 0, count: stride)
        image.bytes.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                vertical.withUnsafeMutableBufferPointer { v in
                    let vp = v.baseAddress!
                    for y in 0..<h {
                        let up = src.baseAddress! + max(y - 1, 0) * stride
                        let s = src.baseAddress! + y * stride
                        let down = src.baseAddress! + min(y + 1, h - 1) * stride
                        let d = dst.baseAddress! + y * stride
                        for i in 0..<stride {
                            vp[i] = Int32(up[i]) &+ 2 &* Int32(s[i]) &+ Int32(down[i])
                        }
                        @inline(__always) func sharpenByte(_ i: Int, _ left: Int, _ right: Int) {
                            let blur16 = vp[left] &+ 2 &* vp[i] &+ vp[right]
                            let value = Int32(s[i])
                            let sharpened = value &+ (((value &* 16 &- blur16) &* k &+ 2048) &>> 12)
                            d[i] = UInt8(truncatingIfNeeded: sharpened < 0 ? 0 : (sharpened > 255 ? 255 : sharpened))
                        }
                        for i in 0..<min(channels, stride) { sharpenByte(i, i, min(i + channels, stride - channels + i % channels)) }
                        if w > 2 {
                            // Interior: no clamping of neighbours, a straight vectorisable run.
                            let left = vp, centre = vp + channels, right = vp + 2 * channels
                            let sc = s + channels, dc = d + channels
                            for i in 0..<(stride - 2 * channels) {
                                let blur16 = left[i] &+ 2 &* centre[i] &+ right[i]
                                let value = Int32(sc[i])
                                let sharpened = value &+ (((value &* 16 &- blur16) &* k &+ 2048) &>> 12)
                                dc[i] = UInt8(truncatingIfNeeded: sharpened < 0 ? 0 : (sharpened > 255 ? 255 : sharpened))
                            }
                        }
                        if w > 1 { for i in (stride - channels)..<stride { sharpenByte(i, i - channels, i) } }
                    }
                    if color < channels {  // put alpha back untouched
                        for i in Swift.stride(from: color, to: src.count, by: channels) { dst[i] = src[i] }
                    }
                }
            }
        }
        return try Image(width: w, height: h, format: image.format, bytes: out)
    }
}

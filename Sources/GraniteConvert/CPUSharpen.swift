import GraniteMedia

/// CPU unsharp mask with a 3×3 binomial blur: `out = in + amount × (in − blur(in))`.
///
/// The stopgap until Marble's GPU `sharpen` lands, and its CPU reference. Edges clamp; the
/// alpha channel of `rgba8` is left as it is.
public enum CPUSharpen {
    /// `image` sharpened by `amount` (1.0 is a moderate sharpen; 0 returns the image unchanged).
    public static func sharpen(_ image: Image, amount: Double = 1.0) throws(MediaError) -> Image {
        let channels: Int, colour: Int
        switch image.format {
        case .rgba8: (channels, colour) = (4, 3)
        case .rgb24: (channels, colour) = (3, 3)
        case .gray8: (channels, colour) = (1, 1)
        default: throw .unsupportedFormat(image.format, operation: "CPU sharpen")
        }
        if amount == 0 { return image }
        let k = Int32((amount * 256).rounded())
        let w = image.width, h = image.height, stride = w * channels
        var out = image.bytes
        image.bytes.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<h {
                    let up = max(y - 1, 0) * stride, mid = y * stride, down = min(y + 1, h - 1) * stride
                    for x in 0..<w {
                        let l = max(x - 1, 0) * channels, c0 = x * channels, r = min(x + 1, w - 1) * channels
                        for c in 0..<colour {
                            // Binomial 1-2-1 in both directions: weights sum to 16.
                            func row(_ base: Int) -> Int32 {
                                Int32(src[base + l + c]) + 2 * Int32(src[base + c0 + c]) + Int32(src[base + r + c])
                            }
                            let blur16 = row(up) + 2 * row(mid) + row(down)
                            let v = Int32(src[mid + c0 + c])
                            let detail16 = v * 16 - blur16
                            let sharpened = v + (detail16 * k + (1 << 11)) >> 12  // detail/16 × k/256
                            dst[mid + c0 + c] = UInt8(clamping: sharpened)
                        }
                    }
                }
            }
        }
        return try Image(width: w, height: h, format: image.format, bytes: out)
    }
}

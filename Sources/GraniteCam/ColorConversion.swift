import GraniteMedia

/// CPU colour conversion from the capture formats to `rgba8` (BT.601, limited-range YUV).
/// The GPU path (Marble) has its own; this is the reference and the no-GPU fallback.
public enum ColorConversion {
    /// Converts `image` to `rgba8`; `rgba8` passes through unchanged.
    public static func rgba(_ image: Image) throws(MediaError) -> Image {
        let w = image.width, h = image.height
        var out = [UInt8](repeating: 255, count: w * h * 4)
        let src = image.bytes
        switch image.format {
        case .rgba8:
            return image
        case .rgb24:
            for i in 0..<(w * h) {
                out[i * 4] = src[i * 3]; out[i * 4 + 1] = src[i * 3 + 1]; out[i * 4 + 2] = src[i * 3 + 2]
            }
        case .gray8:
            for i in 0..<(w * h) { out[i * 4] = src[i]; out[i * 4 + 1] = src[i]; out[i * 4 + 2] = src[i] }
        case .yuyv:
            let row = image.bytesPerRow
            for y in 0..<h {
                for x in 0..<w {
                    let pair = y * row + (x / 2) * 4
                    put(&out, (y * w + x) * 4, src[pair + (x % 2) * 2], src[pair + 1], src[pair + 3])
                }
            }
        case .nv12:
            let chroma = w * h, chromaRow = ((w + 1) / 2) * 2
            for y in 0..<h {
                for x in 0..<w {
                    let c = chroma + (y / 2) * chromaRow + (x / 2) * 2
                    put(&out, (y * w + x) * 4, src[y * w + x], src[c], src[c + 1])
                }
            }
        default:
            throw .unsupportedFormat(image.format, operation: "conversion to rgba8")
        }
        return try Image(width: w, height: h, format: .rgba8, bytes: out)
    }

    @inline(__always)
    static func put(_ out: inout [UInt8], _ i: Int, _ y: UInt8, _ u: UInt8, _ v: UInt8) {
        let c = (Int(y) - 16) * 298, d = Int(u) - 128, e = Int(v) - 128
        out[i] = clamp((c + 409 * e + 128) >> 8)
        out[i + 1] = clamp((c - 100 * d - 208 * e + 128) >> 8)
        out[i + 2] = clamp((c + 516 * d + 128) >> 8)
    }

    @inline(__always)
    static func clamp(_ v: Int) -> UInt8 { UInt8(max(0, min(255, v))) }
}

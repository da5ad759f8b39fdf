/// The YUV quantisation range of a camera image (BT.601 either way).
public enum ColorRange: String, Sendable, CaseIterable {
    /// Y in 16...235, chroma in 16...240 (what most cameras send).
    case limited
    /// Y and chroma in 0...255 (JPEG-style).
    case full
}

/// Camera formats to RGBA8 in integer BT.601: the one conversion of the project. Marble's GPU
/// shader (`convert.comp`) does the same arithmetic, and its CPU reference calls
/// ``ColorConversion/rgb(y:u:v:range:)`` per pixel; `granite-cam` uses ``ColorConversion/rgba(_:range:)``
/// when there is no GPU chain.
public enum ColorConversion {
    /// One YUV sample to RGB, integer BT.601 (8-bit fixed point, rounded, clamped).
    @inlinable @inline(__always)
    public static func rgb(y: Int, u: Int, v: Int, range: ColorRange) -> (r: UInt8, g: UInt8, b: UInt8) {
        let d = u - 128, e = v - 128
        let r, g, b: Int
        switch range {
        case .limited:
            let c = 298 * (y - 16)
            r = (c + 409 * e + 128) >> 8
            g = (c - 100 * d - 208 * e + 128) >> 8
            b = (c + 516 * d + 128) >> 8
        case .full:
            let c = 256 * y
            r = (c + 359 * e + 128) >> 8
            g = (c - 88 * d - 183 * e + 128) >> 8
            b = (c + 454 * d + 128) >> 8
        }
        return (clamp(r), clamp(g), clamp(b))
    }

    @inlinable @inline(__always)
    @usableFromInline
    static func clamp(_ value: Int) -> UInt8 { UInt8(min(max(value, 0), 255)) }

    /// The inverse direction, RGB → YUV (BT.601, limited range), used by the outputs that need YUV
    /// (Y4M pipe, V4L2 output). Luma of one RGB sample.
    @inlinable @inline(__always)
    public static func luma(_ r: Int, _ g: Int, _ b: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: ((66 * r + 129 * g + 25 * b + 128) >> 8) + 16)
    }

    /// Cb from the sums of four RGB samples (so a 2×2 mean keeps its precision; pass 4× one sample).
    @inlinable @inline(__always)
    public static func cb(_ r4: Int, _ g4: Int, _ b4: Int) -> UInt8 {
        clamp(((-38 * r4 - 74 * g4 + 112 * b4 + 512) >> 10) + 128)
    }

    /// Cr from the sums of four RGB samples.
    @inlinable @inline(__always)
    public static func cr(_ r4: Int, _ g4: Int, _ b4: Int) -> UInt8 {
        clamp(((112 * r4 - 94 * g4 - 18 * b4 + 512) >> 10) + 128)
    }

    /// Converts `image` to `rgba8` (alpha 255); `rgba8` passes through unchanged. Reads `rgb24`,
    /// `gray8`, `yuyv`, `nv12` and `i420`.
    public static func rgba(_ image: Image, range: ColorRange = .limited) throws(MediaError) -> Image {
        let w = image.width, h = image.height
        if image.format == .rgba8 { return image }
        var out = [UInt8](repeating: 255, count: w * h * 4)
        let src = image.bytes
        switch image.format {
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
                    put(&out, (y * w + x) * 4, rgb(y: Int(src[pair + (x % 2) * 2]), u: Int(src[pair + 1]), v: Int(src[pair + 3]), range: range))
                }
            }
        case .nv12:
            let chroma = w * h, chromaRow = ((w + 1) / 2) * 2
            for y in 0..<h {
                for x in 0..<w {
                    let c = chroma + (y / 2) * chromaRow + (x / 2) * 2
                    put(&out, (y * w + x) * 4, rgb(y: Int(src[y * w + x]), u: Int(src[c]), v: Int(src[c + 1]), range: range))
                }
            }
        case .i420:
            let cw = (w + 1) / 2, cb = w * h, cr = cb + cw * ((h + 1) / 2)
            for y in 0..<h {
                for x in 0..<w {
                    let c = (y / 2) * cw + x / 2
                    put(&out, (y * w + x) * 4, rgb(y: Int(src[y * w + x]), u: Int(src[cb + c]), v: Int(src[cr + c]), range: range))
                }
            }
        default:
            throw .unsupportedFormat(image.format, operation: "conversion to rgba8")
        }
        return try Image(width: w, height: h, format: .rgba8, bytes: out)
    }

    @inline(__always)
    private static func put(_ out: inout [UInt8], _ i: Int, _ pixel: (r: UInt8, g: UInt8, b: UInt8)) {
        out[i] = pixel.r
        out[i + 1] = pixel.g
        out[i + 2] = pixel.b
    }
}

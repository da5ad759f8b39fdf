import GraniteMedia

/// The YUV quantisation range of a camera image (BT.601 either way).
public enum ColourRange: String, Sendable, CaseIterable {
    /// Y in 16...235, chroma in 16...240 (what most cameras send).
    case limited
    /// Y and chroma in 0...255 (JPEG-style).
    case full
}

/// Camera formats to RGBA8 in integer BT.601, the CPU reference of `convert.comp`.
enum ColourConversion {
    /// The shader's FORMAT constant for `format`, or nil when no conversion pass is needed.
    static func shaderFormat(_ format: PixelFormat) throws -> UInt32? {
        switch format {
        case .rgba8: return nil
        case .yuyv: return 0
        case .nv12: return 1
        case .rgb24: return 2
        default: throw MarbleError.unsupportedInput(format)
        }
    }

    /// One YUV sample to a packed RGBA8 pixel.
    @inline(__always)
    static func rgba(y: Int, u: Int, v: Int, range: ColourRange) -> UInt32 {
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
        let clamp = { (value: Int) in UInt32(min(max(value, 0), 255)) }
        return Px.pack(clamp(r), clamp(g), clamp(b), 255)
    }

    /// Converts any supported input to a plane.
    static func plane(_ image: Image, range: ColourRange) throws -> RGBAPlane {
        let w = image.width, h = image.height
        let bytes = image.bytes
        switch image.format {
        case .rgba8:
            let pixels = bytes.withUnsafeBytes { Array($0.bindMemory(to: UInt32.self)) }
            return RGBAPlane(width: w, height: h, pixels: pixels.map { UInt32(littleEndian: $0) })
        case .rgb24:
            return .generate(width: w, height: h) { x, y in
                let i = (y * w + x) * 3
                return Px.pack(UInt32(bytes[i]), UInt32(bytes[i + 1]), UInt32(bytes[i + 2]), 255)
            }
        case .yuyv:
            let stride = ((w + 1) / 2) * 4
            return .generate(width: w, height: h) { x, y in
                let base = y * stride + (x / 2) * 4
                return rgba(y: Int(bytes[base + (x & 1) * 2]), u: Int(bytes[base + 1]), v: Int(bytes[base + 3]), range: range)
            }
        case .nv12:
            let stride = ((w + 1) / 2) * 2
            return .generate(width: w, height: h) { x, y in
                let uv = w * h + (y / 2) * stride + (x / 2) * 2
                return rgba(y: Int(bytes[y * w + x]), u: Int(bytes[uv]), v: Int(bytes[uv + 1]), range: range)
            }
        default:
            throw MarbleError.unsupportedInput(image.format)
        }
    }

    /// A plane back to an `rgba8` image.
    static func image(_ plane: RGBAPlane) throws -> Image {
        let bytes = plane.pixels.withUnsafeBytes { Array($0) }
        return try Image(width: plane.width, height: plane.height, format: .rgba8, bytes: bytes)
    }
}

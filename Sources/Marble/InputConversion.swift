import GraniteMedia

/// Camera formats to Marble planes, the CPU reference of `convert.comp` (the arithmetic is
/// GraniteMedia's ``ColorConversion``).
enum InputConversion {
    /// The shader's FORMAT constant for `format`, or nil when no conversion pass is needed.
    static func shaderFormat(_ format: PixelFormat) throws(MarbleError) -> UInt32? {
        switch format {
        case .rgba8: return nil
        case .yuyv: return 0
        case .nv12: return 1
        case .rgb24: return 2
        default: throw MarbleError.unsupportedInput(format)
        }
    }

    /// One YUV sample to a packed RGBA8 pixel: GraniteMedia's one BT.601 conversion, packed.
    @inline(__always)
    static func rgba(y: Int, u: Int, v: Int, range: ColorRange) -> UInt32 {
        let p = ColorConversion.rgb(y: y, u: u, v: v, range: range)
        return Px.pack(UInt32(p.r), UInt32(p.g), UInt32(p.b), 255)
    }

    /// Converts any supported input to a plane.
    static func plane(_ image: Image, range: ColorRange) throws(MarbleError) -> RGBAPlane {
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
    static func image(_ plane: RGBAPlane) throws(MarbleError) -> Image {
        let bytes = plane.pixels.withUnsafeBytes { Array($0) }
        return try MarbleError.image { () throws(MediaError) in try Image(width: plane.width, height: plane.height, format: .rgba8, bytes: bytes) }
    }
}

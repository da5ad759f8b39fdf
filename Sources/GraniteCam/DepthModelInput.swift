import GraniteMedia

/// The depth model's picture of a frame made on the CPU (a GPU chain makes the same bytes on the
/// device, see ``FrameJob/modelInput``), and a map's values as floats.
enum DepthModelInput {
    /// `image` in `rgba8`, resized to `size` with the shared resampler's antialiased bilinear (the
    /// bytes a GPU chain and GraniteML's own resize make).
    static func make(_ image: Image, size: (width: Int, height: Int), range: ColorRange = .limited) throws -> Image {
        let rgba = image.format == .rgba8 ? image : try ColorConversion.rgba(image, range: range)
        return try Resampler.resize(rgba, width: size.width, height: size.height, filter: .bilinear)
    }

    /// A depth map's values: `grayF32` as they are, `gray16` and `gray8` as their sample values.
    static func values(of map: Image) throws -> [Float] {
        switch map.format {
        case .grayF32:
            return map.floats()
        case .gray16:
            return map.bytes.withUnsafeBytes { raw in raw.bindMemory(to: UInt16.self).map { Float($0) } }
        case .gray8:
            return (0..<map.height).flatMap { y in (0..<map.width).map { x in Float(map.bytes[y * map.bytesPerRow + x]) } }
        default:
            throw CamError.invalidOptions("a depth map must be grayF32, gray16 or gray8, not \(map.format)")
        }
    }
}

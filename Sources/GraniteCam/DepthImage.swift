import GraniteMedia

/// Depth maps widened to `gray16` for 16-bit PNG files.
enum DepthImage {
    /// `gray16` as is; `gray8` scaled by 257; `grayF32` normalised min…max to 0…65535.
    static func gray16(_ map: Image) throws -> Image {
        let count = map.width * map.height
        var samples = [UInt16](repeating: 0, count: count)
        switch map.format {
        case .gray16:
            return map
        case .gray8:
            let bytes = map.bytes
            let row = map.bytesPerRow
            for y in 0..<map.height { for x in 0..<map.width { samples[y * map.width + x] = UInt16(bytes[y * row + x]) * 257 } }
        case .grayF32:
            let values = map.floats()
            let lo = values.min() ?? 0, hi = values.max() ?? 0
            let span = hi - lo
            for i in 0..<min(count, values.count) where span > 0 && values[i].isFinite {
                samples[i] = UInt16(((values[i] - lo) / span * 65535).rounded())
            }
        default:
            throw CamError.invalidOptions("a depth map must be gray8, gray16 or grayF32, not \(map.format)")
        }
        let bytes = samples.withUnsafeBytes { Array($0) }
        return try Image(width: map.width, height: map.height, format: .gray16, bytes: bytes)
    }

    /// The depth model's input made on the CPU: `image` in `rgba8`, resized to `size` with the
    /// shared resampler's antialiased bilinear (the bytes a GPU chain and GraniteML's own resize make).
    static func modelInput(_ image: Image, size: (width: Int, height: Int), range: ColorRange = .limited) throws -> Image {
        let rgba = image.format == .rgba8 ? image : try ColorConversion.rgba(image, range: range)
        return try Resampler.resize(rgba, width: size.width, height: size.height, filter: .bilinear)
    }
}

import GraniteMedia

/// A per-pixel depth estimate at the size of the image it came from.
public struct DepthMap: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// Row-major values in the model's units: metres for metric depth, else relative.
    public let values: [Float]
    /// What the values mean (depth: larger is farther; inverse depth: larger is nearer).
    public let meaning: ModelDescription.Meaning
    /// True when `values` are metres.
    public let isMetric: Bool

    /// A depth map from its parts; throws when the count does not match the size.
    public init(width: Int, height: Int, values: [Float], meaning: ModelDescription.Meaning, isMetric: Bool) throws(MLError) {
        guard width > 0, height > 0, values.count == width * height else {
            throw .unexpectedOutput(reason: "a \(width)x\(height) depth map needs \(width * height) values, got \(values.count)")
        }
        self.width = width; self.height = height; self.values = values; self.meaning = meaning; self.isMetric = isMetric
    }

    /// The value at (x, y).
    public subscript(x: Int, y: Int) -> Float { values[y * width + x] }

    /// Nearness in 0...1 (1 = the nearest point in this map), whatever the model's convention.
    public func nearness() -> [Float] {
        let lo = values.min() ?? 0, hi = values.max() ?? 0
        let span = hi - lo
        guard span > 0 else { return [Float](repeating: 0, count: values.count) }
        return values.map { v in meaning == .depth ? (hi - v) / span : (v - lo) / span }
    }

    /// The raw values as a `grayF32` image.
    public func floatImage() -> Image {
        // Sizes were checked at init, so this cannot fail.
        (try? Image(width: width, height: height, floats: values))!
    }

    /// A 16-bit image for a PNG: metric depth in millimetres (0...65535 mm); relative maps
    /// normalised to the full range with larger = farther.
    public func to16BitPNGImage() -> Image {
        let near = nearness()
        var bytes = [UInt8](repeating: 0, count: width * height * 2)
        for i in 0..<values.count {
            let v: UInt16
            if isMetric {
                v = UInt16(min(max((values[i] * 1000).rounded(), 0), 65535))
            } else {
                v = UInt16(((1 - near[i]) * 65535).rounded())
            }
            // gray16 holds native-endian samples; the PNG encoder writes big-endian.
            withUnsafeBytes(of: v) { bytes[i * 2] = $0[0]; bytes[i * 2 + 1] = $0[1] }
        }
        return (try? Image(width: width, height: height, format: .gray16, bytes: bytes))!
    }

    /// A color preview (`rgba8`, opaque): viridis from dark purple (far) to yellow (near).
    public func colorized() -> Image {
        let near = nearness()
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for i in 0..<near.count {
            let (r, g, b) = ColorMap.viridis(near[i])
            bytes[i * 4] = r; bytes[i * 4 + 1] = g; bytes[i * 4 + 2] = b
        }
        return (try? Image(width: width, height: height, format: .rgba8, bytes: bytes))!
    }
}

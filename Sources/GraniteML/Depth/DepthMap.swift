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
        let scale = NearnessScale(lo: values.min() ?? 0, hi: values.max() ?? 0, meaning: meaning)
        return values.map(scale.nearness)
    }

    /// The raw values as a `grayF32` image.
    public func floatImage() -> Image {
        // Sizes were checked at init, so this cannot fail.
        (try? Image(width: width, height: height, floats: values))!
    }

    /// A 16-bit image for a PNG: metric depth in millimetres (0...65535 mm); relative maps
    /// normalised to the full range with larger = farther.
    public func to16BitPNGImage() -> Image {
        let scale = NearnessScale(lo: values.min() ?? 0, hi: values.max() ?? 0, meaning: meaning)
        var bytes = [UInt8](repeating: 0, count: width * height * 2)
        bytes.withUnsafeMutableBytes { raw in
            let out = raw.bindMemory(to: UInt16.self)
            // gray16 holds native-endian samples; the PNG encoder writes big-endian.
            for i in 0..<values.count { out[i] = scale.sample16(values[i], metric: isMetric) }
        }
        return (try? Image(width: width, height: height, format: .gray16, bytes: bytes))!
    }

    /// A color preview (`rgba8`, opaque): viridis from dark purple (far) to yellow (near), in the
    /// 256 steps of ``ColorMap/palette`` (the colors of the indexed preview PNGs).
    public func colorized() -> Image {
        let scale = NearnessScale(lo: values.min() ?? 0, hi: values.max() ?? 0, meaning: meaning)
        let palette = ColorMap.palette
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for i in 0..<values.count {
            let p = Int(scale.paletteIndex(values[i])) * 3
            bytes[i * 4] = palette[p]; bytes[i * 4 + 1] = palette[p + 1]; bytes[i * 4 + 2] = palette[p + 2]
        }
        return (try? Image(width: width, height: height, format: .rgba8, bytes: bytes))!
    }
}

/// How a depth map's values turn into nearness, 16-bit samples and preview colors, given the
/// map's range: the one place these formulas live (whole maps and row-by-row writers use it).
public struct NearnessScale: Sendable, Equatable {
    /// The smallest and largest value in the map.
    public let lo: Float, hi: Float
    /// What the values mean (depth: larger is farther; inverse depth: larger is nearer).
    public let meaning: ModelDescription.Meaning

    /// The scale of a map whose values span `lo...hi`.
    public init(lo: Float, hi: Float, meaning: ModelDescription.Meaning) {
        self.lo = lo; self.hi = hi; self.meaning = meaning
    }

    /// Nearness in 0...1 (1 = the nearest point); 0 everywhere in a flat map.
    @inline(__always)
    public func nearness(_ v: Float) -> Float {
        let span = hi - lo
        guard span > 0 else { return 0 }
        return meaning == .depth ? (hi - v) / span : (v - lo) / span
    }

    /// The 16-bit sample of a depth PNG: millimetres (saturating at 0 and 65535) for metric maps,
    /// else the full range with larger = farther.
    @inline(__always)
    public func sample16(_ v: Float, metric: Bool) -> UInt16 {
        if metric { return UInt16(min(max((v * 1000).rounded(), 0), 65535)) }
        return UInt16(((1 - nearness(v)) * 65535).rounded())
    }

    /// The entry of ``ColorMap/palette`` showing `v` (255 = nearest).
    @inline(__always)
    public func paletteIndex(_ v: Float) -> UInt8 {
        let n = nearness(v)
        return UInt8(min(max((n.isNaN ? 0 : n) * 255, 0), 255).rounded())
    }
}

/// A depth map read at a larger (or the same) size row by row: bilinear, the values
/// `DepthEstimator.estimate(_:size:)` gives at that size, without the whole scaled map in memory
/// (a 12 MP photo's is 48 MB of floats). Rows may be read from several threads at once.
public struct ScaledDepthMap: Sendable {
    /// The map at its own (model) size.
    public let source: DepthMap
    /// The scaled size.
    public var width: Int { rows.width }
    public var height: Int { rows.height }
    /// The range of the scaled values (what ``DepthMap/nearness()`` of the scaled map uses).
    public let scale: NearnessScale
    let rows: Resampler.FloatRows

    /// `source` scaled to `width`×`height` (bilinear, as the estimator scales maps).
    public init(_ source: DepthMap, width: Int, height: Int) throws(MLError) {
        guard width > 0, height > 0 else { throw .unsupportedImage(reason: "depth map size \(width)x\(height) is empty") }
        self.source = source
        let rows = Resampler.FloatRows(source.values, width: source.width, height: source.height, channels: 1,
                                       toWidth: width, toHeight: height, filter: DepthMap.scaleFilter)
        self.rows = rows
        // The range over the scaled rows themselves (bilinear stays inside the source's range, but
        // need not reach its ends).
        var lo = Float.infinity, hi = -Float.infinity
        var line = [Float](repeating: 0, count: width)
        line.withUnsafeMutableBufferPointer { buffer in
            for y in 0..<height {
                rows.row(y, into: buffer.baseAddress!)
                for v in buffer { lo = min(lo, v); hi = max(hi, v) }
            }
        }
        scale = NearnessScale(lo: lo, hi: hi, meaning: source.meaning)
    }

    /// Writes row `y`'s values (`width` of them) to `out`.
    public func values(row y: Int, into out: UnsafeMutablePointer<Float>) { rows.row(y, into: out) }

    /// The whole scaled map (as the estimator returns it at this size).
    public func materialized() -> DepthMap {
        let values = [Float](unsafeUninitializedCapacity: width * height) { out, count in
            for y in 0..<height { rows.row(y, into: out.baseAddress! + y * width) }
            count = width * height
        }
        // Sizes match by construction.
        return (try? DepthMap(width: width, height: height, values: values, meaning: source.meaning, isMetric: source.isMetric))!
    }
}

extension DepthMap {
    /// The filter maps are scaled with (model size to the photo's).
    public static let scaleFilter = ResizeFilter.bilinear
}

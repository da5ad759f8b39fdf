import GraniteMedia

/// CPU resizing: area averaging when shrinking, bilinear when enlarging (per axis).
///
/// The stopgap until the Marble GPU `resize` lands; it also serves as the CPU reference.
/// Works on any 8-bit packed format (`rgba8`, `rgb24`, `gray8`); channels are treated alike
/// (alpha is averaged like color, i.e. not premultiplied).
public enum CPUResize {
    /// `image` resized to `width`×`height`.
    public static func resize(_ image: Image, width: Int, height: Int) throws(MediaError) -> Image {
        guard width > 0, height > 0 else { throw .invalidSize(width: width, height: height) }
        let channels: Int
        switch image.format {
        case .rgba8: channels = 4
        case .rgb24: channels = 3
        case .gray8: channels = 1
        default: throw .unsupportedFormat(image.format, operation: "CPU resize")
        }
        if width == image.width && height == image.height { return image }
        let xs = weights(source: image.width, target: width)
        let ys = weights(source: image.height, target: height)
        // Horizontal pass into 16.16-ish fixed point rows, then vertical pass with rounding.
        let sw = image.width, sh = image.height
        var mid = [Int32](repeating: 0, count: width * sh * channels)
        image.bytes.withUnsafeBufferPointer { src in
            mid.withUnsafeMutableBufferPointer { dst in
                for y in 0..<sh {
                    let srow = y * sw * channels, drow = y * width * channels
                    for x in 0..<width {
                        let taps = xs[x]
                        for c in 0..<channels {
                            var acc: Int32 = 0
                            for t in taps { acc += Int32(src[srow + t.index * channels + c]) * t.weight }
                            dst[drow + x * channels + c] = acc  // value × 2^12
                        }
                    }
                }
            }
        }
        var out = [UInt8](repeating: 0, count: width * height * channels)
        mid.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                let rowLength = width * channels
                for y in 0..<height {
                    let taps = ys[y]
                    let drow = y * rowLength
                    for i in 0..<rowLength {
                        var acc: Int64 = 0
                        for t in taps { acc += Int64(src[t.index * rowLength + i]) * Int64(t.weight) }
                        let v = (acc + (1 << 23)) >> 24  // two passes of 2^12
                        dst[drow + i] = UInt8(clamping: v)
                    }
                }
            }
        }
        return try Image(width: width, height: height, format: image.format, bytes: out)
    }

    struct Tap {
        var index: Int
        var weight: Int32
    }

    static let one: Int32 = 1 << 12

    /// For each target index, the source indices and weights (summing to 2^12).
    static func weights(source: Int, target: Int) -> [[Tap]] {
        let scale = Double(source) / Double(target)
        var result = [[Tap]]()
        result.reserveCapacity(target)
        for i in 0..<target {
            var taps = [Tap]()
            if target < source {
                // Area: the target pixel covers [i*scale, (i+1)*scale) of the source.
                let lo = Double(i) * scale, hi = Double(i + 1) * scale
                var j = Int(lo)
                var raw = [(Int, Double)]()
                while Double(j) < hi && j < source {
                    let cover = min(hi, Double(j + 1)) - max(lo, Double(j))
                    if cover > 1e-9 { raw.append((j, cover / scale)) }
                    j += 1
                }
                taps = normalise(raw)
            } else {
                // Bilinear with pixel centres aligned.
                let centre = (Double(i) + 0.5) * scale - 0.5
                let j0 = Int(centre.rounded(.down))
                let f = centre - Double(j0)
                let a = min(max(j0, 0), source - 1), b = min(max(j0 + 1, 0), source - 1)
                taps = normalise([(a, 1 - f), (b, f)])
            }
            result.append(taps)
        }
        return result
    }

    /// Rounds weights to fixed point so they sum exactly to `one` (no drift in flat areas).
    static func normalise(_ raw: [(Int, Double)]) -> [Tap] {
        let total = raw.reduce(0) { $0 + $1.1 }
        var taps = raw.map { Tap(index: $0.0, weight: Int32(($0.1 / total * Double(one)).rounded())) }
        let sum = taps.reduce(0) { $0 + $1.weight }
        if let k = taps.indices.max(by: { taps[$0].weight < taps[$1].weight }) { taps[k].weight += one - sum }
        return taps.filter { $0.weight != 0 }
    }
}

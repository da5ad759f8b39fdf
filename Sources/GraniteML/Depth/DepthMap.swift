#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import GraniteMedia

/// Carries a buffer into `concurrentPerform`, whose iterations write disjoint elements of it.
private struct UncheckedSendableBuffer<T>: @unchecked Sendable {
    let value: UnsafeMutableBufferPointer<T>
    init(_ value: UnsafeMutableBufferPointer<T>) { self.value = value }
}

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

    /// ``sample16(_:metric:)`` of `count` values, each written big-endian (PNG's byte order) as
    /// two bytes to `out`: the same samples, eight at a time.
    public func samples16BigEndian(_ values: UnsafePointer<Float>, count: Int, metric: Bool, into out: UnsafeMutablePointer<UInt8>) {
        let raw = UnsafeMutableRawPointer(out)
        var i = 0
        while i + 8 <= count {
            let v = UnsafeRawPointer(values + i).loadUnaligned(as: SIMD8<Float>.self)
            // Clamping before rounding gives what rounding then clamping gives (both ends are whole).
            let c = metric ? Self.clamped(v * 1000, to: 65535) : (SIMD8(repeating: 1) - nearness8(v)) * 65535
            let u = Self.roundedHalfAway(c)
            raw.storeBytes(of: SIMD8<UInt16>(truncatingIfNeeded: (u &>> 8) | ((u & 0xFF) &<< 8)), toByteOffset: 2 * i, as: SIMD8<UInt16>.self)
            i += 8
        }
        while i < count {
            let s = sample16(values[i], metric: metric)
            out[2 * i] = UInt8(s >> 8); out[2 * i + 1] = UInt8(s & 0xFF)
            i += 1
        }
    }

    /// ``paletteIndex(_:)`` of `count` values into `out`: the same indices, eight at a time.
    public func paletteIndices(_ values: UnsafePointer<Float>, count: Int, into out: UnsafeMutablePointer<UInt8>) {
        let raw = UnsafeMutableRawPointer(out)
        var i = 0
        while i + 8 <= count {
            let n = nearness8(UnsafeRawPointer(values + i).loadUnaligned(as: SIMD8<Float>.self))
            let number = Self.bits(n) & Self.bits(n .== n)  // NaN (the one value unequal to itself) as 0
            let c = Self.clamped(unsafeBitCast(number, to: SIMD8<Float>.self) * 255, to: 255)
            raw.storeBytes(of: SIMD8<UInt8>(truncatingIfNeeded: Self.roundedHalfAway(c)), toByteOffset: i, as: SIMD8<UInt8>.self)
            i += 8
        }
        while i < count { out[i] = paletteIndex(values[i]); i += 1 }
    }

    /// ``nearness(_:)`` of eight values (the same operations, so the same results).
    @inline(__always)
    func nearness8(_ v: SIMD8<Float>) -> SIMD8<Float> {
        let span = hi - lo
        guard span > 0 else { return SIMD8() }
        return meaning == .depth ? (SIMD8(repeating: hi) - v) / SIMD8(repeating: span) : (v - SIMD8(repeating: lo)) / SIMD8(repeating: span)
    }

    // The helpers below are plain vector arithmetic and bit selects on purpose: x86-64's baseline
    // has no rounding instruction (`rounded()` calls `roundf` per value), and `pointwiseMin`,
    // `pointwiseMax` and `replace(with: scalar, where:)` do not become single vector instructions
    // (on 12 M values: samples 22 -> 6.5 ms, palette indices 23 -> 9.3 ms, measured with swiftc -O).

    /// The values' bits, or a mask's lanes as all ones (true) or zeros.
    @inline(__always)
    static func bits(_ v: SIMD8<Float>) -> SIMD8<UInt32> { unsafeBitCast(v, to: SIMD8<UInt32>.self) }
    @inline(__always)
    static func bits(_ mask: SIMDMask<SIMD8<Int32>>) -> SIMD8<UInt32> { unsafeBitCast(mask, to: SIMD8<UInt32>.self) }

    /// `c` clamped to `0...top` (NaN stays NaN).
    @inline(__always)
    static func clamped(_ c: SIMD8<Float>, to top: Float) -> SIMD8<Float> {
        let limit = SIMD8<Float>(repeating: top)
        let low = bits(c .< SIMD8<Float>()), high = bits(c .> limit)
        return unsafeBitCast((bits(c) & ~(low | high)) | (bits(limit) & high), to: SIMD8<Float>.self)
    }

    /// `Float.rounded()` (half away from zero) of values in 0...2²², as integers.
    @inline(__always)
    static func roundedHalfAway(_ c: SIMD8<Float>) -> SIMD8<UInt32> {
        let magic = SIMD8<Float>(repeating: 8_388_608)  // 2²³: adding it leaves no fraction bits
        let r = c + magic  // nearest, ties to even: the whole number sits in the low mantissa bits
        let tie = bits((c - (r - magic)) .== SIMD8<Float>(repeating: 0.5))  // a tie went down (to even): one up
        return (bits(r) & 0x7F_FFFF) &- tie
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
        let (lo, hi) = Self.range(of: rows)
        scale = NearnessScale(lo: lo, hi: hi, meaning: source.meaning)
    }

    /// The smallest and largest of `rows`' values, the rows read in bands on all cores, eight
    /// values at a time.
    static func range(of rows: Resampler.FloatRows) -> (lo: Float, hi: Float) {
        let width = rows.width * rows.channels, height = rows.height
        let bands = max(1, min(sysconf(Int32(_SC_NPROCESSORS_ONLN)), height / 64))
        let found = UnsafeMutableBufferPointer<(Float, Float)>.allocate(capacity: bands)
        defer { found.deallocate() }
        let slots = UncheckedSendableBuffer(found)
        DispatchQueue.concurrentPerform(iterations: bands) { b in
            var lo8 = SIMD8<Float>(repeating: .infinity), hi8 = SIMD8<Float>(repeating: -.infinity)
            var lo = Float.infinity, hi = -Float.infinity
            withUnsafeTemporaryAllocation(of: Float.self, capacity: width) { line in
                let p = line.baseAddress!
                for y in height * b / bands..<height * (b + 1) / bands {
                    rows.row(y, into: p)
                    var x = 0
                    while x + 8 <= width {
                        let v = UnsafeRawPointer(p + x).loadUnaligned(as: SIMD8<Float>.self)
                        // Vector-vector `replace` becomes one compare and blend; `pointwiseMin`/`pointwiseMax`
                        // were out-of-line calls (12 M values: 1.2 ms against 15.5 ms).
                        lo8.replace(with: v, where: v .< lo8); hi8.replace(with: v, where: v .> hi8)
                        x += 8
                    }
                    while x < width { lo = min(lo, p[x]); hi = max(hi, p[x]); x += 1 }
                }
            }
            slots.value[b] = (min(lo, lo8.min()), max(hi, hi8.max()))
        }
        return (found.map(\.0).min()!, found.map(\.1).max()!)
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

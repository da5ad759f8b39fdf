import Foundation

/// The kernel a ``Resampler`` scales with.
///
/// Downscaling widens the kernel by the scale factor, so every source pixel contributes
/// (antialiasing); upscaling uses it as an interpolator at its own width.
public enum ResizeFilter: String, Sendable, Codable, CaseIterable, Hashable {
    /// Area averaging when shrinking (each source pixel weighted by how much of it an output
    /// pixel covers); nearest pixel when enlarging, so integer upscales replicate pixels exactly.
    case box
    /// Triangle (tent): antialiased bilinear, as Pillow's `BILINEAR` and libvips' `linear`.
    case bilinear
    /// Lanczos with three lobes: the sharpest, with slight ringing at hard edges.
    case lanczos3

    /// The kernel's half-width in source pixels at scale 1.
    public var support: Double {
        switch self {
        case .box: 0.5
        case .bilinear: 1
        case .lanczos3: 3
        }
    }

    /// The kernel at `x` (in units of output pixels mapped back to the source).
    func value(_ x: Double) -> Double {
        switch self {
        case .box:
            return x >= -0.5 && x < 0.5 ? 1 : 0
        case .bilinear:
            let a = abs(x)
            return a < 1 ? 1 - a : 0
        case .lanczos3:
            let a = abs(x)
            guard a < 3 else { return 0 }
            return Self.sinc(a) * Self.sinc(a / 3)
        }
    }

    static func sinc(_ x: Double) -> Double {
        if x == 0 { return 1 }
        let p = Double.pi * x
        return sin(p) / p
    }

    /// Parses `box` (or `area`), `bilinear` (or `linear`, `triangle`), `lanczos3` (or `lanczos`).
    public init?(name: String) {
        switch name.lowercased() {
        case "box", "area": self = .box
        case "bilinear", "linear", "triangle": self = .bilinear
        case "lanczos3", "lanczos": self = .lanczos3
        default: return nil
        }
    }
}

/// How a resize treats alpha (``Resampler/resize(_:width:height:filter:alpha:)``).
public enum AlphaResampling: Sendable, Equatable {
    /// Alpha is one more channel, resampled like color (the GPU shader's arithmetic).
    case straight
    /// Color is weighted by alpha while resampling, as libvips and browsers scale.
    case premultiplied
}

/// The weights of one axis of a resize: for each output index, `taps` consecutive source
/// indices from `starts[i]` and their weights.
///
/// Every output has the same number of taps (unused ones weigh 0) and its window lies inside
/// the source, so loops need no bounds checks and the GPU shader reads the same table.
public struct ResampleAxis: Sendable, Equatable {
    /// Fixed-point weights have this many fractional bits (they sum to `1 << fractionBits`).
    public static let fractionBits = 14
    /// The source and target lengths.
    public let source: Int, target: Int
    /// Source taps per output.
    public let taps: Int
    /// The first source index of each output's window (`target` of them).
    public let starts: [Int32]
    /// `target × taps` fixed-point weights, each output's summing exactly to `1 << fractionBits`.
    public let weights: [Int32]
    /// The same weights as reals (summing to 1), for float planes.
    public let realWeights: [Float]

    /// Weights scaling `source` pixels to `target` with `filter` (pixel centres aligned, as
    /// Pillow and libvips do: output pixel i is centred on source position (i + 0.5) × source / target).
    public init(source: Int, target: Int, filter: ResizeFilter) {
        precondition(source > 0 && target > 0, "resample axis lengths must be positive")
        self.source = source
        self.target = target
        let scale = Double(source) / Double(target)
        let widen = max(scale, 1)
        let support = filter.support * widen
        var windows = [(start: Int, weights: [Double])]()
        windows.reserveCapacity(target)
        for i in 0..<target {
            let centre = (Double(i) + 0.5) * scale
            let area = filter == .box && scale > 1
            var lo = max(Int((centre - support + (area ? 0 : 0.5)).rounded(.down)), 0)
            var hi = min(Int((centre + support + (area ? 1 : 0.5)).rounded(.down)), source)
            if hi <= lo { lo = min(max(Int(centre), 0), source - 1); hi = lo + 1 }
            var raw = [Double]()
            for j in lo..<hi {
                let w: Double
                if area {
                    // Exact area: the part of source pixel j inside the output's footprint.
                    w = max(0, min(Double(j + 1), centre + scale / 2) - max(Double(j), centre - scale / 2))
                } else {
                    w = filter.value((Double(j) + 0.5 - centre) / widen)
                }
                raw.append(w)
            }
            // Trim zero weights at both ends (keeps windows tight), then normalise.
            while raw.count > 1, raw.last == 0 { raw.removeLast() }
            while raw.count > 1, raw.first == 0 { raw.removeFirst(); lo += 1 }
            let total = raw.reduce(0, +)
            if total == 0 { raw = [1] } else { raw = raw.map { $0 / total } }
            windows.append((lo, raw))
        }
        let taps = min(windows.map(\.weights.count).max() ?? 1, source)
        self.taps = taps
        var starts = [Int32](repeating: 0, count: target)
        var weights = [Int32](repeating: 0, count: target * taps)
        var reals = [Float](repeating: 0, count: target * taps)
        let one = 1 << Self.fractionBits
        for (i, window) in windows.enumerated() {
            // Shift the window left where it would run past the source's end.
            let start = min(window.start, source - taps)
            let offset = window.start - start
            starts[i] = Int32(start)
            var fixed = window.weights.map { Int(($0 * Double(one)).rounded()) }
            let drift = one - fixed.reduce(0, +)
            if drift != 0, let k = fixed.indices.max(by: { fixed[$0] < fixed[$1] }) { fixed[k] += drift }
            for (k, w) in fixed.enumerated() {
                weights[i * taps + offset + k] = Int32(w)
                reals[i * taps + offset + k] = Float(window.weights[k])
            }
        }
        self.starts = starts
        self.weights = weights
        self.realWeights = reals
    }
}

/// The one image resampler: separable, antialiased when shrinking, in integer arithmetic for
/// 8-bit images (SIMD over the four channels of `rgba8`) and in floats for float planes.
///
/// Convert, depth pre-processing and Marble's CPU reference use it; Marble's GPU `resize` reads
/// the same ``ResampleAxis`` tables and computes the same integers.
///
/// Arithmetic (the GPU shader repeats it exactly): the horizontal pass sums `pixel × weight`
/// (14-bit weights) and keeps 7 fractional bits, `(sum + 64) >> 7`, clamped to 0...255 × 128 (as
/// Pillow and libvips clamp their 8-bit intermediate, so Lanczos overshoot does not build up across
/// passes); the vertical pass sums those
/// × 14-bit weights and rounds, `(sum + 2^20) >> 21`, clamped to 0...255.
public enum Resampler {
    /// Fractional bits kept between the two passes.
    public static let intermediateBits = 7

    /// `image` (`rgba8`, `rgb24` or `gray8`) resized to `width`×`height`.
    ///
    /// With `alpha: .straight` alpha is resampled like color, in the integer arithmetic above
    /// (what the GPU shader repeats). With `.premultiplied`, an `rgba8` image that is not opaque is
    /// resampled as libvips does: color × alpha, the same ``ResampleAxis`` weights over float
    /// planes, then divided by the new alpha, so color hidden under transparent pixels does not
    /// bleed into edges (a red shape on transparent black keeps red edges instead of dark ones).
    /// Opaque images take the integer path either way.
    public static func resize(_ image: Image, width: Int, height: Int, filter: ResizeFilter,
                              alpha: AlphaResampling = .straight) throws(MediaError) -> Image {
        guard width > 0, height > 0 else { throw .invalidSize(width: width, height: height) }
        let channels: Int
        switch image.format {
        case .rgba8: channels = 4
        case .rgb24: channels = 3
        case .gray8: channels = 1
        default: throw .unsupportedFormat(image.format, operation: "resize")
        }
        if width == image.width && height == image.height { return image }
        if alpha == .premultiplied, channels == 4, !image.isOpaque {
            return try Image(width: width, height: height, format: .rgba8,
                             bytes: resizePremultiplied(image, width: width, height: height, filter: filter))
        }
        let xs = ResampleAxis(source: image.width, target: width, filter: filter)
        let ys = ResampleAxis(source: image.height, target: height, filter: filter)
        let out = resize8(image.bytes, channels: channels, xs: xs, ys: ys)
        return try Image(width: width, height: height, format: image.format, bytes: out)
    }

    /// Premultiplied RGBA resampling over float planes (see ``resize(_:width:height:filter:alpha:)``).
    static func resizePremultiplied(_ image: Image, width dw: Int, height dh: Int, filter: ResizeFilter) -> [UInt8] {
        let count = image.pixelCount
        let planes = [Float](unsafeUninitializedCapacity: count * 4) { f, n in
            image.bytes.withUnsafeBufferPointer { b in
                for p in 0..<count {
                    let a = Float(b[p * 4 + 3])
                    for c in 0..<3 { f[p * 4 + c] = Float(b[p * 4 + c]) * a / 255 }
                    f[p * 4 + 3] = a
                }
            }
            n = count * 4
        }
        let rows = FloatRows(planes, width: image.width, height: image.height, channels: 4, toWidth: dw, toHeight: dh, filter: filter)
        var line = [Float](repeating: 0, count: dw * 4)
        var out = [UInt8](repeating: 0, count: dw * dh * 4)
        line.withUnsafeMutableBufferPointer { l in
            out.withUnsafeMutableBufferPointer { o in
                for y in 0..<dh {
                    rows.row(y, into: l.baseAddress!)
                    for x in 0..<dw {
                        let i = x * 4, d = (y * dw + x) * 4
                        // Lanczos lobes can overshoot: alpha is clamped first, color to what it allows.
                        let a = min(max(l[i + 3], 0), 255)
                        let alpha = a.rounded()
                        o[d + 3] = UInt8(alpha)
                        guard alpha > 0 else { o[d] = 0; o[d + 1] = 0; o[d + 2] = 0; continue }
                        for c in 0..<3 { o[d + c] = UInt8(min(max(l[i + c] * 255 / a, 0), 255).rounded()) }
                    }
                }
            }
        }
        return out
    }

    /// Resizes tightly packed 8-bit pixels of `channels` channels (`xs.source × ys.source`) to
    /// `xs.target × ys.target`.
    public static func resize8(_ bytes: [UInt8], channels: Int, xs: ResampleAxis, ys: ResampleAxis) -> [UInt8] {
        let sw = xs.source, dw = xs.target, dh = ys.target
        let rowLength = dw * channels
        let slots = ys.taps
        // Horizontally resampled source rows, kept in a ring of `taps` rows: output rows need
        // consecutive windows that only move down, so a row is computed once and never evicted early.
        var ring = [Int32](repeating: 0, count: slots * rowLength)
        var rowInSlot = [Int](repeating: -1, count: slots)
        var acc = [Int32](repeating: 0, count: rowLength)
        var out = [UInt8](repeating: 0, count: rowLength * dh)
        let roundMid: Int32 = 1 << (intermediateBits - 1)
        let shift = Int32(2 * ResampleAxis.fractionBits - intermediateBits)
        let roundOut: Int32 = 1 << (shift - 1)
        let quads = QuadTaps(xs, channels: channels)
        bytes.withUnsafeBufferPointer { src in
            xs.starts.withUnsafeBufferPointer { xStarts in
                xs.weights.withUnsafeBufferPointer { xWeights in
                    ring.withUnsafeMutableBufferPointer { ring in
                        acc.withUnsafeMutableBufferPointer { acc in
                            out.withUnsafeMutableBufferPointer { out in
                                for y in 0..<dh {
                                    let start = Int(ys.starts[y])
                                    for k in 0..<slots {
                                        let row = start + k
                                        let slot = row % slots
                                        if rowInSlot[slot] != row {
                                            let line = UnsafeMutableBufferPointer(rebasing: ring[(slot * rowLength)..<((slot + 1) * rowLength)])
                                            if let quads {
                                                quads.horizontal(src.baseAddress! + row * sw * 4, line.baseAddress!, sourceWidth: sw,
                                                                 starts: xStarts.baseAddress!, weights: xWeights.baseAddress!, round: roundMid)
                                            } else {
                                                horizontal(src.baseAddress! + row * sw * channels, line.baseAddress!, channels: channels,
                                                           width: dw, taps: xs.taps, starts: xStarts.baseAddress!,
                                                           weights: xWeights.baseAddress!, round: roundMid)
                                            }
                                            rowInSlot[slot] = row
                                        }
                                    }
                                    // Vertical pass over the whole row (vectorises).
                                    for i in 0..<rowLength { acc[i] = roundOut }
                                    for k in 0..<slots {
                                        let w = ys.weights[y * slots + k]
                                        if w == 0 { continue }
                                        let line = ring.baseAddress! + ((start + k) % slots) * rowLength
                                        for i in 0..<rowLength { acc[i] &+= line[i] &* w }
                                    }
                                    let o = out.baseAddress! + y * rowLength
                                    for i in 0..<rowLength {
                                        let v = acc[i] >> shift
                                        o[i] = UInt8(truncatingIfNeeded: min(max(v, 0), 255))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return out
    }

    /// The horizontal pass for RGBA with four or more taps (a shrink): four source pixels (16 bytes)
    /// a step, each channel times its tap's weight in one 16-lane multiply-add, the lanes folded
    /// into the pixel's four sums at the end — the same integer sums as `Resampler.horizontal` (integer
    /// addition in any order), 3–4× fewer steps. Taps are padded to a multiple of four with zero
    /// weights; an output whose padded window would run past the row takes the plain loop.
    struct QuadTaps {
        let taps: Int
        let padded: Int
        let width: Int
        /// Per output, `padded` weights each repeated for the four channels.
        let lanes: [Int32]

        init?(_ axis: ResampleAxis, channels: Int) {
            guard channels == 4, axis.taps >= 4 else { return nil }
            taps = axis.taps
            padded = (axis.taps + 3) / 4 * 4
            width = axis.target
            var lanes = [Int32](repeating: 0, count: axis.target * padded * 4)
            for x in 0..<axis.target {
                for k in 0..<axis.taps {
                    for c in 0..<4 { lanes[(x * padded + k) * 4 + c] = axis.weights[x * axis.taps + k] }
                }
            }
            self.lanes = lanes
        }

        func horizontal(_ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<Int32>, sourceWidth: Int,
                        starts: UnsafePointer<Int32>, weights: UnsafePointer<Int32>, round: Int32) {
            let shift = SIMD4<Int32>(repeating: Int32(ResampleAxis.fractionBits - Resampler.intermediateBits))
            let ceiling = SIMD4<Int32>(repeating: 255 << Int32(Resampler.intermediateBits))
            let raw = UnsafeRawPointer(src)
            lanes.withUnsafeBufferPointer { lanes in
                let lanesRaw = UnsafeRawPointer(lanes.baseAddress!)
                for x in 0..<width {
                    let start = Int(starts[x])
                    guard start + padded <= sourceWidth else {
                        Resampler.horizontal(src, dst + x * 4, channels: 4, width: 1, taps: taps,
                                             starts: starts + x, weights: weights + x * taps, round: round)
                        continue
                    }
                    var sum = SIMD16<Int32>.zero
                    var k = 0
                    while k < padded {
                        let px = SIMD16<Int32>(truncatingIfNeeded: raw.loadUnaligned(fromByteOffset: (start + k) * 4, as: SIMD16<UInt8>.self))
                        let w = lanesRaw.loadUnaligned(fromByteOffset: (x * padded + k) * 16, as: SIMD16<Int32>.self)
                        sum &+= px &* w
                        k += 4
                    }
                    let eight = sum.lowHalf &+ sum.highHalf
                    let four = eight.lowHalf &+ eight.highHalf &+ SIMD4(repeating: round)
                    let v = (four &>> shift).clamped(lowerBound: .zero, upperBound: ceiling)
                    (dst + x * 4).withMemoryRebound(to: SIMD4<Int32>.self, capacity: 1) { $0.pointee = v }
                }
            }
        }
    }

    @inline(__always)
    static func horizontal(_ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<Int32>, channels: Int, width: Int, taps: Int,
                           starts: UnsafePointer<Int32>, weights: UnsafePointer<Int32>, round: Int32) {
        let shift = Int32(ResampleAxis.fractionBits - intermediateBits)
        let ceiling: Int32 = 255 << Int32(intermediateBits)
        switch channels {
        case 4:
            // SIMD over the four channels of a pixel.
            let rounding = SIMD4<Int32>(repeating: round)
            for x in 0..<width {
                var sum = rounding
                let p = src + Int(starts[x]) * 4
                let w = weights + x * taps
                for k in 0..<taps {
                    let q = p + k * 4
                    let px = SIMD4<Int32>(Int32(q[0]), Int32(q[1]), Int32(q[2]), Int32(q[3]))
                    sum &+= px &* w[k]
                }
                let v = (sum &>> SIMD4<Int32>(repeating: shift)).clamped(lowerBound: .zero, upperBound: SIMD4(repeating: ceiling))
                (dst + x * 4).withMemoryRebound(to: SIMD4<Int32>.self, capacity: 1) { $0.pointee = v }
            }
        default:
            for x in 0..<width {
                let p = src + Int(starts[x]) * channels
                let w = weights + x * taps
                for c in 0..<channels {
                    var sum = round
                    for k in 0..<taps { sum &+= Int32(p[k * channels + c]) &* w[k] }
                    dst[x * channels + c] = min(max(sum >> shift, 0), ceiling)
                }
            }
        }
    }

    /// A float plane of `channels` interleaved values per pixel resized to `toWidth`×`toHeight`.
    public static func resize(floats src: [Float], width: Int, height: Int, channels: Int, toWidth dw: Int, toHeight dh: Int,
                              filter: ResizeFilter) -> [Float] {
        precondition(src.count == width * height * channels, "float plane size does not match")
        if width == dw && height == dh { return src }
        let rows = FloatRows(src, width: width, height: height, channels: channels, toWidth: dw, toHeight: dh, filter: filter)
        let rowLength = dw * channels
        return [Float](unsafeUninitializedCapacity: rowLength * dh) { out, count in
            for y in 0..<dh { rows.row(y, into: out.baseAddress! + y * rowLength) }
            count = rowLength * dh
        }
    }

    /// A float plane resized row by row on demand: the horizontal pass is done once for every
    /// source row (`source height × target width` values), each target row is then one vertical
    /// pass, so a large target (a depth map scaled to a 12 MP photo) never needs to exist whole.
    /// Rows are the values ``resize(floats:width:height:channels:toWidth:toHeight:filter:)`` gives;
    /// ``row(_:into:)`` may be called from several threads at once.
    public struct FloatRows: Sendable {
        /// The target size.
        public let width: Int, height: Int
        /// Interleaved values per pixel.
        public let channels: Int
        let ys: ResampleAxis
        /// Horizontally resampled source rows (`ys.source × width × channels`).
        let mid: [Float]

        /// Prepares `src` (`width × height × channels` values) for rows of `toWidth`×`toHeight`.
        public init(_ src: [Float], width: Int, height: Int, channels: Int, toWidth dw: Int, toHeight dh: Int, filter: ResizeFilter) {
            precondition(src.count == width * height * channels && dw > 0 && dh > 0, "float plane size does not match")
            self.width = dw; self.height = dh; self.channels = channels
            ys = ResampleAxis(source: height, target: dh, filter: filter)
            if width == dw {
                mid = src
                return
            }
            let xs = ResampleAxis(source: width, target: dw, filter: filter)
            mid = [Float](unsafeUninitializedCapacity: dw * height * channels) { m, count in
                src.withUnsafeBufferPointer { s in
                    for y in 0..<height {
                        let row = s.baseAddress! + y * width * channels
                        let drow = m.baseAddress! + y * dw * channels
                        for x in 0..<dw {
                            let start = Int(xs.starts[x])
                            for c in 0..<channels {
                                var sum: Float = 0
                                for k in 0..<xs.taps { sum += row[(start + k) * channels + c] * xs.realWeights[x * xs.taps + k] }
                                drow[x * channels + c] = sum
                            }
                        }
                    }
                }
                count = dw * height * channels
            }
        }

        /// Writes target row `y` (`width × channels` values) to `out`.
        public func row(_ y: Int, into out: UnsafeMutablePointer<Float>) {
            precondition(y >= 0 && y < height, "row \(y) is outside 0..<\(height)")
            let rowLength = width * channels
            if ys.source == ys.target {
                mid.withUnsafeBufferPointer { m in out.update(from: m.baseAddress! + y * rowLength, count: rowLength) }
                return
            }
            out.update(repeating: 0, count: rowLength)
            let start = Int(ys.starts[y])
            mid.withUnsafeBufferPointer { m in
                for k in 0..<ys.taps {
                    let w = ys.realWeights[y * ys.taps + k]
                    if w == 0 { continue }
                    let line = m.baseAddress! + (start + k) * rowLength
                    for i in 0..<rowLength { out[i] += line[i] * w }
                }
            }
        }
    }
}

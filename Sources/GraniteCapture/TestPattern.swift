import GraniteMedia

/// The moving test picture: scrolling color bars, a bouncing box, and a caption with the
/// frame number and its nominal time (`#000042 00:00:01.400`) drawn into the pixels.
///
/// Deterministic: frame `n` at a given size and rate is always the same bytes, so tests can
/// compare frames exactly and ``TestPattern/readCounter(_:)`` can read the number back.
public struct TestPattern: Sendable {
    /// Frame size.
    public let size: FrameSize
    /// The rate the caption's time assumes.
    public let fps: Double
    private let barRow: [UInt8]   // two widths of bars, RGBA, so any scroll offset is one slice
    private let rampRow: [UInt8]  // one row of the grey ramp band, RGBA

    /// Eight bars: white, yellow, cyan, green, magenta, red, blue, black (75% SMPTE-like levels).
    static let bars: [(UInt8, UInt8, UInt8)] = [
        (191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0),
        (191, 0, 191), (191, 0, 0), (0, 0, 191), (16, 16, 16),
    ]

    /// A pattern of `size`; `fps` only sets the caption's clock.
    public init(size: FrameSize, fps: Double = 30) {
        self.size = size
        self.fps = fps > 0 ? fps : 30
        var row = [UInt8](repeating: 255, count: size.width * 2 * 4)
        for x in 0..<(size.width * 2) {
            let bar = TestPattern.bars[(x % size.width) * TestPattern.bars.count / size.width]
            row[x * 4] = bar.0
            row[x * 4 + 1] = bar.1
            row[x * 4 + 2] = bar.2
        }
        barRow = row
        var ramp = [UInt8](repeating: 255, count: size.width * 4)
        for x in 0..<size.width {
            let v = UInt8(x * 255 / max(1, size.width - 1))
            ramp[x * 4] = v; ramp[x * 4 + 1] = v; ramp[x * 4 + 2] = v
        }
        rampRow = ramp
    }

    /// Glyph scale and caption origin for this size.
    var scale: Int { max(1, min(size.width / 160, size.height / 60)) }
    var captionOrigin: (x: Int, y: Int) { (2 * scale, 2 * scale) }

    /// The caption of frame `index`.
    public func caption(index: UInt64) -> String {
        let millis = UInt64((Double(index) * 1000 / fps).rounded())
        let h = millis / 3_600_000, m = millis / 60_000 % 60, s = millis / 1000 % 60, ms = millis % 1000
        func pad(_ v: UInt64, _ n: Int) -> String {
            let t = String(v)
            return String(repeating: "0", count: max(0, n - t.count)) + t
        }
        return "#\(pad(index % 1_000_000, 6)) \(pad(h, 2)):\(pad(m, 2)):\(pad(s, 2)).\(pad(ms, 3))"
    }

    /// Renders frame `index` as `rgba8`.
    public func render(index: UInt64) -> Image {
        var fresh = RecycledBytes(slots: 1)
        return render(index: index, recycling: &fresh)
    }

    /// Renders frame `index` as `rgba8` into storage `recycler` hands out (a source rendering frame
    /// after frame reuses the pages of frames nobody holds any more; same bytes as ``render(index:)``).
    public func render(index: UInt64, recycling recycler: inout RecycledBytes) -> Image {
        let w = size.width, h = size.height
        let rowBytes = w * 4
        let shift = Int(index * 4 % UInt64(w))
        let bandTop = h * 3 / 4
        let text = caption(index: index)
        // Every byte is written below (bars, then the ramp band), so old contents do not matter.
        let bytes = recycler.make(count: w * h * 4) { out in
            barRow.withUnsafeBytes { bars in
                let source = UnsafeRawBufferPointer(rebasing: bars[(shift * 4)..<(shift * 4 + rowBytes)])
                for y in 0..<bandTop {
                    UnsafeMutableRawBufferPointer(rebasing: out[(y * rowBytes)..<((y + 1) * rowBytes)]).copyMemory(from: source)
                }
            }
            // A grey ramp band with a white box bouncing across it.
            rampRow.withUnsafeBytes { ramp in
                for y in bandTop..<h {
                    UnsafeMutableRawBufferPointer(rebasing: out[(y * rowBytes)..<((y + 1) * rowBytes)]).copyMemory(from: ramp)
                }
            }
            let box = max(2, (h - bandTop) / 2)
            let travel = max(1, w - box)
            let phase = Int(index * 8 % UInt64(2 * travel))
            let left = phase < travel ? phase : 2 * travel - phase
            let top = bandTop + (h - bandTop - box) / 2
            for y in top..<min(h, top + box) {
                for x in left..<min(w, left + box) {
                    let i = (y * w + x) * 4
                    out[i] = 255; out[i + 1] = 255; out[i + 2] = 255
                }
            }
            drawCaption(text, into: out)
        }
        // The size was validated by `FrameSize`, so this cannot fail.
        return try! Image(width: w, height: h, format: .rgba8, bytes: bytes)
    }

    private func drawCaption(_ text: String, into bytes: UnsafeMutableRawBufferPointer) {
        let w = size.width, h = size.height, s = scale
        let (ox, oy) = captionOrigin
        let cell = (GlyphFont.width + 1) * s
        let boxW = min(w - ox, text.count * cell + s), boxH = min(h - oy, (GlyphFont.height + 2) * s)
        guard boxW > 0, boxH > 0 else { return }
        for y in oy..<(oy + boxH) {
            for x in ox..<(ox + boxW) {
                let i = (y * w + x) * 4
                bytes[i] = 0; bytes[i + 1] = 0; bytes[i + 2] = 0; bytes[i + 3] = 255
            }
        }
        for (n, character) in text.enumerated() {
            for gy in 0..<GlyphFont.height {
                for gx in 0..<GlyphFont.width where GlyphFont.isSet(character, x: gx, y: gy) {
                    for dy in 0..<s {
                        for dx in 0..<s {
                            let x = ox + s + n * cell + gx * s + dx, y = oy + s + gy * s + dy
                            guard x < w, y < h else { continue }
                            let i = (y * w + x) * 4
                            bytes[i] = 255; bytes[i + 1] = 255; bytes[i + 2] = 255
                        }
                    }
                }
            }
        }
    }

    /// Reads the caption's frame number back from the pixels of a frame of this pattern: `rgba8`
    /// (red), or as a camera format carries it (`yuyv`, `nv12`, `i420`: luma, read in place, no
    /// conversion); `nil` when the glyphs do not match (a damaged or foreign image) or the format
    /// is another.
    public func readCounter(_ image: Image) -> UInt64? {
        guard image.width == size.width, image.height == size.height else { return nil }
        let w = image.width
        // The channel that is bright for white glyphs and dark for the caption's black box.
        let offset: (Int, Int) -> Int
        switch image.format {
        case .rgba8: offset = { x, y in (y * w + x) * 4 }
        case .yuyv: offset = { x, y in y * image.bytesPerRow + x * 2 }
        case .nv12, .i420: offset = { x, y in y * w + x }
        default: return nil
        }
        return image.bytes.withUnsafeBufferPointer { bytes in
            readCounter { x, y in bytes[offset(x, y)] > 127 }
        }
    }

    /// The counter read through `bright(x, y)` (whether the pixel at x, y is lit).
    private func readCounter(_ bright: (Int, Int) -> Bool) -> UInt64? {
        let s = scale, (ox, oy) = captionOrigin, cell = (GlyphFont.width + 1) * s
        var digits = ""
        for n in 1...6 {
            let found = "0123456789".first { character in
                (0..<GlyphFont.height).allSatisfy { gy in
                    (0..<GlyphFont.width).allSatisfy { gx in
                        let x = ox + s + n * cell + gx * s, y = oy + s + gy * s
                        guard x < size.width, y < size.height else { return false }
                        return bright(x, y) == GlyphFont.isSet(character, x: gx, y: gy)
                    }
                }
            }
            guard let found else { return nil }
            digits.append(found)
        }
        return UInt64(digits)
    }
}

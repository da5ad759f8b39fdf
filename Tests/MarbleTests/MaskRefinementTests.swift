import Testing
@testable import Marble

/// The person mask's CPU reference (guided upsampling on the frame's luma, feathering,
/// moving average with a scene-cut reset) on odd sizes.
struct MaskRefinementTests {
    /// A 37×23 frame, a person (dark, luma 40) left of column 17 on a pale (200) background.
    static let (width, height, edge) = (37, 23, 17)
    static func frame(dark: UInt32 = 40, pale: UInt32 = 200) -> RGBAPlane {
        var plane = RGBAPlane(width: width, height: height)
        for y in 0..<height { for x in 0..<width { let v = x < edge ? dark : pale; plane.pixels[y * width + x] = Px.pack(v, v, v, 255) } }
        return plane
    }
    /// The true mask and its 9×5 area average (what a low-resolution model sees: a blurred edge).
    static let truth: [Float] = (0..<(width * height)).map { Float($0 % width < edge ? 1 : 0) }
    static func lowRes(_ mw: Int = 9, _ mh: Int = 5) -> [Float] {
        (0..<(mw * mh)).map { i in
            let (qx, qy) = (i % mw, i / mw)
            var sum: Float = 0, n: Float = 0
            for y in (qy * height / mh)..<((qy + 1) * height / mh) {
                for x in (qx * width / mw)..<((qx + 1) * width / mw) { sum += truth[y * width + x]; n += 1 }
            }
            return sum / n
        }
    }

    /// Half-pixel bilinear, the resize it improves on.
    static func bilinear(_ m: [Float], _ mw: Int, _ mh: Int) -> [Float] {
        (0..<(width * height)).map { i in
            let fx = min(max((Float(i % width) + 0.5) * Float(mw) / Float(width) - 0.5, 0), Float(mw - 1))
            let fy = min(max((Float(i / width) + 0.5) * Float(mh) / Float(height) - 0.5, 0), Float(mh - 1))
            let x0 = Int(fx), y0 = Int(fy), x1 = min(x0 + 1, mw - 1), y1 = min(y0 + 1, mh - 1)
            let ax = fx - Float(x0), ay = fy - Float(y0)
            let top = m[y0 * mw + x0] * (1 - ax) + m[y0 * mw + x1] * ax
            let bottom = m[y1 * mw + x0] * (1 - ax) + m[y1 * mw + x1] * ax
            return top * (1 - ay) + bottom * ay
        }
    }

    static func meanError(_ a: [Float], _ b: [Float]) -> Float { zip(a, b).map { abs($0 - $1) }.reduce(0, +) / Float(a.count) }

    @Test func constantMaskStaysConstant() {
        let r = MaskRefinement()
        let up = r.upsample([Float](repeating: 0.7, count: 45), maskWidth: 9, maskHeight: 5,
                            luma: MaskRefinement.luma(Self.frame()), width: Self.width, height: Self.height)
        #expect(up.allSatisfy { abs($0 - 0.7) < 1e-5 })
        #expect(r.feathered(0.2) == 0 && r.feathered(0.8) == 1 && abs(r.feathered(0.5) - 0.5) < 1e-6)
    }

    /// The edge follows the frame's: less than half bilinear's error against the true mask.
    @Test func upsamplingSnapsToTheFramesEdge() {
        let low = Self.lowRes()
        let r = MaskRefinement()
        let guided = r.upsample(low, maskWidth: 9, maskHeight: 5, luma: MaskRefinement.luma(Self.frame()), width: Self.width, height: Self.height)
        let plain = Self.bilinear(low, 9, 5)
        let (guidedError, plainError) = (Self.meanError(guided, Self.truth), Self.meanError(plain, Self.truth))
        print("mask error against the truth: guided \(guidedError), bilinear \(plainError)")
        #expect(guidedError < 0.5 * plainError)
        // Across the edge the person side stays above ½ and the background below.
        #expect(guided[10 * Self.width + Self.edge - 1] > 0.5 && guided[10 * Self.width + Self.edge] < 0.5)
    }

    /// On a still scene with a noisy model, frame-to-frame change is at most half the unsmoothed mask's.
    @Test func movingAverageHalvesFlicker() {
        var smoothed = MaskRefinement(), raw = MaskRefinement()
        raw.smooth = 0
        var seed: UInt64 = 0x9E3779B97F4A7C15
        func noise() -> Float { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Float(seed >> 40) / Float(1 << 24) - 0.5 }
        let frame = Self.frame(dark: 120, pale: 120)  // flat: only the temporal filter is at work
        var last: ([Float], [Float])?
        var change: (Float, Float) = (0, 0)
        for _ in 0..<12 {
            let mask = (0..<45).map { _ in 0.5 + 0.2 * noise() }
            let s = smoothed.refine(mask, maskWidth: 9, maskHeight: 5, frame: frame)
            let r = raw.refine(mask, maskWidth: 9, maskHeight: 5, frame: frame)
            if let (ls, lr) = last { change.0 += Self.meanError(s, ls); change.1 += Self.meanError(r, lr) }
            last = (s, r)
        }
        print("mean absolute change per frame: smoothed \(change.0 / 11), unsmoothed \(change.1 / 11)")
        #expect(change.1 > 0)
        #expect(change.0 <= 0.5 * change.1)
    }

    /// A scene cut restarts the average: the output is the new frame's mask alone.
    @Test func sceneCutResets() {
        var r = MaskRefinement()
        let low = Self.lowRes()
        for _ in 0..<3 { _ = r.refine(low, maskWidth: 9, maskHeight: 5, frame: Self.frame()) }
        let other = Self.frame(dark: 230, pale: 10)
        let flipped = low.map { 1 - $0 }
        let after = r.refine(flipped, maskWidth: 9, maskHeight: 5, frame: other)
        var fresh = MaskRefinement()
        #expect(after == fresh.refine(flipped, maskWidth: 9, maskHeight: 5, frame: other))
        // Without a cut (the same scene) the old mask still weighs in.
        var kept = MaskRefinement()
        _ = kept.refine(low, maskWidth: 9, maskHeight: 5, frame: Self.frame())
        let blended = kept.refine(flipped, maskWidth: 9, maskHeight: 5, frame: Self.frame())
        #expect(blended != fresh.refine(flipped, maskWidth: 9, maskHeight: 5, frame: Self.frame()))
    }

    /// The cut is measured per mask cell: a still camera's sensor noise (±20 levels a pixel, a mean
    /// change of ~13 a pixel, above `cut=10`) averages out within the cells and is no cut; the
    /// frame's luma turned around is one.
    @Test func sensorNoiseIsNoCut() {
        var seed: UInt64 = 7
        func noisy(_ plane: RGBAPlane) -> RGBAPlane {
            var out = plane
            for i in out.pixels.indices {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                let v = UInt32(min(max(Int(Px.r(plane.pixels[i])) + Int(seed >> 33) % 41 - 20, 0), 255))
                out.pixels[i] = Px.pack(v, v, v, 255)
            }
            return out
        }
        let (a, b) = (noisy(Self.frame()), noisy(Self.frame()))
        let perPixel = zip(MaskRefinement.luma(a), MaskRefinement.luma(b)).map { abs(Int($0) - Int($1)) }.reduce(0, +)
        #expect(Double(perPixel) / Double(Self.width * Self.height) > 10, "the noise alone is a mean change above 10 a pixel")
        let low = Self.lowRes(), flipped = low.map { 1 - $0 }
        var r = MaskRefinement(), fresh = MaskRefinement()
        r.sceneCut = 10
        fresh.sceneCut = 10
        _ = r.refine(low, maskWidth: 9, maskHeight: 5, frame: a)
        #expect(r.refine(flipped, maskWidth: 9, maskHeight: 5, frame: b) != fresh.refine(flipped, maskWidth: 9, maskHeight: 5, frame: b),
                "noise: no cut, the old mask still weighs in")
        var cut = MaskRefinement()
        cut.sceneCut = 10
        _ = cut.refine(low, maskWidth: 9, maskHeight: 5, frame: a)
        let turned = Self.frame(dark: 230, pale: 10)
        var again = MaskRefinement()
        #expect(cut.refine(flipped, maskWidth: 9, maskHeight: 5, frame: turned) == again.refine(flipped, maskWidth: 9, maskHeight: 5, frame: turned))
    }
}

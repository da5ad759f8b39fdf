import Foundation

/// The person mask made fit for a frame, as the `background` filter uses it (issue 38): the CPU
/// reference of `background_guide.comp` and `background.comp`, step by step.
///
/// ```
///  model mask (e.g. 256×144) ─guided filter on the frame's luma (at the mask's size)─► fits
///      ─EMA over time, reset on a scene cut (at the mask's size)─► ─the fits' means─► coefficients
///      ─bilinear to the frame, alpha = A·luma + B─► ─feather (smoothstep over [½ − f, ½ + f])─► alpha
/// ```
///
/// Upsampling is the fast guided filter (He, Sun & Tang, "Guided image filtering", TPAMI 2013;
/// He & Sun, "Fast guided filter", 2015): the guide is the frame's luma averaged over each mask
/// cell; in a window of (2r + 1)² cells around each cell (r: ``radius(width:height:)``) the mask is fitted as a linear
/// function of the guide, a = cov(I, p) / (var(I) + `epsilon`), b = mean p − a · mean I; the fits
/// of the windows covering a cell are averaged (A, B); the frame pixel takes A and B bilinearly
/// from the cells around it and its own luma I: alpha = A · I + B. Where the luma varies more than
/// `epsilon` the mask's edge follows the frame's edge at full resolution (a low-resolution mask
/// blurs across it, as bilinear resizing does); in flat regions it is a smoothed mask. All of it
/// runs at the mask's size except one bilinear fetch and a multiply-add per frame pixel (the joint
/// bilateral upsampling this replaced took 16 exponentials a pixel: 130 ms a 720p frame on
/// lavapipe). Windows are clipped at the borders (means over the cells inside).
///
/// Moving average: each cell's fit (a, b) = last + (1 − `smooth`) · (fit − last), over the frames
/// of one frame and mask size. The filter is linear in the mask, so on a still frame this is the
/// average of the upsampled mask itself, at the mask's size (36,864 cells, not 921,600 pixels a
/// 720p frame); where the frame moves, the averaged fit still follows the new frame's edges. It
/// restarts (this frame's fits alone) on the first frame and on a scene cut: when the frame's luma
/// changed by more than `sceneCut` levels on average since the last frame, measured per cell:
/// Σ over cells |luma sum − last luma sum| > ⌊`sceneCut` · pixels⌋ (pixels: the cells' pixels,
/// ``cellPixels(width:height:maskWidth:maskHeight:)``), summed exactly in integers (the device sums
/// the same integers in 64 bits). Per cell, a still camera's sensor noise averages out and a cut
/// stands out. A cut on luma, not on the mask, so a mask the model reuses for a few frames (or a
/// frame with no mask) never counts as one.
struct MaskRefinement {
    /// The guided filter's window radius in cells for a `width`×`height` mask: a 64th of its
    /// shorter side, at least 1 (2 for MediaPipe's 256×144 mask: windows of 5×5 cells, 25×25
    /// pixels of a 1280×720 frame).
    static func radius(width: Int, height: Int) -> Int { max(1, min(width, height) / 64) }
    /// The guided filter's regulariser on the luma's variance (luma in 0…1): about (12/255)².
    var epsilon: Float = 0.002
    /// Half-width of the feathered edge in probability: values below ½ − f become 0, above ½ + f 1.
    var feather: Float = 0.25
    /// Weight of the frames before in the moving average (0 = no smoothing).
    var smooth: Float = 0.5
    /// Mean absolute luma change (0…255) since the last frame above which the average restarts.
    var sceneCut: Float = 24

    /// The averaged fits and the cells' luma sums of the frame they were made on (nil before the first frame).
    private(set) var state: [SIMD2<Float>]?
    private var lastSums: [UInt32]?

    /// The frame's luma (the shaders' `luma`).
    static func luma(_ frame: RGBAPlane) -> [UInt8] { frame.pixels.map { UInt8(Px.luma($0)) } }

    /// The frame pixels of mask cell `q` along an axis of `frame` pixels and `cells` cells: from
    /// ⌊q·frame / cells⌋, at least one (a mask larger than the frame shares pixels between cells).
    static func cellSpan(_ q: Int, frame: Int, cells: Int) -> Range<Int> {
        let start = q * frame / cells
        return start..<max((q + 1) * frame / cells, start + 1)
    }

    /// Step 0 (`background_guide.comp`): each cell's guide (its mean luma, 0…1) beside the mask,
    /// and its luma sum (the scene cut's measure).
    func guide(_ mask: [Float], maskWidth mw: Int, maskHeight mh: Int, luma: [UInt8], width: Int, height: Int)
        -> (cells: [SIMD2<Float>], sums: [UInt32]) {
        precondition(mask.count == mw * mh && luma.count == width * height)
        var cells = [SIMD2<Float>](repeating: .zero, count: mw * mh), sums = [UInt32](repeating: 0, count: mw * mh)
        for qy in 0..<mh {
            let rows = Self.cellSpan(qy, frame: height, cells: mh)
            for qx in 0..<mw {
                let columns = Self.cellSpan(qx, frame: width, cells: mw)
                var sum: UInt32 = 0
                for y in rows { for x in columns { sum += UInt32(luma[y * width + x]) } }
                let i = Float(sum) / Float(rows.count * columns.count * 255)
                cells[qy * mw + qx] = SIMD2(i, mask[qy * mw + qx])
                sums[qy * mw + qx] = sum
            }
        }
        return (cells, sums)
    }

    /// Step 1: each window's linear fit (a, b) of the mask on the guide.
    func fits(_ guide: [SIMD2<Float>], maskWidth mw: Int, maskHeight mh: Int) -> [SIMD2<Float>] {
        windowed(guide, mw, mh, Self.radius(width: mw, height: mh)) { s, n in
            let count = Float(n)
            let meanI = s[0] / count, meanP = s[1] / count
            let a = (s[3] / count - meanI * meanP) / (s[2] / count - meanI * meanI + epsilon)
            return SIMD2(a, meanP - a * meanI)
        }
    }

    /// Step 2: the fits' mean over the windows covering each cell, the coefficients (A, B):
    /// alpha = A · luma / 255 + B, A and B taken bilinearly.
    func coefficients(fits: [SIMD2<Float>], maskWidth mw: Int, maskHeight mh: Int) -> [SIMD2<Float>] {
        windowed(fits, mw, mh, Self.radius(width: mw, height: mh)) { s, n in SIMD2(s[0], s[1]) / Float(n) }
    }

    /// The three steps, unaveraged.
    func coefficients(_ mask: [Float], maskWidth mw: Int, maskHeight mh: Int, luma: [UInt8], width: Int, height: Int) -> [SIMD2<Float>] {
        let guide = guide(mask, maskWidth: mw, maskHeight: mh, luma: luma, width: width, height: height).cells
        return coefficients(fits: fits(guide, maskWidth: mw, maskHeight: mh), maskWidth: mw, maskHeight: mh)
    }

    /// For every cell, `finish` of the sums over its clipped window of (v.x, v.y, v.x², v.x·v.y)
    /// and the window's cell count, in the shader's order: separably, each column's sums over the
    /// window's rows (top to bottom), then those column sums over the window's columns (left to
    /// right) — 2(2r + 1) loads a cell instead of (2r + 1)².
    private func windowed(_ values: [SIMD2<Float>], _ mw: Int, _ mh: Int, _ radius: Int, _ finish: (SIMD4<Float>, Int) -> SIMD2<Float>) -> [SIMD2<Float>] {
        var columns = [SIMD4<Float>](repeating: .zero, count: mw * mh)
        for qy in 0..<mh {
            for qx in 0..<mw {
                var s = SIMD4<Float>.zero
                for y in max(qy - radius, 0)...min(qy + radius, mh - 1) {
                    let v = values[y * mw + qx]
                    s += SIMD4(v.x, v.y, v.x * v.x, v.x * v.y)
                }
                columns[qy * mw + qx] = s
            }
        }
        var out = [SIMD2<Float>](repeating: .zero, count: mw * mh)
        for qy in 0..<mh {
            let rows = min(qy + radius, mh - 1) - max(qy - radius, 0) + 1
            for qx in 0..<mw {
                var s = SIMD4<Float>.zero
                let range = max(qx - radius, 0)...min(qx + radius, mw - 1)
                for x in range { s += columns[qy * mw + x] }
                out[qy * mw + qx] = finish(s, rows * range.count)
            }
        }
        return out
    }

    /// A pixel's position along an axis in cells (centres at integer + ½, as half-pixel resizing):
    /// the cell before it and the weight of the one after, clamped at the ends. In integers,
    /// ((2p + 1)·cells − frame) / 2·frame, so `background.comp` finds the same cells and weight.
    static func bilinearPosition(_ p: Int, frame: Int, cells: Int) -> (index: Int, weight: Float) {
        let n = (2 * p + 1) * cells - frame
        let index = floorDivide(n, 2 * frame)
        if index < 0 { return (0, 0) }
        if index >= cells - 1 { return (cells - 1, 0) }
        return (index, Float(n - index * 2 * frame) / Float(2 * frame))
    }

    /// The guided upsampling of `mask` (`maskWidth`×`maskHeight`, 0…1) to `luma`'s frame, 0…1.
    func upsample(_ mask: [Float], maskWidth mw: Int, maskHeight mh: Int, luma: [UInt8], width: Int, height: Int) -> [Float] {
        upsample(coefficients: coefficients(mask, maskWidth: mw, maskHeight: mh, luma: luma, width: width, height: height),
                 maskWidth: mw, maskHeight: mh, luma: luma, width: width, height: height)
    }

    /// Coefficients `c` (`maskWidth`×`maskHeight`) taken bilinearly to `luma`'s frame: A · luma + B, 0…1.
    func upsample(coefficients c: [SIMD2<Float>], maskWidth mw: Int, maskHeight mh: Int, luma: [UInt8], width: Int, height: Int) -> [Float] {
        var out = [Float](repeating: 0, count: width * height)
        for y in 0..<height {
            let (y0, ay) = Self.bilinearPosition(y, frame: height, cells: mh)
            let y1 = min(y0 + 1, mh - 1)
            for x in 0..<width {
                let (x0, ax) = Self.bilinearPosition(x, frame: width, cells: mw)
                let x1 = min(x0 + 1, mw - 1)
                let top = c[y0 * mw + x0] + ax * (c[y0 * mw + x1] - c[y0 * mw + x0])
                let bottom = c[y1 * mw + x0] + ax * (c[y1 * mw + x1] - c[y1 * mw + x0])
                let ab = top + ay * (bottom - top)
                out[y * width + x] = min(max(ab.x * (Float(luma[y * width + x]) / 255) + ab.y, 0), 1)
            }
        }
        return out
    }

    /// ⌊a / b⌋ for b > 0.
    static func floorDivide(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }

    /// Smoothstep over [½ − feather, ½ + feather] (a hard threshold at ½ when feather is 0).
    func feathered(_ v: Float) -> Float {
        guard feather > 0 else { return v >= 0.5 ? 1 : 0 }
        let t = min(max((v - (0.5 - feather)) / (2 * feather), 0), 1)
        return t * t * (3 - 2 * t)
    }

    /// The frame's alpha with the moving average (the fits averaged with the frames before, unless
    /// smoothing is off, this is the first frame of these sizes, or the scene changed), feathered;
    /// all zeros without a mask (the history kept for the next mask).
    mutating func refined(_ mask: DepthPlane?, luma: [UInt8], width: Int, height: Int) -> [Float] {
        guard let mask else { return [Float](repeating: 0, count: width * height) }
        let (mw, mh) = (mask.width, mask.height)
        let (guide, sums) = guide(mask.values, maskWidth: mw, maskHeight: mh, luma: luma, width: width, height: height)
        let limit = Self.cutLimit(sceneCut, pixels: Self.cellPixels(width: width, height: height, maskWidth: mw, maskHeight: mh))
        let fits = smoothed(fits(guide, maskWidth: mw, maskHeight: mh), sums: sums, limit: limit)
        let c = coefficients(fits: fits, maskWidth: mw, maskHeight: mh)
        return upsample(coefficients: c, maskWidth: mw, maskHeight: mh, luma: luma, width: width, height: height).map(feathered)
    }

    /// ``refined(_:luma:width:height:)`` of a `maskWidth`×`maskHeight` mask on `frame`.
    mutating func refine(_ mask: [Float], maskWidth: Int, maskHeight: Int, frame: RGBAPlane) -> [Float] {
        refined(DepthPlane(width: maskWidth, height: maskHeight, values: mask), luma: Self.luma(frame), width: frame.width, height: frame.height)
    }

    /// The pixels the cells of a `maskWidth`×`maskHeight` mask on a `width`×`height` frame cover
    /// (each counted once per cell: the frame's pixels, unless the mask is larger than the frame).
    static func cellPixels(width: Int, height: Int, maskWidth mw: Int, maskHeight mh: Int) -> Int {
        (0..<mw).reduce(0) { $0 + cellSpan($1, frame: width, cells: mw).count }
            * (0..<mh).reduce(0) { $0 + cellSpan($1, frame: height, cells: mh).count }
    }

    /// The largest summed luma change of `pixels` pixels that is no scene cut: ⌊`sceneCut` · pixels⌋.
    static func cutLimit(_ sceneCut: Float, pixels: Int) -> UInt64 {
        UInt64((Double(sceneCut) * Double(pixels)).rounded(.down))
    }

    /// This frame's `fits` averaged with the history (a, b each), or alone when smoothing is off,
    /// there is no history of this size, or Σ|sums − last sums| exceeds `limit` (a scene cut).
    mutating func smoothed(_ fits: [SIMD2<Float>], sums: [UInt32], limit: UInt64) -> [SIMD2<Float>] {
        guard smooth > 0 else { return fits }
        defer { lastSums = sums }
        guard var average = state, let last = lastSums, last.count == sums.count, average.count == fits.count,
              Self.change(from: last, to: sums) <= limit else {
            state = fits
            return fits
        }
        let newWeight = 1 - smooth
        for i in average.indices {
            let step = newWeight * (fits[i] - average[i])
            average[i] = average[i] + step
        }
        state = average
        return average
    }

    /// Σ|a − b|, exactly.
    static func change(from a: [UInt32], to b: [UInt32]) -> UInt64 {
        zip(a, b).reduce(0) { $0 + UInt64($1.0 > $1.1 ? $1.0 - $1.1 : $1.1 - $1.0) }
    }
}

import Foundation

/// The person mask made fit for a frame, as the `background` filter uses it (issue 38): the CPU
/// reference of `background.comp` and `background_cut.comp`, step by step.
///
/// ```
///  model mask (e.g. 256×144) ─joint bilateral upsampling on the frame's luma─► frame-size mask
///      ─feather (smoothstep over [½ − f, ½ + f])─► ─EMA over time, reset on a scene cut─► alpha
/// ```
///
/// Upsampling: each frame pixel p averages the 4×4 mask samples q nearest its position in the
/// mask, weighted by a spatial Gaussian (σ = `spatialSigma` mask samples) times a range Gaussian
/// of the luma difference between p and the frame pixel at q's centre (σ = `rangeSigma` of 255),
/// so the mask's edge snaps to the frame's edges (Kopf et al., "Joint bilateral upsampling",
/// SIGGRAPH 2007) instead of blurring across them as bilinear does.
///
/// Moving average: alpha = last + (1 − `smooth`) · (alpha − last) per pixel, over the frames of
/// one size. It restarts (this frame's alpha alone) on the first frame and on a scene cut: when
/// the frame's luma changed by more than `sceneCut` levels on average since the last frame, i.e.
/// Σ|luma − last luma| > ⌊`sceneCut` · pixels⌋, summed exactly in integers (the device sums the
/// same integers in 64 bits). A cut on luma, not on the mask, so a mask the model reuses for a few
/// frames (or a frame with no mask) never counts as one.
struct MaskRefinement {
    var spatialSigma: Float = 1
    var rangeSigma: Float = 16
    /// Half-width of the feathered edge in probability: values below ½ − f become 0, above ½ + f 1.
    var feather: Float = 0.25
    /// Weight of the frames before in the moving average (0 = no smoothing).
    var smooth: Float = 0.5
    /// Mean absolute luma change (0…255) since the last frame above which the average restarts.
    var sceneCut: Float = 24

    /// The averaged alpha and the luma of the frame it was made on (nil before the first frame).
    private(set) var state: [Float]?
    private var lastLuma: [UInt8]?

    /// The frame's luma (the shaders' `luma`).
    static func luma(_ frame: RGBAPlane) -> [UInt8] { frame.pixels.map { UInt8(Px.luma($0)) } }

    /// Joint bilateral upsampling of `mask` (`maskWidth`×`maskHeight`, 0…1) to `frame`'s size.
    func upsample(_ mask: [Float], maskWidth: Int, maskHeight: Int, luma: [UInt8], width: Int, height: Int) -> [Float] {
        precondition(mask.count == maskWidth * maskHeight && luma.count == width * height)
        let spatial = -1 / (2 * spatialSigma * spatialSigma), range = -1 / (2 * rangeSigma * rangeSigma)
        var out = [Float](repeating: 0, count: width * height)
        for y in 0..<height {
            // p's position in mask samples (centres at integer + ½, as half-pixel resizing).
            // In integers, ((2y + 1)·maskHeight − height) / 2·height, so its floor is exact and
            // `background.comp` computes the same sample indices.
            let ny = (2 * y + 1) * maskHeight - height
            let my = Float(ny) / Float(2 * height)
            let y0 = Self.floorDivide(ny, 2 * height) - 1
            for x in 0..<width {
                let nx = (2 * x + 1) * maskWidth - width
                let mx = Float(nx) / Float(2 * width)
                let x0 = Self.floorDivide(nx, 2 * width) - 1
                let lp = Float(luma[y * width + x])
                // The weights' exponents first, then exp(e − max e): the same normalised weights,
                // but the largest is 1, so none of them hangs on denormals (which a GPU may flush).
                var exponents = SIMD16<Float>(repeating: 0), values = SIMD16<Float>(repeating: 0)
                var n = 0, top = -Float.greatestFiniteMagnitude
                for qy in max(y0, 0)...min(y0 + 3, maskHeight - 1) {
                    // The frame pixel at q's centre.
                    let fy = min((2 * qy + 1) * height / (2 * maskHeight), height - 1)
                    for qx in max(x0, 0)...min(x0 + 3, maskWidth - 1) {
                        let fx = min((2 * qx + 1) * width / (2 * maskWidth), width - 1)
                        let dx = Float(qx) - mx, dy = Float(qy) - my
                        let dl = lp - Float(luma[fy * width + fx])
                        exponents[n] = spatial * (dx * dx + dy * dy) + range * dl * dl
                        values[n] = mask[qy * maskWidth + qx]
                        top = max(top, exponents[n])
                        n += 1
                    }
                }
                var sum: Float = 0, weights: Float = 0
                for k in 0..<n {
                    let w = expf(exponents[k] - top)
                    sum += w * values[k]
                    weights += w
                }
                out[y * width + x] = sum / weights
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

    /// The frame's alpha (1 = person) before the average: `mask` upsampled and feathered, or all
    /// ones without a mask (the whole frame kept).
    func alpha(_ mask: DepthPlane?, luma: [UInt8], width: Int, height: Int) -> [Float] {
        guard let mask else { return [Float](repeating: 1, count: width * height) }
        return upsample(mask.values, maskWidth: mask.width, maskHeight: mask.height, luma: luma, width: width, height: height)
            .map(feathered)
    }

    /// The largest summed luma change of `pixels` pixels that is no scene cut: ⌊`sceneCut` · pixels⌋.
    static func cutLimit(_ sceneCut: Float, pixels: Int) -> UInt64 {
        UInt64((Double(sceneCut) * Double(pixels)).rounded(.down))
    }

    /// `current` (this frame's alpha) averaged with the frames before, unless smoothing is off
    /// or the scene changed (then `current` alone); `luma` is the frame's.
    mutating func smoothed(_ current: [Float], luma: [UInt8]) -> [Float] {
        guard smooth > 0 else { return current }
        defer { lastLuma = luma }
        guard var average = state, let last = lastLuma, last.count == luma.count,
              !isCut(from: last, to: luma) else {
            state = current
            return current
        }
        let newWeight = 1 - smooth
        for i in average.indices {
            let step = newWeight * (current[i] - average[i])
            average[i] = average[i] + step
        }
        state = average
        return average
    }

    /// The frame's alpha: ``alpha(_:luma:width:height:)`` then ``smoothed(_:luma:)``.
    mutating func refine(_ mask: [Float], maskWidth: Int, maskHeight: Int, frame: RGBAPlane) -> [Float] {
        let luma = Self.luma(frame)
        let current = alpha(DepthPlane(width: maskWidth, height: maskHeight, values: mask), luma: luma,
                            width: frame.width, height: frame.height)
        return smoothed(current, luma: luma)
    }

    /// Whether the summed absolute luma change exceeds ``cutLimit(_:pixels:)``.
    func isCut(from a: [UInt8], to b: [UInt8]) -> Bool {
        var total: UInt64 = 0
        for i in a.indices { total += UInt64(abs(Int(a[i]) - Int(b[i]))) }
        return total > Self.cutLimit(sceneCut, pixels: a.count)
    }
}

import Foundation
import GraniteGPU
import GraniteMedia

/// Separable gaussian blur (any sigma) and the unsharp-mask sharpen built on it.
///
/// ```
///  src ─blur rows─► tmp ─blur columns─► dst                    (blur)
///  src ─blur rows─► tmp ─blur columns─► blurred ─unsharp(src)─► dst   (sharpen)
///  src ─area ÷f─► small ─blur rows, columns (σ')─► ─bilinear ×f (blur_enlarge.comp)─► dst   (σ ≥ 4.1: see ``Reduction``)
/// ```
/// Both passes run in 8-bit fixed point (Q8 weights), so GPU and CPU agree exactly; the large-σ
/// path's resampling is the shared resampler's (``Resize``), exact on both sides too.
///
/// σ is always in full-resolution pixels. Up to σ ≈ 4.1 the kernel is the sampled Gaussian
/// truncated at ⌈3σ⌉. Above, blurring every pixel with a kernel 6σ wide is what makes a large
/// blur slow (σ 12 at 1280×720: 73 taps a pass), so it is done the way real-time pipelines do:
/// an area (box) reduction by f = 2^k, a Gaussian of σ' = √(σ² − (f² − 1)/4) / f there (σ' ≥ 2,
/// the largest such f: the box and the bilinear enlargement add (f² − 1)/12 and (f² − 1)/6 of
/// variance, so the whole has variance σ²), and a bilinear enlargement back: σ 12 at 1280×720
/// blurs 320×180 with 17 taps a pass instead of 1280×720 with 73. Measured against OpenCV's
/// exact `GaussianBlur` (floats, edges replicated) on a 640×360 test picture
/// (`MarbleOracleTests.picture`: waves, a disc, dark bars every 16 pixels) for σ 8, 12, 20, 32:
/// at least ⌈3σ⌉ from the edges the largest difference is 2, 3, 2, 2 levels and the mean 0.31,
/// 0.46, 0.24, 0.19; over the whole frame the mean is 0.33, 0.68, 1.03, 1.29, the largest
/// differences (6, 27, 52, 46) in the corners, because the reduction replicates the edge's block
/// of f pixels where the exact blur replicates the last pixel (the picture's edge column is a dark
/// bar). `MarbleOracleTests.largeBlurAgreesWithOpenCV` holds these bounds.
package struct GaussianBlur: FilterKernel {
    /// How the GPU passes are written. The catalog's blur is `blocked` (strips on a CPU driver,
    /// two 1-D passes on a GPU); the others are kept to measure shader styles against it
    /// (`granite-bench filters --styles`).
    package enum Style: String, Sendable, CaseIterable {
        /// 16 outputs an invocation sliding over registers, spec-constant weights: on a CPU driver
        /// one dispatch walking down strips (`blur_strip.comp`), on a GPU two 1-D passes.
        case blocked
        /// `blocked`'s two 1-D passes on every device (what GPUs run; testable on lavapipe).
        case twoPass
        /// Two 1-D passes, taps hand-unrolled, weights as specialization constants (up to 24 a side).
        case unrolled
        /// Two 1-D passes, a loop over weights read from a buffer.
        case looped
        /// One 2-D pass looping over the whole kernel in 16×16 workgroups (no intermediate rounding).
        case direct2D
    }

    /// The most taps a side `blur.comp` has unrolled.
    static let unrolledTaps = 24
    /// Outputs per invocation in `blur_block.comp` and `blur_quad.glsl` (their BLOCK).
    static let block = 16
    /// Rows a `blur_strip.comp` invocation walks down (its STRIP); 2·radius halo rows of each strip
    /// are blurred along x twice (32, 64 and 128 cost the same on lavapipe at sigma 2).
    static let stripRows = 64
    /// The largest radius `blur_strip.comp` takes (its window of 2·radius + 1 rows lives in registers).
    static let stripTaps = 12
    /// The weights of the blur at the resolution it runs at (the full one, or the reduced one).
    let weights: [UInt32]
    let amount: Float?
    var style = Style.blocked
    /// The large-σ path's reduction, or nil for the exact blur.
    let reduction: Reduction?

    /// How a large blur is approximated: an area reduction by `factor`, a Gaussian of `sigma`
    /// (in reduced pixels) there, a bilinear enlargement back (`GaussianBlur`'s documentation).
    struct Reduction: Equatable {
        /// The reduction's factor f (a power of two ≥ 2).
        var factor: Int
        /// The reduced image's Gaussian's standard deviation σ' (≥ `smallestSigma`).
        var sigma: Float

        /// The least σ' the reduced blur may have: a coarser reduction would blur with fewer
        /// than ~13 taps, where the kernel's sampling starts to show.
        static let smallestSigma: Float = 2

        /// The coarsest reduction for `sigma` (full-resolution pixels) whose σ' is at least
        /// `smallestSigma`; nil below σ ≈ 4.1, where the exact blur is cheap.
        init?(sigma: Float) {
            var found: (Int, Float)?
            var factor = 2
            while true {
                let f = Float(factor)
                let variance = sigma * sigma - (f * f - 1) / 4
                guard variance > 0 else { break }
                let reduced = variance.squareRoot() / f
                guard reduced >= Self.smallestSigma else { break }
                found = (factor, reduced)
                factor *= 2
            }
            guard let (factor, sigma) = found else { return nil }
            self.factor = factor
            self.sigma = sigma
        }

        /// The reduced size of a `width`×`height` image (each side ⌈side / f⌉).
        func size(_ width: Int, _ height: Int) -> (width: Int, height: Int) {
            ((width + factor - 1) / factor, (height + factor - 1) / factor)
        }
    }

    static let blur = FilterDescription(
        name: "blur", summary: "Gaussian blur of any sigma: separable, radius 3 sigma; above sigma 4.1 on an area-reduced copy, enlarged bilinearly.",
        parameters: [.init("sigma", .float(min: 0.1, max: 32, default: 2), "standard deviation in pixels")])
    static let sharpen = FilterDescription(
        name: "sharpen", summary: "Unsharp mask: adds amount times the difference from a gaussian blur.",
        parameters: [
            .init("amount", .float(min: 0, max: 5, default: 1), "strength"),
            .init("sigma", .float(min: 0.1, max: 16, default: 1), "blur sigma of the mask"),
        ])

    init(sigma: Float, amount: Float? = nil) {
        reduction = Reduction(sigma: sigma)
        weights = GaussianBlur.weights(sigma: reduction?.sigma ?? sigma)
        self.amount = amount
    }

    /// The exact blur with `weights` (the reduced image's blur of the large-σ path).
    private init(weights: [UInt32], style: Style) {
        self.weights = weights
        self.style = style
        amount = nil
        reduction = nil
    }

    /// Q8 weights w[0...r] with w[0] + 2·Σw[k] = 256, trailing zeros trimmed (radius ≥ 1).
    static func weights(sigma: Float) -> [UInt32] {
        let reach = max(1, Int((3 * Double(sigma)).rounded(.up)))
        let raw = (0...reach).map { exp(-Double($0 * $0) / (2 * Double(sigma) * Double(sigma))) }
        let total = raw[0] + 2 * raw.dropFirst().reduce(0, +)
        var weights = raw.map { Int((256 * $0 / total).rounded()) }
        while weights.count > 2, weights.last == 0 { weights.removeLast() }
        weights[0] = 256 - 2 * weights.dropFirst().reduce(0, +)
        while weights[0] < 1, let outer = weights.indices.dropFirst().last(where: { weights[$0] > 0 }) {
            weights[outer] -= 1
            weights[0] += 2
        }
        return weights.map { UInt32($0) }
    }

    var radius: Int { weights.count - 1 }

    /// The plain blur (blocked style, radius ≤ 24) converts YUYV while loading rows of whole quad pairs.
    func readsYUYV(width: Int) -> Bool {
        amount == nil && reduction == nil && (style == .blocked || style == .twoPass) && radius <= GaussianBlur.unrolledTaps && width % 8 == 0
    }

    func floats(time: Float, size: (width: Int, height: Int)) -> [Float] { [amount ?? 0] }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let blurred: RGBAPlane
        if let reduced = reducedCPU(input) {
            blurred = Resize(width: input.width, height: input.height, filter: .bilinear).cpu(reduced, env)
        } else {
            blurred = pass(pass(input, vertical: false), vertical: true)
        }
        guard let amount else { return blurred }
        return input.map { x, y, p in
            let o = Px.channels(p), b = Px.channels(blurred.pixels[y * input.width + x])
            let r = o + amount * (o - b)
            return Px.pack(Px.byte(r.x), Px.byte(r.y), Px.byte(r.z), Px.a(p))
        }
    }

    /// The large-σ path's reduced, blurred image (before its bilinear enlargement), or nil for the exact blur.
    func reducedCPU(_ input: RGBAPlane) -> RGBAPlane? {
        guard let reduction else { return nil }
        let (w, h) = reduction.size(input.width, input.height)
        let small = Resize(width: w, height: h, filter: .box).cpu(input, CPUEnvironment(time: 0, depth: nil, floats: []))
        return pass(pass(small, vertical: false), vertical: true)
    }

    /// One 1-D pass in the shaders' fixed point: (R,B) and (G,A) in 16-bit lanes of a UInt32.
    private func pass(_ input: RGBAPlane, vertical: Bool) -> RGBAPlane {
        let m: UInt32 = 0x00ff_00ff
        return input.map { x, y, c in
            var even = (c & m) &* weights[0], odd = ((c >> 8) & m) &* weights[0]
            for k in 1..<weights.count {
                let a = vertical ? input.at(x, y - k) : input.at(x - k, y)
                let b = vertical ? input.at(x, y + k) : input.at(x + k, y)
                even = even &+ ((a & m) &+ (b & m)) &* weights[k]
                odd = odd &+ (((a >> 8) & m) &+ ((b >> 8) & m)) &* weights[k]
            }
            return (((even &+ 0x0080_0080) >> 8) & m) | ((((odd &+ 0x0080_0080) >> 8) & m) << 8)
        }
    }

    /// The source's quad texel view when this blur runs as one strip dispatch (`blur_strip.comp`):
    /// the blocked style on a CPU driver, a plain blur of radius ≤ `stripTaps` on rows of whole quads.
    private func stripSource(_ io: StepIO) -> BufferSlice? {
        guard style == .blocked, io.context.deviceKind == .cpu, amount == nil, reduction == nil, radius <= GaussianBlur.stripTaps,
              StepIO.quadRows(io.sourceSize.width) else { return nil }
        return io.quadTexels(io.source, bytes: io.sourceBytes)
    }

    /// The strip dispatch computes a following sobel or ink on its blurred rows (`blur_stencil.comp`).
    func takesStencilTail(_ io: StepIO) -> Bool { stripSource(io) != nil }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        if let reduction {
            try recordReduced(&recorder, io, reduction)
            return
        }
        let bytes = io.sourceSize.width * io.sourceSize.height * 4
        let weightBuffer = try io.constants(weights.count * 4)
        try weightBuffer.write(values: weights)
        let tmp = BufferSlice(try io.scratch(bytes))
        let radius = UInt32(radius)
        let blurred = amount == nil ? io.destination : BufferSlice(try io.scratch(bytes))
        let weightSlice = BufferSlice(weightBuffer)
        if style == .direct2D {
            try io.dispatch(&recorder, .blur2D, spec: [radius], destination: blurred, aux: weightSlice, tile: (16, 16))
        } else if (style == .blocked || style == .twoPass) && self.radius <= GaussianBlur.unrolledTaps {
            let constants = (0...GaussianBlur.unrolledTaps).map { $0 < weights.count ? weights[$0] : 0 }
            let block = GaussianBlur.block
            if let quadSource = stripSource(io) {
                // A CPU driver: both directions in one dispatch, an invocation walking down a strip
                // 16 pixels wide and `stripRows` tall (no intermediate image, no barrier), a SIMD
                // batch (8 lanes on llvmpipe) of strips a workgroup. A pointwise epilogue rides along,
                // and a following 3×3 filter (sobel, ink) too when the chain fused it (`io.tail`):
                // computed on the blurred rows in registers, the blurred image is never written.
                let rows = GaussianBlur.stripRows
                if let tail = io.tail {
                    try io.dispatch(&recorder, .blurStencil, spec: [radius, 0] + constants + [0, io.yuyvSource, UInt32(rows), tail.mode],
                                    destination: blurred, a: tail.a, b: tail.b, tile: (8 * block, rows), local: (8, 1),
                                    quadTexels: [quadSource])
                } else {
                    try io.dispatch(&recorder, .blurStrip, spec: [radius, 0] + constants + [0, io.yuyvSource, UInt32(rows)],
                                    destination: blurred, tile: (8 * block, rows), local: (8, 1), quadTexels: [quadSource])
                }
                return
            }
            precondition(io.tail == nil, "a stencil tail on a blur that does not take one")
            if StepIO.quadRows(io.sourceSize.width), let quadSource = io.quadTexels(io.source, bytes: io.sourceBytes), let quadRows = io.quadTexels(tmp, bytes: bytes) {
                // Quad rows: 16 pixels an invocation in 16×4 groups, the source read through a quad
                // texel view (YUYV converted on the way in); then quad columns (4 pixels × 16 rows an
                // invocation) gathered from a quad texel view of the rows, written as quads. On
                // lavapipe texel fetches are branch-free gathers where storage-buffer loads loop over
                // the lanes.
                try io.dispatch(&recorder, .blurQuadRows, spec: [radius, 0] + constants + [0, io.yuyvSource], destination: tmp,
                                tile: (16 * block, 4), local: (16, 4), quadTexels: [quadSource])
                recorder.barrier()
                try io.dispatch(&recorder, .blurQuadColumns, spec: [radius, 1] + constants, source: tmp,
                                destination: blurred, tile: (32 * 4, 2 * block), local: (32, 2), quadTexels: [quadRows])
                if amount != nil {
                    recorder.barrier()
                    try io.dispatch(&recorder, .unsharp, source: blurred, aux: io.source)
                }
                return
            } else if StepIO.quadRows(io.sourceSize.width) {
                // Quad rows without a quad texel view (a device with few texel-buffer elements).
                try io.dispatch(&recorder, .blurBlock, spec: [radius, 0] + constants + [1, io.yuyvSource], destination: tmp,
                                tile: (16 * block, 4), local: (16, 4))
            } else {
                try io.dispatch(&recorder, .blurBlock, spec: [radius, 0] + constants, destination: tmp, tile: (64 * block, 1))
            }
            // Columns read an image copy of the rows: imageLoad gathers cost less than buffer loads on
            // lavapipe, and the copy is cheap.
            let rows = try io.scratchImage(io.sourceSize.width, io.sourceSize.height)
            recorder.barrier()
            try recorder.copy(from: tmp.buffer, to: rows)
            recorder.barrier()
            try io.dispatch(&recorder, .blurColumns, spec: [radius, 1] + constants, source: tmp, destination: blurred,
                            tile: (64, block), images: [rows])
        } else if style == .unrolled && self.radius <= GaussianBlur.unrolledTaps {
            let constants = (0...GaussianBlur.unrolledTaps).map { $0 < weights.count ? weights[$0] : 0 }
            try io.dispatch(&recorder, .blur, spec: [radius, 0] + constants, destination: tmp)
            recorder.barrier()
            try io.dispatch(&recorder, .blur, spec: [radius, 1] + constants, source: tmp, destination: blurred)
        } else {
            try io.dispatch(&recorder, .blurLoop, spec: [radius, 0], destination: tmp, aux: weightSlice)
            recorder.barrier()
            try io.dispatch(&recorder, .blurLoop, spec: [radius, 1], source: tmp, destination: blurred, aux: weightSlice)
        }
        if amount != nil {
            recorder.barrier()
            try io.dispatch(&recorder, .unsharp, source: blurred, aux: io.source)
        }
    }

    /// The large-σ path: the shared resampler's area reduction into a scratch image, the exact
    /// blur (this blur's style) there, the resampler's bilinear enlargement into the destination
    /// (or into the image the unsharp mask reads).
    private func recordReduced(_ recorder: inout CommandRecorder, _ io: StepIO, _ reduction: Reduction) throws(GPUError) {
        let full = io.sourceSize
        let (reduced, small) = try recordReducedBlur(&recorder, io, reduction)
        // One pass reading the reduced image as texels (blur_enlarge.comp): the shared resampler's
        // bilinear enlargement in its integers, as `Resize` computes it in two.
        let tables = try Self.enlargementTable(io, from: small, to: full)
        let enlarged = amount == nil ? io.destination : BufferSlice(try io.scratch(full.width * full.height * 4))
        try io.dispatch(&recorder, .blurEnlarge, destination: enlarged, b: SIMD4(Int32(small.width), Int32(small.height), 0, 0),
                        tile: (16, 4), local: (16, 4), texels: [reduced, tables])
        if amount != nil {
            recorder.barrier()
            try io.dispatch(&recorder, .unsharp, source: enlarged, aux: io.source)
        }
    }

    /// The tables `enlarge.glsl` reads to enlarge a `small` image to `full` bilinearly, in a
    /// constants buffer: per output column, then per output row, its first source index << 15 |
    /// that tap's 14-bit weight from the shared resampler's ``ResampleAxis`` (an enlargement has
    /// at most two taps a pixel summing to 1 << 14, so the second's weight follows).
    static func enlargementTable(_ io: StepIO, from small: (width: Int, height: Int), to full: (width: Int, height: Int))
        throws(GPUError) -> BufferSlice {
        let table = enlargementAxis(ResampleAxis(source: small.width, target: full.width, filter: .bilinear))
            + enlargementAxis(ResampleAxis(source: small.height, target: full.height, filter: .bilinear))
        let buffer = try io.constants(table.count * 4)
        try buffer.write(values: table)
        return BufferSlice(buffer, size: table.count * 4)
    }

    private static func enlargementAxis(_ axis: ResampleAxis) -> [UInt32] {
        precondition(axis.taps <= 2 && axis.source <= 1 << 16, "a bilinear enlargement has at most two taps")
        return (0..<axis.target).map { i in
            let weight = axis.taps == 1 ? Int32(1 << ResampleAxis.fractionBits) : axis.weights[i * axis.taps]
            return UInt32(axis.starts[i]) << 15 | UInt32(weight)
        }
    }

    /// The large-σ path up to its enlargement: `io.source` reduced by the shared resampler's area
    /// filter into a scratch image and blurred there (this blur's style) into another, returned
    /// with its size, a barrier after it. ``Background`` enlarges it itself while compositing.
    func recordReducedBlur(_ recorder: inout CommandRecorder, _ io: StepIO, _ reduction: Reduction)
        throws(GPUError) -> (BufferSlice, (width: Int, height: Int)) {
        precondition(io.tail == nil && io.yuyvSource == 0, "the reduced blur reads RGBA and takes no stencil tail")
        let full = io.sourceSize
        let small = reduction.size(full.width, full.height)
        let smallBytes = small.width * small.height * 4
        var reduce = io
        reduce.destination = BufferSlice(try io.scratch(smallBytes))
        reduce.destinationSize = small
        reduce.epilogue = nil
        try Resize(width: small.width, height: small.height, filter: .box).record(&recorder, reduce)
        recorder.barrier()
        var blur = reduce
        blur.source = reduce.destination
        blur.sourceSize = small
        blur.destination = BufferSlice(try io.scratch(smallBytes))
        try GaussianBlur(weights: weights, style: style).record(&recorder, blur)
        recorder.barrier()
        return (blur.destination, small)
    }
}

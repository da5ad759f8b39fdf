import Foundation
import GraniteGPU

/// Background replacement by a person mask (`background.comp`, issue 38): the frame over a blurred
/// copy of itself, over a colour, or the mask alone as gray.
///
/// The mask is the chain's auxiliary plane — the map ``ChainDepth`` supplies (`grayF32`, any
/// size, 1 = person; e.g. `PersonMask` at the model's size) — so a chain runs either depth
/// filters or this one, not both. It is upsampled to the frame on the frame's luma and feathered
/// as ``MaskRefinement`` does on the CPU (the reference); without a mask the whole frame is kept.
///
/// ```
///  blur:  frame ─GaussianBlur─► backdrop ┐
///         frame, mask ─────────────────── background.comp (upsample, feather, mix) ─► out
/// ```
struct Background: FilterKernel {
    enum Mode: String, CaseIterable { case blur, color, mask }
    let mode: Mode
    let blur: GaussianBlur
    let refinement: MaskRefinement
    let color: (r: Float, g: Float, b: Float)

    static let description = FilterDescription(
        name: "background",
        summary: "Replaces what lies outside the person mask (the chain's map) with a blur or a colour, or shows the mask.",
        parameters: [
            .init("mode", .choice(Mode.allCases.map(\.rawValue), default: "blur"), "blur the background, paint it a colour, or show the mask as gray"),
            .init("sigma", .float(min: 0.1, max: 32, default: 8), "the background blur's standard deviation in pixels (mode=blur)"),
            .init("color", .int(min: 0, max: 0xFF_FFFF, default: 0x00_B1_40), "the background colour as 0xRRGGBB (mode=color)"),
            .init("feather", .float(min: 0, max: 0.5, default: 0.25), "half-width of the soft edge in mask probability (0: hard edge at 1/2)"),
        ])

    /// A chain with `background` reads its mask where depth filters read their map: the two cannot mix.
    static func checkChain(_ specs: [FilterSpec]) throws(MarbleError) {
        guard specs.contains(where: { $0.name == description.name }),
              let other = specs.first(where: { $0.name != description.name && ((try? Marble.kernel(for: $0))?.readsDepth ?? false) })
        else { return }
        throw .conflictingFilters(first: description.name, second: other.name,
                                  reason: "both read the chain's one auxiliary plane (the person mask, the depth map)")
    }

    init(_ spec: FilterSpec) {
        mode = Mode(rawValue: spec.choice("mode"))!
        blur = GaussianBlur(sigma: spec.float("sigma"))
        var refinement = MaskRefinement()
        refinement.feather = spec.float("feather")
        self.refinement = refinement
        let rgb = spec.int("color")
        color = (Float((rgb >> 16) & 255), Float((rgb >> 8) & 255), Float(rgb & 255))
    }

    /// The upsampling's coefficients as `MaskRefinement.upsample` computes them.
    func floats(time: Float, size: (width: Int, height: Int)) -> [Float] {
        let s = refinement.spatialSigma, r = refinement.rangeSigma
        return [-1 / (2 * s * s), -1 / (2 * r * r), refinement.feather, color.r, color.g, color.b]
    }

    var readsDepth: Bool { true }

    /// The frame's alpha (1 = person) on the CPU: the mask upsampled and feathered, or all ones.
    func alpha(_ input: RGBAPlane, _ mask: DepthPlane?) -> [Float] {
        guard let mask else { return [Float](repeating: 1, count: input.width * input.height) }
        return refinement.upsample(mask.values, maskWidth: mask.width, maskHeight: mask.height,
                                   luma: MaskRefinement.luma(input), width: input.width, height: input.height)
            .map(refinement.feathered)
    }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let alpha = alpha(input, env.depth)
        if mode == .mask {
            return input.map { x, y, _ in
                let m = Px.unit(alpha[y * input.width + x])
                return Px.pack(m, m, m, 255)
            }
        }
        let backdrop = mode == .blur ? blur.cpu(input, CPUEnvironment(time: 0, depth: nil, floats: [0])) : nil
        let fill = SIMD4<Float>(env.floats[3], env.floats[4], env.floats[5], 0)
        return input.map { x, y, p in
            let i = y * input.width + x
            let back = backdrop.map { Px.channels($0.pixels[i]) } ?? fill
            let front = Px.channels(p)
            let o = back + alpha[i] * (front - back)
            return Px.pack(Px.byte(o.x), Px.byte(o.y), Px.byte(o.z), Px.a(p))
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        let bytes = io.sourceSize.width * io.sourceSize.height * 4
        var backdrop = BufferSlice(io.source.buffer, offset: io.source.offset, size: bytes)
        if mode == .blur {
            // The catalog's blur, written into a backdrop of the chain's own (no epilogue, no tail).
            var blurIO = io
            blurIO.destination = BufferSlice(try io.scratch(bytes), size: bytes)
            blurIO.destinationSize = io.sourceSize
            blurIO.epilogue = nil
            blurIO.tail = nil
            try blur.record(&recorder, blurIO)
            recorder.barrier()
            backdrop = blurIO.destination
        }
        let modeIndex: UInt32 = mode == .blur ? 0 : mode == .color ? 1 : 2
        try io.dispatch(&recorder, .background, spec: [modeIndex],
                        b: SIMD4(0, 0, Int32(io.depthSize.width), Int32(io.depthSize.height)), texels: [backdrop])
    }
}

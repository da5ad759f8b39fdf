import Foundation
import GraniteGPU
import GraniteSync

/// Background replacement by a person mask (`background.comp`, issue 38): the frame over a blurred
/// copy of itself, over a photo, over a colour, or the mask alone as gray.
///
/// The mask is the chain's auxiliary plane — the map ``ChainDepth`` supplies (`grayF32`, any
/// size, 1 = person; e.g. `PersonMask` at the model's size) — so a chain runs either depth
/// filters or this one, not both. It is upsampled to the frame by a guided filter on the frame's
/// luma (computed at the mask's size, so a pixel costs one bilinear fetch) whose fits are
/// averaged over frames (reset on a scene cut), and feathered, as ``MaskRefinement`` does on the
/// CPU (the reference); without a mask (a live stream's frames before the model's first) the whole
/// frame is background, so nothing of the room shows before the person is found. The average and the photo live in the
/// filter's ``BackgroundState``, resident on the device.
///
/// The blur is the catalog's ``GaussianBlur`` (σ in the frame's pixels). Above σ ≈ 4.1 that blur
/// runs on an area-reduced copy and is enlarged bilinearly; here the enlargement is done by
/// `background.comp` itself for each pixel it composites (the shared resampler's integers), so
/// the full-size blurred frame is never written (σ 12 at 1280×720: reduce by 4, blur 320×180
/// with σ' 2.96, composite). The CPU reference is the blur's own (reduce, blur, enlarge), then the mix.
///
/// ```
///  blur:  frame ─GaussianBlur─► backdrop ┐        image: resident photo (covering the frame) ─► backdrop
///         (σ > 4.1: frame ─area ÷f─► blur σ' ─► reduced backdrop, enlarged bilinearly in background.comp)
///         frame, mask, state ─background_guide.comp ×5 (guided filter at the mask's size: cell luma
///                 and the scene cut; fits averaged into the state; their means) ─► coefficients ┐
///         frame, coefficients ─────────────────────── background.comp (alpha = A·luma + B, feather, mix) ─► out
/// ```
struct Background: FilterKernel {
    enum Mode: String, CaseIterable { case blur, color, image, mask }
    let mode: Mode
    let blur: GaussianBlur
    let refinement: MaskRefinement
    let color: (r: Float, g: Float, b: Float)
    let state: BackgroundState

    static let description = FilterDescription(
        name: "background",
        summary: "Replaces what lies outside the person mask (the chain's map) with a blur, a photo or a colour, or shows the mask.",
        parameters: [
            .init("mode", .choice(Mode.allCases.map(\.rawValue), default: "blur"),
                  "blur the background, put a photo or a colour there, or show the mask as gray (image=PATH alone means mode=image)"),
            .init("sigma", .float(min: 0.1, max: 32, default: 8), "the background blur's standard deviation in the frame's pixels (mode=blur; above 4.1 blurred on a reduced copy)"),
            .init("color", .int(min: 0, max: 0xFF_FFFF, default: 0x00_B1_40), "the background colour as 0xRRGGBB (mode=color)"),
            .init("feather", .float(min: 0, max: 0.5, default: 0.25), "half-width of the soft edge in mask probability (0: hard edge at 1/2)"),
            .init("image", .text(default: ""), "a photo (JPEG, PNG, WebP, AVIF, HEIC, …) scaled to cover the frame, read when the chain is made (mode=image)"),
            .init("smooth", .float(min: 0, max: 0.95, default: 0.5),
                  "weight of the frames before in the mask's moving average (0: off; higher: steadier, slower to follow)"),
            .init("cut", .float(min: 0, max: 255, default: 24),
                  "scene cut: a mean luma change (0-255) since the last frame above which the average restarts"),
        ])

    /// A chain with `background` reads its mask where depth filters read their map: the two cannot mix.
    static func checkChain(_ specs: [FilterSpec]) throws(MarbleError) {
        guard specs.contains(where: { $0.name == description.name }),
              let other = specs.first(where: { $0.name != description.name && ((try? Marble.kernel(for: $0))?.readsDepth ?? false) })
        else { return }
        throw .conflictingFilters(first: description.name, second: other.name,
                                  reason: "both read the chain's one auxiliary plane (the person mask, the depth map)")
    }

    /// Reads `image=PATH` now (a missing or unreadable photo fails here, when the chain is made).
    init(_ spec: FilterSpec) throws(MarbleError) {
        let name = Self.description.name
        let path = spec.text("image")
        var mode = Mode(rawValue: spec.choice("mode"))!
        if !path.isEmpty && mode == .blur { mode = .image }  // blur is the default: image=PATH picks the photo
        if mode == .color && !path.isEmpty {
            throw .invalidValue(filter: name, parameter: "image", value: path, valid: "no image with mode=color")
        }
        if mode == .image && path.isEmpty {
            throw .invalidValue(filter: name, parameter: "image", value: "", valid: "a photo's path with mode=image")
        }
        self.mode = mode
        blur = GaussianBlur(sigma: spec.float("sigma"))
        var refinement = MaskRefinement()
        refinement.feather = spec.float("feather")
        refinement.smooth = spec.float("smooth")
        refinement.sceneCut = spec.float("cut")
        self.refinement = refinement
        let rgb = spec.int("color")
        color = (Float((rgb >> 16) & 255), Float((rgb >> 8) & 255), Float(rgb & 255))
        state = BackgroundState(photo: mode == .image ? try BackgroundState.load(path, filter: name) : nil)
    }

    /// The guided filter's epsilon, the feather, the colour and the new fit's weight in the average.
    func floats(time: Float, size: (width: Int, height: Int)) -> [Float] {
        [refinement.epsilon, refinement.feather, color.r, color.g, color.b, 1 - refinement.smooth]
    }

    var readsDepth: Bool { true }

    /// Pixels of a row each invocation of `background.comp` takes on a CPU device.
    static let cpuRun = 32
    /// For tests: the run every chain recorded from now on uses, whatever the device (1 checks a
    /// GPU's layout on lavapipe); nil: by the device.
    static let runOverride = Locked<Int?>(nil)

    /// The frame's alpha (1 = person) on the CPU: the mask upsampled, feathered and averaged
    /// with the frames before (the filter's history), or all ones.
    func alpha(_ input: RGBAPlane, _ mask: DepthPlane?) -> [Float] {
        state.refined(mask, luma: MaskRefinement.luma(input), size: .init(width: input.width, height: input.height), refinement: refinement)
    }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let alpha = alpha(input, env.depth)
        if mode == .mask {
            return input.map { x, y, _ in
                let m = Px.unit(alpha[y * input.width + x])
                return Px.pack(m, m, m, 255)
            }
        }
        let backdrop: RGBAPlane? = switch mode {
        case .blur: blur.cpu(input, CPUEnvironment(time: 0, depth: nil, floats: [0]))
        case .image: state.photoPlane(.init(width: input.width, height: input.height))
        default: nil
        }
        let fill = SIMD4<Float>(env.floats[2], env.floats[3], env.floats[4], 0)
        return input.map { x, y, p in
            let i = y * input.width + x
            let back = backdrop.map { Px.channels($0.pixels[i]) } ?? fill
            let front = Px.channels(p)
            let o = back + alpha[i] * (front - back)
            return Px.pack(Px.byte(o.x), Px.byte(o.y), Px.byte(o.z), Px.a(p))
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        let size = BackgroundState.Size(width: io.sourceSize.width, height: io.sourceSize.height)
        let bytes = size.width * size.height * 4
        var backdrop = BufferSlice(io.source.buffer, offset: io.source.offset, size: bytes)
        // The blur's large-σ path: its reduced image, enlarged by background.comp as it composites
        // (ENLARGE; the tables are the shared resampler's), so the full-size blur is never written.
        var tables: BufferSlice?
        var reducedSize = SIMD2<Int32>.zero
        if mode == .blur, let reduction = blur.reduction {
            var blurIO = io
            blurIO.epilogue = nil
            blurIO.tail = nil
            let (reduced, small) = try blur.recordReducedBlur(&recorder, blurIO, reduction)
            tables = try GaussianBlur.enlargementTable(io, from: small, to: (size.width, size.height))
            backdrop = reduced
            reducedSize = SIMD2(Int32(small.width), Int32(small.height))
        } else if mode == .blur {
            // The catalog's blur, written into a backdrop of the chain's own (no epilogue, no tail).
            var blurIO = io
            blurIO.destination = BufferSlice(try io.scratch(bytes), size: bytes)
            blurIO.destinationSize = io.sourceSize
            blurIO.epilogue = nil
            blurIO.tail = nil
            try blur.record(&recorder, blurIO)
            recorder.barrier()
            backdrop = blurIO.destination
        } else if mode == .image, let photo = try state.photoBuffer(io.context, size) {
            backdrop = BufferSlice(photo, size: bytes)
        }
        // The guided filter at the mask's size (background_guide.comp, five steps): the coefficients
        // background.comp takes bilinearly, the fits averaged over frames in the resident state on
        // the way. Without a mask the placeholder stands in (never read).
        var coefficients = io.depth
        if io.depthSize.width > 0 {
            let cells = (io.depthSize.width, io.depthSize.height)
            // Vec2s a cell (the guide, the fits, their column sums); vec4s a cell (the guide's
            // column sums, and the coefficients: each cell's and the next one's in its row).
            let pairs = cells.0 * cells.1 * 8
            let guide = BufferSlice(try io.scratch(pairs), size: pairs), fits = BufferSlice(try io.scratch(pairs), size: pairs)
            let guideColumns = BufferSlice(try io.scratch(2 * pairs), size: 2 * pairs)
            let fitColumns = BufferSlice(try io.scratch(pairs), size: pairs)
            coefficients = BufferSlice(try io.scratch(2 * pairs), size: 2 * pairs)
            var history: BufferSlice?, limit: UInt64 = 0
            if refinement.smooth > 0 {
                let buffer = try state.deviceHistory(io.context, frame: size, mask: .init(width: cells.0, height: cells.1))
                history = BufferSlice(buffer)
                limit = MaskRefinement.cutLimit(refinement.sceneCut, pixels: MaskRefinement.cellPixels(
                    width: size.width, height: size.height, maskWidth: cells.0, maskHeight: cells.1))
                recorder.fill(BufferSlice(buffer, size: 12), value: 0)
                recorder.barrier()
            }
            let a = SIMD4<Int32>(Int32(MaskRefinement.radius(width: cells.0, height: cells.1)),
                                 Int32(bitPattern: UInt32(truncatingIfNeeded: limit)), Int32(bitPattern: UInt32(truncatingIfNeeded: limit >> 32)), 0)
            let steps = [(UInt32(0), guide, guide), (1, guide, guideColumns), (2, guideColumns, fits), (3, fits, fitColumns), (4, fitColumns, coefficients)]
            for (step, input, output) in steps {
                // Step 0 reads no cells: its input binding is its output's (bound, not read); so is
                // the state without smoothing.
                try io.dispatch(&recorder, .backgroundGuide, spec: [step, history == nil ? 0 : 1], destinationSize: cells,
                                a: a, buffers: [input, output, history ?? output])
                recorder.barrier()
            }
        }
        let modeIndex: UInt32 = switch mode {
        case .blur, .image: 0
        case .color: 1
        case .mask: 2
        }
        // A run of pixels per invocation on a CPU device (lavapipe: a loop keeps the SIMD lanes busy and
        // each buffer access is a loop over them), one on a GPU; quads where rows are whole quads.
        let run = Self.runOverride.withLock { $0 } ?? (io.context.deviceKind == .cpu ? Self.cpuRun : 1)
        let quads = run % 4 == 0 && StepIO.quadRows(size.width)
        // Without tables the backdrop stands in for them (bound, never read).
        try io.dispatch(&recorder, .background, spec: [modeIndex, tables == nil ? 0 : 1, UInt32(run), quads ? 1 : 0],
                        destinationSize: ((size.width + run - 1) / run * size.height, 1),
                        b: SIMD4(reducedSize.x, reducedSize.y, Int32(io.depthSize.width), Int32(io.depthSize.height)),
                        texels: [backdrop, tables ?? backdrop], buffers: [coefficients])
    }
}

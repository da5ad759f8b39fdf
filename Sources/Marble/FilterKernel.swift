import GraniteGPU

/// What a filter does, on the GPU and in its CPU reference.
///
/// `floats(time:)` is written into the step's parameter slot before every submission, so the
/// recorded command buffer is reused frame after frame; the CPU reference reads the same floats.
protocol FilterKernel: Sendable {
    /// The output size for an input of `width`×`height`.
    func outputSize(width: Int, height: Int) throws(MarbleError) -> (width: Int, height: Int)
    /// The float parameters for one frame on a `size` input (at most `StepIO.floatCapacity`).
    func floats(time: Float, size: (width: Int, height: Int)) -> [Float]
    /// The CPU reference.
    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane
    /// Records the GPU commands reading `io.source` and writing `io.destination`.
    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError)
    /// Whether a following affine color filter may be fused into this filter's last pass
    /// (its shaders write through `epilogue()` in `common.glsl`).
    var acceptsEpilogue: Bool { get }
    /// Whether it reads the chain's depth map (`depthmask`, `depth`).
    var readsDepth: Bool { get }
    /// Whether, as the first filter, it can read a `width`-wide YUYV frame itself (converting while
    /// loading, `StepIO.yuyvSource`), so the chain skips its conversion pass.
    func readsYUYV(width: Int) -> Bool
    /// This filter as a 3×3 neighbourhood tail another filter's pass can compute on its own
    /// output rows before writing them (nil: it cannot run that way).
    var stencilTail: StencilTail? { get }
    /// Whether this filter, recorded with `io`, computes a following filter's ``stencilTail`` in
    /// its last pass (`io.tail`), so its own output never goes to memory.
    func takesStencilTail(_ io: StepIO) -> Bool
}

/// A 3×3 neighbourhood filter (same size in and out) as the tail of another filter's last pass:
/// the chain fuses "blur, then sobel/ink" into one dispatch on CPU drivers (`blur_stencil.comp`),
/// and an affine color filter after it still rides along as the epilogue.
struct StencilTail: Equatable {
    /// `TAIL` in `blur_stencil.comp`: 1 sobel edges, 2 ink (`edge.glsl`'s modes, plus one).
    var mode: UInt32
    /// The push constants the tail's own shader takes (`pc.a`, `pc.b`); its floats are `F(i)`.
    var a: SIMD4<Int32>
    var b: SIMD4<Int32>
}

extension FilterKernel {
    func outputSize(width: Int, height: Int) throws(MarbleError) -> (width: Int, height: Int) { (width, height) }
    func floats(time: Float, size: (width: Int, height: Int)) -> [Float] { [] }
    var acceptsEpilogue: Bool { true }
    var readsDepth: Bool { false }
    func readsYUYV(width: Int) -> Bool { false }
    var stencilTail: StencilTail? { nil }
    func takesStencilTail(_ io: StepIO) -> Bool { false }
}

/// What a CPU reference filter sees besides its input.
struct CPUEnvironment {
    var time: Float
    var depth: DepthPlane?
    var floats: [Float]
}

/// A depth map: one float a pixel, any size (sampled by nearest neighbour).
struct DepthPlane {
    var width: Int
    var height: Int
    var values: [Float]

    /// The depth for output pixel (x, y) of a `w`×`h` image; integer scaling, as the shaders do.
    @inline(__always)
    func sample(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> Float {
        values[(y * height / h) * width + (x * width / w)]
    }
}

/// Buffers and sizes for one step of a chain on the GPU.
struct StepIO {
    static let floatCapacity = 32
    var context: GPUContext
    var source: BufferSlice
    var destination: BufferSlice
    var sourceSize: (width: Int, height: Int)
    var destinationSize: (width: Int, height: Int)
    /// This step's float parameters (`F(i)` in the shader, a uniform buffer).
    var params: BufferSlice
    /// The depth map as floats, or a placeholder when there is none (`depthSize` is then 0×0).
    var depth: BufferSlice
    var depthSize: (width: Int, height: Int)
    /// Makes buffers that live as long as the recorded chain, in the memory of a role: `.device`
    /// for what shaders alone touch, `.constants` for tables the host writes while recording.
    var makeScratch: (Int, GPUMemoryRole) throws(GPUError) -> GPUBuffer
    /// A device-local buffer of `size` bytes that lives as long as the recorded chain.
    func scratch(_ size: Int) throws(GPUError) -> GPUBuffer { try makeScratch(size, .device) }
    /// A host-visible buffer of `size` bytes for tables written while recording (weights, taps).
    func constants(_ size: Int) throws(GPUError) -> GPUBuffer { try makeScratch(size, .constants) }
    /// Makes storage images (width, height) that live as long as the recorded chain.
    var scratchImage: (Int, Int) throws(GPUError) -> GPUImage
    /// A fused affine color filter (3×3 + offset) applied when writing `destination`, or nil.
    var epilogue: [Float]?
    /// A following 3×3 filter this step's last pass computes before writing `destination` (only
    /// for a kernel whose `takesStencilTail` said yes); `params` are then the tail's floats.
    var tail: StencilTail?
    /// The specialization-constant id of `EPILOGUE` in `common.glsl` (the matrix follows it).
    static let epilogueConstantID = 40
    /// The specialization-constant ids of the workgroup size in `common.glsl` (x, then y).
    static let localSizeConstantID = 60
    /// The source is the raw YUYV frame (only for a kernel whose `readsYUYV` said yes):
    /// 0 no (RGBA8), 1 YUYV limited range, 2 YUYV full range.
    var yuyvSource: UInt32 = 0

    /// Bytes of the source image: `sourceSize` RGBA8 pixels, or YUYV (2 bytes a pixel) when `yuyvSource` says so.
    var sourceBytes: Int { sourceSize.width * sourceSize.height * (yuyvSource != 0 ? 2 : 4) }

    /// The first `bytes` of `slice` for a quad texel view (`GPUBinding.quadTexels`, shaders built with
    /// SOURCE_TEXELS), or nil when the device cannot view that many quads as texels (then the
    /// shader reads the storage buffer).
    func quadTexels(_ slice: BufferSlice, bytes: Int) -> BufferSlice? {
        guard bytes % 16 == 0, bytes / 16 <= context.maxTexelCount, bytes <= slice.size,
              slice.offset % context.texelAlignment == 0 else { return nil }
        return BufferSlice(slice.buffer, offset: slice.offset, size: bytes)
    }

    /// Whether rows of `width` pixels are whole quads (the shaders' VEC paths: uvec4 loads and stores).
    static func quadRows(_ width: Int) -> Bool { width % 4 == 0 }

    /// Binds the usual four buffers (then `images` from binding 4, then `texels`, `quadTexels` and
    /// further storage `buffers`) and dispatches enough `local`-sized workgroups (64×1 by
    /// default) to cover the destination, each covering `tile` pixels.
    func dispatch(_ recorder: inout CommandRecorder, _ shader: Shader, spec: [UInt32] = [],
                  source: BufferSlice? = nil, destination: BufferSlice? = nil, aux: BufferSlice? = nil,
                  sourceSize: (width: Int, height: Int)? = nil, destinationSize: (width: Int, height: Int)? = nil,
                  a: SIMD4<Int32> = .zero, b: SIMD4<Int32> = .zero, tile: (x: Int, y: Int) = (64, 1),
                  local: (x: Int, y: Int) = (64, 1), images: [GPUImage] = [], texels: [BufferSlice] = [],
                  quadTexels: [BufferSlice] = [], buffers: [BufferSlice] = []) throws(GPUError) {
        var spec = spec
        let fused = (destination ?? self.destination).buffer === self.destination.buffer ? epilogue : nil
        if fused != nil || local != (64, 1) {
            // Constants the shader does not declare are ignored, so pad up to the epilogue's ids
            // (EPILOGUE = 0 and the identity when nothing is fused) and the workgroup size's.
            precondition(spec.count <= StepIO.epilogueConstantID)
            spec += [UInt32](repeating: 0, count: StepIO.epilogueConstantID - spec.count)
            spec += [fused == nil ? 0 : 1] + (fused ?? AffineColor.identity).map(\.bitPattern)
            if local != (64, 1) {
                spec += [UInt32](repeating: 0, count: StepIO.localSizeConstantID - spec.count) + [UInt32(local.x), UInt32(local.y)]
            }
        }
        // Bindings 0-3 are the usual buffers (the floats as a uniform buffer); storage images, when
        // the shader has any, follow from 4, then texel views of buffers.
        let layout: [GPUBindingKind] = [.buffer, .buffer, .uniform, .buffer] + images.map { _ in .image } + texels.map { _ in .texels }
            + quadTexels.map { _ in .texels } + buffers.map { _ in .buffer }
        let pipeline = try context.pipeline(named: shader.name, spirv: shader.words, layout: layout, specialization: spec)
        let sourceSize = sourceSize ?? self.sourceSize
        let destinationSize = destinationSize ?? self.destinationSize
        let size = SIMD4<Int32>(Int32(sourceSize.width), Int32(sourceSize.height),
                                Int32(destinationSize.width), Int32(destinationSize.height))
        let push = [size, a, b].flatMap { [UInt32(bitPattern: $0.x), UInt32(bitPattern: $0.y),
                                           UInt32(bitPattern: $0.z), UInt32(bitPattern: $0.w)] }
        let bindings: [GPUBinding] = [.buffer(source ?? self.source), .buffer(destination ?? self.destination), .uniform(params),
                                      .buffer(aux ?? depth)] + images.map { .image($0) } + texels.map { .texels($0) }
            + quadTexels.map { .quadTexels($0) } + buffers.map { .buffer($0) }
        try recorder.dispatch(pipeline, bindings: bindings, push: push, groups: ((destinationSize.width + tile.x - 1) / tile.x,
                                                   (destinationSize.height + tile.y - 1) / tile.y, 1))
    }
}

/// A compiled shader: its name and SPIR-V words (embedded by the SPIRVEmbed plugin).
struct Shader: Sendable {
    let name: String
    let words: [UInt32]

    static let color = Shader(name: "color", words: SPIRV.color)
    static let blur = Shader(name: "blur", words: SPIRV.blur)
    static let blurBlock = Shader(name: "blur_block", words: SPIRV.blur_block)
    static let blurQuadRows = Shader(name: "blur_quad_rows", words: SPIRV.blur_quad_rows)
    static let blurQuadColumns = Shader(name: "blur_quad_columns", words: SPIRV.blur_quad_columns)
    static let blurStrip = Shader(name: "blur_strip", words: SPIRV.blur_strip)
    static let blurStencil = Shader(name: "blur_stencil", words: SPIRV.blur_stencil)
    static let blurColumns = Shader(name: "blur_columns", words: SPIRV.blur_columns)
    static let blurLoop = Shader(name: "blur_loop", words: SPIRV.blur_loop)
    static let blur2D = Shader(name: "blur2d", words: SPIRV.blur2d)
    static let blurEnlarge = Shader(name: "blur_enlarge", words: SPIRV.blur_enlarge)
    static let unsharp = Shader(name: "unsharp", words: SPIRV.unsharp)
    static let sobel = Shader(name: "sobel", words: SPIRV.sobel)
    static let sobelTexels = Shader(name: "sobel_texels", words: SPIRV.sobel_texels)
    static let remap = Shader(name: "remap", words: SPIRV.remap)
    static let resize = Shader(name: "resize", words: SPIRV.resize)
    static let convert = Shader(name: "convert", words: SPIRV.convert)
    static let bokeh = Shader(name: "bokeh", words: SPIRV.bokeh)
    static let godRay = Shader(name: "godray", words: SPIRV.godray)
    static let analog = Shader(name: "analog", words: SPIRV.analog)
    static let disco = Shader(name: "disco", words: SPIRV.disco)
    static let drive = Shader(name: "drive", words: SPIRV.drive)
    static let vibes = Shader(name: "vibes", words: SPIRV.vibes)
    static let polka = Shader(name: "polka", words: SPIRV.polka)
    static let stars = Shader(name: "stars", words: SPIRV.stars)
    static let depthMask = Shader(name: "depthmask", words: SPIRV.depthmask)
    static let background = Shader(name: "background", words: SPIRV.background)
    static let backgroundGuide = Shader(name: "background_guide", words: SPIRV.background_guide)
    static let pointCloud = Shader(name: "pointcloud", words: SPIRV.pointcloud)
}

extension ParameterDescription {
    /// The `time` parameter of every time-animated filter.
    static let time = ParameterDescription("time", .float(min: 0, max: 1_000_000, default: 0),
                                           "seconds, added to the time the chain runs at")
}

extension Float {
    /// The bit pattern as a specialization-constant word.
    var word: UInt32 { bitPattern }
}

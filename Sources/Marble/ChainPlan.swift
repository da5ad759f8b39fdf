import GraniteGPU
import GraniteMedia

/// A filter chain recorded for one input size and format: buffers, descriptor sets and one
/// command buffer, reused for every frame of that shape.
///
/// ```
///  bytes ─► input ─convert─► ping ─f1─► pong ─f2─► ping … ─► output (read back once)
///                 (skipped for rgba8: the bytes go straight into ping)
/// ```
final class ChainPlan {
    struct Key: Hashable {
        var width: Int
        var height: Int
        var format: PixelFormat
        var depthWidth: Int
        var depthHeight: Int
        /// Which of the plans for this shape (a `FilterPipeline` keeps two frames in flight).
        var slot = 0
    }

    let key: Key
    let sequence: CommandSequence
    let input: GPUBuffer
    let params: GPUBuffer
    let depth: GPUBuffer
    let slot: Int
    let output: GPUBuffer
    let outputSize: (width: Int, height: Int)
    let sizes: [(width: Int, height: Int)]
    var scratch: [GPUBuffer] = []
    var scratchImages: [GPUImage] = []

    let ping: GPUBuffer
    let pong: GPUBuffer
    /// How many filters were recorded as steps (fewer than the chain's filters when some were fused).
    private(set) var recordedSteps = 0

    /// - Parameters:
    ///   - names: each kernel's name, for the labels of a `timed` plan's device timestamps.
    ///   - timed: record a timestamp after every command (`sequence.timings()`), to profile.
    init(key: Key, kernels: [any FilterKernel], names: [String] = [], range: ColorRange, pool: BufferPool, timed: Bool = false) throws(MarbleError) {
        let context = pool.context
        self.key = key
        var sizes = [(width: key.width, height: key.height)]
        for kernel in kernels { sizes.append(try kernel.outputSize(width: sizes.last!.width, height: sizes.last!.height)) }
        let largest = sizes.map { $0.width * $0.height * 4 }.max()!
        let ping = try MarbleError.gpu { () throws(GPUError) in try pool.take(size: largest) }
        let pong = try MarbleError.gpu { () throws(GPUError) in try pool.take(size: largest) }
        (self.ping, self.pong) = (ping, pong)
        let shaderFormat = try InputConversion.shaderFormat(key.format)
        input = shaderFormat == nil ? ping : try MarbleError.gpu { () throws(GPUError) in try pool.take(size: key.format.byteCount(width: key.width, height: key.height)) }
        // Each step's floats are bound as a uniform buffer at its own slot.
        let alignment = max(context.storageAlignment, context.uniformAlignment)
        slot = (StepIO.floatCapacity * 4 + alignment - 1) / alignment * alignment
        let sequence: CommandSequence
        do throws(GPUError) {
            params = try pool.take(size: slot * max(1, kernels.count + 1))
            depth = try pool.take(size: max(4, key.depthWidth * key.depthHeight * 4))
            sequence = try CommandSequence(context: context, timed: timed)
        } catch { throw .gpu(error) }
        self.sequence = sequence
        outputSize = sizes.last!
        self.sizes = sizes

        var made: [GPUBuffer] = []
        var madeImages: [GPUImage] = []
        let params = self.params, depth = self.depth, input = self.input
        let depthSize = (width: key.depthWidth, height: key.depthHeight)
        let slot = self.slot
        var buffers = (ping, pong)
        var steps = 0
        try MarbleError.gpu { () throws(GPUError) in try sequence.record { (recorder) throws(GPUError) in
            var io = StepIO(context: context, source: BufferSlice(input), destination: BufferSlice(ping),
                            sourceSize: sizes[0], destinationSize: sizes[0],
                            params: BufferSlice(params, offset: 0, size: slot), depth: BufferSlice(depth),
                            depthSize: depthSize, scratch: { (size) throws(GPUError) in
                                let buffer = try pool.take(size: size)
                                made.append(buffer)
                                return buffer
                            }, scratchImage: { (width, height) throws(GPUError) in
                                let image = try pool.takeImage(width: width, height: height)
                                madeImages.append(image)
                                return image
                            })
            // YUYV: the first filter may convert while it loads; otherwise a conversion pass.
            let yuyvSource: UInt32 = shaderFormat == 0 && kernels.first?.readsYUYV(width: key.width) == true
                ? (range == .limited ? 1 : 2) : 0
            recorder.section = "convert \(key.format)"
            if let shaderFormat, yuyvSource == 0 {
                if shaderFormat == 0 && key.width % 8 == 0 {
                    try io.dispatch(&recorder, .convert, spec: [0, range == .limited ? 0 : 1, 1], tile: (16 * 16, 4), local: (16, 4))
                } else {
                    try io.dispatch(&recorder, .convert, spec: [shaderFormat, range == .limited ? 0 : 1], tile: (64 * 4, 1))
                }
            }
            var index = 0
            while index < kernels.count {
                let kernel = kernels[index]
                // A following affine color filter rides along as the epilogue of this one's last pass.
                let fused = index + 1 < kernels.count && kernel.acceptsEpilogue ? kernels[index + 1] as? AffineColor : nil
                recorder.barrier()
                io.source = index == 0 && yuyvSource != 0 ? BufferSlice(input) : BufferSlice(buffers.0)
                io.yuyvSource = index == 0 ? yuyvSource : 0
                io.destination = BufferSlice(buffers.1)
                io.sourceSize = sizes[index]
                io.destinationSize = sizes[index + 1]
                io.params = BufferSlice(params, offset: slot * (index + 1), size: slot)
                io.epilogue = fused?.matrix
                let name = { (i: Int) in i < names.count ? names[i] : "filter \(i + 1)" }
                recorder.section = name(index) + (fused == nil ? "" : " + " + name(index + 1))
                try kernel.record(&recorder, io)
                buffers = (buffers.1, buffers.0)
                index += fused == nil ? 1 : 2
                steps += 1
            }
        } }
        output = buffers.0
        recordedSteps = steps
        scratch = made
        scratchImages = madeImages
    }

    /// Hands every buffer back to `pool` once the last submission is done; the plan is unusable after.
    func recycle(into pool: BufferPool) {
        guard (try? sequence.wait()) != nil else { return }
        let all = [ping, pong, params, depth] + (input === ping ? [] : [input]) + scratch
        for buffer in all { pool.give(buffer) }
        for image in scratchImages { pool.give(image) }
    }

    /// Runs the recorded chain on `image` (already checked to match `key`) and reads the result.
    func run(_ image: Image, depth depthMap: DepthPlane?, kernels: [any FilterKernel], time: Float) throws(MarbleError) -> Image {
        try start(image, depth: depthMap, kernels: kernels, time: time)
        return try finish()
    }

    /// Writes the frame's pixels and floats and submits, without waiting (the plan must be idle).
    func start(_ image: Image, depth depthMap: DepthPlane?, kernels: [any FilterKernel], time: Float) throws(MarbleError) {
        try MarbleError.gpu { () throws(GPUError) in
            try input.write(image.bytes)
            if let depthMap { try depth.write(values: depthMap.values) }
            for (index, kernel) in kernels.enumerated() {
                let floats = kernel.floats(time: time, size: sizes[index])
                precondition(floats.count <= StepIO.floatCapacity, "too many float parameters")
                try params.write(values: floats, at: slot * (index + 1))
            }
            try sequence.submit()
        }
    }

    /// Waits for the submission `start` made and reads the result.
    func finish() throws(MarbleError) -> Image {
        let bytes = try MarbleError.gpu { () throws(GPUError) in
            try sequence.wait()
            return try output.read(count: outputSize.width * outputSize.height * 4)
        }
        return try MarbleError.image { () throws(MediaError) in
            try Image(width: outputSize.width, height: outputSize.height, format: .rgba8, bytes: bytes)
        }
    }
}

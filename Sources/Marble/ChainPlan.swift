import GraniteGPU
import GraniteMedia
import GraniteSync

/// A filter chain recorded for one input size and format: buffers, descriptor sets and one
/// command buffer, reused for every frame of that shape.
///
/// ```
///  bytes ─► staging ─copy─► input ─convert─► ping ─f1─► pong ─f2─► ping … ─► output ─copy─► staging (read back once)
///        (discrete GPUs: both copies recorded in the frame's submission; unified memory: no staging,
///         the host writes input and reads output in place; rgba8: the bytes go straight into ping)
///
///  with a depth input (the depth model's picture made on the device, two submissions):
///  bytes ─► input ─convert─► ping ─resize─► modelInput (read back, small) ┐ prelude
///     estimate(modelInput) on the CPU ─► depth map ─► depth (written once) ┘
///                               ping ─f1─► pong … ─► output (read back once)   sequence
/// ```
final class ChainPlan {
    struct Key: Hashable {
        var width: Int
        var height: Int
        var format: PixelFormat
        var depthWidth: Int
        var depthHeight: Int
        /// The depth model's input size when the plan makes it (0×0: no prelude).
        var depthInputWidth = 0
        var depthInputHeight = 0
        /// The depth map lives in the chain's resident buffer (live frames: written once per map).
        var residentDepth = false
    }

    let key: Key
    let sequence: CommandSequence
    /// The frame's bytes: written by the host into `input.host`, copied to the device by the
    /// first recorded command (of the prelude when there is one).
    let input: StagedBuffer
    let params: GPUBuffer
    let depth: StagedBuffer
    /// Whether `depth` is this plan's own (false: the chain's resident map, shared by its live plans).
    let ownsDepth: Bool
    let slot: Int
    let output: GPUBuffer
    /// Where the host reads the result: `output` itself on unified memory, else a cached staging
    /// buffer that `readback` copies into.
    let result: StagedBuffer
    /// The copy of the result into its staging buffer (nil on unified memory), submitted after the
    /// chain only when the `rgba8` result is read (a frame read back as YUV skips it).
    let readback: CommandSequence?
    let outputSize: (width: Int, height: Int)
    let sizes: [(width: Int, height: Int)]
    var scratch: [GPUBuffer] = []
    var scratchImages: [GPUImage] = []

    let ping: GPUBuffer
    let pong: GPUBuffer
    /// Converts the frame and resizes it to the depth model's input (`Key.depthInputWidth`), when asked.
    let prelude: CommandSequence?
    /// The same without the copy for the host: the model's input stays on the device for a model
    /// that runs there (``ChainFrame/modelInputOnDevice()``).
    let preludeOnDevice: CommandSequence?
    /// The depth model's input, `rgba8`, written by `prelude` (and copied for the host).
    let modelInput: StagedBuffer?
    /// How many filters were recorded as steps (fewer than the chain's filters when some were fused).
    private(set) var recordedSteps = 0
    /// The storage results are read back into, reused once their frames are let go (no fresh
    /// pages, so no page faults, per frame): room for the frames a camera pipeline keeps in flight.
    private var results = RecycledBytes(slots: 4)

    /// - Parameters:
    ///   - names: each kernel's name, for the labels of a `timed` plan's device timestamps.
    ///   - timed: record a timestamp after every command (`sequence.timings()`), to profile.
    ///   - sharedDepth: the buffer the depth map is read from, owned by the caller (nil: the plan's own).
    ///   - fuseStencilTails: fuse "a filter, then a 3×3 tail it takes" into one step (false: every
    ///     filter its own step, to compare the two).
    init(key: Key, kernels: [any FilterKernel], names: [String] = [], range: ColorRange, pool: BufferPool, timed: Bool = false,
         sharedDepth: StagedBuffer? = nil, fuseStencilTails: Bool = true) throws(MarbleError) {
        let context = pool.context
        self.key = key
        var sizes = [(width: key.width, height: key.height)]
        for kernel in kernels { sizes.append(try kernel.outputSize(width: sizes.last!.width, height: sizes.last!.height)) }
        let largest = sizes.map { $0.width * $0.height * 4 }.max()!
        let ping = try MarbleError.gpu { () throws(GPUError) in try pool.take(size: largest, role: .device) }
        let pong = try MarbleError.gpu { () throws(GPUError) in try pool.take(size: largest, role: .device) }
        (self.ping, self.pong) = (ping, pong)
        let shaderFormat = try InputConversion.shaderFormat(key.format)
        let inputBytes = key.format.byteCount(width: key.width, height: key.height)
        let outputBytes = sizes.last!.width * sizes.last!.height * 4
        let input = try MarbleError.gpu { () throws(GPUError) in
            let device = shaderFormat == nil ? ping : try pool.take(size: inputBytes, role: .device)
            return StagedBuffer(device: device, staging: try pool.takeStaging(size: device.size, .upload), direction: .upload)
        }
        self.input = input
        let resultStaging = try MarbleError.gpu { () throws(GPUError) in try pool.takeStaging(size: outputBytes, .readback) }
        // Each step's floats are bound as a uniform buffer at its own slot.
        let alignment = max(context.storageAlignment, context.uniformAlignment)
        slot = (StepIO.floatCapacity * 4 + alignment - 1) / alignment * alignment
        let depthInput = key.depthInputWidth > 0 && key.depthInputHeight > 0
            ? (width: key.depthInputWidth, height: key.depthInputHeight) : nil
        let sequence: CommandSequence, small: GPUBuffer?, prelude: CommandSequence?, preludeOnDevice: CommandSequence?
        do throws(GPUError) {
            params = try pool.take(size: slot * max(1, kernels.count + 1))
            if let sharedDepth {
                depth = sharedDepth
            } else {
                depth = try pool.takeStaged(size: max(4, key.depthWidth * key.depthHeight * 4), .upload)
            }
            sequence = try CommandSequence(context: context, timed: timed)
            if let depthInput {
                small = try pool.take(size: depthInput.width * depthInput.height * 4, role: .device)
                prelude = try CommandSequence(context: context, timed: timed)
                preludeOnDevice = try CommandSequence(context: context, timed: timed)
            } else {
                (small, prelude, preludeOnDevice) = (nil, nil, nil)
            }
        } catch { throw .gpu(error) }
        self.sequence = sequence
        ownsDepth = sharedDepth == nil
        modelInput = try small.map { small throws(MarbleError) in
            try MarbleError.gpu { () throws(GPUError) in
                StagedBuffer(device: small, staging: try pool.takeStaging(size: small.size, .readback), direction: .readback)
            }
        }
        let modelInput = self.modelInput
        self.prelude = prelude
        self.preludeOnDevice = preludeOnDevice
        outputSize = sizes.last!
        self.sizes = sizes

        var made: [GPUBuffer] = []
        var madeImages: [GPUImage] = []
        let params = self.params, depth = self.depth.device, deviceInput = input.device
        let depthSize = (width: key.depthWidth, height: key.depthHeight)
        let slot = self.slot
        var buffers = (ping, pong)
        var steps = 0
        let makeIO = {
            StepIO(context: context, source: BufferSlice(deviceInput), destination: BufferSlice(ping),
                            sourceSize: sizes[0], destinationSize: sizes[0],
                            params: BufferSlice(params, offset: 0, size: slot), depth: BufferSlice(depth),
                            depthSize: depthSize, makeScratch: { (size, role) throws(GPUError) in
                                let buffer = try pool.take(size: size, role: role)
                                made.append(buffer)
                                return buffer
                            }, scratchImage: { (width, height) throws(GPUError) in
                                let image = try pool.takeImage(width: width, height: height)
                                madeImages.append(image)
                                return image
                            })
        }
        let convert = { (recorder: inout CommandRecorder, io: StepIO) throws(GPUError) in
            guard let shaderFormat else { return }
            recorder.section = "convert \(key.format)"
            if shaderFormat == 0 && key.width % 8 == 0 {
                try io.dispatch(&recorder, .convert, spec: [0, range == .limited ? 0 : 1, 1], tile: (16 * 16, 4), local: (16, 4))
            } else {
                try io.dispatch(&recorder, .convert, spec: [shaderFormat, range == .limited ? 0 : 1], tile: (64 * 4, 1))
            }
        }
        try MarbleError.gpu { () throws(GPUError) in
        if let prelude, let preludeOnDevice, let depthInput, let small, let modelInput {
            // The frame converted into ping (which the chain then starts from), resized for the model
            // with the shared resampler's antialiased bilinear (what GraniteML's own resize does).
            for (made, forHost) in [(prelude, true), (preludeOnDevice, false)] {
            try made.record { (recorder) throws(GPUError) in
                var io = makeIO()
                try input.recordCopy(&recorder, size: inputBytes)
                try convert(&recorder, io)
                if shaderFormat != nil { recorder.barrier() }
                io.source = BufferSlice(ping)
                io.destination = BufferSlice(small)
                io.destinationSize = depthInput
                recorder.section = "depth input"
                try Resize(width: depthInput.width, height: depthInput.height, filter: .bilinear).record(&recorder, io)
                if forHost { try modelInput.recordCopy(&recorder) } else { recorder.barrier() }
            }
            }
        }
        try sequence.record { (recorder) throws(GPUError) in
            var io = makeIO()
            // YUYV: the first filter may convert while it loads; otherwise a conversion pass (in the
            // prelude when there is one).
            let yuyvSource: UInt32 = depthInput == nil && shaderFormat == 0 && kernels.first?.readsYUYV(width: key.width) == true
                ? (range == .limited ? 1 : 2) : 0
            if depthInput == nil { try input.recordCopy(&recorder, size: inputBytes) }
            if yuyvSource == 0 && depthInput == nil { try convert(&recorder, io) }
            var index = 0
            while index < kernels.count {
                let kernel = kernels[index]
                recorder.barrier()
                io.source = index == 0 && yuyvSource != 0 ? BufferSlice(input.device) : BufferSlice(buffers.0)
                io.yuyvSource = index == 0 ? yuyvSource : 0
                io.destination = BufferSlice(buffers.1)
                io.sourceSize = sizes[index]
                io.params = BufferSlice(params, offset: slot * (index + 1), size: slot)
                io.tail = nil
                io.epilogue = nil
                // A following 3×3 filter the kernel's last pass can compute on its own output
                // (blur then sobel/ink on a CPU driver) is fused into it: one dispatch, with the
                // tail's floats; the kernel's own output never goes to memory.
                var last = index
                if fuseStencilTails, index + 1 < kernels.count, let tail = kernels[index + 1].stencilTail,
                   sizes[index + 2] == sizes[index + 1], kernel.takesStencilTail(io) {
                    io.tail = tail
                    io.params = BufferSlice(params, offset: slot * (index + 2), size: slot)
                    last = index + 1
                }
                // A following affine color filter rides along as the epilogue of this step's last pass.
                let fused = last + 1 < kernels.count && kernels[index...last].allSatisfy(\.acceptsEpilogue)
                    ? kernels[last + 1] as? AffineColor : nil
                io.destinationSize = sizes[last + 1]
                io.epilogue = fused?.matrix
                let name = { (i: Int) in i < names.count ? names[i] : "filter \(i + 1)" }
                recorder.section = (index...(fused == nil ? last : last + 1)).map(name).joined(separator: " + ")
                try kernel.record(&recorder, io)
                buffers = (buffers.1, buffers.0)
                index = last + (fused == nil ? 1 : 2)
                steps += 1
            }
        } }
        output = buffers.0
        result = StagedBuffer(device: buffers.0, staging: resultStaging, direction: .readback)
        let result = self.result
        readback = try MarbleError.gpu { () throws(GPUError) -> CommandSequence? in
            guard result.copies else { return nil }
            let copy = try CommandSequence(context: context)
            try copy.record { (recorder) throws(GPUError) in try result.recordCopy(&recorder, size: outputBytes) }
            return copy
        }
        recordedSteps = steps
        scratch = made
        scratchImages = madeImages
    }

    /// Waits for everything the plan submitted (errors are the next run's to report).
    func settle() {
        _ = try? sequence.wait()
        _ = try? prelude?.wait()
        _ = try? preludeOnDevice?.wait()
        _ = try? readback?.wait()
    }

    /// Hands every buffer back to `pool` once the last submission is done; the plan is unusable after.
    func recycle(into pool: BufferPool) {
        guard (try? sequence.wait()) != nil, (try? prelude?.wait()) != nil, (try? preludeOnDevice?.wait()) != nil,
              (try? readback?.wait()) != nil else { return }
        let staging = [input.staging, result.staging, modelInput?.staging, ownsDepth ? depth.staging : nil].compactMap { $0 }
        let all = [ping, pong, params] + (ownsDepth ? [depth.device] : []) + (input.device === ping ? [] : [input.device])
            + (modelInput.map { [$0.device] } ?? []) + scratch + staging
        for buffer in all { pool.give(buffer) }
        for image in scratchImages { pool.give(image) }
    }

    /// Runs the recorded chain on `image` (already checked to match `key`) and reads the result.
    func run(_ image: Image, depth depthMap: DepthPlane?, kernels: [any FilterKernel], time: Float,
             transfers: TransferCounter) throws(MarbleError) -> Image {
        try start(image, depth: depthMap, kernels: kernels, time: time, transfers: transfers)
        return try finish(transfers: transfers)
    }

    /// Uploads the frame, runs the prelude and reads the depth model's input back (a plan with a depth input).
    func startDepthInput(_ image: Image, transfers: TransferCounter) throws(MarbleError) -> Image {
        guard let prelude, let modelInput else { preconditionFailure("plan without a depth input") }
        let (w, h) = (key.depthInputWidth, key.depthInputHeight)
        let bytes = try MarbleError.gpu { () throws(GPUError) in
            try input.host.write(image.bytes)
            transfers.upload(image.bytes.count)
            try prelude.run()
            return try modelInput.host.read(count: w * h * 4)
        }
        transfers.download(bytes.count)
        return try MarbleError.image { () throws(MediaError) in try Image(width: w, height: h, format: .rgba8, bytes: bytes) }
    }

    /// Uploads the frame and runs the prelude that leaves the depth model's input on the device
    /// (nothing read back); returns that buffer (`rgba8`, the plan's depth input size).
    func startDepthInputOnDevice(_ image: Image, transfers: TransferCounter) throws(MarbleError) -> GPUBuffer {
        guard let preludeOnDevice, let modelInput else { preconditionFailure("plan without a depth input") }
        try MarbleError.gpu { () throws(GPUError) in
            try input.host.write(image.bytes)
            transfers.upload(image.bytes.count)
            try preludeOnDevice.run()
        }
        return modelInput.device
    }

    /// Writes the frame's pixels (unless `uploaded`: the prelude already has them) and floats
    /// and submits, without waiting (the plan must be idle).
    func start(_ image: Image, depth depthMap: DepthPlane?, kernels: [any FilterKernel], time: Float,
               transfers: TransferCounter, uploaded: Bool = false) throws(MarbleError) {
        try MarbleError.gpu { () throws(GPUError) in
            if !uploaded {
                try input.host.write(image.bytes)
                transfers.upload(image.bytes.count)
            }
            if let depthMap {
                try depth.uploadNow(depthMap.values)
                transfers.upload(depthMap.values.count * 4)
            }
            for (index, kernel) in kernels.enumerated() {
                let floats = kernel.floats(time: time, size: sizes[index])
                precondition(floats.count <= StepIO.floatCapacity, "too many float parameters")
                try params.write(values: floats, at: slot * (index + 1))
            }
            try sequence.submit()
        }
    }

    /// Waits for the submission `start` made, copies the result into its staging buffer where
    /// there is one, and reads it (into recycled storage).
    func finish(transfers: TransferCounter) throws(MarbleError) -> Image {
        let bytes = try MarbleError.gpu { () throws(GPUError) in
            // The copy's barrier orders it after the chain's submission on the same queue.
            if let readback { try readback.run() }
            try sequence.wait()
            var failure: GPUError?
            let bytes = results.make(count: outputSize.width * outputSize.height * 4) { raw in
                do throws(GPUError) { try result.host.read(into: raw) } catch { failure = error }
            }
            if let failure { throw failure }
            return bytes
        }
        transfers.download(bytes.count)
        return try MarbleError.image { () throws(MediaError) in
            try Image(width: outputSize.width, height: outputSize.height, format: .rgba8, bytes: bytes)
        }
    }
}

/// Host ⇄ device copies of a chain: every frame, depth map and model input written into a
/// device buffer, every result read back.
public struct TransferCounts: Sendable, Equatable {
    /// Buffers written from the host (frames, depth maps).
    public var uploads = 0
    /// Buffers read back to the host (results, depth-model inputs).
    public var downloads = 0
    /// Bytes written.
    public var uploadBytes = 0
    /// Bytes read back.
    public var downloadBytes = 0

    /// No transfers.
    public init() {}
}

/// Counts a chain's transfers (any thread).
final class TransferCounter: Sendable {
    private let counts = Locked(TransferCounts())

    func upload(_ bytes: Int) { counts.withLock { $0.uploads += 1; $0.uploadBytes += bytes } }
    func download(_ bytes: Int) { counts.withLock { $0.downloads += 1; $0.downloadBytes += bytes } }
    var value: TransferCounts { counts.withLock { $0 } }
}

import Foundation
import GraniteGPU
import GraniteMedia

extension FilterChain {
    /// Waits for `plan`'s submission and converts its output on the device to each of `layouts`
    /// (one more dispatch per layout, its bytes copied back; ``ChainFrame/yuv(_:)``).
    ///
    /// ```
    ///  result ─yuv_out─► YUV bytes (device) ─copy─► staging ─► [YUVLayout: [UInt8]]
    /// ```
    func convertResult(of plan: ChainPlan, to layouts: [YUVLayout]) throws(MarbleError) -> [YUVLayout: [UInt8]] {
        let (w, h) = plan.outputSize
        let counter = transferCounter
        var yuv: [YUVLayout: [UInt8]] = [:]
        // The frame's own submission is waited for outside the chain's lock, so another frame
        // can lease a plan and start meanwhile; the conversions share recorded buffers: locked.
        try MarbleError.gpu { () throws(GPUError) in try plan.sequence.wait() }
        try lock.locked { () throws(MarbleError) in
            let pool = try bufferPool()
            try MarbleError.gpu { () throws(GPUError) in
                for layout in layouts where yuv[layout] == nil {
                    let bytes = try yuvOutputs.convert(plan.output, width: w, height: h, layout: layout, pool: pool)
                    counter.download(bytes.count)
                    yuv[layout] = bytes
                }
            }
        }
        return yuv
    }

    /// Waits for `plan`'s submission, converts its output on the device to `layout` and reads the
    /// bytes straight into `destination` (at least `layout.byteCount` bytes: e.g. a buffer shared
    /// with another process), not into an array first (``ChainFrame/yuv(_:into:)``).
    func convertResult(of plan: ChainPlan, to layout: YUVLayout, into destination: UnsafeMutableRawBufferPointer) throws(MarbleError) {
        let (w, h) = plan.outputSize
        let need = layout.byteCount(width: w, height: h)
        guard destination.count >= need else {
            throw MarbleError.gpu(.invalidPipeline(name: "yuv_out", reason: "\(layout) \(w)x\(h) needs \(need) bytes, the destination holds \(destination.count)"))
        }
        try MarbleError.gpu { () throws(GPUError) in try plan.sequence.wait() }
        let counter = transferCounter
        try lock.locked { () throws(MarbleError) in
            let pool = try bufferPool()
            try MarbleError.gpu { () throws(GPUError) in
                try yuvOutputs.convert(plan.output, width: w, height: h, layout: layout, pool: pool,
                                       into: UnsafeMutableRawBufferPointer(rebasing: destination[..<need]))
            }
            counter.download(need)
        }
    }
}

extension FilterChain {
    /// Whether converting the result to YUV on the device beats the CPU's vectorised conversion:
    /// on a GPU, yes; on a CPU device (lavapipe: the "GPU" is the same cores, and the shader
    /// costs about 20× the vectorised rows at 1280×720) no, unless `GRANITE_DEBUG=gpu-yuv` (or the
    /// old `GRANITE_GPU_YUV=1`) asks for it anyway (the tests, to exercise the path on lavapipe).
    /// False when there is no device. Asked per frame: an atomic load once the device is open
    /// (no lock, no environment read).
    public var convertsYUVOnDevice: Bool {
        if GraniteDebug.current.contains(.gpuYUV) { return true }
        return deviceIsGPU ?? false
    }
}

extension FilterChain {
    /// Whether a live run's depth or mask model should take its input made from the frame on the
    /// device (resized there, the small picture read back; ``ChainFrame/modelInput()``) rather
    /// than resize the frame itself on the host: on a GPU, yes; on a CPU device (lavapipe) no —
    /// the read-back is a submission of its own that waits for every frame in flight before it
    /// (one queue), stalling the capture loop, and the resize costs the same cores either way
    /// (segment bench at 1280×720: latency p99 60–80 → 36–44 ms, ~2 ms less CPU a frame).
    /// `GRANITE_DEBUG=device-input` asks for the device anyway (the tests, to exercise the path on
    /// lavapipe). False when there is no device. An atomic load once the device is open.
    public var makesModelInputOnDevice: Bool {
        if GraniteDebug.current.contains(.deviceInput) { return true }
        return deviceIsGPU ?? false
    }
}

extension FilterChain {
    /// Whether a caller should start the next frame while this one computes (submit, then read
    /// back later): on a GPU, yes — the upload and submission of one frame overlap the compute and
    /// read-back of another; on a CPU device (lavapipe) no — its "device" threads are the same
    /// cores, and two frames at once ran slower there (61 against 89 fps for blur σ2 + sobel +
    /// sepia at 1280×720 on 2 cores). `GRANITE_DEBUG=overlap` or `=no-overlap` (the old
    /// `GRANITE_GPU_OVERLAP=1` or `=0`) overrides it. False when there is no device. Asked per
    /// frame: an atomic load once the device is open.
    public var overlapsFrames: Bool {
        let debug = GraniteDebug.current
        if debug.contains(.overlap) { return true }
        if debug.contains(.noOverlap) { return false }
        return deviceIsGPU ?? false
    }
}

extension Shader {
    static let yuvOut = Shader(name: "yuv_out", words: SPIRV.yuv_out)
}

/// The YUV conversions recorded so far, one command buffer per result buffer, size and layout
/// (a chain keeps a few plans, so a few of these); used under the chain's lock.
final class YUVOutputs: @unchecked Sendable {
    private struct Key: Hashable {
        let source: ObjectIdentifier
        let width: Int
        let height: Int
        let layout: YUVLayout
    }

    private struct Recorded {
        let source: GPUBuffer
        let sequence: CommandSequence
        let output: StagedBuffer
        let params: GPUBuffer
        let bytes: Int
    }

    private var recorded: [Key: Recorded] = [:]
    private static let capacity = 8
    /// Output words a row of the dispatch grid (a multiple of the 64-wide workgroup), so
    /// a 4K frame stays inside every device's group-count limits.
    static let gridWidth = 16384

    /// Converts the `width`×`height` `rgba8` pixels in `source` (written by a finished
    /// submission) to `layout` and reads the bytes back.
    func convert(_ source: GPUBuffer, width: Int, height: Int, layout: YUVLayout, pool: BufferPool) throws(GPUError) -> [UInt8] {
        return try run(source, width: width, height: height, layout: layout, pool: pool) { entry throws(GPUError) in
            try entry.output.host.read(count: entry.bytes)
        }
    }

    /// The same conversion, its bytes read into `destination` (exactly the layout's byte count).
    func convert(_ source: GPUBuffer, width: Int, height: Int, layout: YUVLayout, pool: BufferPool,
                 into destination: UnsafeMutableRawBufferPointer) throws(GPUError) {
        try run(source, width: width, height: height, layout: layout, pool: pool) { entry throws(GPUError) in
            try entry.output.host.read(into: destination)
        }
    }

    /// Runs the recorded conversion of `source` to `layout` (recording it the first time) and
    /// hands its entry to `read`.
    private func run<T>(_ source: GPUBuffer, width: Int, height: Int, layout: YUVLayout, pool: BufferPool,
                        read: (Recorded) throws(GPUError) -> T) throws(GPUError) -> T {
        let key = Key(source: ObjectIdentifier(source), width: width, height: height, layout: layout)
        let entry: Recorded
        if let known = recorded[key] {
            entry = known
        } else {
            if recorded.count >= YUVOutputs.capacity { clear(into: pool) }
            entry = try record(source, width: width, height: height, layout: layout, pool: pool)
            recorded[key] = entry
        }
        try entry.sequence.run()
        return try read(entry)
    }

    private func record(_ source: GPUBuffer, width: Int, height: Int, layout: YUVLayout, pool: BufferPool) throws(GPUError) -> Recorded {
        let bytes = layout.byteCount(width: width, height: height)
        let words = (bytes + 3) / 4
        let (luma, chroma) = layout.strides(width: width)
        // Rows of whole words: one invocation per word of a row (no division per byte); else
        // the output as one run of words, each byte placed by division.
        let rows = luma % 4 == 0 && chroma % 4 == 0
        let grid = rows ? (width: max(luma, chroma) / 4, height: height + 2 * layout.chromaRows(height: height))
            : (width: min(YUVOutputs.gridWidth, (words + 63) / 64 * 64), height: (words + YUVOutputs.gridWidth - 1) / YUVOutputs.gridWidth)
        // The layout first: an unsupported one throws before any buffer is taken from the pool.
        let kind: UInt32
        switch layout {
        case .yuyv: kind = 0
        case .planar420: kind = 1
        case .planar444: kind = 2
        case .semiPlanar420:
            // No shader writes NV12 yet: its outputs (the PipeWire camera) convert on the CPU.
            throw .invalidPipeline(name: "yuv_out", reason: "NV12 is converted on the CPU, not on the device")
        }
        let output = try pool.takeStaged(size: words * 4, .readback)
        let params = try pool.take(size: StepIO.floatCapacity * 4)
        let sequence = try CommandSequence(context: pool.context)
        let io = StepIO(context: pool.context, source: BufferSlice(source), destination: BufferSlice(output.device),
                        sourceSize: (width, height), destinationSize: grid,
                        params: BufferSlice(params, offset: 0, size: StepIO.floatCapacity * 4),
                        depth: BufferSlice(params, offset: 0, size: StepIO.floatCapacity * 4), depthSize: (0, 0),
                        makeScratch: { (size, role) throws(GPUError) in try pool.take(size: size, role: role) },
                        scratchImage: { (w, h) throws(GPUError) in try pool.takeImage(width: w, height: h) })
        try sequence.record { (recorder) throws(GPUError) in
            recorder.section = "yuv \(layout)"
            try io.dispatch(&recorder, .yuvOut, spec: [kind, rows ? 1 : 0], a: SIMD4(Int32(luma), Int32(chroma), Int32(bytes), 0))
            try output.recordCopy(&recorder, size: words * 4)
        }
        return Recorded(source: source, sequence: sequence, output: output, params: params, bytes: bytes)
    }

    /// Hands every buffer back to `pool` (nothing is running: each conversion is waited for).
    func clear(into pool: BufferPool) {
        for entry in recorded.values {
            pool.give(entry.output)
            pool.give(entry.params)
        }
        recorded.removeAll()
    }
}

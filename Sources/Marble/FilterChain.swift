import Foundation
import GraniteGPU
import GraniteMedia

/// A sequence of filters run as one GPU submission, with a CPU reference path.
///
/// ```
///  Image (yuyv | nv12 | rgb24 | rgba8) ─upload once─► convert ─► filter 1 ─► … ─► filter n ─download once─► Image (rgba8)
///                                         one command buffer, ping-pong buffers, no CPU round trip
/// ```
/// The command buffer is recorded once per input shape and submitted for every frame; only the
/// pixels and the per-frame floats (time-animated parameters) are rewritten. Calls from several
/// threads are serialised.
public final class FilterChain: @unchecked Sendable {
    /// The filters, in order.
    public let specs: [FilterSpec]
    /// How YUV inputs are quantised.
    public let range: ColorRange
    let kernels: [any FilterKernel]
    private let requestedContext: GPUContext?
    let lock = NSLock()
    var plans: [ChainPlan] = []
    private var pool: BufferPool?
    private static let maxPlans = 4
    /// A started frame whose result `finishFrame` has not read yet, per pipeline slot.
    private var started: [Int: ChainPlan] = [:]
    let transferCounter = TransferCounter()
    /// The newest depth map on the device for live frames (``apply(_:time:depth:depthVersion:depthInput:)``).
    private var resident: (buffer: GPUBuffer, width: Int, height: Int, version: UInt64?)?
    /// The recorded YUV conversions of the plans' results (`FilterChain+YUV.swift`).
    let yuvOutputs = YUVOutputs()
    /// Whether a filter and a 3×3 tail it can compute (blur then sobel/ink on a CPU driver) are
    /// recorded as one step; false only to compare against the unfused chain.
    let fuseStencilTails: Bool

    /// Every host ⇄ device copy the chain has made so far: per frame one upload of the frame and
    /// one download of the result, plus one upload of a depth map when given one (a live frame's:
    /// only a new one), plus one download of the depth model's input when it is asked for.
    public var transfers: TransferCounts { transferCounter.value }

    /// A chain of `specs` on `context` (nil: `GPUContext.shared()`, opened on the first GPU run).
    public init(_ specs: [FilterSpec], context: GPUContext? = nil, range: ColorRange = .limited) throws(MarbleError) {
        self.specs = specs
        self.range = range
        self.requestedContext = context
        self.kernels = try specs.map(Marble.kernel(for:))
        fuseStencilTails = true
    }

    /// A chain of `specs` whose filters each get their own step when `fuseStencilTails` is false
    /// (no blur + sobel fusion), to compare the fused chain with (tests, `granite-bench filters`).
    package init(_ specs: [FilterSpec], context: GPUContext?, range: ColorRange = .limited, fuseStencilTails: Bool) throws(MarbleError) {
        self.specs = specs
        self.range = range
        self.requestedContext = context
        self.kernels = try specs.map(Marble.kernel(for:))
        self.fuseStencilTails = fuseStencilTails
    }

    /// A stable text of the chain: every filter with all its parameters, and the YUV range
    /// (e.g. for a manifest that must notice changed filters). Parses back with `parseChain`.
    public var fingerprint: String {
        (specs.isEmpty ? "none" : specs.map(\.description).joined(separator: " | ")) + " @" + range.rawValue
    }

    /// Runs the chain on the GPU. Any supported input format; the result is `rgba8`.
    ///
    /// - Parameters:
    ///   - depth: a `grayF32` depth map for `depthmask` and `depth` (any size; sampled nearest).
    ///   - time: seconds, for time-animated filters (added to each filter's own `time`).
    public func apply(_ image: Image, depth: Image? = nil, time: Float = 0) throws(MarbleError) -> Image {
        let (key, depthPlane) = try FilterChain.shape(of: image, depth: depth, slot: 0)
        return try lock.locked { () throws(MarbleError) -> Image in
            let plan = try plan(for: key)
            return try plan.run(image, depth: depthPlane, kernels: kernels, time: time, transfers: transferCounter)
        }
    }

    /// Runs the chain with a depth map made from this frame: the frame goes to the device once,
    /// is converted and resized there to the depth model's input (`depthInput`, antialiased
    /// bilinear: the shared resampler's, which GraniteML's own resize uses), that small `rgba8`
    /// picture comes back and goes to `estimate`, and the `grayF32` map it returns (the frame's
    /// size) goes up for `depthmask` and `depth`. The frame is not uploaded again.
    ///
    /// `estimate` returning nil (no map: the model failed) runs the chain without depth (the frame
    /// then goes up a second time). A chain with no `depthmask` or `depth` uploads no map.
    public func apply(_ image: Image, time: Float = 0, depthInput: (width: Int, height: Int),
                      estimate: (Image) -> Image?) throws(MarbleError) -> Image {
        guard depthInput.width > 0, depthInput.height > 0 else {
            throw MarbleError.invalidDepth(reason: "depth input size \(depthInput.width)x\(depthInput.height) is empty")
        }
        var (key, _) = try FilterChain.shape(of: image, depth: nil, slot: 0)
        let readsDepth = kernels.contains { $0.readsDepth }
        if readsDepth { (key.depthWidth, key.depthHeight) = (image.width, image.height) }
        (key.depthInputWidth, key.depthInputHeight) = depthInput
        return try lock.locked { () throws(MarbleError) -> Image in
            let plan = try plan(for: key)
            let small = try plan.startDepthInput(image, transfers: transferCounter)
            let map = estimate(small)
            guard readsDepth else {
                try plan.start(image, depth: nil, kernels: kernels, time: time, transfers: transferCounter, uploaded: true)
                return try plan.finish(transfers: transferCounter)
            }
            guard let map else {
                let plain = try self.plan(for: try FilterChain.shape(of: image, depth: nil, slot: 0).0)
                return try plain.run(image, depth: nil, kernels: kernels, time: time, transfers: transferCounter)
            }
            guard let plane = try FilterChain.depthPlane(map), plane.width == image.width, plane.height == image.height else {
                throw MarbleError.invalidDepth(reason: "expected a \(image.width)x\(image.height) map, got \(map.width)x\(map.height)")
            }
            try plan.start(image, depth: plane, kernels: kernels, time: time, transfers: transferCounter, uploaded: true)
            return try plan.finish(transfers: transferCounter)
        }
    }

    /// Runs the chain on a live frame (issue 14): the frame goes to the device once. With
    /// `depthInput` it is also resized there to the depth model's input (antialiased bilinear, as in
    /// ``apply(_:time:depthInput:estimate:)``), which comes back, small, beside the result — for a
    /// depth model working beside the chain, whose map a later frame reads.
    ///
    /// `depth` is the newest map (`grayF32`, any size) and `depthVersion` names it (e.g. the sequence
    /// of the frame it was made from): the chain keeps it on the device and writes it again only
    /// when the version changes, so a map that serves many frames goes up once. A chain without
    /// `depthmask` or `depth` ignores the map; with none yet they read the frame's luma.
    public func apply(_ image: Image, time: Float = 0, depth: Image?, depthVersion: UInt64,
                      depthInput: (width: Int, height: Int)?) throws(MarbleError) -> (image: Image, modelInput: Image?) {
        if let depthInput, depthInput.width <= 0 || depthInput.height <= 0 {
            throw MarbleError.invalidDepth(reason: "depth input size \(depthInput.width)x\(depthInput.height) is empty")
        }
        var (key, _) = try FilterChain.shape(of: image, depth: nil, slot: 0)
        let map = kernels.contains { $0.readsDepth } ? depth : nil
        if let map {
            guard map.format == .grayF32 else { throw MarbleError.invalidDepth(reason: "expected grayF32, got \(map.format)") }
            (key.depthWidth, key.depthHeight, key.residentDepth) = (map.width, map.height, true)
        }
        if let depthInput { (key.depthInputWidth, key.depthInputHeight) = depthInput }
        return try lock.locked { () throws(MarbleError) -> (image: Image, modelInput: Image?) in
            var plane: DepthPlane?
            if let map {
                try makeResident(width: map.width, height: map.height)
                if resident?.version != depthVersion { plane = try FilterChain.depthPlane(map) }
            }
            let plan = try plan(for: key)
            let small = depthInput == nil ? nil : try plan.startDepthInput(image, transfers: transferCounter)
            if plane != nil { resident?.version = nil }
            try plan.start(image, depth: plane, kernels: kernels, time: time, transfers: transferCounter, uploaded: small != nil)
            if plane != nil { resident?.version = depthVersion }
            return (try plan.finish(transfers: transferCounter), small)
        }
    }

    /// Makes the resident depth buffer `width`×`height` (call under `lock`); the plans bound to one
    /// of another size go with it.
    private func makeResident(width: Int, height: Int) throws(MarbleError) {
        if let resident, resident.width == width, resident.height == height { return }
        let pool = try bufferPool()
        if let old = resident {
            let bound = plans.filter { $0.key.residentDepth }
            plans.removeAll { $0.key.residentDepth }
            for plan in bound { plan.recycle(into: pool) }
            pool.give(old.buffer)
            resident = nil
        }
        let buffer = try MarbleError.gpu { () throws(GPUError) in try pool.take(size: max(4, width * height * 4)) }
        resident = (buffer, width, height, nil)
    }

    /// Uploads and submits `image` on plan `slot` without waiting; `finishFrame(slot:)` reads it.
    /// Used by `FilterPipeline` (two slots, so one frame computes while the other is read and filled).
    func startFrame(_ image: Image, depth: Image?, time: Float, slot: Int) throws(MarbleError) {
        let (key, depthPlane) = try FilterChain.shape(of: image, depth: depth, slot: slot)
        try lock.locked { () throws(MarbleError) in
            precondition(started[slot] == nil, "slot \(slot) started twice")
            let plan = try plan(for: key)
            try plan.start(image, depth: depthPlane, kernels: kernels, time: time, transfers: transferCounter)
            started[slot] = plan
        }
    }

    /// Waits for the frame started on `slot` and returns it.
    func finishFrame(slot: Int) throws(MarbleError) -> Image {
        let plan: ChainPlan? = lock.withLock { started.removeValue(forKey: slot) }
        guard let plan else { preconditionFailure("slot \(slot) not started") }
        return try plan.finish(transfers: transferCounter)
    }

    /// Runs the CPU reference of every filter (slow; for tests and machines without Vulkan).
    public func applyCPU(_ image: Image, depth: Image? = nil, time: Float = 0) throws(MarbleError) -> Image {
        let depthPlane = try FilterChain.depthPlane(depth)
        var plane = try InputConversion.plane(image, range: range)
        for kernel in kernels {
            _ = try kernel.outputSize(width: plane.width, height: plane.height)
            let env = CPUEnvironment(time: time, depth: depthPlane, floats: kernel.floats(time: time, size: (plane.width, plane.height)) + [Float](repeating: 0, count: StepIO.floatCapacity))
            plane = kernel.cpu(plane, env)
        }
        return try InputConversion.image(plane)
    }

    /// What each GPU command of the chain costs on the device for `image`'s shape: the median of
    /// `runs` submissions of a plan that writes a timestamp after every dispatch and copy, in
    /// recording order, labelled "filter: shader". Empty when the device writes no timestamps.
    package func profile(_ image: Image, depth: Image? = nil, time: Float = 0, runs: Int = 9) throws(MarbleError) -> [(label: String, seconds: Double)] {
        let (key, depthPlane) = try FilterChain.shape(of: image, depth: depth, slot: -1)
        return try lock.locked { () throws(MarbleError) -> [(label: String, seconds: Double)] in
            let pool = try bufferPool()
            let names = specs.count == kernels.count ? specs.map(\.name) : []
            let plan = try ChainPlan(key: key, kernels: kernels, names: names, range: range, pool: pool, timed: true,
                                     fuseStencilTails: fuseStencilTails)
            defer { plan.recycle(into: pool) }
            var samples: [[(label: String, seconds: Double)]] = []
            for _ in 0..<max(1, runs) {
                _ = try plan.run(image, depth: depthPlane, kernels: kernels, time: time, transfers: TransferCounter())
                samples.append(try MarbleError.gpu { () throws(GPUError) in try plan.sequence.timings() })
            }
            return samples[0].indices.map { index in
                let values = samples.map { $0[index].seconds }.sorted()
                return (samples[0][index].label, values[values.count / 2])
            }
        }
    }

    /// A chain of one gaussian blur written in a given shader style, to measure styles.
    package static func blurStyleProbe(sigma: Float, style: GaussianBlur.Style, context: GPUContext) throws(MarbleError) -> FilterChain {
        var blur = GaussianBlur(sigma: sigma)
        blur.style = style
        return try FilterChain(kernels: [blur], context: context)
    }

    private init(kernels: [any FilterKernel], context: GPUContext) throws(MarbleError) {
        self.specs = []
        self.range = .limited
        self.requestedContext = context
        self.kernels = kernels
        fuseStencilTails = true
    }

    /// Filters recorded as GPU steps for the most recently used input shape (fused ones count once).
    var lastRecordedSteps: Int? { lock.withLock { plans.last?.recordedSteps } }

    func plan(for key: ChainPlan.Key) throws(MarbleError) -> ChainPlan {
        if let index = plans.firstIndex(where: { $0.key == key }) {
            let plan = plans.remove(at: index)
            plans.append(plan)
            return plan
        }
        let pool = try bufferPool()
        let plan = try ChainPlan(key: key, kernels: kernels, range: range, pool: pool,
                                 sharedDepth: key.residentDepth ? resident?.buffer : nil, fuseStencilTails: fuseStencilTails)
        plans.append(plan)
        // Evict the least recently used plan that has no frame in flight for a FilterPipeline.
        if plans.count > FilterChain.maxPlans,
           let victim = plans.firstIndex(where: { plan in !started.values.contains { $0 === plan } }) {
            plans.remove(at: victim).recycle(into: pool)
        }
        return plan
    }

    /// The pool plans take their buffers from, made on the first GPU run (call under `lock`).
    func bufferPool() throws(MarbleError) -> BufferPool {
        if let pool { return pool }
        let context: GPUContext
        if let requestedContext {
            context = requestedContext
        } else {
            context = try MarbleError.gpu { () throws(GPUError) in try GPUContext.shared() }
        }
        let made = BufferPool(context: context)
        pool = made
        return made
    }

    /// The plan key for `image` (and `depth`) on plan `slot`, after checking the GPU can read its format.
    static func shape(of image: Image, depth: Image?, slot: Int) throws(MarbleError) -> (ChainPlan.Key, DepthPlane?) {
        let depthPlane = try FilterChain.depthPlane(depth)
        _ = try InputConversion.shaderFormat(image.format)
        let key = ChainPlan.Key(width: image.width, height: image.height, format: image.format,
                                depthWidth: depthPlane?.width ?? 0, depthHeight: depthPlane?.height ?? 0, slot: slot)
        return (key, depthPlane)
    }

    private static func depthPlane(_ depth: Image?) throws(MarbleError) -> DepthPlane? {
        guard let depth else { return nil }
        guard depth.format == .grayF32 else { throw MarbleError.invalidDepth(reason: "expected grayF32, got \(depth.format)") }
        return DepthPlane(width: depth.width, height: depth.height, values: depth.floats())
    }
}

import Foundation
import GraniteGPU
import GraniteMedia
import Synchronization

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
    /// The plans frames hold now (``ChainFrame``).
    private var leased: Set<ObjectIdentifier> = []
    let transferCounter = TransferCounter()
    /// The device's kind once it is open, for the per-frame questions without the lock:
    /// 0 not open yet, 1 a GPU, 2 a CPU driver (lavapipe).
    private let openedKind = Atomic<UInt8>(0)
    /// The newest depth map on the device for live frames (``ChainDepth/resident(_:version:)``).
    private var resident: (buffer: StagedBuffer, width: Int, height: Int, version: UInt64?)?
    /// Whether a model has written the resident buffer on the device (``ChainDepth/onDevice(newMap:)``).
    private var residentOnDevice = false
    /// The recorded YUV conversions of the plans' results (`FilterChain+YUV.swift`).
    let yuvOutputs = YUVOutputs()
    /// Whether a filter and a 3×3 tail it can compute (blur then sobel/ink on a CPU driver) are
    /// recorded as one step; false only to compare against the unfused chain.
    let fuseStencilTails: Bool

    /// Every host ⇄ device copy the chain has made so far: per frame one upload of the frame and
    /// one download of the result (or of each YUV layout asked for), plus one upload of a depth
    /// map when given one (a resident map: only a new one), plus one download of the depth model's
    /// input when it is asked for. Counted the same on unified memory, where no copy command runs.
    public var transfers: TransferCounts { transferCounter.value }

    /// A chain of `specs` on `context` (nil: `GPUContext.shared()`, opened on the first GPU run).
    public init(_ specs: [FilterSpec], context: GPUContext? = nil, range: ColorRange = .limited) throws(MarbleError) {
        self.specs = specs
        self.range = range
        self.requestedContext = context
        self.kernels = try specs.map(Marble.kernel(for:))
        try Background.checkChain(specs)
        fuseStencilTails = true
    }

    /// A chain of `specs` whose filters each get their own step when `fuseStencilTails` is false
    /// (no blur + sobel fusion), to compare the fused chain with (tests, `granite-bench filters`).
    package init(_ specs: [FilterSpec], context: GPUContext?, range: ColorRange = .limited, fuseStencilTails: Bool) throws(MarbleError) {
        self.specs = specs
        self.range = range
        self.requestedContext = context
        self.kernels = try specs.map(Marble.kernel(for:))
        try Background.checkChain(specs)
        self.fuseStencilTails = fuseStencilTails
    }

    /// The device the chain runs on, opened now if it was not yet: its name, kind and where its
    /// buffers live (`llvmpipe (…) (CPU device); memory: device: type 0 (DL|HV|HC|HCached), …`).
    /// Throws when there is no usable Vulkan device — a program asks before it starts capturing.
    public func deviceDescription() throws(MarbleError) -> String {
        let context = try lock.locked { () throws(MarbleError) -> GPUContext in try bufferPool().context }
        return "\(context.deviceName) (\(context.deviceKind)); memory: \(context.memoryPolicy.summary)"
    }

    /// A stable text of the chain: every filter with all its parameters, and the YUV range
    /// (e.g. for a manifest that must notice changed filters). Parses back with `parseChain`.
    public var fingerprint: String {
        (specs.isEmpty ? "none" : specs.map(\.description).joined(separator: " | ")) + " @" + range.rawValue
    }

    /// A frame through the chain on the device: see ``ChainFrame`` (upload once, run, read back
    /// what is wanted). `depth` says where `depthmask`/`depth` read their map; `modelInput` (the
    /// depth model's input size) lets ``ChainFrame/modelInput()`` make the model's picture from the
    /// frame on the device. `mapSize` is the size of the map a model makes from the frame
    /// (``ChainDepth/estimated``, ``ChainDepth/onDevice(newMap:)``): the frame's by default (depth);
    /// a person mask stays at the model's size (`background` upsamples it on the frame's edges).
    /// The frame holds a plan of the chain until it ends.
    public func frame(_ image: Image, time: Float = 0, depth: ChainDepth = .none,
                      modelInput: (width: Int, height: Int)? = nil,
                      mapSize: (width: Int, height: Int)? = nil) throws(MarbleError) -> ChainFrame {
        if let modelInput, modelInput.width <= 0 || modelInput.height <= 0 {
            throw MarbleError.invalidDepth(reason: "depth input size \(modelInput.width)x\(modelInput.height) is empty")
        }
        let mapSize = mapSize ?? (image.width, image.height)
        if mapSize.width <= 0 || mapSize.height <= 0 {
            throw MarbleError.invalidDepth(reason: "map size \(mapSize.width)x\(mapSize.height) is empty")
        }
        var key: ChainPlan.Key
        switch depth {
        case .none:
            key = try FilterChain.shape(of: image, depth: nil).0
        case let .map(map):
            key = try FilterChain.shape(of: image, depth: readsDepth ? map : nil).0
        case let .resident(map, version):
            key = try FilterChain.shape(of: image, depth: nil).0
            if readsDepth {
                guard map.format == .grayF32 else { throw MarbleError.invalidDepth(reason: "expected grayF32, got \(map.format)") }
                (key.depthWidth, key.depthHeight, key.residentDepth) = (map.width, map.height, true)
                // The map goes up now (when new), so the plan leased below binds the buffer it is in.
                try updateResident(map, version: version)
            }
        case let .onDevice(newMap):
            key = try FilterChain.shape(of: image, depth: nil).0
            if readsDepth {
                // The kept map's size: `mapSize` for a new one; the last one's, whatever it is, for a
                // frame that reads it (the shaders sample a map of any size).
                let kept = try lock.locked { () throws(MarbleError) -> (width: Int, height: Int)? in
                    if newMap { try makeResident(width: mapSize.width, height: mapSize.height) }
                    guard let resident, newMap || residentOnDevice else { return nil }
                    return (resident.width, resident.height)
                }
                if let kept { (key.depthWidth, key.depthHeight, key.residentDepth) = (kept.width, kept.height, true) }
            }
            if newMap && modelInput == nil { preconditionFailure("ChainDepth.onDevice(newMap: true) needs a modelInput size") }
        case .estimated:
            guard modelInput != nil else { preconditionFailure("ChainDepth.estimated needs a modelInput size") }
            key = try FilterChain.shape(of: image, depth: nil).0
            if readsDepth { (key.depthWidth, key.depthHeight) = mapSize }
        }
        if let modelInput { (key.depthInputWidth, key.depthInputHeight) = modelInput }
        // A chain that reads no depth gets no map (its plan has no room for one); a map made from
        // the frame still needs the model's input, so `.estimated` stays.
        let depth: ChainDepth = {
            switch depth {
            case .estimated: return depth
            case .onDevice(newMap: true): return readsDepth ? depth : .estimated  // the picture is still made
            case .onDevice: return key.residentDepth ? depth : .none
            default: return readsDepth ? depth : .none
            }
        }()
        return ChainFrame(chain: self, plan: try lease(key), image: image, time: time, depth: depth)
    }

    /// Runs the chain on the GPU and reads the `rgba8` result: one ``frame(_:time:depth:modelInput:mapSize:)``.
    ///
    /// - Parameters:
    ///   - image: the frame, in any format the chain takes (`yuyv`, `nv12`, `rgb24`, `rgba8`).
    ///   - depth: a `grayF32` depth map for `depthmask` and `depth` (any size; sampled nearest).
    ///   - time: seconds, for time-animated filters (added to each filter's own `time`).
    public func apply(_ image: Image, depth: Image? = nil, time: Float = 0) throws(MarbleError) -> Image {
        let frame = try frame(image, time: time, depth: depth.map(ChainDepth.map) ?? .none)
        defer { frame.end() }
        return try frame.rgba()
    }

    /// Whether a filter reads a depth map (`depthmask`, the `depth` point cloud).
    var readsDepth: Bool { kernels.contains { $0.readsDepth } }

    /// A plan for `key` no frame holds (the most recently used first), made when there is none.
    func lease(_ key: ChainPlan.Key) throws(MarbleError) -> ChainPlan {
        try lock.locked { () throws(MarbleError) -> ChainPlan in
            if let index = plans.lastIndex(where: { $0.key == key && !leased.contains(ObjectIdentifier($0)) }) {
                let plan = plans.remove(at: index)
                plans.append(plan)
                leased.insert(ObjectIdentifier(plan))
                return plan
            }
            let pool = try bufferPool()
            let plan = try ChainPlan(key: key, kernels: kernels, range: range, pool: pool,
                                     sharedDepth: key.residentDepth ? resident?.buffer : nil, fuseStencilTails: fuseStencilTails)
            plans.append(plan)
            leased.insert(ObjectIdentifier(plan))
            // Evict the least recently used plans no frame holds.
            while plans.count > FilterChain.maxPlans,
                  let victim = plans.firstIndex(where: { !leased.contains(ObjectIdentifier($0)) }) {
                plans.remove(at: victim).recycle(into: pool)
            }
            return plan
        }
    }

    /// Takes `plan` back from its frame (after its work is done).
    func release(_ plan: ChainPlan) {
        plan.settle()
        lock.withLock { _ = leased.remove(ObjectIdentifier(plan)) }
    }

    /// A model wrote `buffer` (the resident map) on the device: frames may read it from now on.
    func residentWrittenOnDevice(_ buffer: StagedBuffer) {
        lock.withLock {
            guard resident?.buffer === buffer else { return }
            residentOnDevice = true
            resident?.version = nil
        }
    }

    /// Whether `buffer` is the resident map and a model has written it on the device.
    func hasMapOnDevice(_ buffer: StagedBuffer) -> Bool {
        lock.withLock { resident?.buffer === buffer && residentOnDevice }
    }

    /// Makes `map` the resident depth map unless `version` is already there: a buffer of its size
    /// (the plans bound to one of another size go with it), written once. Frames in flight that
    /// read the old map are waited for first.
    func updateResident(_ map: Image, version: UInt64) throws(MarbleError) {
        guard readsDepth else { return }
        try lock.locked { () throws(MarbleError) in
            if let resident, resident.version == version, resident.width == map.width, resident.height == map.height { return }
            for plan in plans where plan.key.residentDepth { plan.settle() }
            try makeResident(width: map.width, height: map.height)
            guard let plane = try FilterChain.depthPlane(map), let buffer = resident?.buffer else { return }
            resident?.version = nil
            try MarbleError.gpu { () throws(GPUError) in try buffer.uploadNow(plane.values) }
            transferCounter.upload(plane.values.count * 4)
            resident?.version = version
            residentOnDevice = false
        }
    }

    /// Makes the resident depth buffer `width`×`height` (call under `lock`); the plans bound to one
    /// of another size go with it (a plan a frame holds is left to that frame).
    private func makeResident(width: Int, height: Int) throws(MarbleError) {
        if let resident, resident.width == width, resident.height == height { return }
        let pool = try bufferPool()
        if let old = resident {
            let bound = plans.filter { $0.key.residentDepth && !leased.contains(ObjectIdentifier($0)) }
            plans.removeAll { plan in bound.contains { $0 === plan } }
            for plan in bound { plan.recycle(into: pool) }
            if !plans.contains(where: { $0.key.residentDepth }) { pool.give(old.buffer) }
            resident = nil
        }
        let buffer = try MarbleError.gpu { () throws(GPUError) in try pool.takeStaged(size: max(4, width * height * 4), .upload) }
        resident = (buffer, width, height, nil)
        residentOnDevice = false
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
        let (key, depthPlane) = try FilterChain.shape(of: image, depth: depth)
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
        openedKind.store(context.deviceKind == .cpu ? 2 : 1, ordering: .releasing)
        return made
    }

    /// Whether the chain's device is a GPU rather than a CPU driver; the device is opened on the
    /// first call (under the lock), later calls are one atomic load. Nil when there is no device.
    var deviceIsGPU: Bool? {
        switch openedKind.load(ordering: .acquiring) {
        case 1: return true
        case 2: return false
        default:
            guard let kind = lock.withLock({ try? bufferPool().context.deviceKind }) else { return nil }
            return kind != .cpu
        }
    }

    /// The plan key for `image` (and `depth`) on plan `slot`, after checking the GPU can read its format.
    static func shape(of image: Image, depth: Image?) throws(MarbleError) -> (ChainPlan.Key, DepthPlane?) {
        let depthPlane = try FilterChain.depthPlane(depth)
        _ = try InputConversion.shaderFormat(image.format)
        let key = ChainPlan.Key(width: image.width, height: image.height, format: image.format,
                                depthWidth: depthPlane?.width ?? 0, depthHeight: depthPlane?.height ?? 0)
        return (key, depthPlane)
    }

    static func depthPlane(_ depth: Image?) throws(MarbleError) -> DepthPlane? {
        guard let depth else { return nil }
        guard depth.format == .grayF32 else { throw MarbleError.invalidDepth(reason: "expected grayF32, got \(depth.format)") }
        return DepthPlane(width: depth.width, height: depth.height, values: depth.floats())
    }
}

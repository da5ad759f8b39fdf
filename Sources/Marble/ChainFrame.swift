import GraniteGPU
import GraniteMedia

/// Where a frame's `depthmask`/`depth` filters read their depth map from.
public enum ChainDepth: Sendable {
    /// No map: the filters read the frame's luma.
    case none
    /// This frame's own map (`grayF32`, any size), sent up with the frame.
    case map(Image)
    /// The newest map of a live stream (`grayF32`, any size) and a version naming it (e.g. the
    /// sequence of the frame it was made from): kept on the device by the chain and sent up again
    /// only when the version changes, so a map that serves many frames goes up once.
    case resident(Image, version: UInt64)
    /// A map made from this very frame: ``ChainFrame/modelInput()`` gives the frame resized for the
    /// depth model, and the map the model returns (`grayF32`, the frame's `mapSize`) goes to
    /// ``ChainFrame/run(depth:)``.
    case estimated
    /// A live stream's map kept on the device by the chain and made there by a model: with
    /// `newMap`, this frame's ``ChainFrame/modelInputOnDevice()`` feeds a model that writes the
    /// new map into ``ChainFrame/depthOnDevice`` (then ``ChainFrame/runWithDepthOnDevice()``);
    /// without, the frame reads the map the last such frame left there (luma until one has).
    /// Frames in flight are ordered by their submissions: each reads the newest map written
    /// before it was submitted.
    case onDevice(newMap: Bool)
}

/// One frame's trip through a ``FilterChain`` on the device: the frame goes up once, the chain
/// runs, and what the caller asks for comes back — the `rgba8` result, the result converted to
/// YUV on the device, the depth model's input made from the frame.
///
/// ```
///  chain.frame(image, depth:, modelInput:)      lease a recorded plan for the frame's shape
///    └─ modelInput()    up ─► convert ─► resize ─► small rgba8 back     (optional, before run)
///       or modelInputOnDevice()  … ─► small rgba8 left on the device for a model there, which
///          writes the map into depthOnDevice; then runWithDepthOnDevice()
///    └─ run(depth:)     (up) ─► filters ─► result on the device          (one submission)
///    └─ rgba() / yuv()  result ─► (yuv_out) ─► back                       (each optional)
///    └─ end()           the plan goes back to the chain                   (also on deinit)
/// ```
/// A frame holds its plan (buffers, recorded commands) alone until it ends, so two callers of one
/// chain never read each other's result, and several frames can be in flight at once (start
/// frame N + 1 with ``run(depth:)`` before reading frame N back). One owner drives a frame; its
/// methods are not thread-safe.
public final class ChainFrame: @unchecked Sendable {
    let chain: FilterChain
    private(set) var plan: ChainPlan
    let image: Image
    let time: Float
    let depth: ChainDepth
    private var uploaded = false
    private var submitted = false
    private var ended = false

    /// The result's size (the chain may resize).
    public var width: Int { plan.outputSize.width }
    /// The result's size.
    public var height: Int { plan.outputSize.height }

    init(chain: FilterChain, plan: ChainPlan, image: Image, time: Float, depth: ChainDepth) {
        (self.chain, self.plan, self.image, self.time, self.depth) = (chain, plan, image, time, depth)
    }

    deinit { end() }

    /// The frame converted and resized on the device to the depth model's input (the size given
    /// to ``FilterChain/frame(_:time:depth:modelInput:mapSize:)``), `rgba8`, antialiased bilinear (the
    /// shared resampler's, as GraniteML's own resize). The frame is uploaded here, once.
    public func modelInput() throws(MarbleError) -> Image {
        precondition(!submitted, "modelInput() after run()")
        precondition(plan.prelude != nil, "the frame was made without a modelInput size")
        uploaded = true
        return try plan.startDepthInput(image, transfers: chain.transferCounter)
    }

    /// The depth model's input made from the frame on the device as ``modelInput()`` makes it, but
    /// left there for a model that runs on the same device (GraniteMLVulkan's `VulkanModel`): the
    /// buffer holds the picture as packed `rgba8` (R in the low byte), the size given to
    /// ``FilterChain/frame(_:time:depth:modelInput:mapSize:)``. Nothing is read back. The frame is
    /// uploaded here, once; the buffer is the frame's until it ends.
    public func modelInputOnDevice() throws(MarbleError) -> GPUBuffer {
        precondition(!submitted, "modelInputOnDevice() after run()")
        precondition(plan.prelude != nil, "the frame was made without a modelInput size")
        uploaded = true
        return try plan.startDepthInputOnDevice(image, transfers: chain.transferCounter)
    }

    /// Where the filters read this frame's own map (``ChainDepth/estimated``) on the device, for a
    /// model that writes it there: `width`×`height` floats (the frame's `mapSize`), row by row; then
    /// ``runWithDepthOnDevice()``. Nil when the chain reads no depth or the frame has no map of its own.
    public var depthOnDevice: (buffer: GPUBuffer, width: Int, height: Int)? {
        switch depth {
        case .estimated where chain.readsDepth && plan.ownsDepth, .onDevice(newMap: true) where plan.key.residentDepth:
            return (plan.depth.device, plan.key.depthWidth, plan.key.depthHeight)
        default:
            return nil
        }
    }

    /// The device the frame runs on (a model writing ``depthOnDevice`` must run there too).
    public var context: GPUContext { plan.sequence.context }

    /// Submits the chain reading the map a model wrote into ``depthOnDevice`` (no map goes up);
    /// the frame is uploaded unless ``modelInputOnDevice()`` or ``modelInput()`` did.
    public func runWithDepthOnDevice() throws(MarbleError) {
        precondition(!submitted, "run() twice")
        precondition(depthOnDevice != nil, "the frame has no map on the device to read")
        try plan.start(image, depth: nil, kernels: chain.kernels, time: time, transfers: chain.transferCounter, uploaded: uploaded)
        uploaded = true
        submitted = true
        if case .onDevice = depth { chain.residentWrittenOnDevice(plan.depth) }
    }

    /// Submits the chain (uploading the frame unless ``modelInput()`` did). `map` is the frame's
    /// own map for ``ChainDepth/estimated`` (nil: the model failed, the filters read luma);
    /// ignored otherwise. Returns at once; ``rgba()`` and ``yuv(_:)`` wait.
    public func run(depth map: Image? = nil) throws(MarbleError) {
        precondition(!submitted, "run() twice")
        var plane: DepthPlane?
        switch depth {
        case .none:
            break
        case let .map(image):
            plane = try FilterChain.depthPlane(image)
        case .resident:
            break  // sent up by `FilterChain.frame` when new
        case .onDevice:
            // No new map (the model failed): the last one kept, or luma when there is none.
            if plan.key.residentDepth && !chain.hasMapOnDevice(plan.depth) {
                let plain = try chain.lease(FilterChain.shape(of: image, depth: nil).0)
                chain.release(plan)
                plan = plain
                uploaded = false
            }
        case .estimated:
            guard chain.readsDepth else { break }
            if let map {
                guard let made = try FilterChain.depthPlane(map), made.width == plan.key.depthWidth, made.height == plan.key.depthHeight else {
                    throw MarbleError.invalidDepth(reason: "expected a \(plan.key.depthWidth)x\(plan.key.depthHeight) map, got \(map.width)x\(map.height)")
                }
                plane = made
            } else {
                // No map (the model failed): the filters read luma, which a plan without a depth
                // map records; the frame goes up again for it.
                let plain = try chain.lease(FilterChain.shape(of: image, depth: nil).0)
                chain.release(plan)
                plan = plain
                uploaded = false
            }
        }
        try plan.start(image, depth: plane, kernels: chain.kernels, time: time, transfers: chain.transferCounter, uploaded: uploaded)
        uploaded = true
        submitted = true
    }

    /// The result as `rgba8` (runs the chain first if ``run(depth:)`` was not called).
    public func rgba() throws(MarbleError) -> Image {
        if !submitted { try run() }
        return try plan.finish(transfers: chain.transferCounter)
    }

    /// The result converted on the device to each of `layouts` (GraniteMedia's BT.601 formulas,
    /// the bytes `ColorConversion.yuv(_:layout:vectorised:)` writes on the CPU); only those bytes
    /// come back (4:2:0 reads 1.5 bytes a pixel, not 4). Runs the chain first if needed.
    public func yuv(_ layouts: [YUVLayout]) throws(MarbleError) -> [YUVLayout: [UInt8]] {
        if !submitted { try run() }
        return try chain.convertResult(of: plan, to: layouts)
    }

    /// The result converted on the device to `layout`, read back straight into `destination` (at
    /// least `layout.byteCount(width:height:)` bytes at the result's size, rows at the layout's
    /// strides): a caller that owns the place the bytes must end up in — a buffer mapped from
    /// another process, a device's mmap buffer — gets one copy from the device's staging into it,
    /// not an array it copies again. Runs the chain first if needed.
    public func yuv(_ layout: YUVLayout, into destination: UnsafeMutableRawBufferPointer) throws(MarbleError) {
        if !submitted { try run() }
        try chain.convertResult(of: plan, to: layout, into: destination)
    }

    /// Waits for the frame's work and hands the plan back to the chain (idempotent).
    public func end() {
        guard !ended else { return }
        ended = true
        chain.release(plan)
    }
}

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
    /// depth model, and the map the model returns (`grayF32`, the frame's size) goes to
    /// ``ChainFrame/run(depth:)``.
    case estimated
}

/// One frame's trip through a ``FilterChain`` on the device: the frame goes up once, the chain
/// runs, and what the caller asks for comes back — the `rgba8` result, the result converted to
/// YUV on the device, the depth model's input made from the frame.
///
/// ```
///  chain.frame(image, depth:, modelInput:)      lease a recorded plan for the frame's shape
///    └─ modelInput()    up ─► convert ─► resize ─► small rgba8 back     (optional, before run)
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
    /// to ``FilterChain/frame(_:time:depth:modelInput:)``), `rgba8`, antialiased bilinear (the
    /// shared resampler's, as GraniteML's own resize). The frame is uploaded here, once.
    public func modelInput() throws(MarbleError) -> Image {
        precondition(!submitted, "modelInput() after run()")
        precondition(plan.prelude != nil, "the frame was made without a modelInput size")
        uploaded = true
        return try plan.startDepthInput(image, transfers: chain.transferCounter)
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
        case .estimated:
            guard chain.readsDepth else { break }
            if let map {
                guard let made = try FilterChain.depthPlane(map), made.width == image.width, made.height == image.height else {
                    throw MarbleError.invalidDepth(reason: "expected a \(image.width)x\(image.height) map, got \(map.width)x\(map.height)")
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

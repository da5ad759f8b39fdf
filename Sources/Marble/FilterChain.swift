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
    public let range: ColourRange
    let kernels: [any FilterKernel]
    private let requestedContext: GPUContext?
    private let lock = NSLock()
    private var plans: [ChainPlan] = []
    private static let maxPlans = 4

    /// A chain of `specs` on `context` (nil: `GPUContext.shared()`, opened on the first GPU run).
    public init(_ specs: [FilterSpec], context: GPUContext? = nil, range: ColourRange = .limited) throws {
        self.specs = specs
        self.range = range
        self.requestedContext = context
        self.kernels = try specs.map(Marble.kernel(for:))
    }

    /// Runs the chain on the GPU. Any supported input format; the result is `rgba8`.
    ///
    /// - Parameters:
    ///   - depth: a `grayF32` depth map for `depthmask` and `depth` (any size; sampled nearest).
    ///   - time: seconds, for time-animated filters (added to each filter's own `time`).
    public func apply(_ image: Image, depth: Image? = nil, time: Float = 0) throws -> Image {
        let depthPlane = try FilterChain.depthPlane(depth)
        let key = ChainPlan.Key(width: image.width, height: image.height, format: image.format,
                                depthWidth: depthPlane?.width ?? 0, depthHeight: depthPlane?.height ?? 0)
        _ = try ColourConversion.shaderFormat(image.format)
        return try lock.withLock {
            let plan = try plan(for: key)
            return try plan.run(image, depth: depthPlane, kernels: kernels, time: time)
        }
    }

    /// Runs the CPU reference of every filter (slow; for tests and machines without Vulkan).
    public func applyCPU(_ image: Image, depth: Image? = nil, time: Float = 0) throws -> Image {
        let depthPlane = try FilterChain.depthPlane(depth)
        var plane = try ColourConversion.plane(image, range: range)
        for kernel in kernels {
            _ = try kernel.outputSize(width: plane.width, height: plane.height)
            let env = CPUEnvironment(time: time, depth: depthPlane, floats: kernel.floats(time: time, size: (plane.width, plane.height)) + [Float](repeating: 0, count: StepIO.floatCapacity))
            plane = kernel.cpu(plane, env)
        }
        return try ColourConversion.image(plane)
    }

    private func plan(for key: ChainPlan.Key) throws -> ChainPlan {
        if let index = plans.firstIndex(where: { $0.key == key }) {
            let plan = plans.remove(at: index)
            plans.append(plan)
            return plan
        }
        let context = try requestedContext ?? GPUContext.shared()
        let plan = try ChainPlan(key: key, kernels: kernels, range: range, context: context)
        plans.append(plan)
        if plans.count > FilterChain.maxPlans { plans.removeFirst() }
        return plan
    }

    private static func depthPlane(_ depth: Image?) throws -> DepthPlane? {
        guard let depth else { return nil }
        guard depth.format == .grayF32 else { throw MarbleError.invalidDepth(reason: "expected grayF32, got \(depth.format)") }
        return DepthPlane(width: depth.width, height: depth.height, values: depth.floats())
    }
}

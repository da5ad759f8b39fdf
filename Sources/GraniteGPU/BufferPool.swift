import Foundation

/// Reuses `GPUBuffer`s by role and size and `GPUImage`s by dimensions, so steady-state frames
/// allocate nothing (the pool is the allocator: one Vulkan allocation per buffer, made once).
public final class BufferPool: @unchecked Sendable {
    /// The context buffers are made in.
    public let context: GPUContext
    private let lock = NSLock()
    private var free: [BufferKey: [GPUBuffer]] = [:]
    private var freeImages: [ImageSize: [GPUImage]] = [:]

    private struct BufferKey: Hashable {
        var size: Int
        var role: GPUMemoryRole
    }

    private struct ImageSize: Hashable {
        var width: Int
        var height: Int
    }

    /// An empty pool for `context`.
    public init(context: GPUContext) {
        self.context = context
    }

    /// A `role` buffer of at least `size` bytes: a returned one of the same role and rounded size,
    /// or a new one.
    public func take(size: Int, role: GPUMemoryRole = .constants) throws(GPUError) -> GPUBuffer {
        let rounded = max(4, (size + 3) & ~3)
        if let reused = lock.withLock({ free[BufferKey(size: rounded, role: role)]?.popLast() }) { return reused }
        return try GPUBuffer(context: context, size: rounded, role: role)
    }

    /// A staging buffer of `size` bytes for `direction`, or nil where the device needs none
    /// (unified memory: device buffers are mapped).
    public func takeStaging(size: Int, _ direction: StagedBuffer.Direction) throws(GPUError) -> GPUBuffer? {
        guard context.memoryPolicy.needsStaging else { return nil }
        return try take(size: size, role: direction == .upload ? .upload : .readback)
    }

    /// A device buffer of `size` bytes the host fills or reads through `direction`'s staging buffer
    /// (none on unified memory).
    public func takeStaged(size: Int, _ direction: StagedBuffer.Direction) throws(GPUError) -> StagedBuffer {
        let device = try take(size: size, role: .device)
        do throws(GPUError) {
            return StagedBuffer(device: device, staging: try takeStaging(size: size, direction), direction: direction)
        } catch {
            give(device)
            throw error
        }
    }

    /// Hands both buffers of `staged` back.
    public func give(_ staged: StagedBuffer) {
        give(staged.device)
        if let staging = staged.staging { give(staging) }
    }

    /// Hands `buffer` back for reuse. The caller must no longer have GPU work using it in flight.
    public func give(_ buffer: GPUBuffer) {
        precondition(buffer.context === context, "buffer from another context")
        lock.withLock { free[BufferKey(size: buffer.size, role: buffer.role), default: []].append(buffer) }
    }

    /// A `width`×`height` image: a returned one of that size, or a new one (general layout).
    public func takeImage(width: Int, height: Int) throws(GPUError) -> GPUImage {
        if let reused = lock.withLock({ freeImages[ImageSize(width: width, height: height)]?.popLast() }) { return reused }
        return try GPUImage(context: context, width: width, height: height)
    }

    /// Hands `image` back for reuse. The caller must no longer have GPU work using it in flight.
    public func give(_ image: GPUImage) {
        precondition(image.context === context, "image from another context")
        lock.withLock { freeImages[ImageSize(width: image.width, height: image.height), default: []].append(image) }
    }

    /// How many buffers and images wait for reuse.
    public var idleCount: Int {
        lock.withLock { free.values.reduce(0) { $0 + $1.count } + freeImages.values.reduce(0) { $0 + $1.count } }
    }
}

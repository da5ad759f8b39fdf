import Foundation

/// Reuses `GPUBuffer`s by size and `GPUImage`s by dimensions, so steady-state frames allocate nothing.
public final class BufferPool: @unchecked Sendable {
    /// The context buffers are made in.
    public let context: GPUContext
    private let lock = NSLock()
    private var free: [Int: [GPUBuffer]] = [:]
    private var freeImages: [ImageSize: [GPUImage]] = [:]

    private struct ImageSize: Hashable {
        var width: Int
        var height: Int
    }

    /// An empty pool for `context`.
    public init(context: GPUContext) {
        self.context = context
    }

    /// A buffer of at least `size` bytes: a returned one of the same rounded size, or a new one.
    public func take(size: Int) throws(GPUError) -> GPUBuffer {
        let rounded = max(4, (size + 3) & ~3)
        if let reused = lock.withLock({ free[rounded]?.popLast() }) { return reused }
        return try GPUBuffer(context: context, size: rounded)
    }

    /// Hands `buffer` back for reuse. The caller must no longer have GPU work using it in flight.
    public func give(_ buffer: GPUBuffer) {
        precondition(buffer.context === context, "buffer from another context")
        lock.withLock { free[buffer.size, default: []].append(buffer) }
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

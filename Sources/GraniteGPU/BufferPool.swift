import Foundation

/// Reuses `GPUBuffer`s by size so steady-state frames allocate nothing.
public final class BufferPool: @unchecked Sendable {
    /// The context buffers are made in.
    public let context: GPUContext
    private let lock = NSLock()
    private var free: [Int: [GPUBuffer]] = [:]

    /// An empty pool for `context`.
    public init(context: GPUContext) {
        self.context = context
    }

    /// A buffer of at least `size` bytes: a returned one of the same rounded size, or a new one.
    public func take(size: Int) throws -> GPUBuffer {
        let rounded = max(4, (size + 3) & ~3)
        if let reused = lock.withLock({ free[rounded]?.popLast() }) { return reused }
        return try GPUBuffer(context: context, size: rounded)
    }

    /// Hands `buffer` back for reuse. The caller must no longer have GPU work using it in flight.
    public func give(_ buffer: GPUBuffer) {
        precondition(buffer.context === context, "buffer from another context")
        lock.withLock { free[buffer.size, default: []].append(buffer) }
    }

    /// How many buffers wait for reuse.
    public var idleCount: Int { lock.withLock { free.values.reduce(0) { $0 + $1.count } } }
}

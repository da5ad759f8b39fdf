import GraniteMedia

/// Runs a `FilterChain` on a stream of frames with two in flight: while the device filters frame
/// N, the caller's thread reads frame N − 1 back and uploads frame N + 1.
///
/// ```
///  push(f0) → nil        [f0 computing]
///  push(f1) → f0         [f1 computing while f0 is read back, then f2 is uploaded]
///  push(f2) → f1 …
///  finish() → last frame
/// ```
/// Each slot has its own buffers and recorded commands (a plan of the chain), so the two frames
/// never share memory. Results come out one `push` late, in order. One owner drives it (not
/// thread-safe itself; the chain it wraps stays usable from other threads through `apply`).
public final class FilterPipeline {
    /// The chain every frame goes through.
    public let chain: FilterChain
    private var inFlight: [Int] = []
    private var nextSlot = 0

    /// A pipeline over `chain`.
    public init(_ chain: FilterChain) {
        self.chain = chain
    }

    /// Starts `image` (any supported format) and returns the result of the frame pushed before it,
    /// or nil for the first frame. `depth` and `time` as in `FilterChain.apply`.
    public func push(_ image: Image, depth: Image? = nil, time: Float = 0) throws(MarbleError) -> Image? {
        // Slots 1 and 2: FilterChain.apply keeps slot 0 for itself.
        let slot = 1 + nextSlot
        try chain.startFrame(image, depth: depth, time: time, slot: slot)
        nextSlot ^= 1
        inFlight.append(slot)
        guard inFlight.count > 1 else { return nil }
        return try chain.finishFrame(slot: inFlight.removeFirst())
    }

    /// Waits for the last frame pushed and returns it (nil when none is pending).
    public func finish() throws(MarbleError) -> Image? {
        guard !inFlight.isEmpty else { return nil }
        return try chain.finishFrame(slot: inFlight.removeFirst())
    }

    deinit {
        // Frames still in flight are waited for and dropped, so no plan stays marked as started.
        while let slot = inFlight.first {
            inFlight.removeFirst()
            _ = try? chain.finishFrame(slot: slot)
        }
    }
}

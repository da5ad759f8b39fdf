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
/// Each frame in flight is a ``ChainFrame`` holding its own plan of the chain (buffers, recorded
/// commands), so the two frames never share memory. Results come out one `push` late, in order. One owner drives it (not
/// thread-safe itself; the chain it wraps stays usable from other threads through `apply`).
public final class FilterPipeline {
    /// The chain every frame goes through.
    public let chain: FilterChain
    private var inFlight: [ChainFrame] = []

    /// A pipeline over `chain`.
    public init(_ chain: FilterChain) {
        self.chain = chain
    }

    /// Starts `image` (any supported format) and returns the result of the frame pushed before it,
    /// or nil for the first frame. `depth` and `time` as in `FilterChain.apply`.
    public func push(_ image: Image, depth: Image? = nil, time: Float = 0) throws(MarbleError) -> Image? {
        let frame = try chain.frame(image, time: time, depth: depth.map(ChainDepth.map) ?? .none)
        try frame.run()
        inFlight.append(frame)
        guard inFlight.count > 1 else { return nil }
        let done = inFlight.removeFirst()
        defer { done.end() }
        return try done.rgba()
    }

    /// Waits for the last frame pushed and returns it (nil when none is pending).
    public func finish() throws(MarbleError) -> Image? {
        guard !inFlight.isEmpty else { return nil }
        let done = inFlight.removeFirst()
        defer { done.end() }
        return try done.rgba()
    }

    deinit {
        // Frames still in flight end (waited for) and their results are dropped.
        for frame in inFlight { frame.end() }
    }
}

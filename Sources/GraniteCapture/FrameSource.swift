import GraniteMedia

/// Something that produces frames: a V4L2 camera, the test pattern, a folder of images.
///
/// ```
///  source thread ──emit──► FrameChannel (`buffering` frames) ──► AsyncStream<CaptureEvent> ──► consumer
///       │ sequence gaps → droppedBySource   │ live: overflow drops the oldest → droppedByConsumer
///                                            │ lossless: the source thread waits, nothing is dropped
/// ```
/// `start` opens and negotiates synchronously (so a missing or busy device throws at once),
/// then produces on the source's own thread until `stop()`, the end of the material, or a
/// fault it cannot recover from. A source is started at most once.
public protocol FrameSource: Sendable {
    /// What the source reads (`/dev/video0`, `testpattern`, `folder:/path`).
    var name: String { get }
    /// Opens the source and starts producing; events arrive on the returned stream.
    /// - Parameter delivery: what happens when the consumer falls behind (drop the oldest, or wait).
    func start(_ delivery: FrameDelivery) throws(CaptureError) -> AsyncStream<CaptureEvent>
    /// Stops producing, releases the device, and finishes the stream. Blocks until the source's
    /// thread has let go (at most one poll interval). Idempotent.
    func stop()
    /// Counters so far.
    var stats: CaptureStats { get }
}

/// What a source delivers.
public enum CaptureEvent: Sendable {
    /// The format in effect (after start, and again after a reconnect).
    case started(StreamFormat)
    /// One frame.
    case frame(Frame)
    /// A fault the source is recovering from (e.g. the device vanished; it is reopening), or,
    /// as the last event before the stream finishes, one it gave up on.
    case fault(CaptureError)
}

/// Counters of one source run.
public struct CaptureStats: Sendable, Equatable {
    /// Frames handed to the stream.
    public var delivered: UInt64 = 0
    /// Frames the source itself lost (gaps in its sequence numbers, e.g. the kernel's).
    public var droppedBySource: UInt64 = 0
    /// Frames dropped because the consumer fell behind by more than the buffering allows.
    public var droppedByConsumer: UInt64 = 0
    /// Successful reopenings after a fault.
    public var reconnects: UInt64 = 0
    /// The longest time the source was gone before a reopening succeeded, in seconds (0: none).
    public var longestGap: Double = 0
    /// Faults seen (recovered or not).
    public var faults: UInt64 = 0
    /// Driver timestamps that went backwards and were replaced by the dequeue time.
    public var repairedTimestamps: UInt64 = 0
    /// The last fault, if any.
    public var lastFault: CaptureError?

    /// All counters zero.
    public init() {}

    /// Frames lost for any reason.
    public var dropped: UInt64 { droppedBySource + droppedByConsumer }
}

extension FrameSource {
    /// Starts live: `buffering` frames kept for a slow consumer, older ones dropped and counted.
    public func start(buffering: Int) throws(CaptureError) -> AsyncStream<CaptureEvent> {
        try start(.live(buffering: buffering))
    }
}

extension AsyncStream where Element == CaptureEvent {
    /// Just the frames, for consumers that do not care about format changes and faults.
    public var frames: AsyncCompactMapSequence<AsyncStream<CaptureEvent>, Frame> {
        compactMap { event in
            if case let .frame(frame) = event { return frame }
            return nil
        }
    }
}

/// Time stamps from a producer that does not say which clock it used.
enum CaptureClock {
    /// `stamp` when it can be a time on this machine's monotonic clock — not in the future and at
    /// most 5 s old — else `now`. Another clock (wall time, a pipeline's running time) lands far
    /// outside that window, so it is never taken for a capture time.
    static func plausible(_ stamp: UInt64, now: UInt64) -> UInt64 {
        guard stamp > 0, stamp <= now, now - stamp < 5_000_000_000 else { return now }
        return stamp
    }
}

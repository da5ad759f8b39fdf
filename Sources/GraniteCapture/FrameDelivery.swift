/// How a source hands frames to a consumer that falls behind: GStreamer's live and non-live.
///
/// ```
///  live      camera ─► [newest `buffering` frames] ─► consumer    full: the oldest frame is dropped, counted
///  lossless  folder ─► [`buffering` frames]        ─► consumer    full: the source waits (back-pressure)
/// ```
/// A camera cannot be paused, so it is live: when the pipeline is behind, the latest frame wins.
/// A folder or an unpaced test pattern can wait, so nothing is ever lost.
public enum FrameDelivery: Sendable, Hashable, CustomStringConvertible {
    /// Keep the newest `buffering` frames; older ones are dropped and counted in
    /// ``CaptureStats/droppedByConsumer``.
    case live(buffering: Int)
    /// The source waits while `buffering` frames are pending: every frame reaches the consumer.
    case lossless(buffering: Int)

    /// Frames the stream holds for a slow consumer (at least 1).
    public var buffering: Int {
        switch self {
        case let .live(n), let .lossless(n): return max(1, n)
        }
    }

    /// Whether frames are dropped when the consumer is behind.
    public var isLive: Bool {
        if case .live = self { return true }
        return false
    }

    public var description: String { isLive ? "live" : "non-live" }
}

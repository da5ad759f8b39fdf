import GraniteMedia

/// The ``TestPattern`` as a ``FrameSource``: the default when there is no camera.
///
/// Paced at `fps` on the monotonic clock (deadlines, not sleeps, so the rate does not drift),
/// or as fast as it can render when `fps` is `nil`. Sequence numbers count from 0.
public final class TestPatternSource: FrameSource {
    /// The picture.
    public let pattern: TestPattern
    /// Frames per second, or `nil` for unpaced.
    public let fps: Double?
    /// Stop after this many frames (`nil`: until stopped).
    public let frameLimit: UInt64?
    private let runner = SourceRunner(name: "testpattern")
    /// Frames past the source's buffer a consumer typically still holds (processing, writing):
    /// the recycled frame storage has room for them too, so a frame still in use is rarely copied.
    static let framesInFlight = 4

    /// A test pattern source of `size`, paced at `fps` (nil: unpaced), `frameLimit` frames long.
    public init(size: FrameSize = FrameSize(width: 640, height: 480), fps: Double? = 30, frameLimit: UInt64? = nil) {
        pattern = TestPattern(size: size, fps: fps ?? 30)
        self.fps = fps
        self.frameLimit = frameLimit
    }

    public var name: String { "testpattern" }

    public var stats: CaptureStats { runner.stats }

    /// The format announced at start: the pattern's size and rate. Frames are `rgba8`, which
    /// is no camera format, so the capture format reads `auto`.
    public var streamFormat: StreamFormat {
        StreamFormat(format: .auto, size: pattern.size, bytesPerLine: pattern.size.width * 4, fps: fps)
    }

    public func start(_ delivery: FrameDelivery = .live(buffering: 4)) throws(CaptureError) -> AsyncStream<CaptureEvent> {
        let pattern = self.pattern, fps = self.fps, limit = self.frameLimit, format = streamFormat
        return try runner.start(delivery) { runner in
            runner.announce(format)
            let interval = fps.map { UInt64(1e9 / $0) }
            let origin = monotonicNanos()
            var index: UInt64 = 0
            // Frames alive at once: those buffered, the one being processed, a few in flight after it.
            var storage = RecycledBytes(slots: delivery.buffering + TestPatternSource.framesInFlight)
            while !runner.isStopping, limit.map({ index < $0 }) ?? true {
                if let interval, !runner.sleep(until: origin + index * interval) { break }
                runner.emit(Frame(image: pattern.render(index: index, recycling: &storage), sequence: index,
                                  timestampNanos: monotonicNanos(), source: "testpattern"))
                index += 1
            }
        }
    }

    public func stop() { runner.stop() }
}

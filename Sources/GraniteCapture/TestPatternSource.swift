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
    /// A file that gets, when the source stops, one line `SEQUENCE CAPTURE_NS` per frame made (the
    /// number drawn into its caption and the frame's time stamp, `CLOCK_MONOTONIC`): the producer's
    /// half of a latency measured by the drawn counters (`scripts/bench-pipewire`), which needs no
    /// time stamp carried by the transport. `nil`: none.
    public let captureLog: String?
    private let runner = SourceRunner(name: "testpattern")
    /// Frames past the source's buffer a consumer typically still holds (processing, writing):
    /// the recycled frame storage has room for them too, so a frame still in use is rarely copied.
    static let framesInFlight = 4

    /// A test pattern source of `size`, paced at `fps` (nil: unpaced), `frameLimit` frames long.
    public init(size: FrameSize = FrameSize(width: 640, height: 480), fps: Double? = 30, frameLimit: UInt64? = nil,
                captureLog: String? = nil) {
        pattern = TestPattern(size: size, fps: fps ?? 30)
        self.fps = fps
        self.frameLimit = frameLimit
        self.captureLog = captureLog
    }

    public var name: String { "testpattern" }

    public var stats: CaptureStats { runner.stats }

    /// The format announced at start: the pattern's size and rate. Frames are `rgba8`, which
    /// is no camera format, so the capture format reads `auto`.
    public var streamFormat: StreamFormat {
        StreamFormat(format: .auto, size: pattern.size, bytesPerLine: pattern.size.width * 4, fps: fps)
    }

    public func start(_ delivery: FrameDelivery = .live(buffering: 4)) throws(CaptureError) -> AsyncStream<CaptureEvent> {
        let pattern = self.pattern, fps = self.fps, limit = self.frameLimit, format = streamFormat, logPath = captureLog
        return try runner.start(delivery) { runner in
            runner.announce(format)
            let interval = fps.map { UInt64(1e9 / $0) }
            let origin = monotonicNanos()
            var index: UInt64 = 0
            // Frames alive at once: those buffered, the one being processed, a few in flight after it.
            var storage = RecycledBytes(slots: delivery.buffering + TestPatternSource.framesInFlight)
            var log: [UInt8] = []
            while !runner.isStopping, limit.map({ index < $0 }) ?? true {
                if let interval, !runner.sleep(until: origin + index * interval) { break }
                let image = pattern.render(index: index, recycling: &storage), taken = monotonicNanos()
                if logPath != nil { log += Array("\(index) \(taken)\n".utf8) }
                runner.emit(Frame(image: image, sequence: index, timestampNanos: taken, source: "testpattern"))
                index += 1
            }
            if let logPath { TestPatternSource.write(log, to: logPath, runner: runner) }
        }
    }

    public func stop() { runner.stop() }

    /// Writes the capture log (atomically); a failure is the stream's last fault.
    private static func write(_ log: [UInt8], to path: String, runner: SourceRunner) {
        do throws(CaptureError) {
            let file = try AtomicWriter(path: path) { CaptureError.systemCall(device: $0, call: $1, errno: $2) }
            try file.append(log)
            try file.commit()
        } catch {
            runner.fault(error)
        }
    }
}

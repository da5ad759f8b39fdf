import Granite
import GraniteCapture
import GraniteMedia

/// The root component's state: counters and windows, all bounded (memory stays flat).
public struct CamState: GraniteState {
    /// The run's pipeline (seams, source, writer).
    public var handle: PipelineHandle?
    /// Frames reduced.
    public var frames: UInt64 = 0
    /// The last frame's sequence number.
    public var lastSequence: UInt64?
    /// Capture-to-processed latency (ns samples).
    public var latency = LatencyWindow()
    /// Processed frames per second.
    public var rate = RateMeter()
    /// Depth maps per second.
    public var depthRate = RateMeter()
    /// Depth maps received.
    public var depthFrames: UInt64 = 0
    /// Depth maps written as files.
    public var depthSaved: UInt64 = 0
    /// The source's counters, as of the last frame.
    public var sourceStats = CaptureStats()
    /// Frames written, and writes that failed.
    public var saved: UInt64 = 0
    /// Writes that failed.
    public var saveFailures: UInt64 = 0
    /// Faults reported, and the last one.
    public var faults: UInt64 = 0
    /// The last fault's message.
    public var lastFault: String?
    /// The format in effect.
    public var format: StreamFormat?
    /// When a frame last went to the preview (monotonic ns).
    public var lastPreviewNanos: UInt64 = 0
    /// Whether the source has ended, and why if it failed.
    public var ended = false
    /// Why the source ended, when it failed.
    public var failure: String?

    /// An empty state (no pipeline: the component does nothing).
    public init() {}

    /// A state carrying `pipeline`.
    public init(pipeline: CamPipeline) {
        handle = PipelineHandle(pipeline)
    }

    /// The status line the render step shows.
    public var statusLine: String {
        let d = CamState.oneDecimal
        var parts = [
            "frames \(frames)",
            "fps \(d(rate.rate))",
            "latency p50 \(d(latency.percentile(50))) ms p99 \(d(latency.percentile(99))) ms",
            "dropped \(sourceStats.dropped)",
            "depth \(d(depthRate.rate)) fps",
            "saved \(saved)",
        ]
        if let format { parts.append("\(format)") }
        if let lastFault { parts.append("fault: \(lastFault)") }
        return parts.joined(separator: " | ")
    }

    /// A value with one decimal (`12.3`), or `–` when there is none.
    static func oneDecimal(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "–" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(abs(tenths % 10))"
    }
}

/// Starts capture once the component is mounted.
struct StartExpedition: GraniteExpedition {
    func reduce(event: CamEvents.Start, state: inout CamState, connection: GraniteConnection) {
        guard let handle = state.handle else { return }
        connection.request(CaptureRelayEvents.Open(handle: handle), .rebound)
    }
}

/// The hot path: one processed frame. Updates counters, hands the frame to the output and
/// depth relays, never renders.
struct FrameExpedition: GraniteExpedition {
    func reduce(event: CamEvents.FrameReady, state: inout CamState, connection: GraniteConnection) {
        guard let handle = state.handle else { return }
        let pipeline = handle.pipeline
        let settings = pipeline.settings
        if let limit = settings.frameLimit, state.frames >= limit {
            pipeline.inFlight.subtract(1, ordering: .releasing)
            return
        }
        let index = state.frames
        state.frames += 1
        state.lastSequence = event.frame.sequence
        state.sourceStats = event.sourceStats
        let now = monotonicNanos()
        state.rate.tick(now)
        state.latency.add(now >= event.frame.timestampNanos ? now - event.frame.timestampNanos : 0)
        if let every = settings.depthEvery, pipeline.depth != nil, index % UInt64(every) == 0,
           pipeline.depthSlot.offer(event.frame) {
            connection.request(DepthRelayEvents.Kick(handle: handle), .rebound)
        }
        if pipeline.preview != nil, now - state.lastPreviewNanos >= pipeline.previewInterval {
            state.lastPreviewNanos = now
            if pipeline.previewSlot.offer(event.frame) {
                connection.request(PreviewRelayEvents.Kick(handle: handle), .rebound)
            }
        }
        if !pipeline.sinks.isEmpty {
            pipeline.inFlight.add(1, ordering: .releasing)
            connection.request(SinkRelayEvents.Write(frame: event.frame, handle: handle), .rebound)
        }
        if pipeline.writer != nil && (settings.save.saves(index) || pipeline.takeSnapshotRequest()) {
            connection.request(OutputRelayEvents.Save(frame: event.frame, processedNanos: event.processedNanos, handle: handle), .rebound)
        } else {
            pipeline.inFlight.subtract(1, ordering: .releasing)
        }
        if let limit = settings.frameLimit, state.frames >= limit { pipeline.requestStop() }
    }
}

struct FormatExpedition: GraniteExpedition {
    func reduce(event: CamEvents.FormatChanged, state: inout CamState, connection: GraniteConnection) {
        state.format = event.format
    }
}

struct FaultExpedition: GraniteExpedition {
    func reduce(event: CamEvents.Fault, state: inout CamState, connection: GraniteConnection) {
        state.faults += 1
        state.lastFault = event.message
    }
}

struct SavedExpedition: GraniteExpedition {
    func reduce(event: CamEvents.Saved, state: inout CamState, connection: GraniteConnection) {
        if let failure = event.failure {
            state.saveFailures += 1
            state.lastFault = failure
        } else {
            state.saved += 1
        }
        PinRelay.submit(event.path, state: state, connection: connection)
    }
}

struct DepthReadyExpedition: GraniteExpedition {
    func reduce(event: CamEvents.DepthReady, state: inout CamState, connection: GraniteConnection) {
        state.depthFrames += 1
        state.depthRate.tick(event.finishedNanos)
        if let failure = event.failure { state.lastFault = "depth: \(failure)" }
        if event.path != nil { state.depthSaved += 1 }
        PinRelay.submit(event.path, state: state, connection: connection)
    }
}

struct EndedExpedition: GraniteExpedition {
    func reduce(event: CamEvents.SourceEnded, state: inout CamState, connection: GraniteConnection) {
        state.ended = true
        state.failure = event.failure
        state.sourceStats = event.sourceStats
        state.handle?.pipeline.markEnded()
    }
}

struct TickExpedition: GraniteExpedition {
    func reduce(event: CamEvents.Tick, state: inout CamState, connection: GraniteConnection) {}
}

/// The root center: hosts the capture, output and depth relays; takes their broadcasts.
public final class CamCenter: GraniteCenter<CamState> {
    /// The frame source.
    public let capture = CaptureRelay()
    /// Disk output.
    public let output = OutputRelay()
    /// Depth estimation.
    public let depth = DepthRelay()
    /// The loopback preview.
    public let preview = PreviewRelay()
    /// Pinning of written files.
    public let pin = PinRelay()
    /// Live outputs (pipe, virtual camera).
    public let sinks = SinkRelay()

    public override var expeditions: [GraniteBaseExpedition] {
        [StartExpedition().discovery(), FrameExpedition().discovery(), FormatExpedition().discovery(),
         FaultExpedition().discovery(), SavedExpedition().discovery(), DepthReadyExpedition().discovery(),
         EndedExpedition().discovery(), TickExpedition().discovery()]
    }

    public override var links: [GraniteLink] { [.onAppear(CamEvents.Start(), .dependant)] }

    public override var behavior: GraniteEventBehavior { .broadcastable }
}

/// `granite-cam`'s root component. Its render step is the status line.
public struct CamComponent: GraniteComponent {
    /// The component's runtime.
    public let command: GraniteCommand<CamCenter, CamState>

    /// A component for `pipeline`.
    public init(pipeline: CamPipeline) {
        command = GraniteCommand(state: CamState(pipeline: pipeline))
    }

    /// The render step: builds the status line and hands it to the sink and the preview.
    public var body: String {
        let line = state.statusLine
        state.handle?.pipeline.statusSink(line)
        state.handle?.pipeline.preview?.publish(status: line)
        return line
    }
}

import Granite
import GraniteCapture
import GraniteMedia

/// The root component's state: counters and windows, all bounded (memory stays flat).
struct CamState: GraniteState {
    /// The run's pipeline (seams, source, writer).
    var handle: PipelineHandle?
    /// Frames reduced.
    var frames: UInt64 = 0
    /// The last frame's sequence number.
    var lastSequence: UInt64?
    /// Capture-to-processed latency (ns samples).
    var latency = LatencyWindow()
    /// Processed frames per second.
    var rate = RateMeter()
    /// Depth maps per second.
    var depthRate = RateMeter()
    /// Depth maps received.
    var depthFrames: UInt64 = 0
    /// Depth maps written as files.
    var depthSaved: UInt64 = 0
    /// How many frames old the depth map the chain last used was (live runs; nil: none yet).
    var depthAge: UInt64?
    /// The source's counters, as of the last frame.
    var sourceStats = CaptureStats()
    /// Frames written, and writes that failed.
    var saved: UInt64 = 0
    /// Writes that failed.
    var saveFailures: UInt64 = 0
    /// Faults reported, and the last one.
    var faults: UInt64 = 0
    /// The last fault's message.
    var lastFault: String?
    /// The format in effect.
    var format: StreamFormat?
    /// When a frame last went to the preview (monotonic ns).
    var lastPreviewNanos: UInt64 = 0
    /// Whether the source has ended, and why if it failed.
    var ended = false
    /// Why the source ended, when it failed.
    var failure: String?
    /// What the preview page's actions (and SIGUSR1) did (CamActions.swift).
    var actions = CamActionsState()

    /// An empty state (no pipeline: the component does nothing).
    init() {}

    /// A state carrying `pipeline`.
    init(pipeline: CamPipeline) {
        handle = PipelineHandle(pipeline)
    }

    /// The status line the render step shows.
    var statusLine: String {
        let d = CamState.oneDecimal
        var parts = [
            "frames \(frames)",
            "fps \(d(rate.rate))",
            "latency p50 \(d(latency.percentile(50))) ms p99 \(d(latency.percentile(99))) ms",
            "dropped \(sourceStats.dropped)",
            "depth \(d(depthRate.rate)) fps" + (depthAge.map { " age \($0)" } ?? ""),
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
/// depth relays, never renders. Every frame admitted by the flow gate is released here or by
/// the output relay once written.
struct FrameExpedition: GraniteExpedition {
    func reduce(event: CamEvents.FrameReady, state: inout CamState, connection: GraniteConnection) {
        guard let handle = state.handle else { return }
        let pipeline = handle.pipeline
        let settings = pipeline.settings
        if let limit = settings.frameLimit, state.frames >= limit {
            pipeline.flow.release()
            return
        }
        let index = state.frames
        state.frames += 1
        state.lastSequence = event.frame.sequence
        state.sourceStats = event.sourceStats
        // Times come from the event (capture → processed), so the reducer is a function of its input.
        let now = event.processedNanos
        state.rate.tick(now)
        state.latency.add(now >= event.frame.timestampNanos ? now - event.frame.timestampNanos : 0)
        if event.depthAge != nil { state.depthAge = event.depthAge }
        if let maps = event.depth {
            // Non-live: this frame's own map, estimated before the chain; written like a frame.
            if pipeline.writer != nil {
                pipeline.flow.add()
                connection.request(OutputRelayEvents.SaveDepth(map: maps.png, sequence: event.frame.sequence, handle: handle), .rebound)
            } else {
                state.depthFrames += 1
                state.depthRate.tick(now)
            }
        } else if settings.isLive, let every = settings.depthEvery, pipeline.depth != nil, index % UInt64(every) == 0 {
            var input = event.frame
            input.image = event.input
            if pipeline.depthSlot.offer(input) {
                connection.request(DepthRelayEvents.Kick(handle: handle), .rebound)
            }
        }
        if pipeline.preview != nil, now >= state.lastPreviewNanos &+ pipeline.previewInterval {
            state.lastPreviewNanos = now
            if pipeline.previewSlot.offer(event.frame) {
                connection.request(PreviewRelayEvents.Kick(handle: handle), .rebound)
            }
        }
        if !pipeline.sinks.isEmpty {
            pipeline.flow.add()
            connection.request(SinkRelayEvents.Write(frame: event.frame, handle: handle), .rebound)
        }
        if pipeline.writer != nil && (settings.save.saves(index) || pipeline.takeSnapshotRequest()) {
            connection.request(OutputRelayEvents.Save(frame: event.frame, processedNanos: event.processedNanos, handle: handle), .rebound)
        } else {
            pipeline.flow.release()
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
    func reduce(event: CamEvents.Tick, state: inout CamState, connection: GraniteConnection) {
        // The preview child listens: it renders this status to the page (PreviewComponent.swift).
        if let pipeline = state.handle?.pipeline, pipeline.preview != nil {
            connection.hear(event: PreviewEvents.Status(PreviewStatus(state, pipeline: pipeline)))
        }
    }
}

/// The root center: hosts the capture, output and depth relays; takes their broadcasts.
final class CamCenter: GraniteCenter<CamState> {
    /// The frame source.
    let capture = CaptureRelay()
    /// Disk output.
    let output = OutputRelay()
    /// Depth estimation.
    let depth = DepthRelay()
    /// The loopback preview.
    let preview = PreviewRelay()
    /// Pinning of written files.
    let pin = PinRelay()
    /// Live outputs (pipe, virtual camera).
    let sinks = SinkRelay()

    override var expeditions: [GraniteBaseExpedition] {
        [StartExpedition().discovery(), FrameExpedition().discovery(), FormatExpedition().discovery(),
         FaultExpedition().discovery(), SavedExpedition().discovery(), DepthReadyExpedition().discovery(),
         EndedExpedition().discovery(), TickExpedition().discovery(),
         SnapshotExpedition().discovery(), ChangeChainExpedition().discovery()]
    }

    override var links: [GraniteLink] { [.onAppear(CamEvents.Start(), .dependant)] }

    override var behavior: GraniteEventBehavior { .broadcastable }
}

/// `granite-cam`'s root component. Its render step is the status line.
struct CamComponent: GraniteComponent {
    /// The component's runtime.
    let command: GraniteCommand<CamCenter, CamState>
    /// The preview page (with `--preview`): a child attached to this component (its page actions
    /// come up as `.contact`) and listening to it (it hears the status at each tick).
    let preview: PreviewComponent?

    /// A component for `pipeline`.
    init(pipeline: CamPipeline) {
        command = GraniteCommand(state: CamState(pipeline: pipeline))
        preview = pipeline.preview.map { PreviewComponent(server: $0) }
        if let preview { _ = preview.attach(to: command).listen(to: command) }
    }

    /// The render step: builds the status line and hands it to the sink.
    var body: String {
        let line = state.statusLine
        state.handle?.pipeline.statusSink(line)
        return line
    }
}

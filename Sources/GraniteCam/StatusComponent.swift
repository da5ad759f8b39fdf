import Granite
import GraniteCapture
import GraniteMedia

/// The status component's state: the run's figures, all bounded (memory stays flat). Fed by the
/// relays' broadcasts (frames, writes, depth maps, faults), which reach it through the root it listens to.
struct StatusState: GraniteState {
    /// Frames processed.
    var frames: UInt64 = 0
    /// The last frame's sequence number.
    var lastSequence: UInt64?
    /// Capture-to-processed latency (ns samples).
    var latency = LatencyWindow()
    /// Processed frames per second.
    var rate = RateMeter()
    /// Depth maps per second.
    var depthRate = RateMeter()
    /// Depth maps made.
    var depthFrames: UInt64 = 0
    /// Depth maps written as files.
    var depthSaved: UInt64 = 0
    /// How many frames old the depth map the chain last used was (live runs; nil: none yet).
    var depthAge: UInt64?
    /// The source's counters, as of the last frame.
    var sourceStats = CaptureStats()
    /// Frames written.
    var saved: UInt64 = 0
    /// Writes that failed.
    var saveFailures: UInt64 = 0
    /// Faults reported.
    var faults: UInt64 = 0
    /// Frames a stage failed on (known when the source ends).
    var lostToFaults: UInt64 = 0
    /// The first of them.
    var firstLoss: String?
    /// The last fault's message.
    var lastFault: String?
    /// The format in effect.
    var format: StreamFormat?
    /// Whether the source has ended.
    var ended = false

    /// An empty state.
    init() {}

    /// The status line the render step shows.
    var statusLine: String {
        let d = StatusState.oneDecimal
        var parts = [
            "frames \(frames)",
            "fps \(d(rate.rate))",
            "latency p50 \(d(latency.percentile(50))) ms p99 \(d(latency.percentile(99))) ms",
            "dropped \(sourceStats.dropped)",
            "depth \(d(depthRate.rate)) fps" + (depthAge.map { " age \($0)" } ?? ""),
            "saved \(saved)",
        ]
        if let format { parts.append("\(format)") }
        // Before the first frame the device may still be compiling or the source opening: say so
        // rather than show a stalled rate.
        // Once the source has a format (a camera streaming, a PipeWire node linked) it is the
        // frame that is awaited, and the format part says from what.
        if frames == 0 && !ended { parts.insert(format == nil ? "warming up" : "waiting for the first frame", at: 0) }
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

/// One processed frame: counters, rate and latency from the event's own times, never a render.
struct StatusFrameExpedition: GraniteExpedition {
    func reduce(event: CamEvents.FrameReady, state: inout StatusState, connection: GraniteConnection) {
        let now = event.processedNanos
        state.frames += 1
        state.lastSequence = event.frame.sequence
        state.sourceStats = event.sourceStats
        state.rate.tick(now)
        state.latency.add(now >= event.frame.timestampNanos ? now - event.frame.timestampNanos : 0)
        if event.depthAge != nil { state.depthAge = event.depthAge }
        if event.depth != nil || event.depthOnDevice {
            // Non-live: the frame's own map, made before the chain (on the host or the device).
            state.depthFrames += 1
            state.depthRate.tick(now)
        }
    }
}

struct StatusFormatExpedition: GraniteExpedition {
    func reduce(event: CamEvents.FormatChanged, state: inout StatusState, connection: GraniteConnection) {
        state.format = event.format
    }
}

struct StatusFaultExpedition: GraniteExpedition {
    func reduce(event: CamEvents.Fault, state: inout StatusState, connection: GraniteConnection) {
        state.faults += 1
        state.lastFault = event.message
    }
}

struct StatusSavedExpedition: GraniteExpedition {
    func reduce(event: CamEvents.Saved, state: inout StatusState, connection: GraniteConnection) {
        if let failure = event.failure {
            state.saveFailures += 1
            state.lastFault = failure
        } else {
            state.saved += 1
        }
    }
}

/// A live map was made (counted with its rate), or the model failed (shown as the last fault).
struct StatusDepthReadyExpedition: GraniteExpedition {
    func reduce(event: CamEvents.DepthReady, state: inout StatusState, connection: GraniteConnection) {
        if let failure = event.failure {
            state.lastFault = "depth: \(failure)"
        } else {
            state.depthFrames += 1
            state.depthRate.tick(event.finishedNanos)
        }
    }
}

struct StatusDepthSavedExpedition: GraniteExpedition {
    func reduce(event: CamEvents.DepthSaved, state: inout StatusState, connection: GraniteConnection) {
        if let failure = event.failure {
            state.saveFailures += 1
            state.lastFault = "depth: \(failure)"
        } else {
            state.depthSaved += 1
        }
    }
}

/// The source's final counters; renders the last status line.
struct StatusEndedExpedition: GraniteExpedition {
    func reduce(event: CamEvents.SourceEnded, state: inout StatusState, connection: GraniteConnection) {
        state.ended = true
        state.sourceStats = event.sourceStats
        state.lostToFaults = event.lostToFaults
        state.firstLoss = event.firstLoss
    }
}

/// The status clock: a render, no change; the preview page (listening) hears the figures.
struct StatusTickExpedition: GraniteExpedition {
    func reduce(event: CamEvents.Tick, state: inout StatusState, connection: GraniteConnection) {
        connection.hear(event: PreviewEvents.Status(PreviewStatus(state)))
    }
}

/// The status center: takes the relays' broadcasts (broadcastable).
final class StatusCenter: GraniteCenter<StatusState> {
    override var expeditions: [GraniteBaseExpedition] {
        [StatusFrameExpedition().discovery(), StatusFormatExpedition().discovery(), StatusFaultExpedition().discovery(),
         StatusSavedExpedition().discovery(), StatusDepthReadyExpedition().discovery(),
         StatusDepthSavedExpedition().discovery(), StatusEndedExpedition().discovery(), StatusTickExpedition().discovery()]
    }

    override var behavior: GraniteEventBehavior { .broadcastable }
}

/// The status line and the run's figures: a child of the root, attached and listening. Its
/// render step builds the line and hands it to `output` (the terminal, the preview page).
struct StatusComponent: GraniteComponent {
    /// The component's runtime.
    let command = GraniteCommand<StatusCenter, StatusState>()
    /// Where each rendered line goes.
    let output: @Sendable (String) -> Void

    /// A status component writing its lines to `output`.
    init(output: @escaping @Sendable (String) -> Void = { _ in }) { self.output = output }

    /// The render step: the status line, handed to the output.
    var body: String {
        let line = state.statusLine
        output(line)
        return line
    }
}

import Granite
import GraniteCapture
import GraniteMedia
import Synchronization

/// The run's outlets, as plain values: the root routes every frame by them.
struct CamRouting: Sendable, Equatable {
    /// Which frames are written.
    var save: SavePolicy = .none
    /// Whether the run is live (depth latest-frame-wins through the depth relay).
    var live = true
    /// Depth on every n-th frame.
    var depthEvery: Int?
    /// Whether the depth relay has a model (live runs with depth).
    var liveDepth = false
    /// Whether there is an output folder.
    var writesFiles = false
    /// The output folder, when there is one.
    var outFolder: String?
    /// Whether live sinks take every frame.
    var sinks = false
    /// Whether there is a preview.
    var preview = false
    /// Whether written files are pinned.
    var pins = false
    /// At most one preview frame per this many ns (each is a JPEG encode).
    var previewInterval: UInt64 = 100_000_000

    /// No outlets (a component over nothing).
    init() {}

    /// The outlets of `pipeline`.
    init(_ pipeline: CamPipeline) {
        let s = pipeline.settings
        save = s.save
        live = s.isLive
        depthEvery = s.depthEvery
        liveDepth = s.isLive && pipeline.depth != nil && s.depthEvery != nil
        writesFiles = pipeline.writer != nil
        outFolder = pipeline.writer?.directory
        sinks = !pipeline.sinks.isEmpty
        preview = pipeline.preview != nil
        pins = pipeline.pins != nil
    }
}

/// The root component's state: how frames are routed. Values only; the counters and rates the
/// status line shows belong to ``StatusComponent``, and which frames are still being written is
/// the capture relay's ``FlowGate``'s alone (each frame carries its place, ``FrameSlot``).
struct CamState: GraniteState {
    /// The outlets.
    var routing = CamRouting()
    /// Frames routed so far (the save policy counts by it).
    var routed: UInt64 = 0
    /// Frames due for depth that were skipped because the model was busy (latest frame wins).
    var depthSkipped: UInt64 = 0
    /// When a frame last went to the preview (monotonic ns).
    var lastPreviewNanos: UInt64 = 0
    /// When a depth map last went to the preview (monotonic ns).
    var lastPreviewDepthNanos: UInt64 = 0
    /// Whether the next frame is written whatever the save policy.
    var snapshotPending = false
    /// Whether a stop was asked for.
    var stopping = false
    /// Whether the source has ended.
    var ended = false
    /// Why the source ended, when it failed.
    var failure: String?
    /// The live sink whose reader went away, ending the run.
    var closedBy: String?
    /// What the preview page's actions (and SIGUSR1) did (CamActions.swift).
    var actions = CamActionsState()

    /// A state with no outlets.
    init() {}

    /// A state routing to `routing`'s outlets.
    init(routing: CamRouting) { self.routing = routing }
}

/// Starts capture once the component is mounted.
struct StartExpedition: GraniteExpedition {
    func reduce(event: CamEvents.Start, state: inout CamState, connection: GraniteConnection) {
        connection.request(CaptureRelayEvents.Open(), .rebound)
    }
}

/// The hot path: routes one processed frame to its outlets (files, live sinks, depth, preview),
/// never renders. The frame's place in the gate (its ``FrameSlot``) goes forward with it: shared
/// with each outlet that writes it (file, depth PNG, sinks), freed by the last of them where it
/// finishes; a frame with no such outlet frees it here. Nothing about it comes back to the root.
struct FrameExpedition: GraniteExpedition {
    func reduce(event: CamEvents.FrameReady, state: inout CamState, connection: GraniteConnection) {
        let routing = state.routing
        let index = state.routed
        state.routed += 1
        let now = event.processedNanos
        let slot = event.slot
        // Which outlets write the frame, decided first: the slot is shared with all of them
        // before any is handed the frame, so none can free it while the others still write.
        let writesDepth = event.depth != nil && routing.writesFiles
        let writesFile = routing.writesFiles && (routing.save.saves(index) || state.snapshotPending)
        slot.share((writesDepth ? 1 : 0) + (routing.sinks ? 1 : 0) + (writesFile ? 1 : 0))
        defer { slot.done() }   // the root's own hold: the last one when no outlet writes the frame
        if let maps = event.depth {
            // Non-live: this frame's own map, estimated before the chain; written like a frame.
            if writesDepth {
                connection.request(OutputRelayEvents.SaveDepth(maps: maps, sequence: event.frame.sequence, slot: slot), .rebound)
            }
        } else if routing.liveDepth {
            // Live: the capture relay chose (the depth relay was free) and the chain made the model's input.
            if let request = event.depthRequest {
                connection.request(DepthRelayEvents.Estimate(sequence: event.frame.sequence, request: request), .rebound)
            } else if event.depthSkipped {
                state.depthSkipped += 1
            }
        }
        if routing.preview, now >= state.lastPreviewNanos &+ routing.previewInterval {
            state.lastPreviewNanos = now
            connection.request(PreviewRelayEvents.Show(frame: event.frame), .rebound)
        }
        if let maps = event.depth {
            FrameExpedition.previewDepth(maps.map, at: now, state: &state, connection: connection)
        }
        if routing.sinks {
            connection.request(SinkRelayEvents.Write(frame: event.frame, slot: slot), .rebound)
        }
        if writesFile {
            state.snapshotPending = false
            connection.request(OutputRelayEvents.Save(frame: event.frame, processedNanos: now, slot: slot), .rebound)
        }
    }

    /// Shows a depth map on the preview's depth stream (at most one per preview interval).
    static func previewDepth(_ map: Image, at now: UInt64, state: inout CamState, connection: GraniteConnection) {
        guard state.routing.preview, now >= state.lastPreviewDepthNanos &+ state.routing.previewInterval else { return }
        state.lastPreviewDepthNanos = now
        connection.request(PreviewRelayEvents.ShowDepth(map: map), .rebound)
    }

    /// Hands a written file to the pin relay when the run pins.
    static func pin(_ path: String?, state: CamState, connection: GraniteConnection) {
        guard let path, state.routing.pins else { return }
        connection.request(PinRelayEvents.Submit(path: path), .rebound)
    }
}

/// A frame was written (or not): pin it (its place in the gate was freed by the output relay).
struct SavedExpedition: GraniteExpedition {
    func reduce(event: CamEvents.Saved, state: inout CamState, connection: GraniteConnection) {
        FrameExpedition.pin(event.path, state: state, connection: connection)
    }
}

/// A live depth map is back (the depth relay already gave it to the chain and freed its place):
/// it goes to the preview and the writer.
struct DepthReadyExpedition: GraniteExpedition {
    func reduce(event: CamEvents.DepthReady, state: inout CamState, connection: GraniteConnection) {
        guard let maps = event.maps else { return }
        FrameExpedition.previewDepth(maps.map, at: event.finishedNanos, state: &state, connection: connection)
        if state.routing.writesFiles {
            connection.request(OutputRelayEvents.SaveDepth(maps: maps, sequence: event.sequence, slot: nil), .rebound)
        }
    }
}

/// A depth map was written (or not): pin it.
struct DepthSavedExpedition: GraniteExpedition {
    func reduce(event: CamEvents.DepthSaved, state: inout CamState, connection: GraniteConnection) {
        FrameExpedition.pin(event.path, state: state, connection: connection)
    }
}

/// A live sink's reader went away: the run ends.
struct SinkClosedExpedition: GraniteExpedition {
    func reduce(event: CamEvents.SinkClosed, state: inout CamState, connection: GraniteConnection) {
        guard state.closedBy == nil else { return }
        state.closedBy = event.sink
        StopExpedition().reduce(event: CamEvents.Stop(), state: &state, connection: connection)
    }
}

/// Asks the capture relay to stop (once).
struct StopExpedition: GraniteExpedition {
    func reduce(event: CamEvents.Stop, state: inout CamState, connection: GraniteConnection) {
        guard !state.stopping else { return }
        state.stopping = true
        connection.request(CaptureRelayEvents.Stop(), .rebound)
    }
}

/// The source is done: the render that follows tells the app.
struct EndedExpedition: GraniteExpedition {
    func reduce(event: CamEvents.SourceEnded, state: inout CamState, connection: GraniteConnection) {
        state.ended = true
        state.failure = event.failure
    }
}

/// The root center: hosts the relays (each owning its part of the run) and routes frames.
final class CamCenter: GraniteCenter<CamState> {
    /// The source, the stages, the gate.
    let capture = CaptureRelay()
    /// Disk output.
    let output = OutputRelay()
    /// Depth estimation (live runs).
    let depth = DepthRelay()
    /// The loopback preview.
    let preview = PreviewRelay()
    /// Pinning of written files.
    let pin = PinRelay()
    /// Live outputs (pipe, virtual camera).
    let sinks = SinkRelay()

    override var expeditions: [GraniteBaseExpedition] {
        [StartExpedition().discovery(), FrameExpedition().discovery(), SavedExpedition().discovery(),
         DepthReadyExpedition().discovery(), DepthSavedExpedition().discovery(), SinkClosedExpedition().discovery(),
         SnapshotExpedition().discovery(), StopExpedition().discovery(), EndedExpedition().discovery(),
         ChangeChainExpedition().discovery(), ChainChangedExpedition().discovery()]
    }

    override var links: [GraniteLink] { [.onAppear(CamEvents.Start(), .dependant)] }

    override var behavior: GraniteEventBehavior { .broadcastable }

}

/// `granite-cam`'s root component: hosts the relays, routes frames, and has the status as a
/// child (attached and listening).
struct CamComponent: GraniteComponent {
    /// The component's runtime.
    let command: GraniteCommand<CamCenter, CamState>
    /// The status line and the run's figures.
    let status: StatusComponent
    /// The preview page (with `--preview`): a child attached to this component (its page actions
    /// come up as `.contact`) and listening to it (the actions' answers) and to the status (the figures).
    let preview: PreviewComponent?

    /// A component for `pipeline`: each relay is handed the part of it that it owns.
    init(pipeline: CamPipeline) {
        command = GraniteCommand(state: CamState(routing: CamRouting(pipeline)))
        let center = command.center
        center.capture.own(CaptureParts(pipeline))
        center.depth.own(pipeline.settings.isLive ? pipeline.depth : nil)
        center.output.own(pipeline.writer.map { OutputParts(encoder: pipeline.encoder, writer: $0) })
        center.sinks.own(pipeline.sinks)
        center.pin.own(pipeline.pins)
        center.preview.own(pipeline.preview.map { PreviewParts(server: $0, depth: pipeline.depth) })
        status = StatusComponent(output: pipeline.statusSink).attach(to: command).listen(to: command)
        preview = pipeline.preview.map { server in
            PreviewComponent(server: server, setup: PreviewSetup(depthEnabled: pipeline.depth != nil, mapName: pipeline.depth?.mapName ?? "depth",
                                                                 canSnapshot: pipeline.writer != nil,
                                                                 chain: pipeline.liveChain?.text,
                                                                 livePlaylist: server.livePlaylist,
                                                                 livePlaylistFile: server.livePlaylistFile))
        }
        if let preview {
            _ = preview.attach(to: command).listen(to: command).listen(to: status.command)
        }
    }

    /// Runs the capture (the source, the stages, the pump) once the tree is mounted, until the
    /// source ends: the run's owner calls this in its own task.
    func runCapture() async { await command.center.capture.resources.pump() }

    /// The render step: the run's phase (it tells nobody anything: the app waits for
    /// ``runCapture()``).
    var body: String {
        guard state.ended else { return "running" }
        return state.failure.map { "ended: \($0)" } ?? "ended"
    }
}

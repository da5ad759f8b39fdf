import Granite
import GraniteCapture
import GraniteMedia

/// State of the capture relay.
struct CaptureRelayState: GraniteState {
    /// Whether the pump is running.
    var running = false
    /// Whether a stop was asked for.
    var stopping = false
    /// Filter chains swapped in while frames flowed (the preview page's chain box).
    var chainChanges: UInt64 = 0
    /// A new instance.
    init() {}
}

/// Events the capture relay reduces (all values).
enum CaptureRelayEvents {
    /// Opens the source and starts pumping frames to the hosts.
    struct Open: GraniteEvent {
        /// The event.
        init() {}
    }

    /// Stop capturing (the frame limit, `stop()`, a live sink whose reader went away).
    struct Stop: GraniteEvent {
        /// The event.
        init() {}
    }
}

/// Opens the capture: hands the pump (source ─► stages ─► broadcast), which the run's owner
/// runs in its own task, the relay's connection.
struct OpenCaptureExpedition: GraniteExpedition {
    let resources: CaptureResources

    func reduce(event: CaptureRelayEvents.Open, state: inout CaptureRelayState, connection: GraniteConnection) {
        guard !state.running, resources.parts.value != nil else { return }
        state.running = true
        resources.open(connection)
    }
}

/// Stops the source and closes the gate; frames in flight still finish.
struct StopCaptureExpedition: GraniteExpedition {
    let resources: CaptureResources

    func reduce(event: CaptureRelayEvents.Stop, state: inout CaptureRelayState, connection: GraniteConnection) {
        state.stopping = true
        resources.requestStop()
    }
}

/// The frame-source relay's center: owns the run's capture resources.
final class CaptureRelayCenter: GraniteCenter<CaptureRelayState> {
    /// The source, stages, gate and newest depth map.
    let resources = CaptureResources()

    override var expeditions: [GraniteBaseExpedition] {
        [OpenCaptureExpedition(resources: resources).discovery(),
         StopCaptureExpedition(resources: resources).discovery(),
         ChangeChainCaptureExpedition(resources: resources).discovery()]
    }
}

/// The frame-source relay: owns the source, the stages, the admission gate and the newest depth
/// map; frames leave it as quiet broadcasts, each carrying its place in the gate (``FrameSlot``),
/// which comes back without an event.
struct CaptureRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    let command = GraniteService<CaptureRelayCenter, CaptureRelayState>(qos: .userInteractive)
    /// A new instance.
    init() {}

    /// Hands the relay its share of the run (before mounting).
    func own(_ parts: CaptureParts) { command.center.resources.parts.set(parts) }

    /// What it owns.
    var resources: CaptureResources { command.center.resources }

    /// The last host unmounted.
    func clean() { resources.close() }
}

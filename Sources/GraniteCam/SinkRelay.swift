import Granite
import GraniteCapture
import GraniteMedia

/// State of the sink relay.
struct SinkRelayState: GraniteState {
    /// Frames every sink took.
    var written: UInt64 = 0
    /// The sink whose reader went away, ending the run.
    var closedBy: String?
    /// A new instance.
    init() {}
}

/// Events the sink relay reduces.
enum SinkRelayEvents {
    /// Hands one processed frame to every sink, in arrival order.
    struct Write: GraniteEvent {
        /// Quiet.
        var behavior: GraniteEventBehavior { .quiet }
        let frame: Frame
        /// The frame's place in the run's gate: the sink relay is done with it once every sink
        /// took the frame, and frees it then (the last outlet frees the place).
        let slot: FrameSlot
    }
}

/// Writes the frame to each sink, then is done with the frame's place in the gate (freed here
/// when the sinks were its last outlet: nothing goes back to the root). A reader that went away
/// is told to the root once (`SinkClosed`: the run ends cleanly); any other failure is a `Fault`
/// broadcast to the status.
struct SinkWriteExpedition: GraniteExpedition {
    let sinks: Owned<[any FrameSink]>

    func reduce(event: SinkRelayEvents.Write, state: inout SinkRelayState, connection: GraniteConnection) {
        defer { event.slot.done() }
        guard state.closedBy == nil else { return }
        for sink in sinks.value ?? [] {
            do {
                try sink.write(event.frame)
            } catch let .closed(name) {
                state.closedBy = name
                connection.request(CamEvents.SinkClosed(sink: name), .rebound)
                return
            } catch {
                connection.request(CamEvents.Fault(message: error.description), .broadcast)
            }
        }
        state.written += 1
    }
}

/// The sink relay's center: owns the live sinks.
final class SinkRelayCenter: GraniteCenter<SinkRelayState> {
    let sinks = Owned<[any FrameSink]>()

    override var expeditions: [GraniteBaseExpedition] { [SinkWriteExpedition(sinks: sinks).discovery()] }
}

/// Feeds the live sinks (pipe, virtual camera) on its own executor, so a slow reader never
/// stalls the component. Unhosted (the run unmounted), it finishes its sinks.
struct SinkRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    let command = GraniteService<SinkRelayCenter, SinkRelayState>(qos: .userInitiated)
    /// A new instance.
    init() {}

    /// Hands the relay the sinks (before mounting).
    func own(_ sinks: [any FrameSink]) { command.center.sinks.set(sinks) }

    /// Flushes and lets go of every sink once the last host unmounted.
    func clean() {
        for sink in command.center.sinks.value ?? [] { sink.finish() }
        command.center.sinks.set(nil)
    }
}

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
    /// Hands one processed frame to every sink of the pipeline, in arrival order.
    struct Write: GraniteEvent {
        let frame: Frame
        let handle: PipelineHandle
    }
}

/// Writes the frame to each sink; a reader that went away asks the run to stop (a clean end),
/// any other failure is a fault on the status line.
struct SinkWriteExpedition: GraniteExpedition {
    func reduce(event: SinkRelayEvents.Write, state: inout SinkRelayState, connection: GraniteConnection) {
        let pipeline = event.handle.pipeline
        defer { pipeline.flow.release() }
        guard state.closedBy == nil else { return }
        for sink in pipeline.sinks {
            do {
                try sink.write(event.frame)
            } catch let .closed(name) {
                state.closedBy = name
                pipeline.requestStop()
                return
            } catch {
                connection.request(CamEvents.Fault(message: error.description), .rebound)
            }
        }
        state.written += 1
    }
}

/// The sink relay's center.
final class SinkRelayCenter: GraniteCenter<SinkRelayState> {
    override var expeditions: [GraniteBaseExpedition] { [SinkWriteExpedition().discovery()] }
}

/// Feeds the live sinks (pipe, virtual camera) on its own executor, so a slow reader never
/// stalls the component.
struct SinkRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    let command = GraniteService<SinkRelayCenter, SinkRelayState>(qos: .userInitiated)
    /// A new instance.
    init() {}
}

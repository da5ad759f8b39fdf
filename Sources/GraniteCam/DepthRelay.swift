import Granite
import GraniteCapture
import GraniteMedia

/// State of the depth relay.
struct DepthRelayState: GraniteState {
    /// Depth maps made.
    var estimated: UInt64 = 0
    /// Estimates that failed.
    var failed: UInt64 = 0
    /// A new instance.
    init() {}
}

/// Events the depth relay reduces.
enum DepthRelayEvents {
    /// Estimate this frame's depth (a live run; the root sends one only when the last is back).
    struct Estimate: GraniteEvent {
        /// Quiet.
        var behavior: GraniteEventBehavior { .quiet }
        /// The frame it belongs to.
        let sequence: UInt64
        /// The model's input (or the frame as captured) and the frame's size.
        let request: DepthRequest
    }
}

/// Latest-frame-wins depth for live runs: the capture relay hands over one frame at a time (its
/// model input, resized on the GPU by the chain from the frame it uploaded) and skips the frames
/// due while the model works, so the relay's mailbox never holds more than one frame. Each map
/// goes to the run's ``NewestDepth`` from here (which frees the relay's place), then out as a
/// `DepthReady` broadcast (the root routes it to the writer and the preview, the status counts it).
struct DepthExpedition: GraniteExpedition {
    let model: Owned<any DepthStage>

    func reduce(event: DepthRelayEvents.Estimate, state: inout DepthRelayState, connection: GraniteConnection) {
        guard let model = model.value else { return event.request.answered(nil, sequence: event.sequence) }
        var maps: DepthEstimate?
        var failure: String?
        do {
            let request = event.request
            maps = request.modelSized
                ? try model.estimateMaps(modelInput: request.image, width: request.width, height: request.height)
                : try model.estimateMaps(request.image)
            state.estimated += 1
        } catch {
            state.failed += 1
            failure = "\(error)"
        }
        // The map to the chain and the place freed here, where the model finished; the broadcast
        // is news for the writer, the preview and the status.
        event.request.answered(maps?.map, sequence: event.sequence)
        connection.request(CamEvents.DepthReady(sequence: event.sequence, finishedNanos: monotonicNanos(),
                                                maps: maps, failure: failure), .broadcast)
    }
}

/// The depth relay's center: owns the model.
final class DepthRelayCenter: GraniteCenter<DepthRelayState> {
    /// The depth model (a live run's; given once, before mounting).
    let model = Owned<any DepthStage>()

    override var expeditions: [GraniteBaseExpedition] { [DepthExpedition(model: model).discovery()] }
}

/// Depth on its own executor; a slow model never queues frames (the root sends one at a time).
struct DepthRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    let command = GraniteService<DepthRelayCenter, DepthRelayState>(qos: .utility)
    /// A new instance.
    init() {}

    /// Hands the relay the model (before mounting).
    func own(_ model: (any DepthStage)?) { command.center.model.set(model) }
}

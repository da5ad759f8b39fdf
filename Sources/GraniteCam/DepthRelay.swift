import Granite
import GraniteCapture
import GraniteMedia

/// State of the depth relay.
struct DepthRelayState: GraniteState {
    /// Depth maps made.
    var estimated: UInt64 = 0
    /// Depth maps written as 16-bit PNGs (with `--out`).
    var written: UInt64 = 0
    /// A new instance.
    init() {}
}

/// Events the depth relay reduces.
enum DepthRelayEvents {
    /// Work the latest pending frame; the relay kicks itself again until the slot is empty.
    struct Kick: GraniteEvent {
        let handle: PipelineHandle
    }
}

/// Latest-frame-wins depth for live runs: frames offered while one is being estimated replace
/// each other; each map becomes the pipeline's latest, which the chain reads for later frames.
/// With an output folder each map is also written as `depth-SEQ.png` (16-bit) plus a `depth.jsonl` line.
struct DepthExpedition: GraniteExpedition {
    func reduce(event: DepthRelayEvents.Kick, state: inout DepthRelayState, connection: GraniteConnection) {
        let pipeline = event.handle.pipeline
        guard let depth = pipeline.depth else { return }
        // One frame per reduction: its DepthReady leaves as soon as this returns (effects run
        // after the reducer), and a Kick to itself takes whatever frame replaced it meanwhile.
        guard let frame = pipeline.depthSlot.take() else { return }
        var failure: String?
        var path: String?
        do {
            let maps = try depth.estimateMaps(frame.image)
            pipeline.latestDepth.withLock { $0 = (maps.map, frame.sequence) }
            if let writer = pipeline.writer {
                path = try writer.writeDepth(maps.png, sequence: frame.sequence)
                state.written += 1
            }
        } catch { failure = "\(error)" }
        state.estimated += 1
        connection.request(CamEvents.DepthReady(sequence: frame.sequence, finishedNanos: monotonicNanos(),
                                                path: path, failure: failure), .rebound)
        connection.send(event)
    }
}

/// The depth relay's center.
final class DepthRelayCenter: GraniteCenter<DepthRelayState> {
    override var expeditions: [GraniteBaseExpedition] { [DepthExpedition().discovery()] }
}

/// Depth on its own executor; a slow model never queues frames (the slot holds one).
struct DepthRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    let command = GraniteService<DepthRelayCenter, DepthRelayState>(qos: .utility)
    /// A new instance.
    init() {}
}

import Granite
import GraniteCapture
import GraniteMedia

/// State of the output relay.
public struct OutputRelayState: GraniteState {
    /// Frames written.
    public var written: UInt64 = 0
    /// Writes that failed.
    public var failed: UInt64 = 0
    /// A new instance.
    public init() {}
}

/// Events the output relay reduces.
public enum OutputRelayEvents {
    /// Encodes and writes one frame.
    public struct Save: GraniteEvent {
        let frame: Frame
        let processedNanos: UInt64
        let handle: PipelineHandle
    }
}

/// Encodes and writes one frame atomically, then answers the component that asked.
struct SaveExpedition: GraniteExpedition {
    func reduce(event: OutputRelayEvents.Save, state: inout OutputRelayState, connection: GraniteConnection) {
        let pipeline = event.handle.pipeline
        defer { pipeline.inFlight.subtract(1, ordering: .releasing) }
        var failure: String?
        var path: String?
        do {
            let bytes = try pipeline.encoder.encode(event.frame.image)
            path = try pipeline.writer?.write(bytes, frame: event.frame, processedNanos: event.processedNanos)
            state.written += 1
        } catch {
            state.failed += 1
            failure = "\(error)"
        }
        connection.request(CamEvents.Saved(sequence: event.frame.sequence, path: path, failure: failure), .rebound)
    }
}

/// The output relay's center.
public final class OutputRelayCenter: GraniteCenter<OutputRelayState> {
    public override var expeditions: [GraniteBaseExpedition] { [SaveExpedition().discovery()] }
}

/// Writes frames to disk on its own executor, so a slow disk never stalls the component.
public struct OutputRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    public let command = GraniteService<OutputRelayCenter, OutputRelayState>()
    /// A new instance.
    public init() {}
}

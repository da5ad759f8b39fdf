import Granite
import GraniteCapture
import GraniteMedia

/// State of the output relay.
public struct OutputRelayState: GraniteState {
    /// Frames written.
    public var written: UInt64 = 0
    /// Depth maps written (non-live runs; a live run's depth relay writes its own).
    public var depthWritten: UInt64 = 0
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

    /// Writes one frame's depth map (`gray16`) as `depth-SEQ.png` (non-live runs).
    public struct SaveDepth: GraniteEvent {
        let map: Image
        let sequence: UInt64
        let handle: PipelineHandle
    }
}

/// Encodes and writes one frame atomically, then answers the component that asked.
struct SaveExpedition: GraniteExpedition {
    func reduce(event: OutputRelayEvents.Save, state: inout OutputRelayState, connection: GraniteConnection) {
        let pipeline = event.handle.pipeline
        defer { pipeline.flow.release() }
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

/// Writes one depth map, then answers with `DepthReady` (counted like the depth relay's).
struct SaveDepthExpedition: GraniteExpedition {
    func reduce(event: OutputRelayEvents.SaveDepth, state: inout OutputRelayState, connection: GraniteConnection) {
        let pipeline = event.handle.pipeline
        defer { pipeline.flow.release() }
        var failure: String?
        var path: String?
        do {
            path = try pipeline.writer?.writeDepth(event.map, sequence: event.sequence)
            state.depthWritten += 1
        } catch {
            state.failed += 1
            failure = "\(error)"
        }
        connection.request(CamEvents.DepthReady(sequence: event.sequence, finishedNanos: monotonicNanos(),
                                                path: path, failure: failure), .rebound)
    }
}

/// The output relay's center.
public final class OutputRelayCenter: GraniteCenter<OutputRelayState> {
    public override var expeditions: [GraniteBaseExpedition] { [SaveExpedition().discovery(), SaveDepthExpedition().discovery()] }
}

/// Writes frames to disk on its own executor, so a slow disk never stalls the component.
public struct OutputRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    public let command = GraniteService<OutputRelayCenter, OutputRelayState>()
    /// A new instance.
    public init() {}
}

import Granite
import GraniteCapture
import GraniteMedia

/// State of the preview relay.
public struct PreviewRelayState: GraniteState {
    /// Frames encoded for the preview.
    public var published: UInt64 = 0
    /// A new instance.
    public init() {}
}

/// Events the preview relay reduces.
public enum PreviewRelayEvents {
    /// Encode and publish the latest pending frame (and any that arrives meanwhile).
    public struct Kick: GraniteEvent {
        let handle: PipelineHandle
    }
}

/// JPEG-encodes the newest frame for the loopback preview; older pending frames are skipped.
struct PreviewExpedition: GraniteExpedition {
    func reduce(event: PreviewRelayEvents.Kick, state: inout PreviewRelayState, connection: GraniteConnection) {
        let pipeline = event.handle.pipeline
        guard let server = pipeline.preview else { return }
        let encoder = CodecsEncoder(.jpg, quality: 80)
        while let frame = pipeline.previewSlot.take() {
            guard let jpeg = try? encoder.encode(frame.image) else { continue }
            server.publish(jpeg: jpeg)
            state.published += 1
        }
    }
}

/// The preview relay's center.
public final class PreviewRelayCenter: GraniteCenter<PreviewRelayState> {
    public override var expeditions: [GraniteBaseExpedition] { [PreviewExpedition().discovery()] }
}

/// Feeds the loopback preview on its own executor.
public struct PreviewRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    public let command = GraniteService<PreviewRelayCenter, PreviewRelayState>(qos: .utility)
    /// A new instance.
    public init() {}
}

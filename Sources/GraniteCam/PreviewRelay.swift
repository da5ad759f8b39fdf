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
    /// Encode and publish this frame (the root sends at most one per preview interval).
    public struct Show: GraniteEvent {
        /// Quiet.
        public var behavior: GraniteEventBehavior { .quiet }
        let frame: Frame
    }
}

/// JPEG-encodes a frame for the loopback preview and publishes it to the streaming clients.
struct PreviewExpedition: GraniteExpedition {
    let server: Owned<PreviewServer>

    func reduce(event: PreviewRelayEvents.Show, state: inout PreviewRelayState, connection: GraniteConnection) {
        guard let server = server.value else { return }
        guard let jpeg = try? CodecsEncoder(.jpg, quality: 80).encode(event.frame.image) else { return }
        server.publish(jpeg: jpeg)
        state.published += 1
    }
}

/// The preview relay's center: owns the preview server's frame side.
public final class PreviewRelayCenter: GraniteCenter<PreviewRelayState> {
    let server = Owned<PreviewServer>()

    public override var expeditions: [GraniteBaseExpedition] { [PreviewExpedition(server: server).discovery()] }
}

/// Feeds the loopback preview on its own executor.
public struct PreviewRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    public let command = GraniteService<PreviewRelayCenter, PreviewRelayState>(qos: .utility)
    /// A new instance.
    public init() {}

    /// Hands the relay the preview server (before mounting).
    func own(_ server: PreviewServer?) { command.center.server.set(server) }
}

import Granite
import GraniteCapture
import GraniteMedia
import GraniteML

/// State of the preview relay.
struct PreviewRelayState: GraniteState {
    /// Frames encoded for the preview.
    var published: UInt64 = 0
    /// Depth maps colourised and encoded for the preview's depth stream.
    var depthPublished: UInt64 = 0
    /// A new instance.
    init() {}
}

/// Events the preview relay reduces.
enum PreviewRelayEvents {
    /// Encode and publish this frame (the root sends at most one per preview interval).
    struct Show: GraniteEvent {
        /// Quiet.
        var behavior: GraniteEventBehavior { .quiet }
        let frame: Frame
    }

    /// Colourise and publish this depth map on the depth stream (the root sends at most one per
    /// preview interval).
    struct ShowDepth: GraniteEvent {
        /// Quiet.
        var behavior: GraniteEventBehavior { .quiet }
        /// `grayF32`, the depth stage's units.
        let map: Image
    }
}

/// What the preview relay owns: the server's picture side, and the depth stage whose maps it
/// shows (it says which way is near).
struct PreviewParts: Sendable {
    /// The loopback server.
    let server: PreviewServer
    /// The run's depth stage, when it estimates depth.
    let depth: (any DepthStage)?
}

/// JPEG-encodes a frame for the loopback preview and publishes it to the streaming clients.
struct PreviewExpedition: GraniteExpedition {
    let parts: Owned<PreviewParts>

    func reduce(event: PreviewRelayEvents.Show, state: inout PreviewRelayState, connection: GraniteConnection) {
        guard let server = parts.value?.server else { return }
        guard let jpeg = try? CodecsEncoder(.jpg, quality: 80).encode(event.frame.image) else { return }
        server.publish(jpeg: jpeg)
        state.published += 1
    }
}

/// Colourises a depth map (viridis, yellow = near) and publishes it on the depth stream.
struct PreviewDepthExpedition: GraniteExpedition {
    let parts: Owned<PreviewParts>

    func reduce(event: PreviewRelayEvents.ShowDepth, state: inout PreviewRelayState, connection: GraniteConnection) {
        guard let parts = parts.value, let stage = parts.depth else { return }
        guard let colored = try? PreviewDepth.colorized(event.map, by: stage),
              let jpeg = try? CodecsEncoder(.jpg, quality: 80).encode(colored) else { return }
        parts.server.publish(depthJPEG: jpeg)
        state.depthPublished += 1
    }
}

/// The preview relay's center: owns the preview server's picture side.
final class PreviewRelayCenter: GraniteCenter<PreviewRelayState> {
    let parts = Owned<PreviewParts>()

    override var expeditions: [GraniteBaseExpedition] {
        [PreviewExpedition(parts: parts).discovery(), PreviewDepthExpedition(parts: parts).discovery()]
    }
}

/// Feeds the loopback preview on its own executor.
struct PreviewRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    let command = GraniteService<PreviewRelayCenter, PreviewRelayState>(qos: .utility)
    /// A new instance.
    init() {}

    /// Hands the relay the preview server and the depth stage (before mounting).
    func own(_ parts: PreviewParts?) { command.center.parts.set(parts) }
}

/// The model's maps as the preview shows them: depth in viridis, yellow = near (GraniteML's
/// `DepthMap.colorized()`), a person mask in gray (``DepthStage/previewImage(_:)``).
enum PreviewDepth {
    /// `map` as its stage shows it (depth: which way is near, from ``DepthStage/depthMap(_:)``).
    static func colorized(_ map: Image, by stage: any DepthStage) throws -> Image {
        try stage.previewImage(map)
    }
}

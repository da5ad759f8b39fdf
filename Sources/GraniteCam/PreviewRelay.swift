import Granite
import GraniteCapture
import GraniteMedia
import GraniteML

/// State of the preview relay.
public struct PreviewRelayState: GraniteState {
    /// Frames encoded for the preview.
    public var published: UInt64 = 0
    /// Depth maps colourised and encoded for the preview's depth stream.
    public var depthPublished: UInt64 = 0
    /// The frame the last depth map shown came from (a map is shown once).
    public var lastDepthSequence: UInt64?
    /// A new instance.
    public init() {}
}

/// Events the preview relay reduces.
public enum PreviewRelayEvents {
    /// Encode and publish the latest pending frame (and any that arrives meanwhile), and the
    /// newest depth map when it changed.
    public struct Kick: GraniteEvent {
        let handle: PipelineHandle
    }
}

/// JPEG-encodes the newest frame for the loopback preview; older pending frames are skipped.
/// With depth, the newest map (once per map) goes out colourised on the depth stream.
struct PreviewExpedition: GraniteExpedition {
    func reduce(event: PreviewRelayEvents.Kick, state: inout PreviewRelayState, connection: GraniteConnection) {
        let pipeline = event.handle.pipeline
        guard let server = pipeline.preview else { return }
        let encoder = CodecsEncoder(.jpg, quality: 80)
        while let frame = pipeline.previewSlot.take() {
            guard let jpeg = try? encoder.encode(frame.image) else { continue }
            server.publish(jpeg: jpeg)
            state.published += 1
            if let depth = pipeline.depth, let latest = pipeline.latestDepth.withLock({ $0 }), latest.sequence != state.lastDepthSequence {
                state.lastDepthSequence = latest.sequence
                if let colored = try? PreviewDepth.colorized(latest.map, by: depth), let jpeg = try? encoder.encode(colored) {
                    server.publish(depthJPEG: jpeg)
                    state.depthPublished += 1
                }
            }
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

/// Depth maps as the preview shows them: viridis, yellow = near (GraniteML's `DepthMap.colorized()`).
enum PreviewDepth {
    /// `map` (`grayF32`, the depth stage's units) colourised; the stage says which way is near
    /// (a model's inverse depth), else larger values are taken as farther.
    static func colorized(_ map: Image, by stage: any DepthStage) throws -> Image {
        let meaning = (stage as? DepthEstimatorStage)?.estimator.description.output.meaning ?? .depth
        let values = map.format == .grayF32 ? map.floats() : try DepthImage.gray16(map).bytes.withUnsafeBytes { raw in
            raw.bindMemory(to: UInt16.self).map { Float($0) }
        }
        return try DepthMap(width: map.width, height: map.height, values: values,
                            meaning: meaning == .inverseDepth ? .inverseDepth : .depth, isMetric: false).colorized()
    }
}

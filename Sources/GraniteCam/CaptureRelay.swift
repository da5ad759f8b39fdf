import Granite
import GraniteCapture
import GraniteMedia

/// State of the capture relay.
struct CaptureRelayState: GraniteState {
    /// Whether the pump is running.
    var running = false
    /// A new instance.
    init() {}
}

/// Events the capture relay reduces.
enum CaptureRelayEvents {
    /// Opens the source and starts pumping frames to the hosts.
    struct Open: GraniteEvent {
        let handle: PipelineHandle
    }
}

/// Opens the source and runs the pump (source ─► stages ─► broadcast) off the relay's executor.
struct OpenCaptureExpedition: GraniteExpedition {
    func reduce(event: CaptureRelayEvents.Open, state: inout CaptureRelayState, connection: GraniteConnection) {
        guard !state.running else { return }
        state.running = true
        let pipeline = event.handle.pipeline
        Task.detached(priority: .high) { await CapturePump.run(pipeline, connection: connection) }
    }
}

/// The frame-source relay's center.
final class CaptureRelayCenter: GraniteCenter<CaptureRelayState> {
    override var expeditions: [GraniteBaseExpedition] { [OpenCaptureExpedition().discovery()] }
}

/// The frame-source relay: owns the capture pump; frames leave it as quiet broadcasts.
struct CaptureRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    let command = GraniteService<CaptureRelayCenter, CaptureRelayState>(qos: .userInteractive)
    /// A new instance.
    init() {}
}

/// The pump loop: pulls events from the source, runs depth (non-live) and the stages, broadcasts.
///
/// A live run feeds the chain the newest depth map the depth relay made (its age in frames goes
/// with the frame); a non-live run estimates every due frame's own depth here, before the chain,
/// so the filters and the written map belong to the same frame.
enum CapturePump {
    static func run(_ pipeline: CamPipeline, connection: GraniteConnection) async {
        let source: any FrameSource, stream: AsyncStream<CaptureEvent>
        do throws(CaptureError) {
            (source, stream) = try pipeline.startSource()
        } catch {
            connection.request(CamEvents.SourceEnded(sourceStats: CaptureStats(), failure: error.description), .broadcast)
            return
        }
        let settings = pipeline.settings
        let live = settings.isLive
        let chainWantsDepth = pipeline.stages.contains { $0.usesDepth }
        var admitted: UInt64 = 0
        var failure: String?
        for await event in stream {
            switch event {
            case let .started(format):
                connection.request(CamEvents.FormatChanged(format: format), .broadcast)
            case let .fault(error):
                connection.request(CamEvents.Fault(message: error.description), .broadcast)
                failure = error.description
            case let .frame(frame):
                failure = nil
                guard await pipeline.flow.acquire() else { continue }
                let index = admitted
                admitted += 1
                var depthModel: (any DepthStage)?
                if !live, let every = settings.depthEvery, let stage = pipeline.depth, index % UInt64(every) == 0 {
                    depthModel = stage
                }
                var chainDepth: Image?
                var depthAge: UInt64?
                if live, let latest = pipeline.latestDepth.withLock({ $0 }) {
                    chainDepth = latest.map
                    depthAge = frame.sequence >= latest.sequence ? frame.sequence - latest.sequence : 0
                }
                do {
                    var out = frame
                    var depth: DepthMaps?
                    if let depthModel {
                        // Non-live: this frame's own map, the model's input resized on the GPU when it can be.
                        let result = try pipeline.process(frame.image, depthFrom: depthModel)
                        out.image = result.image
                        depth = result.depth
                        if depth != nil { depthAge = 0 }
                        if let failure = result.failure {
                            connection.request(CamEvents.Fault(message: "depth, frame \(frame.sequence): \(failure)"), .broadcast)
                        }
                    } else {
                        out.image = try pipeline.process(frame.image, depth: chainWantsDepth ? chainDepth : nil)
                    }
                    connection.request(CamEvents.FrameReady(frame: out, input: frame.image, processedNanos: monotonicNanos(),
                                                            sourceStats: source.stats, depth: depth, depthAge: depthAge),
                                       .broadcast)
                } catch {
                    pipeline.flow.release()
                    connection.request(CamEvents.Fault(message: "frame \(frame.sequence): \(error)"), .broadcast)
                }
            }
        }
        source.stop()
        connection.request(CamEvents.SourceEnded(sourceStats: source.stats, failure: failure), .broadcast)
    }
}

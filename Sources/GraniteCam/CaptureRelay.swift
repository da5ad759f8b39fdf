import Granite
import GraniteCapture
import GraniteMedia

/// State of the capture relay.
public struct CaptureRelayState: GraniteState {
    /// Whether the pump is running.
    public var running = false
    /// A new instance.
    public init() {}
}

/// Events the capture relay reduces.
public enum CaptureRelayEvents {
    /// Opens the source and starts pumping frames to the hosts.
    public struct Open: GraniteEvent {
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
public final class CaptureRelayCenter: GraniteCenter<CaptureRelayState> {
    public override var expeditions: [GraniteBaseExpedition] { [OpenCaptureExpedition().discovery()] }
}

/// The frame-source relay: owns the capture pump; frames leave it as quiet broadcasts.
public struct CaptureRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    public let command = GraniteService<CaptureRelayCenter, CaptureRelayState>(qos: .userInteractive)
    /// A new instance.
    public init() {}
}

/// The pump loop: pulls events from the source, runs the stages, broadcasts.
enum CapturePump {
    static func run(_ pipeline: CamPipeline, connection: GraniteConnection) async {
        let source: any FrameSource, stream: AsyncStream<CaptureEvent>
        do throws(CaptureError) {
            (source, stream) = try pipeline.startSource()
        } catch {
            connection.request(CamEvents.SourceEnded(sourceStats: CaptureStats(), failure: error.description), .broadcast)
            return
        }
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
                await pipeline.waitForCapacity()
                if pipeline.isStopping { continue }
                do {
                    var out = frame
                    out.image = try pipeline.process(frame.image)
                    pipeline.inFlight.add(1, ordering: .releasing)
                    connection.request(CamEvents.FrameReady(frame: out, processedNanos: monotonicNanos(),
                                                            sourceStats: source.stats), .broadcast)
                } catch {
                    connection.request(CamEvents.Fault(message: "frame \(frame.sequence): \(error)"), .broadcast)
                }
            }
        }
        source.stop()
        connection.request(CamEvents.SourceEnded(sourceStats: source.stats, failure: failure), .broadcast)
    }
}

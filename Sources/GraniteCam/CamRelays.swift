import Granite
import GraniteCapture
import GraniteMedia

/// State of the capture relay.
public struct CaptureRelayState: GraniteState {
    /// Whether the pump is running.
    public var running = false
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
    public let command = GraniteService<CaptureRelayCenter, CaptureRelayState>(qos: .userInteractive)
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

/// State of the output relay.
public struct OutputRelayState: GraniteState {
    /// Frames written.
    public var written: UInt64 = 0
    /// Writes that failed.
    public var failed: UInt64 = 0
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
        do {
            let bytes = try pipeline.encoder.encode(event.frame.image)
            try pipeline.writer?.write(bytes, frame: event.frame, processedNanos: event.processedNanos)
            state.written += 1
        } catch {
            state.failed += 1
            failure = "\(error)"
        }
        connection.request(CamEvents.Saved(sequence: event.frame.sequence, failure: failure), .rebound)
    }
}

/// The output relay's center.
public final class OutputRelayCenter: GraniteCenter<OutputRelayState> {
    public override var expeditions: [GraniteBaseExpedition] { [SaveExpedition().discovery()] }
}

/// Writes frames to disk on its own executor, so a slow disk never stalls the component.
public struct OutputRelay: GraniteRelay {
    public let command = GraniteService<OutputRelayCenter, OutputRelayState>()
    public init() {}
}

/// State of the depth relay.
public struct DepthRelayState: GraniteState {
    /// Depth maps made.
    public var estimated: UInt64 = 0
    public init() {}
}

/// Events the depth relay reduces.
public enum DepthRelayEvents {
    /// Work the latest pending frame (and any that arrives meanwhile) until the slot is empty.
    public struct Kick: GraniteEvent {
        let handle: PipelineHandle
    }
}

/// Latest-frame-wins depth: frames offered while one is being estimated replace each other.
struct DepthExpedition: GraniteExpedition {
    func reduce(event: DepthRelayEvents.Kick, state: inout DepthRelayState, connection: GraniteConnection) {
        let pipeline = event.handle.pipeline
        guard let depth = pipeline.depth else { return }
        while let frame = pipeline.depthSlot.take() {
            var failure: String?
            do { _ = try depth.estimate(frame.image) } catch { failure = "\(error)" }
            state.estimated += 1
            connection.request(CamEvents.DepthReady(sequence: frame.sequence, finishedNanos: monotonicNanos(), failure: failure), .rebound)
        }
    }
}

/// The depth relay's center.
public final class DepthRelayCenter: GraniteCenter<DepthRelayState> {
    public override var expeditions: [GraniteBaseExpedition] { [DepthExpedition().discovery()] }
}

/// Depth on its own executor; a slow model never queues frames (the slot holds one).
public struct DepthRelay: GraniteRelay {
    public let command = GraniteService<DepthRelayCenter, DepthRelayState>(qos: .utility)
    public init() {}
}

/// State of the preview relay.
public struct PreviewRelayState: GraniteState {
    /// Frames encoded for the preview.
    public var published: UInt64 = 0
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
    public let command = GraniteService<PreviewRelayCenter, PreviewRelayState>(qos: .utility)
    public init() {}
}

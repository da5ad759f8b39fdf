import Granite
import GraniteCapture
import GraniteMedia
import Synchronization

/// What the capture relay uses, taken from the run's ``CamPipeline``: the source it makes, the
/// stages every frame goes through and, in a non-live run, the depth model (each due frame's own
/// map is made before the chain, so the filters and the written map belong to the same frame; a
/// live run's model belongs to the ``DepthRelay`` instead).
struct CaptureParts: Sendable {
    /// What was asked (source, delivery, frame limit, depth cadence).
    let settings: CamSettings
    /// Processing applied to every frame, in order.
    let stages: [any FrameStage]
    /// Decodes folder images and MJPEG frames.
    let decoder: any ImageDecoder
    /// The depth model, in a non-live run with depth.
    let depth: (any DepthStage)?
    /// A live run with depth: every n-th frame goes to the depth relay when it is free.
    let liveDepthEvery: Int?
    /// The live depth model's input size, when it takes a picture already resized to it (made from
    /// the frame the chain uploaded, on the GPU; nil: the relay gets the frame as captured).
    let liveDepthInput: (width: Int, height: Int)?
    /// The YUV layouts the live sinks write, which a GPU chain converts into on the device.
    let yuvLayouts: [YUVLayout]

    /// The capture relay's share of `pipeline`.
    init(_ pipeline: CamPipeline) {
        settings = pipeline.settings
        stages = pipeline.stages
        decoder = pipeline.decoder
        depth = pipeline.settings.isLive ? nil : pipeline.depth
        liveDepthEvery = pipeline.settings.isLive && pipeline.depth != nil ? pipeline.settings.depthEvery : nil
        liveDepthInput = liveDepthEvery == nil ? nil : pipeline.depth?.modelInputSize
        yuvLayouts = pipeline.sinks.compactMap(\.gpuLayout)
    }

    /// Whether a stage reads a depth map.
    var chainWantsDepth: Bool { stages.contains { $0.usesDepth } }

    /// Builds the source the settings name.
    func makeSource() -> any FrameSource {
        let s = settings
        let fps = s.paced ? s.request.fps : nil
        switch s.source {
        case .testPattern:
            return TestPatternSource(size: s.request.size ?? FrameSize(width: 640, height: 480), fps: fps, frameLimit: s.frameLimit)
        case let .folder(path):
            return FolderSource(path: path, decoder: decoder, fps: fps, loop: s.loopFolder, frameLimit: s.frameLimit)
        case let .device(path):
            return V4L2Source(path: path, request: s.request, decoder: decoder)
        case let .pipeWire(node):
            return PipeWireSource(target: node)
        }
    }

    /// Runs every stage over `image`; `depth` (a `grayF32` map) for stages that use one.
    func process(_ image: Image, depth: Image? = nil) throws -> Image {
        var current = image
        for stage in stages { current = try stage.process(current, depth: depth) }
        return current
    }

    /// Runs the stages over a live frame with the newest map (`depth`, named by `version`); with
    /// `depthInput`, the model's input comes back too: made on the device from the frame a single
    /// GPU chain stage uploaded (only that small picture is read back), else on the CPU.
    func process(_ image: Image, depth: Image?, version: UInt64,
                 depthInput: (width: Int, height: Int)?) throws -> (image: Image, modelInput: Image?) {
        if stages.count == 1, let stage = stages[0] as? any DepthInputStage {
            return try stage.process(image, depth: depth, depthVersion: version, depthInput: depthInput)
        }
        let small = try depthInput.map { try DepthImage.modelInput(image, size: $0) }
        return (try process(image, depth: depth), small)
    }

    /// ``process(_:depth:)`` into a frame, with its YUV made by the last stage when the sinks
    /// take YUV and that stage can (``YUVOutputStage``: the GPU chain).
    func process(_ frame: Frame, depth: Image?) throws -> Frame {
        var out = frame
        guard !yuvLayouts.isEmpty, let last = stages.last as? any YUVOutputStage else {
            out.image = try process(frame.image, depth: depth)
            return out
        }
        var current = frame.image
        for stage in stages.dropLast() { current = try stage.process(current, depth: depth) }
        (out.image, out.yuv) = try last.process(current, depth: depth, yuv: yuvLayouts)
        return out
    }

    /// The YUV the sinks take, made by the last stage from the result it just made, when it can
    /// (the GPU chain; see ``YUVOutputStage/resultYUV(_:)``): for the runs that made their frame
    /// with depth, which do not go through the frame-level `process(_:depth:)`.
    func resultYUV() throws -> [YUVLayout: [UInt8]] {
        guard !yuvLayouts.isEmpty, let last = stages.last as? any YUVOutputStage else { return [:] }
        return try last.resultYUV(yuvLayouts)
    }

    /// Runs the stages over a frame due for its own depth map (non-live runs): with one stage that
    /// makes the model's input itself (the GPU chain) and a model that takes one, the frame goes
    /// to the device once and the model gets it resized there; otherwise the model resizes the
    /// frame on the CPU and the stages get the map. A failed estimate leaves `failure` set and the
    /// frame processed without depth.
    func process(_ image: Image, depthFrom model: any DepthStage) throws -> (image: Image, depth: DepthMaps?, failure: String?) {
        var maps: DepthMaps?
        var failure: String?
        if stages.count == 1, let stage = stages[0] as? any DepthInputStage, let size = model.modelInputSize {
            let out = try stage.process(image, depthInput: size) { small in
                do {
                    maps = try model.estimateMaps(modelInput: small, width: image.width, height: image.height)
                } catch {
                    failure = "\(error)"
                }
                return maps?.map
            }
            return (out, maps, failure)
        }
        do {
            maps = try model.estimateMaps(image)
        } catch {
            failure = "\(error)"
        }
        let wantsDepth = stages.contains { $0.usesDepth }
        return (try process(image, depth: wantsDepth ? maps?.map : nil), maps, failure)
    }
}

/// Everything the capture relay owns for a run: its parts, the running source, the run's one
/// back-pressure gate and the newest depth map the chain reads (live runs). Only the relay's
/// expeditions and its pump touch it; other parts of the tree reach it with events.
final class CaptureResources: Sendable {
    /// The source, stages and model (given once, before mounting).
    let parts = Owned<CaptureParts>()
    /// Frames in flight: admitted by the pump, released when a frame's last outlet is done.
    let flow = FlowGate(limit: 3)
    /// The newest depth map and the frame it came from (a live chain reads it).
    let latestDepth = Mutex<(map: Image, sequence: UInt64)?>(nil)
    /// Whether the depth relay is free for the next due frame (live: one frame at a time, latest
    /// wins). The pump takes it; ``CaptureRelayEvents/LatestDepth`` (the relay answered) frees it.
    private let depthIdle = Atomic<Bool>(true)

    /// Takes the depth relay's one place, when it is free.
    func takeDepthSlot() -> Bool {
        depthIdle.compareExchange(expected: true, desired: false, ordering: .sequentiallyConsistent).exchanged
    }

    /// Frees the depth relay's place (its answer came back, or the frame never reached it).
    func freeDepthSlot() { depthIdle.store(true, ordering: .sequentiallyConsistent) }

    /// Whether the depth relay is free.
    var depthSlotFree: Bool { depthIdle.load(ordering: .sequentiallyConsistent) }
    private let stopRequested = Atomic<Bool>(false)
    private let source = Mutex<(any FrameSource)?>(nil)

    /// Makes and starts the source; the pump calls this once.
    func startSource(_ parts: CaptureParts) throws(CaptureError) -> (any FrameSource, AsyncStream<CaptureEvent>) {
        let made = parts.makeSource()
        let stream = try made.start(parts.settings.delivery)
        source.withLock { $0 = made }
        if isStopping { stopSourceSoon() }
        return (made, stream)
    }

    /// Ends the run's capture: the gate admits nothing more, the source stops.
    func requestStop() {
        guard !stopRequested.exchange(true, ordering: .sequentiallyConsistent) else { return }
        flow.close()
        stopSourceSoon()
    }

    /// Whether a stop was asked for.
    var isStopping: Bool { stopRequested.load(ordering: .sequentiallyConsistent) }

    private func stopSourceSoon() {
        // FrameSource.stop() waits for the source's thread; never do that on a reducer's executor.
        guard let running = source.withLock({ $0 }) else { return }
        Task.detached { running.stop() }
    }
}

/// State of the capture relay.
struct CaptureRelayState: GraniteState {
    /// Whether the pump is running.
    var running = false
    /// Frames released back to the gate (their last outlet done).
    var released: UInt64 = 0
    /// Whether a stop was asked for.
    var stopping = false
    /// Filter chains swapped in while frames flowed (the preview page's chain box).
    var chainChanges: UInt64 = 0
    /// A new instance.
    init() {}
}

/// Events the capture relay reduces (all values).
enum CaptureRelayEvents {
    /// Opens the source and starts pumping frames to the hosts.
    struct Open: GraniteEvent {
        /// The event.
        init() {}
    }

    /// One admitted frame is done with (written, or nothing to write): the pump may admit another.
    struct Release: GraniteEvent {
        /// Quiet: one per frame.
        var behavior: GraniteEventBehavior { .quiet }
        /// The event.
        init() {}
    }

    /// Stop capturing (the frame limit, `stop()`, a live sink whose reader went away).
    struct Stop: GraniteEvent {
        /// The event.
        init() {}
    }

    /// The depth relay answered (live runs): it is free for the next due frame, and the newest map
    /// (for a chain that reads one) is used for later frames.
    struct LatestDepth: GraniteEvent {
        /// Quiet.
        var behavior: GraniteEventBehavior { .quiet }
        /// The `grayF32` map (nil: the estimate failed, or no stage reads depth).
        var map: Image?
        /// The frame it was made from.
        let sequence: UInt64
    }
}

/// Opens the source and runs the pump (source ─► stages ─► broadcast) off the relay's executor.
struct OpenCaptureExpedition: GraniteExpedition {
    let resources: CaptureResources

    func reduce(event: CaptureRelayEvents.Open, state: inout CaptureRelayState, connection: GraniteConnection) {
        guard !state.running, let parts = resources.parts.value else { return }
        state.running = true
        let resources = resources
        Task.detached(priority: .high) { await CapturePump.run(parts, resources: resources, connection: connection) }
    }
}

/// Gives a frame's place in the gate back (wakes the pump if it waits).
struct ReleaseExpedition: GraniteExpedition {
    let resources: CaptureResources

    func reduce(event: CaptureRelayEvents.Release, state: inout CaptureRelayState, connection: GraniteConnection) {
        state.released += 1
        resources.flow.release()
    }
}

/// Stops the source and closes the gate; frames in flight still finish.
struct StopCaptureExpedition: GraniteExpedition {
    let resources: CaptureResources

    func reduce(event: CaptureRelayEvents.Stop, state: inout CaptureRelayState, connection: GraniteConnection) {
        state.stopping = true
        resources.requestStop()
    }
}

/// Frees the depth relay's place and keeps the newest depth map for the chain.
struct LatestDepthExpedition: GraniteExpedition {
    let resources: CaptureResources

    func reduce(event: CaptureRelayEvents.LatestDepth, state: inout CaptureRelayState, connection: GraniteConnection) {
        if let map = event.map { resources.latestDepth.withLock { $0 = (map, event.sequence) } }
        resources.freeDepthSlot()
    }
}

/// The frame-source relay's center: owns the run's capture resources.
final class CaptureRelayCenter: GraniteCenter<CaptureRelayState> {
    /// The source, stages, gate and latest depth map.
    let resources = CaptureResources()

    override var expeditions: [GraniteBaseExpedition] {
        [OpenCaptureExpedition(resources: resources).discovery(), ReleaseExpedition(resources: resources).discovery(),
         StopCaptureExpedition(resources: resources).discovery(), LatestDepthExpedition(resources: resources).discovery(),
         ChangeChainCaptureExpedition(resources: resources).discovery()]
    }
}

/// The frame-source relay: owns the source, the stages and the gate; frames leave it as quiet broadcasts.
struct CaptureRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    let command = GraniteService<CaptureRelayCenter, CaptureRelayState>(qos: .userInteractive)
    /// A new instance.
    init() {}

    /// Hands the relay its share of the run (before mounting).
    func own(_ parts: CaptureParts) { command.center.resources.parts.set(parts) }

    /// What it owns.
    var resources: CaptureResources { command.center.resources }
}

/// The pump loop: pulls events from the source, runs depth (non-live) and the stages, broadcasts.
///
/// A live run feeds the chain the newest depth map the depth relay made (its age in frames goes
/// with the frame) and, for a frame due for depth while the depth relay is free, the model's input
/// made by the chain from the frame it uploaded (issue 14: the frame goes to the device once); a non-live run estimates every due frame's own depth here, before the chain,
/// so the filters and the written map belong to the same frame. After `frameLimit` frames it
/// stops the source itself, so no frame past the limit is ever broadcast.
enum CapturePump {
    static func run(_ parts: CaptureParts, resources: CaptureResources, connection: GraniteConnection) async {
        let source: any FrameSource, stream: AsyncStream<CaptureEvent>
        do throws(CaptureError) {
            (source, stream) = try resources.startSource(parts)
        } catch {
            connection.request(CamEvents.SourceEnded(sourceStats: CaptureStats(), failure: error.description), .broadcast)
            return
        }
        let settings = parts.settings
        let live = settings.isLive
        let chainWantsDepth = parts.chainWantsDepth
        var admitted: UInt64 = 0
        var sent: UInt64 = 0
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
                guard await resources.flow.acquire() else { continue }
                let index = admitted
                admitted += 1
                var depthModel: (any DepthStage)?
                if !live, let every = settings.depthEvery, let stage = parts.depth, index % UInt64(every) == 0 {
                    depthModel = stage
                }
                var chainDepth: Image?
                var depthVersion: UInt64 = 0
                var depthAge: UInt64?
                if live, let latest = resources.latestDepth.withLock({ $0 }) {
                    chainDepth = latest.map
                    depthVersion = latest.sequence
                    depthAge = frame.sequence >= latest.sequence ? frame.sequence - latest.sequence : 0
                }
                // Live depth: a due frame goes to the depth relay only while it is free (latest wins).
                var wantsDepth = false
                var depthSkipped = false
                if live, let every = parts.liveDepthEvery, index % UInt64(every) == 0 {
                    wantsDepth = resources.takeDepthSlot()
                    depthSkipped = !wantsDepth
                }
                var request: DepthRequest?
                do {
                    var out = frame
                    var depth: DepthMaps?
                    if let depthModel {
                        // Non-live: this frame's own map, the model's input resized on the GPU when it can be.
                        let result = try parts.process(frame.image, depthFrom: depthModel)
                        out.image = result.image
                        out.yuv = try parts.resultYUV()
                        depth = result.depth
                        if depth != nil { depthAge = 0 }
                        if let failure = result.failure {
                            connection.request(CamEvents.Fault(message: "depth, frame \(frame.sequence): \(failure)"), .broadcast)
                        }
                    } else if live && parts.liveDepthEvery != nil {
                        // A live run with depth: the newest map in, the model's input out.
                        let size = wantsDepth ? parts.liveDepthInput : nil
                        let result = try parts.process(frame.image, depth: chainWantsDepth ? chainDepth : nil,
                                                       version: depthVersion, depthInput: size)
                        out.image = result.image
                        out.yuv = try parts.resultYUV()
                        if wantsDepth {
                            request = DepthRequest(image: result.modelInput ?? frame.image, modelSized: result.modelInput != nil,
                                                   width: frame.image.width, height: frame.image.height)
                        }
                    } else {
                        out = try parts.process(frame, depth: chainWantsDepth ? chainDepth : nil)
                    }
                    connection.request(CamEvents.FrameReady(frame: out, processedNanos: monotonicNanos(),
                                                            sourceStats: source.stats, depth: depth, depthAge: depthAge,
                                                            depthRequest: request, depthSkipped: depthSkipped),
                                       .broadcast)
                    sent += 1
                    if let limit = settings.frameLimit, sent >= limit { resources.requestStop() }
                } catch {
                    if wantsDepth && request == nil { resources.freeDepthSlot() }
                    resources.flow.release()
                    connection.request(CamEvents.Fault(message: "frame \(frame.sequence): \(error)"), .broadcast)
                }
            }
        }
        source.stop()
        connection.request(CamEvents.SourceEnded(sourceStats: source.stats, failure: failure), .broadcast)
    }
}

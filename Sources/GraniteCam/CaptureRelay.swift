import Foundation
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
    /// A live run whose model runs on the chain's device and whose maps nothing reads on the
    /// host: every n-th frame makes the map inside its own frame, on the device, where the next
    /// frames read it (no depth relay, no copy of the picture or the map).
    let inStreamDepth: (model: any DepthStage, every: Int)?
    /// The live depth model's input size, when it takes a picture already resized to it (made from
    /// the frame the chain uploaded, on the GPU; nil: the relay gets the frame as captured).
    let liveDepthInput: (width: Int, height: Int)?
    /// The YUV layouts the live sinks write, which a GPU chain converts into on the device.
    let yuvLayouts: [YUVLayout]
    /// Whether any outlet reads frames as `rgba8` (files, the preview, a sink that takes RGB):
    /// when none does, a GPU chain reads back only the sinks' YUV.
    let readsRGBA: Bool
    /// Whether frames' own depth maps are read on the host (written as depth PNGs, shown in the
    /// preview): when not, a model on the chain's device leaves them there.
    let depthOnHost: Bool
    /// Whether every sink with a YUV layout reads the device's YUV into its own buffer.
    let yuvInPlace: Bool

    /// The capture relay's share of `pipeline`.
    init(_ pipeline: CamPipeline) {
        settings = pipeline.settings
        stages = pipeline.stages
        decoder = pipeline.decoder
        depth = pipeline.settings.isLive ? nil : pipeline.depth
        let onHost = pipeline.writer != nil || pipeline.preview != nil
        if pipeline.settings.isLive, !onHost, let model = pipeline.depth, model.runsOnDevice,
           let every = pipeline.settings.depthEvery, pipeline.stages.count == 1, pipeline.stages[0].usesDepth {
            inStreamDepth = (model, every)
        } else {
            inStreamDepth = nil
        }
        liveDepthEvery = pipeline.settings.isLive && pipeline.depth != nil && inStreamDepth == nil ? pipeline.settings.depthEvery : nil
        liveDepthInput = liveDepthEvery == nil ? nil : pipeline.depth?.modelInputSize
        yuvLayouts = pipeline.sinks.compactMap(\.gpuLayout)
        // GRANITE_YUV_IN_PLACE=0: the bytes come back into an array first and are copied from there
        // (the way before sinks read in place; scripts/bench-pipewire compares the two).
        yuvInPlace = pipeline.sinks.allSatisfy { $0.gpuLayout == nil || $0.readsDeviceYUV }
            && ProcessInfo.processInfo.environment["GRANITE_YUV_IN_PLACE"] != "0"
        readsRGBA = onHost || pipeline.sinks.isEmpty || pipeline.sinks.contains { $0.readsRGBA }
        depthOnHost = onHost
    }

    /// Whether a stage reads a depth map.
    var chainWantsDepth: Bool { stages.contains { $0.usesDepth } }

    /// Builds the source the settings name.
    func makeSource() -> any FrameSource {
        let s = settings
        let fps = s.paced ? s.request.fps : nil
        switch s.source {
        case .testPattern:
            // GRANITE_CAPTURE_LOG=FILE: when each frame was made, by its drawn counter (the benchmark's latency).
            return TestPatternSource(size: s.request.size ?? FrameSize(width: 640, height: 480), fps: fps, frameLimit: s.frameLimit,
                                     captureLog: ProcessInfo.processInfo.environment["GRANITE_CAPTURE_LOG"])
        case let .folder(path):
            return FolderSource(path: path, decoder: decoder, fps: fps, loop: s.loopFolder, frameLimit: s.frameLimit)
        case let .device(path):
            return V4L2Source(path: path, request: s.request, decoder: decoder,
                              reconnect: ReconnectPolicy(maximumWait: s.reconnectTimeout), firstFrameTimeout: s.firstFrameTimeout)
        case let .pipeWire(node):
            var reconnect = PipeWireSource.defaultReconnect
            if let wait = s.reconnectTimeout { reconnect.maximumWait = wait }
            return PipeWireSource(target: node, request: s.request, decoder: decoder, reconnect: reconnect,
                                  firstFrameTimeout: s.firstFrameTimeout)
        }
    }

    /// Starts the stages on one frame's job. One stage (what the programs build) does the whole
    /// job and only starts it (a GPU chain: submitted, read back in ``StartedFrame/result()``):
    /// the frame goes to the device once, and the model's input, the map and the YUV the sinks
    /// take are made there. With several, they run now: the first does the depth part (this
    /// frame's own maps, the model's input) and the later ones get its map; the last makes the YUV.
    func start(_ job: FrameJob) throws -> StartedFrame {
        guard stages.count > 1 else { return try stages[0].start(job) }
        var first = job
        (first.yuv, first.rgba) = ([], true)
        var result = try stages[0].process(first)
        var map: Image?
        switch job.depth {
        case .none, .own, .liveOnDevice: map = result.depth?.map
        case let .map(given), let .newest(given, _): map = given
        }
        for (index, stage) in stages.enumerated().dropFirst() {
            let last = index == stages.count - 1
            var nextJob = FrameJob(image: result.image, depth: map.map(FrameDepth.map) ?? .none,
                                   yuv: last ? job.yuv : [], rgba: last ? job.rgba : true)
            nextJob.yuvInPlace = last && job.yuvInPlace
            let next = try stage.process(nextJob)
            (result.image, result.yuv, result.deviceYUV) = (next.image, next.yuv, next.deviceYUV)
        }
        return StartedFrame { result }
    }

    /// Runs the stages over one frame's job and waits for the result.
    func process(_ job: FrameJob) throws -> FrameResult { try start(job).result() }

    /// A frame's job as this run wants it: `depth` for the stages, the model's input when the frame
    /// goes to the depth relay (`modelInput`), the sinks' YUV layouts.
    func job(_ image: Image, depth: FrameDepth, modelInput: Bool = false) -> FrameJob {
        var job = FrameJob(image: image, depth: depth,
                           modelInput: modelInput ? liveDepthInput.map { FrameSize(width: $0.width, height: $0.height) } : nil,
                           yuv: yuvLayouts, rgba: readsRGBA, depthOnHost: depthOnHost)
        job.yuvInPlace = yuvInPlace
        return job
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
    /// The frame whose map the chain keeps on the device now (a live run with depth in the stream).
    let deviceDepthSequence = Mutex<UInt64?>(nil)
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
    /// The relay's connection, once ``CaptureRelayEvents/Open`` was reduced: the pump sends its
    /// frames through it.
    private let connection = Mutex<GraniteConnection?>(nil)
    private let opened = Latch()

    /// Hands the pump the relay's connection and lets ``pump()`` start (the Open expedition, once).
    func open(_ connection: GraniteConnection) {
        self.connection.withLock { $0 = connection }
        opened.signal()
    }

    /// Runs the run's capture: waits until the relay was opened (mounted, its Open reduced),
    /// then pumps frames until the source ends. The run's owner calls this in its own task
    /// (``CamApp/run()``; a test that drives the component does the same), so the pump lives
    /// and ends in the owner's scope; the relay's reducers only open it and stop the source.
    func pump() async {
        await opened.wait()
        guard let connection = connection.withLock({ $0 }), let parts = parts.value else { return }
        await CapturePump.run(parts, resources: self, connection: connection)
    }

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

/// Opens the capture: hands the pump (source ─► stages ─► broadcast), which the run's owner
/// runs in its own task, the relay's connection.
struct OpenCaptureExpedition: GraniteExpedition {
    let resources: CaptureResources

    func reduce(event: CaptureRelayEvents.Open, state: inout CaptureRelayState, connection: GraniteConnection) {
        guard !state.running, resources.parts.value != nil else { return }
        state.running = true
        resources.open(connection)
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

/// The pump: pulls frames from the source, starts each one's stages, and broadcasts each result
/// in order. Two loops share it so a frame's transfers and compute overlap the next one's:
///
/// ```
///  capture loop: source ─► flow.acquire() ─► (depth slot) ─► stages.start ──┐  (upload, submit)
///                                                                           ▼  started frames, in order
///  result loop:                       FrameReady (.quiet, broadcast) ◄── result()  (wait, read back)
/// ```
/// The gate (``FlowGate``) bounds the frames between source and outlets, started ones included.
/// A live run feeds the chain the newest depth map the depth relay made (its age in frames goes
/// with the frame) and, for a frame due for depth while the depth relay is free, the model's input
/// made by the chain from the frame it uploaded (the frame goes to the device once); a non-live
/// run estimates every due frame's own depth before the chain, so the filters and the written
/// map belong to the same frame. After `frameLimit` frames it stops the source itself, so no
/// frame past the limit is ever broadcast.
enum CapturePump {
    /// One frame between the two loops.
    struct Started: Sendable {
        let frame: Frame
        let work: Result<StartedFrame, any Error>
        let wantsDepth: Bool
        let depthSkipped: Bool
        let depthAge: UInt64?
    }

    /// Frames the run may still start (the frame limit less those started, plus those lost: a
    /// frame lost in the result loop gives its place back).
    final class Budget: Sendable {
        private let left: Atomic<Int>
        init(_ limit: UInt64?) { left = Atomic(limit.map { Int(clamping: $0) } ?? Int.max) }
        /// Takes a place; false when none is left.
        func take() -> Bool {
            var current = left.load(ordering: .sequentiallyConsistent)
            while current > 0 {
                let (done, now) = left.compareExchange(expected: current, desired: current - 1, ordering: .sequentiallyConsistent)
                if done { return true }
                current = now
            }
            return false
        }
        /// Gives a place back.
        func giveBack() { left.add(1, ordering: .sequentiallyConsistent) }
        /// Whether a place is left.
        var isOpen: Bool { left.load(ordering: .sequentiallyConsistent) > 0 }
    }

    /// What the result loop counted.
    struct Losses: Sendable {
        var lost: UInt64 = 0
        var first: String?
    }

    static func run(_ parts: CaptureParts, resources: CaptureResources, connection: GraniteConnection) async {
        let source: any FrameSource, stream: AsyncStream<CaptureEvent>
        do throws(CaptureError) {
            (source, stream) = try resources.startSource(parts)
        } catch {
            connection.request(CamEvents.SourceEnded(sourceStats: CaptureStats(), failure: error.description), .broadcast)
            return
        }
        let budget = Budget(parts.settings.frameLimit)
        let (started, feed) = AsyncStream.makeStream(of: Started.self)
        var failure: String?
        let losses = await withTaskGroup(of: Losses.self) { group in
            group.addTask {
                await results(started, parts: parts, resources: resources, source: source, budget: budget, connection: connection)
            }
            failure = await capture(stream, parts: parts, resources: resources, budget: budget, feed: feed, connection: connection)
            feed.finish()
            return await group.next() ?? Losses()
        }
        source.stop()
        connection.request(CamEvents.SourceEnded(sourceStats: source.stats, failure: failure, lostToFaults: losses.lost,
                                                 firstLoss: losses.first), .broadcast)
    }

    /// The capture loop: admits frames and starts their stages; returns the source's last failure.
    static func capture(_ stream: AsyncStream<CaptureEvent>, parts: CaptureParts, resources: CaptureResources,
                        budget: Budget, feed: AsyncStream<Started>.Continuation, connection: GraniteConnection) async -> String? {
        let settings = parts.settings
        let live = settings.isLive
        let chainWantsDepth = parts.chainWantsDepth
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
                // Past the limit (frames started, none lost yet): not admitted; the stop is coming.
                guard budget.isOpen, await resources.flow.acquire() else { continue }
                guard budget.take() else {
                    resources.flow.release()
                    continue
                }
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
                let job: FrameJob
                if live, let (model, every) = parts.inStreamDepth {
                    // Depth in the stream: a due frame makes the map on the device, the rest read it there.
                    job = parts.job(frame.image, depth: .liveOnDevice(index % UInt64(every) == 0 ? model : nil))
                    depthAge = resources.deviceDepthSequence.withLock { $0 }.map { frame.sequence >= $0 ? frame.sequence - $0 : 0 }
                } else if let depthModel {
                    // Non-live: this frame's own map, the model's input resized on the GPU when it can be.
                    job = parts.job(frame.image, depth: .own(depthModel))
                } else if live, chainWantsDepth, let chainDepth {
                    // Live: the newest map in (kept on the device), the model's input out when due.
                    job = parts.job(frame.image, depth: .newest(chainDepth, version: depthVersion), modelInput: wantsDepth)
                } else {
                    job = parts.job(frame.image, depth: .none, modelInput: wantsDepth)
                }
                let work = Result<StartedFrame, any Error> { try parts.start(job) }
                feed.yield(Started(frame: frame, work: work, wantsDepth: wantsDepth, depthSkipped: depthSkipped, depthAge: depthAge))
            }
        }
        return failure
    }

    /// The result loop: waits for each started frame in order and broadcasts it.
    static func results(_ started: AsyncStream<Started>, parts: CaptureParts, resources: CaptureResources, source: any FrameSource,
                        budget: Budget, connection: GraniteConnection) async -> Losses {
        var losses = Losses()
        var sent: UInt64 = 0
        for await item in started {
            let frame = item.frame
            var request: DepthRequest?
            do {
                let result = try item.work.get().result()
                var out = frame
                (out.image, out.yuv, out.deviceYUV) = (result.image, result.yuv, result.deviceYUV)
                var depthAge = item.depthAge
                if result.depth != nil || result.depthOnDevice { depthAge = 0 }
                if result.depthOnDevice && parts.settings.isLive { resources.deviceDepthSequence.withLock { $0 = frame.sequence } }
                if let failure = result.depthFailure {
                    connection.request(CamEvents.Fault(message: "depth, frame \(frame.sequence): \(failure)"), .broadcast)
                }
                if item.wantsDepth {
                    request = DepthRequest(image: result.modelInput ?? frame.image, modelSized: result.modelInput != nil,
                                           width: frame.image.width, height: frame.image.height)
                }
                connection.request(CamEvents.FrameReady(frame: out, processedNanos: monotonicNanos(),
                                                        sourceStats: source.stats, depth: result.depth,
                                                        depthOnDevice: result.depthOnDevice, depthAge: depthAge,
                                                        depthRequest: request, depthSkipped: item.depthSkipped),
                                   .broadcast)
                sent += 1
                if let limit = parts.settings.frameLimit, sent >= limit { resources.requestStop() }
            } catch {
                if item.wantsDepth && request == nil { resources.freeDepthSlot() }
                resources.flow.release()
                budget.giveBack()
                losses.lost += 1
                if losses.first == nil { losses.first = "frame \(frame.sequence): \(error)" }
                connection.request(CamEvents.Fault(message: "frame \(frame.sequence): \(error)"), .broadcast)
            }
        }
        return losses
    }
}

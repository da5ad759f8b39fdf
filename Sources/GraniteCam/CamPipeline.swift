#if canImport(Glibc)
import Glibc
#endif
import GraniteCapture
import GraniteMedia
import Synchronization

/// The non-value half of a `granite-cam` run: the seams (stages, encoder, depth), the source,
/// the output writer, and the flow control the relays share.
///
/// ```
///  FrameSource ─► CaptureRelay pump (depth when non-live, stages) ─FrameReady (.quiet, broadcast)─► CamCenter
///   live: drops      ▲ `flow.acquire()` waits while the gate is full   ├─.rebound─► OutputRelay (write, sidecar, depth PNG)
///   non-live: waits  │ (live: the source drops; non-live: it waits)    ├─.rebound─► DepthRelay (live: latest wins)
///                    │ latest depth map (live) ◄── DepthRelay          ├─.rebound─► PreviewRelay (≤10 fps, latest wins)
///                    │                                                 └─.rebound─► SinkRelay (every frame: y4m pipe, V4L2 out)
///  Saved / DepthReady (a file written) ─► CamCenter ─.rebound─► PinRelay (journal, wake the pin worker)
///  ticker ─Tick (.none)─► CamCenter render: the status line, a few times a second
/// ```
public final class CamPipeline: Sendable {
    /// What was asked.
    public let settings: CamSettings
    /// Processing applied to every frame, in order (color conversion first).
    public let stages: [any FrameStage]
    /// How saved frames are encoded.
    public let encoder: any FrameEncoder
    /// Depth estimation, if any.
    public let depth: (any DepthStage)?
    /// Decodes folder images (and MJPEG frames).
    public let decoder: any ImageDecoder
    /// Where the status line goes (the render step's output).
    public let statusSink: @Sendable (String) -> Void

    let writer: OutputWriter?
    /// The loopback preview, when asked for.
    public let preview: PreviewServer?
    /// Pinning of every written file (`--pin`), when asked for.
    public let pins: CamPinning?
    /// Live outputs that take every frame (`--pipe y4m`, `--v4l2-out`), fed by ``SinkRelay``.
    public let sinks: [any FrameSink]
    let depthSlot = LatestSlot<Frame>()
    let previewSlot = LatestSlot<Frame>()
    /// At most this many preview frames a second (each is a JPEG encode).
    let previewInterval: UInt64 = 100_000_000
    /// Work in flight (frames not yet reduced and written; non-live depth maps being written).
    let flow = FlowGate(limit: 3)
    /// The newest depth map and the frame it came from (live runs feed the chain from it).
    let latestDepth = Mutex<(map: Image, sequence: UInt64)?>(nil)
    private let stopRequested = Atomic<Bool>(false)
    private let snapshotRequested = Atomic<Bool>(false)
    private let source = Mutex<(any FrameSource)?>(nil)
    private let ended = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// A pipeline; `writer` is created when the settings name an output folder.
    public init(settings: CamSettings, stages: [any FrameStage] = [ToRGBA()], encoder: any FrameEncoder = NetpbmEncoder(),
                depth: (any DepthStage)? = nil, decoder: any ImageDecoder = NetpbmDecoder(),
                preview: PreviewServer? = nil, pins: CamPinning? = nil, sinks: [any FrameSink] = [],
                statusSink: @escaping @Sendable (String) -> Void = { _ in }) throws(CamError) {
        self.settings = settings
        self.stages = stages
        self.encoder = encoder
        self.depth = depth
        self.decoder = decoder
        self.statusSink = statusSink
        self.preview = preview
        self.pins = pins
        self.sinks = sinks
        writer = try settings.outputDirectory.map { dir throws(CamError) in
            try OutputWriter(directory: dir, fileExtension: encoder.fileExtension)
        }
    }

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
        }
    }

    /// Starts the source; the relay's pump calls this once.
    func startSource() throws(CaptureError) -> (any FrameSource, AsyncStream<CaptureEvent>) {
        let made = makeSource()
        let stream = try made.start(settings.delivery)
        source.withLock { $0 = made }
        if isStopping { stopSourceSoon() }
        return (made, stream)
    }

    /// Asks the run to end: the source stops, frames in flight finish, outputs flush.
    public func requestStop() {
        guard !stopRequested.exchange(true, ordering: .sequentiallyConsistent) else { return }
        flow.close()
        stopSourceSoon()
    }

    /// Asks for the next processed frame to be written whatever the save policy (needs an
    /// output folder): `granite-cam` does this on SIGUSR1.
    public func requestSnapshot() {
        snapshotRequested.store(true, ordering: .sequentiallyConsistent)
    }

    /// Takes a pending snapshot request.
    func takeSnapshotRequest() -> Bool {
        snapshotRequested.exchange(false, ordering: .sequentiallyConsistent)
    }

    /// Whether a stop was requested.
    public var isStopping: Bool { stopRequested.load(ordering: .sequentiallyConsistent) }

    private func stopSourceSoon() {
        // FrameSource.stop() waits for the source's thread; never do that on a reducer's executor.
        guard let running = source.withLock({ $0 }) else { return }
        Task.detached { running.stop() }
    }

    /// Counters of the source so far.
    var sourceStats: CaptureStats { source.withLock { $0?.stats } ?? CaptureStats() }

    /// Marks the run over and wakes `waitUntilEnded`.
    func markEnded() {
        let waiters = ended.withLock { e in
            e.done = true
            defer { e.waiters = [] }
            return e.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the source has ended and its last frame was reduced.
    func waitUntilEnded() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = ended.withLock { e in
                if !e.done { e.waiters.append(continuation) }
                return e.done
            }
            if done { continuation.resume() }
        }
    }

    /// Runs every stage over `image`; `depth` (a `grayF32` map) for stages that use one.
    func process(_ image: Image, depth: Image? = nil) throws -> Image {
        var current = image
        for stage in stages { current = try stage.process(current, depth: depth) }
        return current
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

/// The pipeline as a state value: compared by identity, so the state stays `Equatable`.
struct PipelineHandle: Sendable, Equatable {
    /// The pipeline.
    let pipeline: CamPipeline

    /// Wraps a pipeline.
    init(_ pipeline: CamPipeline) { self.pipeline = pipeline }

    static func == (a: PipelineHandle, b: PipelineHandle) -> Bool { a.pipeline === b.pipeline }
}

/// A one-element mailbox where the newest value replaces an unclaimed older one.
final class LatestSlot<Value: Sendable>: Sendable {
    private let slot = Mutex<(value: Value?, busy: Bool, replaced: UInt64)>((nil, false, 0))

    /// Puts `value` in; returns true when nobody is working the slot (the caller should kick a worker).
    func offer(_ value: Value) -> Bool {
        slot.withLock { s in
            if s.value != nil { s.replaced += 1 }
            s.value = value
            if s.busy { return false }
            s.busy = true
            return true
        }
    }

    /// Takes the pending value, or marks the worker idle and returns nil.
    func take() -> Value? {
        slot.withLock { s in
            guard let value = s.value else {
                s.busy = false
                return nil
            }
            s.value = nil
            return value
        }
    }

    /// Values replaced before a worker took them.
    var replaced: UInt64 { slot.withLock { $0.replaced } }
}

import GraniteCapture
import GraniteMedia

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
        // GRANITE_DEBUG=yuv-copy: the bytes come back into an array first and are copied from there
        // (the way before sinks read in place; scripts/bench-pipewire compares the two). Read once, here.
        yuvInPlace = pipeline.sinks.allSatisfy { $0.gpuLayout == nil || $0.readsDeviceYUV }
            && !GraniteDebug.current.contains(.yuvCopy)
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
            // --capture-log FILE: when each frame was made, by its drawn counter (the benchmark's latency).
            return TestPatternSource(size: s.request.size ?? FrameSize(width: 640, height: 480), fps: fps, frameLimit: s.frameLimit,
                                     captureLog: s.captureLog)
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

import GraniteCapture
import GraniteMedia

/// A `granite-cam` run's recipe: the settings and the seams (stages, encoder, depth model,
/// decoder, writer, live sinks, preview, pinning). It holds no run-time state; ``CamComponent``
/// hands each seam to the one relay that owns it while the tree is built, and from then on only
/// values travel between them — and each frame's place in the gate (`FrameSlot`), which goes
/// forward with the frame and is freed by its last writer.
///
/// ```
///  CaptureRelay (owns: the source, the stages, the FlowGate (admission), the NewestDepth; non-live: the model)
///   pump: source ─► flow.acquire() → FrameSlot ─► [non-live: own depth] ─► stages ─FrameReady(slot) (.quiet, broadcast)─┐
///   live: the source drops; non-live: it waits        ▲ slot.done() by the frame's last writer, where it finishes      │
///                                                     │ (no event back)     NewestDepth ◄─ the depth relay's answer    │
///  CamComponent (root: routing; shares the slot with the outlets that write the frame) ◄───────────────────────────────┤
///   ├─.rebound─► OutputRelay (owns: encoder, writer) ─ writes, slot.done() ─ Saved / DepthSaved (broadcast: pins, status)
///   ├─.rebound─► DepthRelay (live; owns: the model; one frame at a time) ─ NewestDepth ─ DepthReady (broadcast)        │
///   ├─.rebound─► SinkRelay (owns: y4m pipe, V4L2 out) ─ writes, slot.done() ─ SinkClosed (rebound, once)              │
///   ├─.rebound─► PreviewRelay (owns: the server; ≤10 fps)                                                              │
///   └─.rebound─► PinRelay (owns: the pin session) ─Fault (broadcast)                                                   │
///  StatusComponent (child: attached, listening) ◄── the same broadcasts ──────────────────────────────────────────────┘
///   counters, rates, latency, drops; ticker ─Tick─► render: the status line, a few times a second
/// ```
public final class CamPipeline: Sendable {
    /// What was asked.
    public let settings: CamSettings
    /// Processing applied to every frame, in order (color conversion first).
    let stages: [any FrameStage]
    /// How saved frames are encoded.
    let encoder: any FrameEncoder
    /// Depth estimation, if any.
    let depth: (any DepthStage)?
    /// Decodes folder images (and MJPEG frames).
    let decoder: any ImageDecoder
    /// Where the status line goes (the render step's output).
    let statusSink: @Sendable (String) -> Void

    let writer: OutputWriter?
    /// The loopback preview, when asked for.
    let preview: PreviewServer?
    /// Pinning of every written file (`--pin`), when asked for.
    let pins: CamPinning?
    /// Live outputs that take every frame (`--pipe y4m`, `--v4l2-out`), fed by ``SinkRelay``.
    let sinks: [any FrameSink]

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
            try OutputWriter(directory: dir, fileExtension: encoder.fileExtension, depthPreview: settings.depthPreview,
                             mapName: depth?.mapName ?? "depth")
        }
    }
}

import Granite
import GraniteCapture
import GraniteMedia

/// The events of the `granite-cam` root component.
enum CamEvents {
    /// Fired once at mount (a `.dependant` link): asks the capture relay to open the source.
    struct Start: GraniteEvent {
        /// The event.
        init() {}
    }

    /// A processed frame, broadcast by the capture relay. Quiet: no render per frame.
    struct FrameReady: GraniteEvent {
        /// Quiet: reduced without a render.
        var behavior: GraniteEventBehavior { .quiet }
        /// The frame after every stage.
        let frame: Frame
        /// When processing finished (monotonic ns).
        let processedNanos: UInt64
        /// The source's counters when it was sent.
        let sourceStats: CaptureStats
        /// This frame's own depth (a non-live run with depth due on it).
        var depth: DepthEstimate? = nil
        /// This frame's own map was made and read on the device (not in ``depth``).
        var depthOnDevice = false
        /// How many frames old the depth map the chain saw is (nil: none yet).
        var depthAge: UInt64? = nil
        /// A live run: this frame goes to the depth relay (its model input, made by the chain).
        var depthRequest: DepthRequest? = nil
        /// A live run: this frame was due for depth while the depth relay was busy (latest wins).
        var depthSkipped = false
        /// The frame's place in the run's gate, carried forward: the root shares it with the
        /// outlets it hands the frame to, and the last of them frees it (no event comes back).
        let slot: FrameSlot
    }

    /// The format in effect (at start and after a reconnect). Quiet.
    struct FormatChanged: GraniteEvent {
        /// Quiet: reduced without a render.
        var behavior: GraniteEventBehavior { .quiet }
        /// The format.
        let format: StreamFormat
    }

    /// A fault from the source or a stage. Quiet: the next status render shows it.
    struct Fault: GraniteEvent {
        /// Quiet: reduced without a render.
        var behavior: GraniteEventBehavior { .quiet }
        /// What happened.
        let message: String
    }

    /// The source finished (limit, end of folder, stop, or an unrecoverable fault). Renders.
    struct SourceEnded: GraniteEvent {
        /// The source's final counters.
        let sourceStats: CaptureStats
        /// Why, when it failed.
        let failure: String?
        /// Frames the source delivered that a stage failed on (each was reported as a fault).
        var lostToFaults: UInt64 = 0
        /// The first of those failures.
        var firstLoss: String? = nil
    }

    /// A frame was written, or its write failed (broadcast by the output relay). Quiet.
    struct Saved: GraniteEvent {
        /// Quiet: reduced without a render.
        var behavior: GraniteEventBehavior { .quiet }
        /// Its sequence number.
        let sequence: UInt64
        /// The file written (nil when it failed).
        let path: String?
        /// The write error, if it failed.
        let failure: String?
    }

    /// A depth map was made, or the model failed (broadcast by the depth relay, live runs). Quiet.
    struct DepthReady: GraniteEvent {
        /// Quiet: reduced without a render.
        var behavior: GraniteEventBehavior { .quiet }
        /// The frame it belongs to.
        let sequence: UInt64
        /// When it finished.
        let finishedNanos: UInt64
        /// The map for the chain and the image to write (nil when it failed).
        var maps: DepthEstimate? = nil
        /// The error, if estimation failed.
        let failure: String?
    }

    /// A depth map was written as a 16-bit PNG, or the write failed (broadcast by the output relay). Quiet.
    struct DepthSaved: GraniteEvent {
        /// Quiet: reduced without a render.
        var behavior: GraniteEventBehavior { .quiet }
        /// The frame it belongs to.
        let sequence: UInt64
        /// The file written (nil when it failed).
        let path: String?
        /// The write error, if it failed.
        let failure: String?
    }

    /// A live sink's reader went away (rebound from the sink relay, once): the run ends. Quiet.
    struct SinkClosed: GraniteEvent {
        /// Quiet: reduced without a render.
        var behavior: GraniteEventBehavior { .quiet }
        /// The sink whose reader went away.
        let sink: String
    }

    /// Write the next processed frame whatever the save policy (SIGUSR1). Quiet.
    struct Snapshot: GraniteEvent {
        /// Quiet: reduced without a render.
        var behavior: GraniteEventBehavior { .quiet }
        /// The event.
        init() {}
    }

    /// End the run: capture stops, frames in flight finish, outputs flush. Quiet.
    struct Stop: GraniteEvent {
        /// Quiet: reduced without a render.
        var behavior: GraniteEventBehavior { .quiet }
        /// The event.
        init() {}
    }

    /// The status clock: renders the status line. Sent a few times a second.
    struct Tick: GraniteEvent {
        /// The event.
        init() {}
    }
}

/// What a live frame hands the depth relay: the model's input made from the frame (on the GPU
/// by the chain that uploaded it), or the frame as captured for a model that takes any size, and
/// where the map goes: the depth relay hands it to the run's ``NewestDepth`` itself and frees its
/// one place there (no event back through the root).
struct DepthRequest: Sendable {
    /// The picture the model runs on.
    let image: Image
    /// Whether `image` is already the model's input size (`rgba8`).
    let modelSized: Bool
    /// The frame's width (the maps are made at the frame's size).
    let width: Int
    /// The frame's height.
    let height: Int
    /// The run's newest depth map (the capture relay's): the map goes there, the place is freed there.
    let newest: NewestDepth
    /// Whether a stage reads the map (else only the place is freed).
    let keepsMap: Bool

    /// The model answered (`map` nil: it failed): a chain that reads depth gets the map for later
    /// frames, and the depth relay is free for the next due frame.
    func answered(_ map: Image?, sequence: UInt64) {
        if keepsMap, let map { newest.made(map, sequence: sequence) }
        newest.freeMaker()
    }
}

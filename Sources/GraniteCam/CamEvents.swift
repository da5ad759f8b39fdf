import Granite
import GraniteCapture
import GraniteMedia

/// The events of the `granite-cam` root component.
public enum CamEvents {
    /// Fired once at mount (a `.dependant` link): asks the capture relay to open the source.
    public struct Start: GraniteEvent {
        /// The event.
        public init() {}
    }

    /// A processed frame, broadcast by the capture relay. Quiet: no render per frame.
    public struct FrameReady: GraniteEvent {
        /// Quiet: reduced without a render.
        public var behavior: GraniteEventBehavior { .quiet }
        /// The frame after every stage.
        public let frame: Frame
        /// The image as captured (what depth is estimated from in a live run).
        public let input: Image
        /// When processing finished (monotonic ns).
        public let processedNanos: UInt64
        /// The source's counters when it was sent.
        public let sourceStats: CaptureStats
        /// This frame's own depth (a non-live run with depth due on it).
        public var depth: DepthMaps? = nil
        /// How many frames old the depth map the chain saw is (nil: none yet).
        public var depthAge: UInt64? = nil
    }

    /// The format in effect (at start and after a reconnect). Quiet.
    public struct FormatChanged: GraniteEvent {
        /// Quiet: reduced without a render.
        public var behavior: GraniteEventBehavior { .quiet }
        /// The format.
        public let format: StreamFormat
    }

    /// A fault from the source or a stage. Quiet: the next status render shows it.
    public struct Fault: GraniteEvent {
        /// Quiet: reduced without a render.
        public var behavior: GraniteEventBehavior { .quiet }
        /// What happened.
        public let message: String
    }

    /// The source finished (limit, end of folder, stop, or an unrecoverable fault). Renders.
    public struct SourceEnded: GraniteEvent {
        /// The source's final counters.
        public let sourceStats: CaptureStats
        /// Why, when it failed.
        public let failure: String?
    }

    /// A frame was written (rebound from the output relay). Quiet.
    public struct Saved: GraniteEvent {
        /// Quiet: reduced without a render.
        public var behavior: GraniteEventBehavior { .quiet }
        /// Its sequence number.
        public let sequence: UInt64
        /// The file written (nil when it failed).
        public let path: String?
        /// The write error, if it failed.
        public let failure: String?
    }

    /// A depth map came back (rebound from the depth relay). Quiet.
    public struct DepthReady: GraniteEvent {
        /// Quiet: reduced without a render.
        public var behavior: GraniteEventBehavior { .quiet }
        /// The frame it belongs to.
        public let sequence: UInt64
        /// When it finished.
        public let finishedNanos: UInt64
        /// The 16-bit PNG written, when there is an output folder.
        public let path: String?
        /// The error, if estimation failed.
        public let failure: String?
    }

    /// The status clock: renders the status line. Sent a few times a second.
    public struct Tick: GraniteEvent {
        /// The event.
        public init() {}
    }
}

import GraniteCapture

/// Where frames come from.
public enum SourceSpec: Sendable, Hashable, CustomStringConvertible {
    /// The moving test pattern (the default when there is no camera).
    case testPattern
    /// A folder of images, played in name order.
    case folder(String)
    /// A V4L2 device node.
    case device(String)
    /// A PipeWire video source: its id, serial, `node.name` or description (nil: the first one).
    case pipeWire(String?)

    /// Parses `testpattern`, `folder:PATH` or a device path (`/dev/video0`).
    public init(parsing text: String) throws(CaptureError) {
        if text == "testpattern" {
            self = .testPattern
        } else if text.hasPrefix("folder:"), text.count > 7 {
            self = .folder(String(text.dropFirst(7)))
        } else if text == "pipewire" {
            self = .pipeWire(nil)
        } else if text.hasPrefix("pipewire:"), text.count > 9 {
            self = .pipeWire(String(text.dropFirst(9)))
        } else if text.hasPrefix("/dev/") {
            self = .device(text)
        } else {
            throw .invalidRequest("unknown source \(text): use testpattern, folder:PATH, pipewire[:NODE] or a /dev/video* path")
        }
    }

    public var description: String {
        switch self {
        case .testPattern: return "testpattern"
        case let .folder(path): return "folder:\(path)"
        case let .device(path): return path
        case let .pipeWire(node): return node.map { "pipewire:\($0)" } ?? "pipewire"
        }
    }
}

/// Which processed frames are written to disk.
public enum SavePolicy: Sendable, Hashable {
    /// Every frame.
    case every
    /// Every n-th frame (the first, then every n-th after it).
    case everyNth(Int)
    /// None (status only).
    case none

    /// Parses `every`, `none` or a positive number.
    public init(parsing text: String) throws(CaptureError) {
        switch text {
        case "every": self = .every
        case "none": self = .none
        default:
            guard let n = Int(text), n > 0 else { throw .invalidRequest("--save takes every, none or a positive N, not \(text)") }
            self = n == 1 ? .every : .everyNth(n)
        }
    }

    /// Whether frame number `index` (0-based, in arrival order) is written.
    public func saves(_ index: UInt64) -> Bool {
        switch self {
        case .every: return true
        case let .everyNth(n): return index % UInt64(n) == 0
        case .none: return false
        }
    }
}

/// Everything `granite-cam` was asked to do, as plain values.
public struct CamSettings: Sendable, Hashable {
    /// The source.
    public var source: SourceSpec = .testPattern
    /// Format, size and rate to ask the source for.
    public var request = CaptureRequest(format: .auto, size: FrameSize(width: 640, height: 480), fps: 30)
    /// Output folder (`nil`: write nothing).
    public var outputDirectory: String?
    /// Which frames are written.
    public var save: SavePolicy = .none
    /// Stop after this many frames.
    public var frameLimit: UInt64?
    /// Stop after this many seconds.
    public var duration: Double?
    /// Status renders per second (the render step's ceiling).
    public var statusHz: Double = 4
    /// Run depth on every n-th frame (`nil`: no depth).
    public var depthEvery: Int?
    /// Write each depth map's colour view beside it (`depth-SEQ.preview.png`, viridis, yellow = near);
    /// off by default here, on by default in `granite-cam` (`--no-depth-preview`).
    public var depthPreview = false
    /// Frames the source may hold for a slow pipeline before dropping (newest kept).
    public var buffering = 2
    /// Pace the test pattern / folder at `request.fps` (false: as fast as the pipeline takes them).
    public var paced = true
    /// Live (drop at the source when behind, latest wins) or not (back-pressure, nothing lost);
    /// `nil`: as the source is — a camera and the paced test pattern are live, a folder and the
    /// unpaced test pattern are not (`--live` / `--no-live` override).
    public var live: Bool?
    /// Loop a folder source.
    public var loopFolder = false
    /// Seconds a source that went away is waited for before the run ends (`nil`: the source's
    /// own default: 30 s for a PipeWire node, without end for a V4L2 camera).
    public var reconnectTimeout: Double?
    /// Seconds a camera or PipeWire node that is open (linked) may take to send its first frame,
    /// at the start and after each reconnect, before the run ends with an error.
    public var firstFrameTimeout = 10.0
    /// Seconds between giving the allocator's free pages back to the kernel (`nil`: never).
    ///
    /// Frames are megabyte buffers freed on other threads than the ones that made them; glibc
    /// keeps the freed space in each thread's arena, so without this the resident size creeps up
    /// by about a frame's worth per arena over minutes (measured: +1.2 MB/min at 640x480).
    public var memoryTrimInterval: Double? = 10
    /// Allocations of at least this many bytes get their own mmap, returned to the kernel when
    /// freed (process-wide, set when the run starts; `nil`: glibc's default, which raises its
    /// threshold after the first large free and then serves frame buffers from the arenas).
    public var largeBlockMmapThreshold: Int? = 1 << 20

    /// A file the test pattern logs each frame's drawn counter and time to (`--capture-log`; the
    /// PipeWire benchmark joins it with the consumer's to measure latency). Nil: no log.
    public var captureLog: String?

    /// Default settings: the test pattern at 640x480, 30 fps, nothing saved.
    public init() {}

    /// Whether the run is live: ``live`` when given, else what the source is.
    public var isLive: Bool {
        if let live { return live }
        switch source {
        case .device, .pipeWire: return true
        case .folder: return false
        case .testPattern: return paced
        }
    }

    /// How the source hands frames over: drop the oldest when live, wait when not.
    public var delivery: FrameDelivery {
        isLive ? .live(buffering: buffering) : .lossless(buffering: buffering)
    }
}

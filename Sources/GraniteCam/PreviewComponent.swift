import Foundation
import Granite
import GraniteCapture
import GraniteMedia

/// The run's figures the preview page shows: taken from the status component's state at each
/// status tick and heard by the preview component (`hear`), which renders them to the page.
struct PreviewStatus: Sendable, Equatable {
    /// Frames reduced.
    var frames: UInt64 = 0
    /// Processed frames per second.
    var fps: Double?
    /// Capture-to-processed latency, ms.
    var latencyP50: Double?
    /// Capture-to-processed latency, ms.
    var latencyP99: Double?
    /// Frames lost (source gaps + a full pipeline).
    var dropped: UInt64 = 0
    /// Depth maps per second.
    var depthFPS: Double?
    /// Frames between the depth map the chain used and the frame it was used on.
    var depthAge: UInt64?
    /// Frames written.
    var saved: UInt64 = 0
    /// The format in effect.
    var format: String?
    /// The last fault.
    var fault: String?
    /// Whether the source has ended.
    var ended = false
    /// The status line (the same the terminal shows).
    var line = "starting"

    /// An empty status.
    init() {}
}

extension PreviewStatus {
    /// The figures of the status component's `state` (heard at each status tick).
    init(_ state: StatusState) {
        frames = state.frames
        fps = state.rate.rate
        latencyP50 = state.latency.percentile(50)
        latencyP99 = state.latency.percentile(99)
        dropped = state.sourceStats.dropped
        depthFPS = state.depthRate.rate
        depthAge = state.depthAge
        saved = state.saved
        format = state.format.map { "\($0)" }
        fault = state.lastFault
        ended = state.ended
        line = state.statusLine
    }
}

/// What a run's preview can do, fixed when the run starts.
struct PreviewSetup: Sendable, Equatable {
    /// Whether the run estimates depth (the page then shows the depth stream).
    var depthEnabled = false
    /// What the model's map is (``DepthStage/mapName``: `depth` or `mask`), for the page's caption.
    var mapName = "depth"
    /// Whether snapshots can be written (the run has `--out`).
    var canSnapshot = false
    /// The filter chain at the start, as text (nil: this run's chain cannot be changed).
    var chain: String?
    /// The live HLS playlist's path on the preview server (`--segments`), nil without one.
    var livePlaylist: String?
    /// The playlist's file on disk: the page is told of the playlist only once it lists three
    /// segments or has ended (``readyLivePlaylist``). Nil: the playlist is ready.
    var livePlaylistFile: String?

    /// A setup.
    init(depthEnabled: Bool = false, mapName: String = "depth", canSnapshot: Bool = false, chain: String? = nil,
         livePlaylist: String? = nil, livePlaylistFile: String? = nil) {
        self.depthEnabled = depthEnabled
        self.mapName = mapName
        self.canSnapshot = canSnapshot
        self.chain = chain
        self.livePlaylist = livePlaylist
        self.livePlaylistFile = livePlaylistFile
    }

    /// ``livePlaylist`` once a player can start it, else nil: the file must exist (the recorder
    /// writes it when the first segment closes; asked before, the video meets a 404) and list at
    /// least ``segmentsBeforePlay`` segments, or have ended — HLS players start three target
    /// durations from a live playlist's end, and Chromium's own player, started on a playlist of
    /// one segment, fails to parse it when it jumps to the live edge.
    var readyLivePlaylist: String? {
        guard let livePlaylist else { return nil }
        guard let livePlaylistFile else { return livePlaylist }
        guard let text = try? String(contentsOfFile: livePlaylistFile, encoding: .utf8) else { return nil }
        let segments = text.split(separator: "\n").filter { $0.hasPrefix("#EXTINF") }.count
        return segments >= Self.segmentsBeforePlay || text.contains("#EXT-X-ENDLIST") ? livePlaylist : nil
    }

    /// Segments a live playlist lists before the page plays it.
    static let segmentsBeforePlay = 3
}

/// The preview component's state: the status it shows and what became of the page's actions.
struct PreviewState: GraniteState {
    /// The last figures heard from the status component.
    var status = PreviewStatus()
    /// What the run's preview can do; its chain follows the answers to the chain box.
    var setup = PreviewSetup()
    /// Snapshot presses received from the page.
    var snapshotsAsked: UInt64 = 0
    /// Chains submitted from the page.
    var chainsAsked: UInt64 = 0
    /// Chains the pipeline took.
    var chainsApplied: UInt64 = 0
    /// Chains refused (parse errors); the old chain stayed.
    var chainsRejected: UInt64 = 0
    /// Why the last chain submitted was refused (nil once one is taken).
    var chainError: String?
    /// The last answer to a page action (`snapshot: the next frame is written to out/`).
    var notice: String?
    /// An empty state.
    init() {}

    /// A state for a run set up as `setup`.
    init(setup: PreviewSetup) { self.setup = setup }
}

/// The preview component's events: the page's actions going up, answers and status coming down.
enum PreviewEvents {
    /// The page's snapshot button (POST /snapshot). Quiet: the answer renders.
    struct SnapshotPressed: GraniteEvent {
        var behavior: GraniteEventBehavior { .quiet }
        /// The event.
        init() {}
    }

    /// The page's chain box (POST /chain). Quiet: the answer renders.
    struct ChainSubmitted: GraniteEvent {
        var behavior: GraniteEventBehavior { .quiet }
        /// The chain text as typed (`blur:sigma=2 | sobel`; empty: no filter).
        let text: String
        /// The event.
        init(text: String) { self.text = text }
    }

    /// The root's status at a tick (heard: the root's `hear`). Renders.
    struct Status: GraniteEvent {
        /// The status.
        let status: PreviewStatus
        /// The event.
        init(_ status: PreviewStatus) { self.status = status }
    }

    /// The root's answer to a chain submission (heard). Renders.
    struct ChainAnswered: GraniteEvent {
        /// The chain in use now (the new one, or the old one when refused).
        let chain: String?
        /// Why the submission was refused, nil when taken.
        let error: String?
    }

    /// The root's answer to a snapshot press (heard). Renders.
    struct SnapshotAnswered: GraniteEvent {
        /// What happens (`the next frame is written to DIR`, or why nothing can be).
        let message: String
    }
}

/// The page's snapshot button: counted, then contacted up to the root (which does what SIGUSR1 does).
struct SnapshotPressedExpedition: GraniteExpedition {
    func reduce(event: PreviewEvents.SnapshotPressed, state: inout PreviewState, connection: GraniteConnection) {
        state.snapshotsAsked += 1
        connection.request(CamEvents.Snapshot(), .contact)
    }
}

/// The page's chain box: counted, then contacted up to the root, which swaps the chain or refuses.
struct ChainSubmittedExpedition: GraniteExpedition {
    func reduce(event: PreviewEvents.ChainSubmitted, state: inout PreviewState, connection: GraniteConnection) {
        state.chainsAsked += 1
        connection.request(CamEvents.ChangeChain(text: event.text), .contact)
    }
}

struct PreviewStatusExpedition: GraniteExpedition {
    func reduce(event: PreviewEvents.Status, state: inout PreviewState, connection: GraniteConnection) {
        state.status = event.status
    }
}

struct ChainAnsweredExpedition: GraniteExpedition {
    func reduce(event: PreviewEvents.ChainAnswered, state: inout PreviewState, connection: GraniteConnection) {
        if let error = event.error {
            state.chainsRejected += 1
            state.chainError = error
        } else {
            state.chainsApplied += 1
            state.chainError = nil
        }
        state.setup.chain = event.chain
    }
}

struct SnapshotAnsweredExpedition: GraniteExpedition {
    func reduce(event: PreviewEvents.SnapshotAnswered, state: inout PreviewState, connection: GraniteConnection) {
        state.notice = "snapshot: \(event.message)"
    }
}

/// The preview's center: reduces what the root lets it hear (`.broadcastable`).
final class PreviewCenter: GraniteCenter<PreviewState> {
    override var expeditions: [GraniteBaseExpedition] {
        [SnapshotPressedExpedition().discovery(), ChainSubmittedExpedition().discovery(),
         PreviewStatusExpedition().discovery(), ChainAnsweredExpedition().discovery(),
         SnapshotAnsweredExpedition().discovery()]
    }

    override var behavior: GraniteEventBehavior { .broadcastable }
}

/// The preview page as a child of the root component: attached (its page actions reach the root
/// as `.contact` events) and listening, to the root (the actions' answers) and to the status
/// component (the figures at each tick).
///
/// ```
///  page ─POST /snapshot, /chain─► PreviewServer ─sendEvent─► PreviewComponent ─.contact─► CamComponent
///  page ◄─/events (SSE)─ PreviewServer ◄─render (JSON)─ PreviewComponent ◄─hear(answers)─┘
///                                                                       ◄─hear(Status)── StatusComponent
/// ```
struct PreviewComponent: GraniteComponent {
    /// The component's runtime.
    let command: GraniteCommand<PreviewCenter, PreviewState>
    /// The server it renders to and takes the page's actions from.
    let server: PreviewServer

    /// A component rendering to `server` for a run set up as `setup`; the server's POST routes
    /// become its events.
    init(server: PreviewServer, setup: PreviewSetup = PreviewSetup()) {
        let command = GraniteCommand<PreviewCenter, PreviewState>(state: PreviewState(setup: setup))
        self.command = command
        self.server = server
        server.setActionHandler { action in
            do {
                switch action {
                case .snapshot: try command.send(PreviewEvents.SnapshotPressed())
                case let .chain(text): try command.send(PreviewEvents.ChainSubmitted(text: text))
                }
                return true
            } catch {
                return false
            }
        }
    }

    /// The render step: the status and the actions' answers, as the page's JSON and the text line.
    var body: String {
        let state = self.state
        let json = PreviewJSON.encode(state)
        server.publish(status: state.status.line, json: json)
        return json
    }
}

/// The status as the JSON object the page reads (`/events`, `/status.json`), written by
/// Foundation's `JSONEncoder` (every field present, `null` when unknown; `/` escaped, so no
/// `</script>` can appear wherever the JSON lands).
enum PreviewJSON {
    /// The page's view of `state`.
    struct Payload: Encodable {
        let state: PreviewState

        enum Key: String, CodingKey {
            case frames, fps, latencyP50, latencyP99, dropped, depthEnabled, mapName, depthFPS, depthAge, saved,
                 canSnapshot, format, fault, chain, chainError, chainsApplied, chainsRejected,
                 snapshotsAsked, notice, ended, line, livePlaylist
        }

        func encode(to encoder: any Encoder) throws {
            let s = state.status, setup = state.setup
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(s.frames, forKey: .frames)
            try c.encode(PreviewJSON.rounded(s.fps), forKey: .fps)
            try c.encode(PreviewJSON.rounded(s.latencyP50), forKey: .latencyP50)
            try c.encode(PreviewJSON.rounded(s.latencyP99), forKey: .latencyP99)
            try c.encode(s.dropped, forKey: .dropped)
            try c.encode(setup.depthEnabled, forKey: .depthEnabled)
            try c.encode(setup.mapName, forKey: .mapName)
            try c.encode(PreviewJSON.rounded(s.depthFPS), forKey: .depthFPS)
            try c.encode(s.depthAge, forKey: .depthAge)
            try c.encode(s.saved, forKey: .saved)
            try c.encode(setup.canSnapshot, forKey: .canSnapshot)
            try c.encode(s.format, forKey: .format)
            try c.encode(s.fault, forKey: .fault)
            try c.encode(setup.chain, forKey: .chain)
            try c.encode(state.chainError, forKey: .chainError)
            try c.encode(state.chainsApplied, forKey: .chainsApplied)
            try c.encode(state.chainsRejected, forKey: .chainsRejected)
            try c.encode(state.snapshotsAsked, forKey: .snapshotsAsked)
            try c.encode(state.notice, forKey: .notice)
            try c.encode(s.ended, forKey: .ended)
            try c.encode(s.line, forKey: .line)
            try c.encode(setup.readyLivePlaylist, forKey: .livePlaylist)
        }
    }

    /// The page's JSON for `state`.
    static func encode(_ state: PreviewState) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(Payload(state: state)) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A figure with one decimal (nil and non-finite values stay unknown).
    static func rounded(_ value: Double?) -> Double? {
        guard let value, value.isFinite else { return nil }
        return (value * 10).rounded() / 10
    }
}

import Granite
import GraniteCapture
import GraniteMedia

/// What the preview page shows of a run: taken from the root's state at each status tick and
/// heard by the preview component (`hear`), which renders it to the page's event stream.
public struct PreviewStatus: Sendable, Equatable {
    /// Frames reduced.
    public var frames: UInt64 = 0
    /// Processed frames per second.
    public var fps: Double?
    /// Capture-to-processed latency, ms.
    public var latencyP50: Double?
    /// Capture-to-processed latency, ms.
    public var latencyP99: Double?
    /// Frames lost (source gaps + a full pipeline).
    public var dropped: UInt64 = 0
    /// Whether the run estimates depth (the page then shows the depth stream).
    public var depthEnabled = false
    /// Depth maps per second.
    public var depthFPS: Double?
    /// Frames between the depth map the chain used and the frame it was used on.
    public var depthAge: UInt64?
    /// Frames written.
    public var saved: UInt64 = 0
    /// Whether snapshots can be written (the run has `--out`).
    public var canSnapshot = false
    /// The format in effect.
    public var format: String?
    /// The last fault.
    public var fault: String?
    /// The filter chain in use, as text (nil: this run's chain cannot be changed).
    public var chain: String?
    /// Whether the source has ended.
    public var ended = false
    /// The status line (the same the terminal shows).
    public var line = "starting"

    /// An empty status.
    public init() {}
}

extension PreviewStatus {
    /// The status of the root's `state` over `pipeline`.
    init(_ state: CamState, pipeline: CamPipeline) {
        frames = state.frames
        fps = state.rate.rate
        latencyP50 = state.latency.percentile(50)
        latencyP99 = state.latency.percentile(99)
        dropped = state.sourceStats.dropped
        depthEnabled = pipeline.depth != nil
        depthFPS = state.depthRate.rate
        depthAge = state.depthAge
        saved = state.saved
        canSnapshot = pipeline.writer != nil
        format = state.format.map { "\($0)" }
        fault = state.lastFault
        chain = pipeline.liveChain?.text
        ended = state.ended
        line = state.statusLine
    }
}

/// The preview component's state: the status it shows and what became of the page's actions.
public struct PreviewState: GraniteState {
    /// The last status heard from the root.
    public var status = PreviewStatus()
    /// Snapshot presses received from the page.
    public var snapshotsAsked: UInt64 = 0
    /// Chains submitted from the page.
    public var chainsAsked: UInt64 = 0
    /// Chains the pipeline took.
    public var chainsApplied: UInt64 = 0
    /// Chains refused (parse errors); the old chain stayed.
    public var chainsRejected: UInt64 = 0
    /// Why the last chain submitted was refused (nil once one is taken).
    public var chainError: String?
    /// The last answer to a page action (`snapshot: the next frame is written to out/`).
    public var notice: String?
    /// An empty state.
    public init() {}
}

/// The preview component's events: the page's actions going up, answers and status coming down.
public enum PreviewEvents {
    /// The page's snapshot button (POST /snapshot). Quiet: the answer renders.
    public struct SnapshotPressed: GraniteEvent {
        public var behavior: GraniteEventBehavior { .quiet }
        /// The event.
        public init() {}
    }

    /// The page's chain box (POST /chain). Quiet: the answer renders.
    public struct ChainSubmitted: GraniteEvent {
        public var behavior: GraniteEventBehavior { .quiet }
        /// The chain text as typed (`blur:sigma=2 | sobel`; empty: no filter).
        public let text: String
        /// The event.
        public init(text: String) { self.text = text }
    }

    /// The root's status at a tick (heard: the root's `hear`). Renders.
    public struct Status: GraniteEvent {
        /// The status.
        public let status: PreviewStatus
        /// The event.
        public init(_ status: PreviewStatus) { self.status = status }
    }

    /// The root's answer to a chain submission (heard). Renders.
    public struct ChainAnswered: GraniteEvent {
        /// The chain in use now (the new one, or the old one when refused).
        public let chain: String?
        /// Why the submission was refused, nil when taken.
        public let error: String?
    }

    /// The root's answer to a snapshot press (heard). Renders.
    public struct SnapshotAnswered: GraniteEvent {
        /// What happens (`the next frame is written to DIR`, or why nothing can be).
        public let message: String
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
        state.status.chain = event.chain
    }
}

struct SnapshotAnsweredExpedition: GraniteExpedition {
    func reduce(event: PreviewEvents.SnapshotAnswered, state: inout PreviewState, connection: GraniteConnection) {
        state.notice = "snapshot: \(event.message)"
    }
}

/// The preview's center: reduces what the root lets it hear (`.broadcastable`).
public final class PreviewCenter: GraniteCenter<PreviewState> {
    public override var expeditions: [GraniteBaseExpedition] {
        [SnapshotPressedExpedition().discovery(), ChainSubmittedExpedition().discovery(),
         PreviewStatusExpedition().discovery(), ChainAnsweredExpedition().discovery(),
         SnapshotAnsweredExpedition().discovery()]
    }

    public override var behavior: GraniteEventBehavior { .broadcastable }
}

/// The preview page as a child of the root component: attached (its page actions reach the root
/// as `.contact` events) and listening (it hears the root's status and answers).
///
/// ```
///  page ─POST /snapshot, /chain─► PreviewServer ─sendEvent─► PreviewComponent ─.contact─► CamComponent
///  page ◄─/events (SSE)─ PreviewServer ◄─render (JSON)─ PreviewComponent ◄─hear(Status, answers)─┘
/// ```
public struct PreviewComponent: GraniteComponent {
    /// The component's runtime.
    public let command: GraniteCommand<PreviewCenter, PreviewState>
    /// The server it renders to and takes the page's actions from.
    let server: PreviewServer

    /// A component rendering to `server`; the server's POST routes become its events.
    public init(server: PreviewServer) {
        let command = GraniteCommand<PreviewCenter, PreviewState>()
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
    public var body: String {
        let state = self.state
        let json = PreviewJSON.encode(state)
        server.publish(status: state.status.line, json: json)
        return json
    }
}

/// The status as the JSON object the page reads (`/events`, `/status.json`).
enum PreviewJSON {
    static func encode(_ state: PreviewState) -> String {
        let s = state.status
        let fields: [(String, String)] = [
            ("frames", "\(s.frames)"), ("fps", number(s.fps)), ("latencyP50", number(s.latencyP50)),
            ("latencyP99", number(s.latencyP99)), ("dropped", "\(s.dropped)"), ("depthEnabled", "\(s.depthEnabled)"),
            ("depthFPS", number(s.depthFPS)), ("depthAge", s.depthAge.map { "\($0)" } ?? "null"), ("saved", "\(s.saved)"),
            ("canSnapshot", "\(s.canSnapshot)"), ("format", string(s.format)), ("fault", string(s.fault)),
            ("chain", string(s.chain)), ("chainError", string(state.chainError)), ("chainsApplied", "\(state.chainsApplied)"),
            ("chainsRejected", "\(state.chainsRejected)"), ("snapshotsAsked", "\(state.snapshotsAsked)"),
            ("notice", string(state.notice)), ("ended", "\(s.ended)"), ("line", string(s.line)),
        ]
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// A number with one decimal, or `null`.
    static func number(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "null" }
        return CamState.oneDecimal(value)
    }

    /// A JSON string (quotes, backslashes and control characters escaped), or `null`.
    static func string(_ value: String?) -> String {
        guard let value else { return "null" }
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "<": out += "\\u003c"   // never a `</script>` or markup, wherever the JSON lands
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

import Granite
import GraniteCapture
import GraniteMedia

// The root's side of the preview page's actions (and SIGUSR1): the events, their reducers, and
// the part of the root's state they change. Kept apart from CamComponent.swift on purpose.
//
//  page ─► PreviewComponent ─.contact─► root: Snapshot ─► snapshotPending ─► next frame written
//                                              ChangeChain ─.rebound─► capture relay (owns the chain)
//  page ◄─ PreviewComponent ◄─hear─ root ◄─.rebound─ ChainChanged ◄──────┘

extension CamEvents {
    /// Replace the filter chain while frames flow (the page's chain box). Quiet.
    struct ChangeChain: GraniteEvent {
        var behavior: GraniteEventBehavior { .quiet }
        /// The chain as text (`blur:sigma=2 | sobel`; empty: no filter).
        let text: String
    }

    /// The capture relay's answer to ``ChangeChain`` (rebound). Quiet.
    struct ChainChanged: GraniteEvent {
        var behavior: GraniteEventBehavior { .quiet }
        /// The chain in use now (the new one, or the old one when refused; nil: this run's chain
        /// cannot be changed).
        let chain: String?
        /// Why it was refused, nil when taken.
        let error: String?
    }
}

/// What the page's actions did to the run (a part of the root's state).
struct CamActionsState: Sendable, Equatable {
    /// Snapshots asked for (each writes the next frame; needs `--out`).
    var snapshots: UInt64 = 0
    /// Snapshots refused (no output folder).
    var snapshotsRefused: UInt64 = 0
    /// Chains swapped in.
    var chainChanges: UInt64 = 0
    /// Chains refused (they did not parse; the old one stayed).
    var chainsRefused: UInt64 = 0
}

/// A snapshot: the next frame is written whatever the save policy; the preview hears what happens.
struct SnapshotExpedition: GraniteExpedition {
    func reduce(event: CamEvents.Snapshot, state: inout CamState, connection: GraniteConnection) {
        guard let folder = state.routing.outFolder else {
            state.actions.snapshotsRefused += 1
            connection.hear(event: PreviewEvents.SnapshotAnswered(message: "no output folder: start granite-cam with --out DIR"))
            return
        }
        state.actions.snapshots += 1
        state.snapshotPending = true
        connection.hear(event: PreviewEvents.SnapshotAnswered(message: "the next frame is written to \(folder)"))
    }
}

/// A new chain: asked of the capture relay, which owns the stages.
struct ChangeChainExpedition: GraniteExpedition {
    func reduce(event: CamEvents.ChangeChain, state: inout CamState, connection: GraniteConnection) {
        connection.request(CaptureRelayEvents.ChangeChain(text: event.text), .rebound)
    }
}

/// The capture relay's answer: counted, and heard by the preview.
struct ChainChangedExpedition: GraniteExpedition {
    func reduce(event: CamEvents.ChainChanged, state: inout CamState, connection: GraniteConnection) {
        if event.error == nil { state.actions.chainChanges += 1 } else { state.actions.chainsRefused += 1 }
        connection.hear(event: PreviewEvents.ChainAnswered(chain: event.chain, error: event.error))
    }
}

/// The capture relay's side: builds the new chain and swaps it in, or refuses with the parse
/// error (the old chain stays); answers the root.
struct ChangeChainCaptureExpedition: GraniteExpedition {
    let resources: CaptureResources

    func reduce(event: CaptureRelayEvents.ChangeChain, state: inout CaptureRelayState, connection: GraniteConnection) {
        guard let chain = resources.parts.value?.liveChain else {
            connection.request(CamEvents.ChainChanged(chain: nil, error: "this run's filter chain cannot be changed"), .rebound)
            return
        }
        do {
            let text = try chain.replace(with: event.text)
            state.chainChanges += 1
            connection.request(CamEvents.ChainChanged(chain: text, error: nil), .rebound)
        } catch {
            connection.request(CamEvents.ChainChanged(chain: chain.text, error: "\(error)"), .rebound)
        }
    }
}

extension CaptureRelayEvents {
    /// Replace the filter chain (from the root). Quiet.
    struct ChangeChain: GraniteEvent {
        var behavior: GraniteEventBehavior { .quiet }
        /// The chain as text.
        let text: String
    }
}

extension CaptureParts {
    /// The replaceable chain among the stages, when the run has one.
    var liveChain: LiveChainStage? { stages.lazy.compactMap { $0 as? LiveChainStage }.first }
}

extension CamPipeline {
    /// The replaceable chain among the stages, when the run has one.
    var liveChain: LiveChainStage? { stages.lazy.compactMap { $0 as? LiveChainStage }.first }
}

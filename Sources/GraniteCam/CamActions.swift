import Granite
import GraniteCapture
import GraniteMedia

// The root's side of the preview page's actions (and SIGUSR1): two events, their reducers, and
// the part of the root's state they change. Kept apart from CamComponent.swift on purpose.

extension CamEvents {
    /// Write the next processed frame whatever the save policy (the page's snapshot button,
    /// SIGUSR1). Quiet: the status shows the result; the preview hears the answer.
    struct Snapshot: GraniteEvent {
        var behavior: GraniteEventBehavior { .quiet }
        /// The event.
        init() {}
    }

    /// Replace the filter chain while frames flow (the page's chain box). Quiet.
    struct ChangeChain: GraniteEvent {
        var behavior: GraniteEventBehavior { .quiet }
        /// The chain as text (`blur:sigma=2 | sobel`; empty: no filter).
        let text: String
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

/// A snapshot: the pipeline writes its next frame; the preview hears what happens.
struct SnapshotExpedition: GraniteExpedition {
    func reduce(event: CamEvents.Snapshot, state: inout CamState, connection: GraniteConnection) {
        guard let pipeline = state.handle?.pipeline else { return }
        guard let writer = pipeline.writer else {
            state.actions.snapshotsRefused += 1
            connection.hear(event: PreviewEvents.SnapshotAnswered(message: "no output folder: start granite-cam with --out DIR"))
            return
        }
        state.actions.snapshots += 1
        pipeline.requestSnapshot()
        connection.hear(event: PreviewEvents.SnapshotAnswered(message: "the next frame is written to \(writer.directory)"))
    }
}

/// A new chain: built and swapped in, or refused with the parse error (the old chain stays).
struct ChangeChainExpedition: GraniteExpedition {
    func reduce(event: CamEvents.ChangeChain, state: inout CamState, connection: GraniteConnection) {
        guard let pipeline = state.handle?.pipeline else { return }
        guard let chain = pipeline.liveChain else {
            state.actions.chainsRefused += 1
            connection.hear(event: PreviewEvents.ChainAnswered(chain: nil, error: "this run's filter chain cannot be changed"))
            return
        }
        do {
            let text = try chain.replace(with: event.text)
            state.actions.chainChanges += 1
            connection.hear(event: PreviewEvents.ChainAnswered(chain: text, error: nil))
        } catch {
            state.actions.chainsRefused += 1
            connection.hear(event: PreviewEvents.ChainAnswered(chain: chain.text, error: "\(error)"))
        }
    }
}

extension CamPipeline {
    /// The replaceable chain among the stages, when the run has one.
    var liveChain: LiveChainStage? { stages.lazy.compactMap { $0 as? LiveChainStage }.first }
}

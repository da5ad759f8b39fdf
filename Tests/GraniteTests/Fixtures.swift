import Granite
import GraniteSync

// A small world for the tests: a parent with listening/attached children of every behaviour,
// a relay that answers (rebound) and broadcasts, shared dependencies.

/// An event whose behaviour and beam are chosen per test, to cover the whole matrix.
struct Probe: GraniteEvent {
    var behavior: GraniteEventBehavior = .none
    var beam: GraniteBeamType = .none
    var tag = 0
}

/// Asks the component that reduces it to request `probe` along `beam`.
struct Emit: GraniteEvent {
    var probe: Probe
    var beam: GraniteBeamType
    var behavior: GraniteEventBehavior { .quiet }
}

struct NodeState: GraniteState {
    var probes: [Int] = []
    var lastBehavior: GraniteEventBehavior?
}

struct ProbeExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Probe, state: inout NodeState, connection: GraniteConnection) {
        state.probes.append(event.tag)
        state.lastBehavior = event.behavior
    }
}

struct EmitExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Emit, state: inout NodeState, connection: GraniteConnection) {
        if event.beam == .broadcast {
            connection.hear(event: event.probe)
        } else {
            connection.request(event.probe, event.beam)
        }
    }
}

/// Asks the relay for a reply; the relay rebounds `Probe(tag:)` to the asker.
struct Ask: GraniteEvent {
    var tag: Int
    var replyBehavior: GraniteEventBehavior = .none
    var behavior: GraniteEventBehavior { .quiet }
    var beam: GraniteBeamType { .rebound }
}

struct RelayState: GraniteState {
    var asked: [Int] = []
}

struct AskExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Ask, state: inout RelayState, connection: GraniteConnection) {
        state.asked.append(event.tag)
        connection.request(Probe(behavior: event.replyBehavior, tag: event.tag), .rebound)
    }
}

/// Makes the relay broadcast `Probe(tag:)` to its hosts from inside its reducer.
struct Announce: GraniteEvent {
    var tag: Int
}

struct AnnounceExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Announce, state: inout RelayState, connection: GraniteConnection) {
        connection.request(Probe(behavior: .quiet, tag: event.tag), .broadcast)
    }
}

final class EchoRelayCenter: GraniteCenter<RelayState> {
    override var expeditions: [GraniteBaseExpedition] { [AskExpedition.Discovery(), AnnounceExpedition.Discovery()] }
}

/// Counts lifecycle calls of every EchoRelay instance (one counter per test via `id`).
final class Lifecycle: Sendable {
    let calls = Locked<[String]>([])
    func record(_ call: String) { calls.withLock { $0.append(call) } }
    var log: [String] { calls.withLock { $0 } }
}

struct EchoRelay: GraniteRelay {
    let command = GraniteService<EchoRelayCenter, RelayState>()
    let lifecycle = Lifecycle()
    func setup() { lifecycle.record("setup") }
    func cancel() { lifecycle.record("cancel") }
    func clean() { lifecycle.record("clean") }
}

/// A center whose behaviour, relay and expeditions are set per class.
class NodeCenter: GraniteCenter<NodeState> {
    override var expeditions: [GraniteBaseExpedition] { [ProbeExpedition.Discovery(), EmitExpedition.Discovery()] }
}

final class BroadcastableCenter: NodeCenter {
    override var behavior: GraniteEventBehavior { .broadcastable }
}

final class QuietCenter: NodeCenter {
    override var behavior: GraniteEventBehavior { .quiet }
}

final class PassthroughCenter: NodeCenter {
    override var behavior: GraniteEventBehavior { .passthrough }
}

final class NoneCenter: NodeCenter {
    override var behavior: GraniteEventBehavior { .none }
}

/// Handles only `Emit` (so probes contacted through it bubble further up).
final class RelayOnlyCenter: GraniteCenter<NodeState> {
    override var expeditions: [GraniteBaseExpedition] { [EmitExpedition.Discovery()] }
}

/// A component over any center of NodeState; its body counts as the render step.
struct Node<C: GraniteCenter<NodeState>>: GraniteComponent {
    let command: GraniteCommand<C, NodeState>
    init(state: NodeState = .init()) { command = .init(state: state) }
    var body: String { "probes: \(state.probes)" }
}

/// A host of a shared EchoRelay (broadcastable, so broadcasts reach it).
final class HostCenter: GraniteCenter<NodeState> {
    let echo: EchoRelay
    required init() { echo = HostCenter.relay.withLock { $0 } ?? EchoRelay() }
    override var expeditions: [GraniteBaseExpedition] { [ProbeExpedition.Discovery(), EmitExpedition.Discovery()] }
    override var behavior: GraniteEventBehavior { .broadcastable }
    /// The relay the next HostCenter will host (tests set it so several hosts share one).
    static let relay = Locked<EchoRelay?>(nil)
}

/// Same as HostCenter but quiet: it hosts the relay yet takes no broadcasts.
final class QuietHostCenter: GraniteCenter<NodeState> {
    let echo: EchoRelay
    required init() { echo = HostCenter.relay.withLock { $0 } ?? EchoRelay() }
    override var expeditions: [GraniteBaseExpedition] { [ProbeExpedition.Discovery(), EmitExpedition.Discovery()] }
}

import Granite
import GraniteTesting
import GraniteSync
import XCTest

/// Effects (contact, hear, rebound, follow-ups) run after the reducer's state is published.
struct Bump: GraniteEvent { var behavior: GraniteEventBehavior { .quiet } }
struct Bumped: GraniteEvent {
    var beam: GraniteBeamType { .contact }
    var behavior: GraniteEventBehavior { .quiet }
}

struct CounterState: GraniteState {
    var bumps = 0
    var childBumpsSeenByParent: [Int] = []
}

/// Lets the parent read the child's public state from inside its reducer.
let childProbe = Locked<(@Sendable () -> Int)?>(nil)

struct BumpExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Bump, state: inout CounterState, connection: GraniteConnection) {
        state.bumps += 1
        connection.request(Bumped())
    }
}

struct BumpedExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Bumped, state: inout CounterState, connection: GraniteConnection) {
        if let probe = childProbe.withLock({ $0 }) { state.childBumpsSeenByParent.append(probe()) }
    }
}

final class BumpCenter: GraniteCenter<CounterState> {
    override var expeditions: [GraniteBaseExpedition] { [BumpExpedition.Discovery(), BumpedExpedition.Discovery()] }
}

struct BumpNode: GraniteComponent {
    let command = GraniteCommand<BumpCenter, CounterState>()
    var body: Int { state.bumps }
}

final class EffectOrderTests: XCTestCase {
    func testContactIsPerformedAfterTheStateIsPublished() async throws {
        let parent = BumpNode()
        let child = BumpNode().attach(to: parent.command)
        try parent.mount(in: GraniteRuntime())
        childProbe.withLock { $0 = { child.state.bumps } }
        defer { childProbe.withLock { $0 = nil } }
        for _ in 0..<50 { try child.sendEvent(Bump()) }
        await child.command.settle()
        await parent.command.settle()
        XCTAssertEqual(parent.state.childBumpsSeenByParent, Array(1...50),
                       "the parent saw each bump's state when its contact arrived")
    }
}

/// A relay reducer that hands its connection to a background task (a capture pump does this).
struct StartPump: GraniteEvent {
    let count: Int
    var behavior: GraniteEventBehavior { .quiet }
}

struct StartPumpExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: StartPump, state: inout RelayState, connection: GraniteConnection) {
        let count = event.count
        Task.detached {
            for i in 0..<count { connection.request(Probe(behavior: .quiet, tag: i), .broadcast) }
        }
    }
}

final class PumpRelayCenter: GraniteCenter<RelayState> {
    override var expeditions: [GraniteBaseExpedition] { [StartPumpExpedition.Discovery()] }
}

struct PumpRelay: GraniteRelay {
    let command = GraniteService<PumpRelayCenter, RelayState>()
}

final class PumpHostCenter: GraniteCenter<NodeState> {
    let pump = PumpRelay()
    override var expeditions: [GraniteBaseExpedition] { [ProbeExpedition.Discovery()] }
    override var behavior: GraniteEventBehavior { .broadcastable }
}

final class EscapedConnectionTests: XCTestCase {
    func testAConnectionKeptPastItsReducerActsAtOnce() async throws {
        let node = try Node<PumpHostCenter>().mount(in: GraniteRuntime())
        try node.center.pump.sendEvent(StartPump(count: 500))
        let all = await eventually { node.state.probes.count == 500 }
        XCTAssertTrue(all, "got \(node.state.probes.count) of 500 broadcasts from the escaped connection")
        XCTAssertEqual(node.state.probes, Array(0..<500))
        XCTAssertEqual(node.command.renderCount, 1)
    }
}

import Dispatch
import Granite
import GraniteTesting
import Synchronization
import XCTest

struct GateState: GraniteState {
    var passed = 0
}

/// Blocks the relay's executor until the gate opens.
struct Block: GraniteEvent {
    let gate: Gate
    var behavior: GraniteEventBehavior { .quiet }
}

final class Gate: Sendable {
    let semaphore = DispatchSemaphore(value: 0)
    let entered = Atomic<Bool>(false)
}

struct BlockExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Block, state: inout GateState, connection: GraniteConnection) {
        event.gate.entered.store(true, ordering: .sequentiallyConsistent)
        event.gate.semaphore.wait()
        state.passed += 1
    }
}

final class GateCenter: GraniteCenter<GateState> {
    override var expeditions: [GraniteBaseExpedition] { [BlockExpedition.Discovery()] }
}

struct GateRelay: GraniteRelay {
    let command = GraniteService<GateCenter, GateState>()
}

final class GateHostCenter: GraniteCenter<NodeState> {
    let gate = GateRelay()
    override var expeditions: [GraniteBaseExpedition] { [ProbeExpedition.Discovery(), EmitExpedition.Discovery()] }
}

final class RelayTests: XCTestCase {
    /// A relay busy on its own executor never blocks the component that asked it.
    func testRelayRunsOnItsOwnExecutorAndNeverBlocksTheComponent() async throws {
        let node = try Node<GateHostCenter>().mount(in: GraniteRuntime())
        let gate = Gate()
        try node.sendEvent(Block(gate: gate), .rebound)
        let entered = await eventually { gate.entered.load(ordering: .sequentiallyConsistent) }
        XCTAssertTrue(entered)
        for i in 0..<50 { try node.sendEvent(Probe(behavior: .quiet, tag: i)) }
        await node.command.settle()
        XCTAssertEqual(node.state.probes, Array(0..<50), "the component kept reducing while its relay was blocked")
        XCTAssertEqual(node.center.gate.state.passed, 0)
        gate.semaphore.signal()
        await node.center.gate.command.settle()
        XCTAssertEqual(node.center.gate.state.passed, 1)
    }

    /// setup once for the first host; cancel then clean only when the last host leaves —
    /// never on a render.
    func testLifecycleFollowsHostsNotRenders() async throws {
        let relay = EchoRelay()
        let runtime = GraniteRuntime()
        let (a, b) = sharingRelay(relay) { (Node<HostCenter>(), Node<HostCenter>()) }
        try a.mount(in: runtime)
        try b.mount(in: runtime)
        XCTAssertEqual(relay.lifecycle.log, ["setup"])
        for i in 0..<20 { try a.sendEvent(Probe(behavior: .none, tag: i)) }  // 20 renders
        await a.command.settle()
        XCTAssertEqual(a.command.renderCount, 21)
        XCTAssertEqual(relay.lifecycle.log, ["setup"], "renders never touch the relay")
        a.unmount()
        XCTAssertEqual(relay.lifecycle.log, ["setup"], "b still hosts it")
        b.unmount()
        XCTAssertEqual(relay.lifecycle.log, ["setup", "cancel", "clean"])
        XCTAssertEqual(relay.command.hostCount, 0)
    }

    /// `.shared` gives every center the same relay instance.
    func testSharedRelayIsOneInstance() {
        XCTAssertTrue(EchoRelay.shared.command === EchoRelay.shared.command)
        XCTAssertFalse(EchoRelay().command === EchoRelay.shared.command)
    }

    /// A rebound request with no hosted relay for it is reported, naming the component.
    func testReboundWithoutRelayIsReported() async throws {
        let runtime = GraniteRuntime()
        let node = try Node<QuietCenter>().mount(in: runtime)
        try node.sendEvent(Ask(tag: 1), .rebound)
        XCTAssertEqual(runtime.errors, [.noRelay(event: String(reflecting: Ask.self),
                                                 component: String(reflecting: QuietCenter.self))])
    }
}

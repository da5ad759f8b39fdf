import Granite
import GraniteTesting
import XCTest

/// Every event behaviour × every beam: where the event lands and how many renders it causes.
final class BehaviorBeamTests: XCTestCase {
    /// Beam `.none`: a follow-up to the component itself.
    func testNoneBeamReachesSelfAndRendersByBehavior() async throws {
        for (i, behavior) in allBehaviors.enumerated() {
            let store = try await GraniteTestStore(Node<BroadcastableCenter>())
            await store.send(Emit(probe: Probe(behavior: behavior, tag: i), beam: .none), renders: 0)
            await store.receive(Probe.self, renders: expectedRenders(behavior)) {
                $0.probes = [i]
                $0.lastBehavior = behavior
            }
            await store.finish()
        }
    }

    /// Beam `.contact`: the child's request reaches the parent it attached to.
    func testContactBeamReachesParentAndRendersParentByBehavior() async throws {
        for (i, behavior) in allBehaviors.enumerated() {
            let parent = Node<QuietCenter>()
            let child = Node<QuietCenter>().attach(to: parent.command)
            let store = try await GraniteTestStore(parent)
            let childRenders = child.command.renderCount
            XCTAssertEqual(childRenders, 1, "mounting the parent mounts (and renders) the attached child once")
            try child.sendEvent(Emit(probe: Probe(behavior: behavior, tag: i), beam: .contact))
            await store.receive(Probe.self, renders: expectedRenders(behavior)) {
                $0.probes = [i]
                $0.lastBehavior = behavior
            }
            await store.finish()
            XCTAssertEqual(child.command.renderCount, childRenders, "the child reduced a quiet Emit: no render")
            XCTAssertEqual(child.state.probes, [], "contact goes up, not to the sender")
        }
    }

    /// Beam `.rebound`: the relay answers the one component that asked, with the reply's behaviour.
    func testReboundBeamAnswersTheAskerOnly() async throws {
        for (i, behavior) in allBehaviors.enumerated() {
            let relay = EchoRelay()
            let (asker, other) = sharingRelay(relay) { (Node<HostCenter>(), Node<HostCenter>()) }
            let store = try await GraniteTestStore(asker)
            try other.mount(in: store.runtime)
            let otherRenders = other.command.renderCount
            try asker.sendEvent(Ask(tag: i, replyBehavior: behavior), .rebound)
            await store.receive(Probe.self, renders: expectedRenders(behavior)) {
                $0.probes = [i]
                $0.lastBehavior = behavior
            }
            await store.finish()
            await relay.command.settle()
            XCTAssertEqual(relay.state.asked, [i])
            XCTAssertEqual(other.state.probes, [], "a rebound reply reaches only the asker")
            XCTAssertEqual(other.command.renderCount, otherRenders)
        }
    }

    /// Beam `.broadcast` from a relay: every broadcastable host reduces it; quiet hosts do not.
    func testBroadcastBeamReachesEveryBroadcastableHost() async throws {
        for (i, behavior) in allBehaviors.enumerated() {
            let relay = EchoRelay()
            let runtime = GraniteRuntime()
            let (a, b, quiet) = sharingRelay(relay) { (Node<HostCenter>(), Node<HostCenter>(), Node<QuietHostCenter>()) }
            let store = try await GraniteTestStore(a, runtime: runtime)
            try b.mount(in: runtime)
            try quiet.mount(in: runtime)
            XCTAssertEqual(relay.command.hostCount, 3)
            let delivered = relay.command.broadcast(Probe(behavior: behavior, tag: i))
            XCTAssertEqual(delivered, 2, "two broadcastable hosts, one quiet host")
            await store.receive(Probe.self, renders: expectedRenders(behavior)) {
                $0.probes = [i]
                $0.lastBehavior = behavior
            }
            await store.finish()
            await b.command.settle()
            XCTAssertEqual(b.state.probes, [i])
            XCTAssertEqual(b.command.renderCount, 1 + expectedRenders(behavior))
            XCTAssertEqual(quiet.state.probes, [])
        }
    }

    /// A relay's broadcast also reaches down its host's listening children (the seeds: a relay
    /// higher in the tree reaches every child ready to hear broadcasts): broadcastable children
    /// reduce it and pass it on, passthrough ones only pass it on, quiet and `.none` ones stop it.
    func testBroadcastReachesTheBroadcastableChildrenListeningToAHost() async throws {
        let relay = EchoRelay()
        let runtime = GraniteRuntime()
        let host = sharingRelay(relay) { Node<HostCenter>() }
        let child = Node<BroadcastableCenter>().listen(to: host.command)
        let passthrough = Node<PassthroughCenter>().listen(to: host.command)
        let grandchild = Node<BroadcastableCenter>().listen(to: passthrough.command)
        let quiet = Node<QuietCenter>().listen(to: host.command)
        let none = Node<NoneCenter>().listen(to: host.command)
        let belowQuiet = Node<BroadcastableCenter>().listen(to: quiet.command)
        let attachedOnly = Node<BroadcastableCenter>().attach(to: host.command)
        try host.mount(in: runtime)
        let delivered = relay.command.broadcast(Probe(behavior: .quiet, tag: 3))
        XCTAssertEqual(delivered, 3, "the host, its broadcastable child, and the one below the passthrough child")
        await runtime.drain()
        XCTAssertEqual(host.state.probes, [3])
        XCTAssertEqual(child.state.probes, [3])
        XCTAssertEqual(grandchild.state.probes, [3])
        XCTAssertEqual(passthrough.state.probes, [], "passthrough forwards without reducing")
        XCTAssertEqual(quiet.state.probes, [])
        XCTAssertEqual(none.state.probes, [], "`.none` reduces heard events but takes no broadcasts")
        XCTAssertEqual(belowQuiet.state.probes, [], "a quiet child stops the broadcast for its own listeners")
        XCTAssertEqual(attachedOnly.state.probes, [], "attach alone is the way up, not a subscription")
        XCTAssertEqual(child.command.renderCount, 1, "a quiet broadcast does not render the child")
        host.unmount()
    }

    /// A relay's reducer can broadcast too (beam `.broadcast` through its connection).
    func testRelayReducerBroadcastsThroughConnection() async throws {
        let relay = EchoRelay()
        let (a, b) = sharingRelay(relay) { (Node<HostCenter>(), Node<HostCenter>()) }
        let store = try await GraniteTestStore(a)
        try b.mount(in: store.runtime)
        try relay.sendEvent(Announce(tag: 7))
        await store.receive(Probe.self, renders: 0) {
            $0.probes = [7]
            $0.lastBehavior = .quiet
        }
        await store.finish()
        let reached = await eventually { b.state.probes == [7] }
        XCTAssertTrue(reached)
    }

    /// Sending an event nobody reduces is a typed error naming the event and the component.
    func testEventWithNoExpeditionIsATypedError() throws {
        let relay = EchoRelay()
        XCTAssertThrowsError(try relay.sendEvent(Emit(probe: Probe(), beam: .none))) { error in
            guard case let .noExpedition(event, component) = error as? GraniteError else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertTrue(event.hasSuffix("Emit"), event)
            XCTAssertTrue(component.hasSuffix("EchoRelayCenter"), component)
        }
        let node = try Node<RelayOnlyCenter>().mount(in: GraniteRuntime())
        XCTAssertThrowsError(try node.sendEvent(Probe())) { error in
            XCTAssertEqual((error as? GraniteError)?.description.contains("has no expedition for event"), true)
        }
    }
}

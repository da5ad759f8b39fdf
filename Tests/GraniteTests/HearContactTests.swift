import Granite
import GraniteTesting
import XCTest

/// `listen`/`hear` fan-out down the tree and `attach`/`.contact` bubbling up it.
final class HearContactTests: XCTestCase {
    /// A parent hears down: broadcastable and `.none` children reduce, quiet ones ignore,
    /// passthrough ones forward to their own listeners without reducing.
    func testHearFansOutByChildBehavior() async throws {
        let parent = Node<QuietCenter>()
        let broadcastable = Node<BroadcastableCenter>().listen(to: parent.command)
        let none = Node<NoneCenter>().listen(to: parent.command)
        let quiet = Node<QuietCenter>().listen(to: parent.command)
        let passthrough = Node<PassthroughCenter>().listen(to: parent.command)
        let grandchild = Node<BroadcastableCenter>().listen(to: passthrough.command)
        let quietGrandchild = Node<QuietCenter>().listen(to: passthrough.command)
        let store = try await GraniteTestStore(parent)
        let mountRenders = [broadcastable.command.renderCount, none.command.renderCount, quiet.command.renderCount,
                            grandchild.command.renderCount, quietGrandchild.command.renderCount]
        XCTAssertEqual(mountRenders, [1, 1, 1, 1, 1], "each child mounted with its parent and rendered once")
        XCTAssertEqual(passthrough.command.renderCount, 1)

        await store.send(Emit(probe: Probe(behavior: .none, tag: 1), beam: .broadcast), renders: 0)
        await store.finish()
        await broadcastable.command.settle()
        await grandchild.command.settle()
        XCTAssertEqual(broadcastable.state.probes, [1])
        XCTAssertEqual(broadcastable.command.renderCount, 2)
        XCTAssertEqual(none.state.probes, [1])
        XCTAssertEqual(quiet.state.probes, [], "quiet children ignore what they hear")
        XCTAssertEqual(quiet.command.renderCount, 1)
        XCTAssertEqual(passthrough.state.probes, [], "passthrough forwards without reducing")
        XCTAssertEqual(passthrough.command.renderCount, 1)
        XCTAssertEqual(grandchild.state.probes, [1], "reached through the passthrough child")
        XCTAssertEqual(quietGrandchild.state.probes, [])
        XCTAssertEqual(parent.state.probes, [], "hear goes down only")
    }

    /// A quiet event heard by a hundred children renders none of them.
    func testQuietHearFanOutRendersNobody() async throws {
        let parent = Node<QuietCenter>()
        let children = (0..<100).map { _ in Node<BroadcastableCenter>().listen(to: parent.command) }
        try parent.mount(in: GraniteRuntime())
        try parent.sendEvent(Emit(probe: Probe(behavior: .quiet, tag: 5), beam: .broadcast))
        for child in children {
            await child.command.settle()
            XCTAssertEqual(child.state.probes, [5])
            XCTAssertEqual(child.command.renderCount, 1, "only the mount render")
        }
    }

    /// `.contact` skips an attached parent with no expedition for the event and reaches the grandparent.
    func testContactBubblesUpWhileUnhandled() async throws {
        let grandparent = Node<QuietCenter>()
        let parent = Node<RelayOnlyCenter>().attach(to: grandparent.command)
        let child = Node<QuietCenter>().attach(to: parent.command)
        let store = try await GraniteTestStore(grandparent)
        try child.sendEvent(Emit(probe: Probe(behavior: .quiet, tag: 3), beam: .contact))
        await store.receive(Probe.self, renders: 0) {
            $0.probes = [3]
            $0.lastBehavior = .quiet
        }
        await store.finish()
        XCTAssertEqual(child.state.probes, [])
    }

    /// A contact nobody handles is reported with the route it tried.
    func testUnhandledContactIsReportedWithItsRoute() async throws {
        let runtime = GraniteRuntime()
        let top = Node<RelayOnlyCenter>()
        let child = Node<QuietCenter>().attach(to: top.command)
        try top.mount(in: runtime)
        try child.sendEvent(Emit(probe: Probe(tag: 9), beam: .contact))
        await child.command.settle()
        guard case let .unhandledContact(event, from, route)? = runtime.errors.first else {
            return XCTFail("expected an unhandled-contact error, got \(runtime.errors)")
        }
        XCTAssertTrue(event.hasSuffix("Probe"))
        XCTAssertTrue(from.hasSuffix("QuietCenter"))
        XCTAssertEqual(route.count, 1)
        XCTAssertTrue(route[0].hasSuffix("RelayOnlyCenter"))
    }

    /// Attach without listen: contact goes up, but hear does not come down.
    func testAttachAloneDoesNotListen() async throws {
        let parent = Node<QuietCenter>()
        let child = Node<BroadcastableCenter>().attach(to: parent.command)
        try parent.mount(in: GraniteRuntime())
        try parent.sendEvent(Emit(probe: Probe(tag: 1), beam: .broadcast))
        await parent.command.settle()
        await child.command.settle()
        XCTAssertEqual(child.state.probes, [])
        try child.sendEvent(Emit(probe: Probe(tag: 2), beam: .contact))
        await parent.command.settle()
        XCTAssertEqual(parent.state.probes, [2])
    }

    /// A child wired after its parent mounted is mounted at once.
    func testLateChildMountsImmediately() async throws {
        let parent = try Node<QuietCenter>().mount(in: GraniteRuntime())
        let child = Node<BroadcastableCenter>().listen(to: parent.command)
        XCTAssertTrue(child.command.isMounted)
        try parent.sendEvent(Emit(probe: Probe(tag: 4), beam: .broadcast))
        await child.command.settle()
        XCTAssertEqual(child.state.probes, [4])
    }
}

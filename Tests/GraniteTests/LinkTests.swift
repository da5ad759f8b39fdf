import Granite
import GraniteTesting
import XCTest

struct LinkState: GraniteState {
    var prepared = 0
    var appeared = 0
    var renderedTicks = 0
    var value = 0
    var valueChanges = 0
}

struct Prepare: GraniteEvent { var behavior: GraniteEventBehavior { .quiet } }
struct Appeared: GraniteEvent { var behavior: GraniteEventBehavior { .quiet } }
struct RenderTick: GraniteEvent { var behavior: GraniteEventBehavior { .none } }
struct SetValue: GraniteEvent { var value: Int }
struct ValueChanged: GraniteEvent { var behavior: GraniteEventBehavior { .quiet } }

struct PrepareExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Prepare, state: inout LinkState, connection: GraniteConnection) { state.prepared += 1 }
}
struct AppearedExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Appeared, state: inout LinkState, connection: GraniteConnection) { state.appeared += 1 }
}
struct RenderTickExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: RenderTick, state: inout LinkState, connection: GraniteConnection) { state.renderedTicks += 1 }
}
struct SetValueExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: SetValue, state: inout LinkState, connection: GraniteConnection) { state.value = event.value }
}
struct ValueChangedExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: ValueChanged, state: inout LinkState, connection: GraniteConnection) { state.valueChanges += 1 }
}

class LinkCenter: GraniteCenter<LinkState> {
    override var expeditions: [GraniteBaseExpedition] {
        [PrepareExpedition.Discovery(), AppearedExpedition.Discovery(), RenderTickExpedition.Discovery(),
         SetValueExpedition.Discovery(), ValueChangedExpedition.Discovery()]
    }
    override var links: [GraniteLink] {
        [.onAppear(Prepare(), .dependant), .onAppear(Appeared(), .onAppear),
         .onChange(of: \LinkState.value, ValueChanged())]
    }
}

/// Adds an `.always` link whose event renders: it must not loop.
final class AlwaysLinkCenter: LinkCenter {
    override var links: [GraniteLink] { super.links + [.onAppear(RenderTick(), .always)] }
}

struct LinkNode<C: GraniteCenter<LinkState>>: GraniteComponent {
    let command = GraniteCommand<C, LinkState>()
    var body: Int { state.value }
}

final class LinkTests: XCTestCase {
    func testAppearLinksFireOnceAndChangeLinksFireOnChangeOnly() async throws {
        let store = try await GraniteTestStore(LinkNode<LinkCenter>())
        await store.receive(Prepare.self, renders: 0) { $0.prepared = 1 }
        await store.receive(Appeared.self, renders: 0) { $0.appeared = 1 }
        await store.send(SetValue(value: 3), renders: 1) { $0.value = 3 }
        await store.receive(ValueChanged.self, renders: 0) { $0.valueChanges = 1 }
        await store.send(SetValue(value: 3), renders: 1)  // same value: no change link
        await store.send(SetValue(value: 4), renders: 1) { $0.value = 4 }
        await store.receive(ValueChanged.self, renders: 0) { $0.valueChanges = 2 }
        await store.finish()
    }

    func testAlwaysLinkFiresAfterEveryRenderWithoutLooping() async throws {
        let node = LinkNode<AlwaysLinkCenter>()
        try node.mount(in: GraniteRuntime())
        await node.command.settle()
        // Mount render → RenderTick (renders once, does not re-fire).
        XCTAssertEqual(node.state.renderedTicks, 1)
        XCTAssertEqual(node.command.renderCount, 2)
        try node.sendEvent(SetValue(value: 1))
        await node.command.settle()
        // SetValue render → RenderTick (+1 render); ValueChanged is quiet.
        XCTAssertEqual(node.state.renderedTicks, 2)
        XCTAssertEqual(node.command.renderCount, 4)
        XCTAssertEqual(node.state.valueChanges, 1)
        XCTAssertEqual(node.state.prepared, 1)
    }
}

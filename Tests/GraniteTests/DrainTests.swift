import Dispatch
import Granite
import XCTest

struct RallyState: GraniteState {
    var returned = 0
}

/// Sent to the relay: it waits `micros`, then answers with `Volley(left - 1)`.
struct Serve: GraniteEvent {
    let left: Int
    let micros: UInt32
    var behavior: GraniteEventBehavior { .quiet }
}

/// The relay's answer: the component serves again until `left` is 0.
struct Volley: GraniteEvent {
    let left: Int
    let micros: UInt32
    var behavior: GraniteEventBehavior { .quiet }
}

struct ServeExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Serve, state: inout RallyState, connection: GraniteConnection) {
        usleep(event.micros)
        state.returned += 1
        connection.request(Volley(left: event.left - 1, micros: event.micros), .rebound)
    }
}

struct VolleyExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Volley, state: inout RallyState, connection: GraniteConnection) {
        state.returned += 1
        if event.left > 0 { connection.request(Serve(left: event.left, micros: event.micros), .rebound) }
    }
}

final class RallyRelayCenter: GraniteCenter<RallyState> {
    override var expeditions: [GraniteBaseExpedition] { [ServeExpedition.Discovery()] }
}

struct RallyRelay: GraniteRelay {
    let command = GraniteService<RallyRelayCenter, RallyState>()
}

final class RallyCenter: GraniteCenter<RallyState> {
    let relay = RallyRelay()
    override var expeditions: [GraniteBaseExpedition] { [VolleyExpedition.Discovery()] }
}

struct RallyComponent: GraniteComponent {
    let command = GraniteCommand<RallyCenter, RallyState>()
    var body: String { "\(state.returned)" }
}

/// `GraniteRuntime.drain()`: shutdown follows the tree, not a hand-kept list of settle() calls.
final class DrainTests: XCTestCase {
    /// Events bounce between a component and its relay (on the relay's own executor, slowly):
    /// a single settle() of either returns while the rally goes on; drain() waits for the end.
    func testDrainWaitsForFollowUpsBouncingBetweenComponentAndRelay() async throws {
        let runtime = GraniteRuntime()
        let component = try RallyComponent().mount(in: runtime)
        defer { component.unmount() }
        try component.sendEvent(Serve(left: 20, micros: 2000), .rebound)
        await component.command.settle()
        XCTAssertLessThan(component.state.returned, 20, "one component's settle() does not see the relay's follow-ups")
        await runtime.drain()
        XCTAssertEqual(component.state.returned, 20)
        XCTAssertEqual(component.center.relay.state.returned, 20)
        XCTAssertTrue(runtime.errors.isEmpty, "\(runtime.errors)")
    }

    func testDrainOfAnIdleRuntimeReturnsAtOnce() async throws {
        let runtime = GraniteRuntime()
        await runtime.drain()
        let component = try RallyComponent().mount(in: runtime)
        defer { component.unmount() }
        // Nothing will ever arrive, so a drain that waited for anything would never return: the
        // bound tells "returns" from "waits", and is wide enough for a loaded 2-core machine.
        let started = DispatchTime.now().uptimeNanoseconds
        await runtime.drain()
        XCTAssertLessThan(DispatchTime.now().uptimeNanoseconds - started, 10_000_000_000)
        XCTAssertEqual(component.state.returned, 0)
    }
}

import Dispatch
import Granite
import GraniteTesting
import Synchronization
import XCTest

struct OrderState: GraniteState {
    var log: [Int] = []
    var bySender: [Int: [Int]] = [:]
    var lastSeenByFollowUp: Int?
}

/// Reduced asynchronously after a random delay.
struct SlowAppend: GraniteEvent {
    var tag: Int
    var maxDelayMicros: Int = 2_000
    var followUp = false
    var behavior: GraniteEventBehavior { .quiet }
}

/// Reduced synchronously.
struct FastAppend: GraniteEvent {
    var tag: Int
    var sender = 0
    var behavior: GraniteEventBehavior { .quiet }
}

/// Reads what the async reducer before it wrote.
struct Check: GraniteEvent { var behavior: GraniteEventBehavior { .quiet } }

/// Sleeps until cancelled.
struct Hang: GraniteEvent { var behavior: GraniteEventBehavior { .quiet } }

struct SlowAppendExpedition: GraniteAsyncExpedition, GraniteDiscoverable {
    func reduce(event: SlowAppend, state: inout OrderState, connection: GraniteConnection) async throws {
        try await Task.sleep(for: .microseconds(Int.random(in: 0...event.maxDelayMicros)))
        state.log.append(event.tag)
        if event.followUp { connection.send(Check()) }
    }
}

struct FastAppendExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: FastAppend, state: inout OrderState, connection: GraniteConnection) {
        state.log.append(event.tag)
        state.bySender[event.sender, default: []].append(event.tag)
    }
}

struct CheckExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Check, state: inout OrderState, connection: GraniteConnection) {
        state.lastSeenByFollowUp = state.log.last
    }
}

struct HangExpedition: GraniteAsyncExpedition, GraniteDiscoverable {
    func reduce(event: Hang, state: inout OrderState, connection: GraniteConnection) async throws {
        state.log.append(-1)
        try await Task.sleep(for: .seconds(30))
    }
}

final class OrderCenter: GraniteCenter<OrderState> {
    override var expeditions: [GraniteBaseExpedition] {
        [SlowAppendExpedition.Discovery(), FastAppendExpedition.Discovery(), CheckExpedition.Discovery(),
         HangExpedition.Discovery()]
    }
}

struct OrderNode: GraniteComponent {
    let command = GraniteCommand<OrderCenter, OrderState>()
    var body: Int { state.log.count }
}

final class OrderingTests: XCTestCase {
    /// Many async reducers with random delays, interleaved with sync ones: reduced in send order.
    func testAsyncAndSyncReducersKeepSendOrder() async throws {
        let node = try OrderNode().mount(in: GraniteRuntime())
        for i in 0..<300 {
            if i % 3 == 0 {
                try node.sendEvent(FastAppend(tag: i))
            } else {
                try node.sendEvent(SlowAppend(tag: i, maxDelayMicros: 500))
            }
        }
        await node.command.settle()
        XCTAssertEqual(node.state.log, Array(0..<300))
        XCTAssertEqual(node.command.renderCount, 1, "quiet events never render")
    }

    /// A follow-up sent by an async reducer sees that reducer's state change (the original's bug).
    func testFollowUpFromAsyncReducerSeesItsUpdate() async throws {
        let store = try await GraniteTestStore(OrderNode())
        await store.send(SlowAppend(tag: 42, followUp: true), renders: 0) { $0.log = [42] }
        await store.receive(Check.self, renders: 0) { $0.lastSeenByFollowUp = 42 }
        await store.finish()
    }

    /// Several threads sending at once: every event reduced once, each sender's order kept.
    func testConcurrentSendersKeepPerSenderOrder() async throws {
        let node = try OrderNode().mount(in: GraniteRuntime())
        let senders = 4, perSender = 500
        DispatchQueue.concurrentPerform(iterations: senders) { sender in
            for i in 0..<perSender {
                try! node.sendEvent(FastAppend(tag: sender * perSender + i, sender: sender))
            }
        }
        await node.command.settle()
        XCTAssertEqual(node.state.log.count, senders * perSender)
        XCTAssertEqual(Set(node.state.log).count, senders * perSender)
        for sender in 0..<senders {
            XCTAssertEqual(node.state.bySender[sender], Array(sender * perSender..<(sender + 1) * perSender))
        }
    }

    /// Unmounting cancels the async reducer in flight (its change rolls back), drops queued
    /// events, and refuses new ones with a typed error.
    func testUnmountCancelsInFlightWorkAndRefusesEvents() async throws {
        let runtime = GraniteRuntime()
        let node = try OrderNode().mount(in: runtime)
        try node.sendEvent(Hang())
        for i in 0..<10 { try node.sendEvent(FastAppend(tag: i)) }
        let started = ContinuousClock.now
        node.unmount()
        await node.command.settle()
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5), "cancellation did not wait for the 30 s sleep")
        XCTAssertEqual(node.state.log, [], "the hung reducer rolled back; queued events were dropped")
        XCTAssertThrowsError(try node.sendEvent(FastAppend(tag: 99))) { error in
            XCTAssertEqual(error as? GraniteError, .unmounted(component: String(reflecting: OrderCenter.self)))
        }
        let cancelled = await eventually { runtime.errors.contains { if case .reducerFailed = $0 { true } else { false } } }
        XCTAssertTrue(cancelled, "the cancelled reducer's failure is reported: \(runtime.errors)")
    }
}

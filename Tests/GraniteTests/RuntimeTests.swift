import Granite
import XCTest

/// A payload whose lifetime the tests watch: events that carry references must retain and
/// release them exactly as a plain value copy would, also on the inline fast path.
final class Payload: Sendable {
    let id: Int
    init(id: Int) { self.id = id }
}

struct Carry: GraniteEvent {
    let payload: Payload
    let label: String
    let numbers: [Int]
    var behavior: GraniteEventBehavior { .quiet }
}

struct CarryState: GraniteState {
    var sum = 0
    var labels = 0
    var kept: [Int] = []
}

struct CarryExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Carry, state: inout CarryState, connection: GraniteConnection) {
        state.sum += event.payload.id + event.numbers.reduce(0, +)
        state.labels += event.label.count
        if event.payload.id % 100 == 0 { state.kept.append(event.payload.id) }
    }
}

final class CarryCenter: GraniteCenter<CarryState> {
    override var expeditions: [GraniteBaseExpedition] { [CarryExpedition.Discovery()] }
}

struct CarryNode: GraniteComponent {
    let command = GraniteCommand<CarryCenter, CarryState>()
    var body: Int { state.sum }
}

final class RuntimeTests: XCTestCase {
    /// The runtime keeps the last `errorLimit` errors and counts all of them.
    func testErrorsAreARingWithARunningCount() throws {
        let runtime = GraniteRuntime(errorLimit: 4)
        let node = try Node<QuietCenter>().mount(in: runtime)
        for tag in 1...10 { try node.sendEvent(Emit(probe: Probe(tag: tag), beam: .contact)) }

        XCTAssertEqual(runtime.errorCount, 10)
        XCTAssertEqual(runtime.errors.count, 4, "only the last errorLimit errors are kept")
        let tags = runtime.errors.map { error -> String in
            guard case let .unhandledContact(event, _, _) = error else { return "\(error)" }
            return event
        }
        XCTAssertEqual(Set(tags).count, 1, "all are unhandled contacts of Probe: \(tags)")

        let recent = runtime.errors(after: 7)
        XCTAssertEqual(recent.errors.count, 3)
        XCTAssertEqual(recent.lost, 0)
        XCTAssertEqual(recent.total, 10)

        let old = runtime.errors(after: 2)
        XCTAssertEqual(old.errors.count, 4, "everything still kept")
        XCTAssertEqual(old.lost, 4, "errors 3...6 were dropped from the ring")

        let none = runtime.errors(after: 10)
        XCTAssertEqual(none.errors, [])
        XCTAssertEqual(none.lost, 0)
    }

    /// Events with references, strings and arrays reduce correctly on the inline path, and every
    /// payload is released afterwards (no leak, no over-release).
    func testInlineFastPathRetainsAndReleasesPayloads() throws {
        let node = try CarryNode().mount(in: GraniteRuntime())
        weak var last: Payload?
        var expectedSum = 0, expectedLabels = 0
        for id in 1...1_000 {
            let payload = Payload(id: id)
            let label = String(repeating: "x", count: id % 7) + "\(id)"
            let numbers = Array(0..<(id % 5))
            expectedSum += id + numbers.reduce(0, +)
            expectedLabels += label.count
            try node.sendEvent(Carry(payload: payload, label: label, numbers: numbers))
            last = payload
        }
        XCTAssertNil(last, "the mailbox kept no reference to the last payload")
        XCTAssertEqual(node.state.sum, expectedSum)
        XCTAssertEqual(node.state.labels, expectedLabels)
        XCTAssertEqual(node.state.kept, Array(stride(from: 100, through: 1_000, by: 100)))
        XCTAssertEqual(node.command.renderCount, 1, "quiet events never render (1 = the mount render)")
    }
}

import Granite
import GraniteTesting
import IssueReporting
import XCTest

/// The harness itself: it must fail on anything the test did not assert.
final class TestStoreTests: XCTestCase {
    private func issues(_ body: () async throws -> Void) async rethrows -> [String] {
        let collector = IssueCollector()
        try await withIssueReporters([collector]) { try await body() }
        return collector.issues
    }

    func testWrongStateChangeFails() async throws {
        let found = try await issues {
            let store = try await GraniteTestStore(Node<QuietCenter>())
            await store.send(Probe(behavior: .quiet, tag: 1), renders: 0) { $0.probes = [2] }
        }
        XCTAssertEqual(found.count, 1)
        XCTAssertTrue(found[0].contains("does not match"), found[0])
    }

    func testUnassertedStateChangeFails() async throws {
        let found = try await issues {
            let store = try await GraniteTestStore(Node<QuietCenter>())
            await store.send(Probe(behavior: .quiet, tag: 1), renders: 0)
        }
        XCTAssertEqual(found.count, 1, "\(found)")
    }

    func testWrongRenderCountFails() async throws {
        let found = try await issues {
            let store = try await GraniteTestStore(Node<QuietCenter>())
            await store.send(Probe(behavior: .none, tag: 1), renders: 0) {
                $0.probes = [1]
                $0.lastBehavior = GraniteEventBehavior.none
            }
        }
        XCTAssertEqual(found, ["\(Probe.self) caused 1 render(s), expected 0"])
    }

    func testUnreceivedFollowUpFailsAtFinish() async throws {
        let found = try await issues {
            let store = try await GraniteTestStore(Node<QuietCenter>())
            await store.send(Emit(probe: Probe(behavior: .quiet, tag: 1), beam: .none), renders: 0)
            await store.finish()
        }
        XCTAssertEqual(found.count, 1)
        XCTAssertTrue(found[0].contains("unasserted steps before finishing: Probe"), found[0])
    }

    /// `receive(_:renders:using:)` hands the reduced event to the assertion (payload-derived state).
    func testReceiveUsingTheEventAssertsFromItsPayload() async throws {
        let found = try await issues {
            let store = try await GraniteTestStore(Node<QuietCenter>())
            await store.send(Emit(probe: Probe(behavior: .quiet, tag: 7), beam: .none), renders: 0)
            await store.receive(Probe.self, renders: 0) { state, event in
                XCTAssertEqual(event.tag, 7)
                state.probes = [event.tag]
                state.lastBehavior = event.behavior
            }
            await store.send(Emit(probe: Probe(behavior: .quiet, tag: 8), beam: .none), renders: 0)
            await store.receive(Probe.self, renders: 0) { state, event in state.probes.append(event.tag + 1) }
        }
        XCTAssertEqual(found.count, 1, "\(found)")
        XCTAssertTrue(found.first?.contains("does not match") ?? false, "\(found)")
    }

    func testReceivingTheWrongEventTypeFails() async throws {
        let found = try await issues {
            let store = try await GraniteTestStore(Node<QuietCenter>())
            await store.send(Emit(probe: Probe(behavior: .quiet, tag: 1), beam: .none), renders: 0)
            await store.receive(Emit.self, renders: 0, timeout: .milliseconds(50))
        }
        XCTAssertEqual(found.count, 1)
        XCTAssertTrue(found[0].contains("but the next event was Probe"), found[0])
    }

    func testUnassertedErrorFails() async throws {
        let found = try await issues {
            let store = try await GraniteTestStore(Node<QuietCenter>())
            await store.send(Emit(probe: Probe(tag: 1), beam: .contact), renders: 0)
            await store.finish()
        }
        XCTAssertEqual(found.count, 1)
        XCTAssertTrue(found[0].contains("unasserted errors"), found[0])
    }

    func testExhaustivePassingRunReportsNothing() async throws {
        let found = try await issues {
            let store = try await GraniteTestStore(Node<QuietCenter>())
            await store.send(Emit(probe: Probe(behavior: .quiet, tag: 1), beam: .none), renders: 0)
            await store.receive(Probe.self, renders: 0) {
                $0.probes = [1]
                $0.lastBehavior = .quiet
            }
            await store.finish()
        }
        XCTAssertEqual(found, [])
    }
}

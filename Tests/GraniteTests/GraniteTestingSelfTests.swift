import Foundation
import Granite
@testable import GraniteTesting
import Testing
import XCTest

/// The harness's failures reach the test framework itself: each case below makes GraniteTesting
/// fail on purpose and records that failure as a known issue (`withKnownIssue`), which itself fails
/// when the expected issue is not recorded. `TestStoreTests` checks the messages through a
/// collecting reporter; these check the real reporting path, with no reporter swapped in.
@Suite struct GraniteTestingSelfTests {
    @Test func aWrongStateChangeIsAFailure() async throws {
        let store = try await GraniteTestStore(Node<QuietCenter>())
        await withKnownIssue("the asserted state differs from the reduced one") {
            await store.send(Probe(behavior: .quiet, tag: 1), renders: 0) { $0.probes = [2] }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("state after Probe does not match") }
        }
    }

    @Test func anUnassertedStepIsAFailure() async throws {
        let store = try await GraniteTestStore(Node<QuietCenter>())
        await withKnownIssue("a follow-up event nobody received") {
            await store.send(Emit(probe: Probe(behavior: .quiet, tag: 1), beam: .none), renders: 0)
            await store.finish()
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("unasserted steps before finishing: Probe") }
        }
    }

    @Test func aWrongRenderCountIsAFailure() async throws {
        let store = try await GraniteTestStore(Node<QuietCenter>())
        await withKnownIssue("one render happened, none was asserted") {
            await store.send(Probe(behavior: .none, tag: 1), renders: 0) {
                $0.probes = [1]
                $0.lastBehavior = GraniteEventBehavior.none
            }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("caused 1 render(s), expected 0") }
        }
    }

    /// The same store with everything asserted records no issue at all (the cases above are not
    /// failing for some unrelated reason).
    @Test func everythingAssertedIsClean() async throws {
        let store = try await GraniteTestStore(Node<QuietCenter>())
        await store.send(Emit(probe: Probe(behavior: .quiet, tag: 1), beam: .none), renders: 0)
        await store.receive(Probe.self, renders: 0) {
            $0.probes = [1]
            $0.lastBehavior = .quiet
        }
        await store.finish()
    }

    /// Under `CI=true` a missing prerequisite is a failure (an issue, then `Missing` thrown), not a skip.
    @Test func underCIAMissingPrerequisiteFails() {
        var thrown: (any Error)?
        withKnownIssue("CI turns a missing prerequisite into a failure") {
            do {
                try Prerequisite.unmet("no frobnicator", failing: true, fileID: #fileID, filePath: #filePath, line: #line, column: #column)
            } catch {
                thrown = error
            }
        } matching: { issue in
            issue.comments.contains { $0.rawValue == "CI=true and a prerequisite is missing: no frobnicator" }
        }
        #expect((thrown as? Prerequisite.Missing)?.reason == "no frobnicator")
    }

    /// Hardware that only a tier covers: a missing covering tier fails, wherever it runs.
    @Test func hardwareWithoutItsCoveringTierFails() {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        var thrown: (any Error)?
        withKnownIssue("the tier named as covering the hardware does not exist") {
            do {
                try Prerequisite.requireHardware(false, "no frobnicator", coveredBy: "scripts/tiers/99-no-such-tier.sh", packageRoot: root)
            } catch {
                thrown = error
            }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("99-no-such-tier.sh, which should cover it, is missing") }
        }
        #expect(thrown is Prerequisite.Missing)
    }

    @Test func aMetPrerequisiteReturns() throws {
        try Prerequisite.require(true, "never printed")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        try Prerequisite.requireHardware(true, "never printed", coveredBy: "scripts/tiers/99-no-such-tier.sh", packageRoot: root)
    }
}

/// Locally (not CI) a missing prerequisite skips an XCTest: `XCTSkip`, never a pass or a failure.
final class PrerequisiteSkipTests: XCTestCase {
    func testLocallyAMissingPrerequisiteIsAnXCTSkip() {
        XCTAssertThrowsError(try Prerequisite.unmet("no frobnicator", failing: false, fileID: #fileID, filePath: #filePath,
                                                    line: #line, column: #column)) { error in
            XCTAssertTrue(error is XCTSkip, "\(error)")
        }
    }

    func testACoveredHardwarePrerequisiteSkipsEvenUnderCI() {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        XCTAssertThrowsError(try Prerequisite.requireHardware(false, "no frobnicator", coveredBy: "scripts/tiers/20-vivid-vm.sh",
                                                              packageRoot: root)) { error in
            XCTAssertTrue(error is XCTSkip, "\(error)")
        }
    }
}

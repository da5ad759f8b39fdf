import Granite
import GraniteTesting
import IssueReporting
import GraniteSync
import XCTest

/// Creates components whose host centers share `relay` (HostCenter reads it at init).
func sharingRelay<T>(_ relay: EchoRelay, _ make: () throws -> T) rethrows -> T {
    HostCenter.relay.withLock { $0 = relay }
    defer { HostCenter.relay.withLock { $0 = nil } }
    return try make()
}

/// Waits until `condition` holds or a second passes; relays run on their own executors.
func eventually(_ condition: @Sendable () -> Bool, timeout: Duration = .seconds(2)) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while clock.now < deadline {
        if condition() { return true }
        try? await clock.sleep(for: .milliseconds(1))
    }
    return condition()
}

/// Collects issues the test store reports, so tests can assert that it fails when it should.
final class IssueCollector: IssueReporter, Sendable {
    private let messages = Locked<[String]>([])
    var issues: [String] { messages.withLock { $0 } }

    func reportIssue(_ message: @autoclosure () -> String?, severity: IssueSeverity,
                     fileID: StaticString, filePath: StaticString, line: UInt, column: UInt) {
        let text = message() ?? ""
        messages.withLock { $0.append(text) }
    }
}

/// The render count a behaviour implies for one reduced event.
func expectedRenders(_ behavior: GraniteEventBehavior) -> Int { behavior == .quiet ? 0 : 1 }

let allBehaviors: [GraniteEventBehavior] = [.none, .quiet, .broadcastable, .passthrough]

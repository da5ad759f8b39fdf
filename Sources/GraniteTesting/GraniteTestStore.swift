import CustomDump
import Granite
import IssueReporting
import GraniteSync

/// An exhaustive test harness for one component, in the manner of TCA's `TestStore`.
///
/// Send an event and assert the exact state change and the number of renders; assert every
/// follow-up event the component then reduced (links, relay replies, broadcasts, contacts) with
/// ``receive(_:renders:timeout:_:fileID:filePath:line:column:)``. Anything left unasserted —
/// a state change, an extra render, a follow-up event, a reported error — fails the test.
///
/// ```swift
/// let store = try await GraniteTestStore(CounterComponent())
/// await store.send(CounterEvents.Increment(), renders: 1) { $0.count = 1 }
/// await store.receive(CounterEvents.Changed.self, renders: 0) { $0.changes = 1 }
/// await store.finish()
/// ```
public final class GraniteTestStore<Component: GraniteComponent>: Sendable {
    public typealias State = Component.GenericState

    /// The component under test (mounted).
    public let component: Component
    /// The runtime it is mounted in (fresh per store unless given).
    public let runtime: GraniteRuntime

    private struct Log: ~Copyable {
        var steps: [GraniteRecord<State>] = []
        var asserted: State
        var errorsSeen = 0
    }

    private final class LogBox: Sendable {
        let mutex: Locked<Log>
        init(_ state: State) { mutex = Locked(Log(asserted: state)) }
        func withLock<R>(_ body: (inout Log) -> R) -> R { mutex.withLock { body(&$0) } }
    }

    private let log: LogBox

    /// Mounts `component` in `runtime` and consumes its first render.
    public init(_ component: Component, runtime: GraniteRuntime = GraniteRuntime(),
                fileID: StaticString = #fileID, filePath: StaticString = #filePath,
                line: UInt = #line, column: UInt = #column) async throws {
        self.component = component
        self.runtime = runtime
        let log = LogBox(component.command.state)
        self.log = log
        component.command.observe { record in log.withLock { $0.steps.append(record) } }
        try component.mount(in: runtime)
        await component.command.settle()
        // The first step is the mount's render; merge it away so tests start from a clean slate.
        let first = log.withLock { log -> GraniteRecord<State>? in
            guard let index = log.steps.firstIndex(where: { $0.event == nil }) else { return nil }
            return log.steps.remove(at: index)
        }
        if first == nil {
            reportIssue("\(Component.self) did not render on mount", fileID: fileID, filePath: filePath, line: line, column: column)
        }
    }

    /// The component's current state.
    public var state: State { component.command.state }

    /// Sends `event` to the component and asserts the state change (`update` applied to the
    /// previous state) and the renders it caused.
    public func send<E: GraniteEvent>(
        _ event: E, renders: Int, _ update: ((inout State) -> Void)? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async {
        failOnUnasserted(before: "sending \(E.self)", fileID: fileID, filePath: filePath, line: line, column: column)
        do {
            try component.command.send(event)
        } catch {
            reportIssue("sending \(E.self) failed: \(error)", fileID: fileID, filePath: filePath, line: line, column: column)
            return
        }
        await component.command.settle()
        await check(E.self, renders: renders, update, timeout: .zero, verb: "sent",
                    fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// Asserts that the next event the component reduced was of type `E`, with this state change
    /// and these renders; waits up to `timeout` for it (relays run on their own executors).
    public func receive<E: GraniteEvent>(
        _ type: E.Type, renders: Int, timeout: Duration = .seconds(2), _ update: ((inout State) -> Void)? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async {
        await check(E.self, renders: renders, update, timeout: timeout, verb: "received",
                    fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// Like ``receive(_:renders:timeout:_:fileID:filePath:line:column:)``, with the received event
    /// handed to `update`: for state taken from the event's payload (a timestamp, a path).
    public func receive<E: GraniteEvent>(
        _ type: E.Type, renders: Int, timeout: Duration = .seconds(2), using update: @escaping (inout State, E) -> Void,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async {
        await check(E.self, renders: renders, nil, eventUpdate: { state, event in
            if let event = event as? E { update(&state, event) }
        }, timeout: timeout, verb: "received", fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// Asserts the errors reported (routing, async reducers) since the last check, in order.
    public func receiveErrors(
        _ expected: [GraniteError],
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        let (fresh, lost) = log.withLock { log -> ([GraniteError], Int) in
            let (fresh, lost, total) = runtime.errors(after: log.errorsSeen)
            log.errorsSeen = total
            return (fresh, lost)
        }
        if lost > 0 {
            reportIssue("errors: \(lost) more were reported than the runtime keeps (errorLimit \(runtime.errorLimit))",
                        fileID: fileID, filePath: filePath, line: line, column: column)
        }
        if fresh != expected {
            reportIssue("errors: expected \(expected), got \(fresh)", fileID: fileID, filePath: filePath, line: line, column: column)
        }
    }

    /// Waits for the component to go idle and fails on anything not asserted.
    public func finish(
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async {
        await component.command.settle()
        failOnUnasserted(before: "finishing", fileID: fileID, filePath: filePath, line: line, column: column)
    }

    // MARK: Checking

    private func failOnUnasserted(before what: String, fileID: StaticString, filePath: StaticString, line: UInt, column: UInt) {
        let (steps, errors, lost) = log.withLock { log -> ([GraniteRecord<State>], [GraniteError], Int) in
            let steps = log.steps
            log.steps = []
            if let last = steps.last { log.asserted = last.after }
            let (errors, lost, total) = runtime.errors(after: log.errorsSeen)
            log.errorsSeen = total
            return (steps, errors, lost)
        }
        if !steps.isEmpty {
            let names = steps.map { $0.event.map { String(describing: type(of: $0)) } ?? "render" }
            reportIssue("unasserted steps before \(what): \(names.joined(separator: ", "))",
                        fileID: fileID, filePath: filePath, line: line, column: column)
        }
        if !errors.isEmpty || lost > 0 {
            let more = lost > 0 ? " and \(lost) older ones no longer kept" : ""
            reportIssue("unasserted errors before \(what): \(errors.map(\.description))\(more)",
                        fileID: fileID, filePath: filePath, line: line, column: column)
        }
    }

    private func check<E: GraniteEvent>(
        _ type: E.Type, renders expectedRenders: Int, _ update: ((inout State) -> Void)?,
        eventUpdate: ((inout State, any GraniteEvent) -> Void)? = nil, timeout: Duration, verb: String,
        fileID: StaticString, filePath: StaticString, line: UInt, column: UInt
    ) async {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var step: (record: GraniteRecord<State>, renders: Int, asserted: State)?
        while true {
            step = log.withLock { log in
                guard let index = log.steps.firstIndex(where: { $0.event != nil }) else { return nil }
                // Renders requested by landers before this event belong to the previous step: that
                // is a render nobody asserted, so they stay in the log and fail at the next check.
                guard index == 0 else { return nil }
                let record = log.steps.removeFirst()
                var renders = record.renders
                while let next = log.steps.first, next.event == nil {
                    renders += next.renders
                    log.steps.removeFirst()
                }
                let asserted = log.asserted
                log.asserted = record.after
                return (record, renders, asserted)
            }
            if step != nil || clock.now >= deadline { break }
            try? await clock.sleep(for: .milliseconds(1))
        }
        guard let (record, renders, asserted) = step else {
            let pending = log.withLock { $0.steps.count }
            reportIssue("expected to have \(verb) \(E.self), but nothing was reduced\(pending > 0 ? " (\(pending) unasserted renders pending)" : "")",
                        fileID: fileID, filePath: filePath, line: line, column: column)
            return
        }
        guard let event = record.event, event is E else {
            reportIssue("expected to have \(verb) \(E.self), but the next event was \(record.event.map { String(describing: Swift.type(of: $0)) } ?? "none")",
                        fileID: fileID, filePath: filePath, line: line, column: column)
            return
        }
        var expected = asserted
        update?(&expected)
        eventUpdate?(&expected, event)
        if expected != record.after {
            let difference = diff(expected, record.after, format: .proportional)
                .map { "\n\($0.indent(by: 4))\n\n(Expected: −, Actual: +)" } ?? ""
            reportIssue("state after \(E.self) does not match: \(difference)",
                        fileID: fileID, filePath: filePath, line: line, column: column)
        }
        if renders != expectedRenders {
            reportIssue("\(E.self) caused \(renders) render(s), expected \(expectedRenders)",
                        fileID: fileID, filePath: filePath, line: line, column: column)
        }
        if let error = record.error {
            reportIssue("\(E.self) failed: \(error)", fileID: fileID, filePath: filePath, line: line, column: column)
        }
    }
}

extension String {
    fileprivate func indent(by n: Int) -> String {
        split(separator: "\n", omittingEmptySubsequences: false).map { String(repeating: " ", count: n) + $0 }.joined(separator: "\n")
    }
}

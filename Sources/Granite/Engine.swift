import Synchronization

/// What the engine needs from the component or relay that owns it.
protocol EngineHost: GraniteNode {
    associatedtype State: GraniteState
    /// Called on the drainer after an event was reduced (render, links).
    func didReduce(_ event: any GraniteEvent, fromLink: Bool, failed: Bool)
    /// Called instead of ``didReduce(_:fromLink:failed:)`` when someone watches state changes.
    func didReduce(_ event: any GraniteEvent, fromLink: Bool, before: State, after: State, error: GraniteError?)
    /// Runs one render job.
    func performRender(fromLink: Bool)
    /// The mailbox closed and went idle: drop what rendering and reducing held.
    func detach()
    /// Whether anything wants the state before each event (observers, key-path links).
    var wantsBefore: Bool { get }
}

/// One unit of work in a node's mailbox.
enum Job: Sendable {
    case event(any GraniteEvent, Route, replyTo: (any GraniteNode)?, fromLink: Bool)
    case render(fromLink: Bool)
}

/// The reducing machinery shared by components and relays: routes, state, mailbox.
///
/// ```
///  enqueue ─► Mailbox (serial, ordered) ─► route: reducer(event, &state, connection) ─► host.didReduce
///                                                                                    (render? links? record)
/// ```
final class Engine<Host: EngineHost>: MailboxOwner, @unchecked Sendable {
    typealias State = Host.State

    /// Guards `current` (and the mailbox, which shares it). Reducers run outside it, so a reader
    /// of `state` (a render, another thread) never waits for a reducer.
    private let lock = FastLock()
    // Hot fields: exclusivity is guaranteed by the mailbox (one drainer) and `lock`, so the
    // runtime's dynamic exclusivity checks are skipped.
    /// The published state, read under `lock`.
    @exclusivity(unchecked) nonisolated(unsafe) private var current: State
    /// The drainer's latest state; published to `current` when the mailbox next takes its lock.
    @exclusivity(unchecked) nonisolated(unsafe) private var working: State
    @exclusivity(unchecked) nonisolated(unsafe) private var dirty = false
    /// Effects of synchronous reducers, performed after their state is published.
    private let outbox = Outbox()
    /// Event type → route. Centers have a handful of expeditions, so a linear scan of
    /// identifiers beats hashing.
    @exclusivity(unchecked) private var routeKeys: [ObjectIdentifier] = []
    @exclusivity(unchecked) private var routeList: [Route] = []
    private(set) var tableError: GraniteError?
    @exclusivity(unchecked) private(set) var mailbox: Mailbox!
    /// Set once, right after init, before any event; never changes after. The host owns the
    /// engine, so it outlives it; `Unmanaged` keeps reference counting off the hot path.
    @exclusivity(unchecked) private var hostRef: Unmanaged<Host>!

    var host: Host {
        get { hostRef.takeUnretainedValue() }
        set {
            hostRef = Unmanaged.passUnretained(newValue)
            connection = GraniteConnection(node: newValue, replyTo: nil, outbox: outbox)
        }
    }

    /// The connection reducers get when nobody waits for a reply: made once, so the hot path
    /// does not retain the node per event.
    @exclusivity(unchecked) private var connection: GraniteConnection!

    @inline(__always)
    private func withHost<R>(_ body: (Host) -> R) -> R {
        hostRef._withUnsafeGuaranteedRef(body)
    }

    init(state: State, expeditions: [GraniteBaseExpedition], name: String, home: GraniteExecutor?) {
        current = state
        working = state
        mailbox = Mailbox(owner: self, home: home, lock: lock)
        for expedition in expeditions {
            guard let route = expedition.box.makeRoute(for: self) else {
                tableError = .stateMismatch(expedition: expedition.name, expected: String(reflecting: State.self),
                                            actual: expedition.stateName)
                break
            }
            guard !routeKeys.contains(expedition.eventKey.id) else {
                tableError = .duplicateExpedition(event: expedition.eventName, component: name)
                break
            }
            routeKeys.append(expedition.eventKey.id)
            routeList.append(route)
        }
    }

    @inline(__always)
    func route(_ key: EventKey) -> Route? {
        var i = 0
        while i < routeKeys.count {
            if routeKeys[i] == key.id { return routeList[i] }
            i += 1
        }
        return nil
    }

    @inline(__always)
    func handles(_ key: EventKey) -> Bool { route(key) != nil }

    /// A snapshot of the state.
    var state: State { lock.withLock { current } }

    /// Publishes the drainer's state now (before a render, which reads `state`).
    func commit() {
        lock.withLock { commitLocked() }
    }

    func commitLocked() {
        if dirty {
            current = working
            dirty = false
        }
    }

    @inline(__always)
    func reduceSync(
        _ event: any GraniteEvent, replyTo: (any GraniteNode)?, fromLink: Bool,
        _ reduce: (inout State, GraniteConnection) -> Void
    ) {
        withHost { host in
            let connection = replyTo == nil ? self.connection! : GraniteConnection(node: host, replyTo: replyTo, outbox: outbox)
            // Only the drainer (us) touches `working`: no lock. The mailbox publishes it.
            outbox.begin()
            if host.wantsBefore {
                let before = working
                reduce(&working, connection)
                outbox.end()
                dirty = true
                if !outbox.isEmpty { commit() }
                host.didReduce(event, fromLink: fromLink, before: before, after: working, error: nil)
            } else {
                reduce(&working, connection)
                outbox.end()
                dirty = true
                if !outbox.isEmpty { commit() }
                host.didReduce(event, fromLink: fromLink, failed: false)
            }
            outbox.flush(node: host, replyTo: replyTo)
        }
    }

    func reduceAsync(
        _ event: any GraniteEvent, replyTo: (any GraniteNode)?, fromLink: Bool,
        _ reduce: (inout State, GraniteConnection) async throws -> Void
    ) async {
        let connection = GraniteConnection(node: host, replyTo: replyTo)
        let before = working
        var working = before
        var failure: GraniteError?
        do {
            try await reduce(&working, connection)
        } catch {
            working = before  // roll back: an async reducer that fails changes nothing
            failure = .reducerFailed(event: String(reflecting: type(of: event)), component: host.nodeName,
                                     message: "\(error)")
        }
        self.working = working
        dirty = true
        commit()
        if let failure { host.report(failure) }
        if host.wantsBefore {
            host.didReduce(event, fromLink: fromLink, before: before, after: working, error: failure)
        } else {
            host.didReduce(event, fromLink: fromLink, failed: failure != nil)
        }
    }

    // MARK: MailboxOwner

    func executor(for job: Job) -> GraniteExecutor? {
        if case let .event(event, _, _, _) = job { return event.executor }
        return nil
    }

    func mailboxDidClose() { withHost { $0.detach() } }

    func isAsync(_ job: Job) -> Bool {
        if case let .event(_, route, _, _) = job { return route.isAsync }
        return false
    }

    func run(_ job: Job) {
        switch job {
        case let .render(fromLink):
            withHost { $0.performRender(fromLink: fromLink) }
        case let .event(event, route, replyTo, fromLink):
            route.runSync(event, replyTo: replyTo, fromLink: fromLink)
        }
    }

    func runAsync(_ job: Job) async {
        guard case let .event(event, route, replyTo, fromLink) = job else { return }
        await route.runAsync(event, replyTo: replyTo, fromLink: fromLink)
    }

    /// What ``submitting(_:key:replyTo:fromLink:)`` did.
    enum Submitted { case queued, noRoute, closed }

    /// Queues an event for its route (or runs it inline when the mailbox is idle); false when the
    /// key has no route or the mailbox is closed.
    @discardableResult
    func submit(_ event: any GraniteEvent, key: EventKey, replyTo: (any GraniteNode)?, fromLink: Bool) -> Bool {
        submitting(event, key: key, replyTo: replyTo, fromLink: fromLink) == .queued
    }

    @inline(__always)
    func submitting(_ event: any GraniteEvent, key: EventKey, replyTo: (any GraniteNode)?, fromLink: Bool) -> Submitted {
        guard let route = route(key) else { return .noRoute }
        if !route.isAsync, event.executor == nil, mailbox.tryAcquireInline() {
            route.runSync(event, replyTo: replyTo, fromLink: fromLink)
            mailbox.drainRest()
            return .queued
        }
        return mailbox.submit(.event(event, route, replyTo: replyTo, fromLink: fromLink)) ? .queued : .closed
    }
}

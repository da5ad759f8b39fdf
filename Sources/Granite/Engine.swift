import GraniteSync
import Synchronization

/// What the engine needs from the component or relay that owns it.
protocol EngineHost: GraniteNode {
    associatedtype State: GraniteState
    /// Called on the drainer after an event was reduced (render, links).
    func didReduce(behavior: GraniteEventBehavior, fromLink: Bool, failed: Bool)
    /// Called instead of ``didReduce(behavior:fromLink:failed:)`` when someone watches state changes.
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
///
/// `@unchecked Sendable` — invariant: `current` is read and written only under `lock`; `working`,
/// `dirty`, the connection slot and the outbox only by the mailbox's one drainer (the mailbox lets
/// one run at a time, and its lock orders one drainer's writes before the next one's reads); the
/// route table, mailbox and host are set in `init` (and `host` right after) and never change.
final class Engine<Host: EngineHost>: MailboxOwner, @unchecked Sendable {
    typealias State = Host.State

    /// Guards `current` (and the mailbox, which shares it). Reducers run outside it, so a reader
    /// of `state` (a render, another thread) never waits for a reducer.
    private let lock = Lock()
    // Hot fields: exclusivity is guaranteed by the mailbox (one drainer) and `lock`, so the
    // runtime's dynamic exclusivity checks are skipped.
    /// The published state. Invariant: read and written under `lock` only.
    @exclusivity(unchecked) nonisolated(unsafe) private var current: State
    /// The drainer's latest state; published to `current` when the mailbox next takes its lock.
    /// Lives in its own allocation so a reducer gets it by address (no generic pointer helpers).
    private let workingSlot: UnsafeMutablePointer<State>
    private var working: State {
        unsafeAddress { UnsafePointer(workingSlot) }
        unsafeMutableAddress { workingSlot }
    }
    /// Invariant: written by the drainer, read by it and under `lock` in `commitLocked` (which
    /// the drainer or the mailbox, holding the lock, calls between jobs).
    @exclusivity(unchecked) nonisolated(unsafe) private var dirty = false
    /// Effects of synchronous reducers, performed after their state is published.
    private let outbox = Outbox()
    /// Event type → route. Centers have a handful of expeditions, so a linear scan of
    /// identifiers beats hashing.
    @exclusivity(unchecked) private var routeKeys: [ObjectIdentifier] = []
    @exclusivity(unchecked) private var routeList: [Route] = []
    /// The routes again, fixed after init, read on the hot path without reference counting.
    /// Invariant: `routeList` owns every route for the engine's life; the table never changes after init.
    @exclusivity(unchecked) private var routeTable: UnsafeMutableBufferPointer<(key: ObjectIdentifier, route: Unmanaged<Route>)>
    private(set) var tableError: GraniteError?
    @exclusivity(unchecked) private(set) var mailbox: Mailbox!
    /// `mailbox` without reference counting. Invariant: the engine owns the mailbox for life and
    /// never replaces it.
    @exclusivity(unchecked) private var mailboxRef: Unmanaged<Mailbox>?
    /// Invariant: set once, right after init, before any event; never changes after. The host
    /// owns the engine and every call into the engine comes through the host or from a drain
    /// that holds it (``Mailbox``'s anchor), so the host outlives each use; `Unmanaged` keeps
    /// reference counting off the hot path.
    @exclusivity(unchecked) private var hostRef: Unmanaged<Host>!

    /// Set once, right after init (the host owns the engine, so no cycle is made here).
    var host: Host {
        get { hostRef.takeUnretainedValue() }
        set { hostRef = Unmanaged.passUnretained(newValue) }
    }

    /// The connection reducers get when nobody waits for a reply, borrowed in place so the hot
    /// path neither copies nor retains it. It holds the node, so it lives exactly as long as the
    /// node is mounted: made by ``connect()`` at mount, destroyed by ``disconnect()`` when the
    /// closed mailbox goes idle — the engine ↔ node cycle it makes cannot outlive the mount.
    /// Uninitialised while `connectionReady` is false; reducers then get a connection made for them.
    private let connectionSlot: UnsafeMutablePointer<GraniteConnection>
    /// Invariant: written only where no reducer can run (a held mailbox at mount; a closed, idle
    /// one at `mailboxDidClose`), read only by the drainer.
    @exclusivity(unchecked) nonisolated(unsafe) private var connectionReady = false

    /// Makes the shared connection. Call only while the mailbox is held (before it starts).
    func connect() {
        guard !connectionReady else { return }
        connectionSlot.initialize(to: GraniteConnection(node: host, replyTo: nil, outbox: outbox))
        connectionReady = true
    }

    /// Destroys the shared connection (and with it the engine's reference to its node).
    private func disconnect() {
        guard connectionReady else { return }
        connectionReady = false
        connectionSlot.deinitialize(count: 1)
    }

    @inline(__always)
    private func withHost<R>(_ body: (Host) -> R) -> R {
        hostRef._withUnsafeGuaranteedRef(body)
    }

    /// `held`: the mailbox queues events without reducing them until it is started (a component
    /// before it mounts, see ``GraniteCommand``).
    init(state: State, expeditions: [GraniteBaseExpedition], name: @autoclosure () -> String, home: GraniteExecutor?, held: Bool = false) {
        current = state
        workingSlot = .allocate(capacity: 1)
        workingSlot.initialize(to: state)
        routeTable = UnsafeMutableBufferPointer(start: nil, count: 0)
        connectionSlot = .allocate(capacity: 1)
        mailbox = Mailbox(owner: self, home: home, lock: lock, held: held)
        for expedition in expeditions {
            guard let route = expedition.box.makeRoute(for: self) else {
                tableError = .stateMismatch(expedition: expedition.name, expected: String(reflecting: State.self),
                                            actual: expedition.stateName)
                break
            }
            guard !routeKeys.contains(expedition.eventKey.id) else {
                tableError = .duplicateExpedition(event: expedition.eventName, component: name())
                break
            }
            routeKeys.append(expedition.eventKey.id)
            routeList.append(route)
        }
        let table = UnsafeMutableBufferPointer<(key: ObjectIdentifier, route: Unmanaged<Route>)>
            .allocate(capacity: routeList.count)
        for (i, route) in routeList.enumerated() {
            table[i] = (routeKeys[i], Unmanaged.passUnretained(route))
        }
        routeTable = table
        mailboxRef = Unmanaged.passUnretained(mailbox)
    }

    deinit {
        workingSlot.deinitialize(count: 1)
        workingSlot.deallocate()
        routeTable.deallocate()
        disconnect()
        connectionSlot.deallocate()
    }

    @inline(__always)
    func route(_ key: EventKey) -> Route? {
        routeRef(key)?.takeUnretainedValue()
    }

    /// The route for `key` without touching its reference count.
    @inline(__always)
    private func routeRef(_ key: EventKey) -> Unmanaged<Route>? {
        var i = 0
        while i < routeTable.count {
            if routeTable[i].key == key.id { return routeTable[i].route }
            i += 1
        }
        return nil
    }

    @inline(__always)
    func handles(_ key: EventKey) -> Bool { route(key) != nil }

    /// The thread reducing an event inline (on its sender's thread) right now; 0 when none.
    /// Invariant: set and cleared only by that thread around its inline job, so a thread finds its
    /// own id here exactly while it is the drainer (a thread reads its own latest store; another
    /// thread's id never equals its own, and an exited thread's id is reused only through glibc's
    /// locked thread cache, which orders the old clearing store before the new thread).
    private let inlineThread = Atomic<UInt>(0)

    /// A snapshot of the state. The drainer itself — a render during its inline job — reads its
    /// own working copy, the newest state, without the lock: only the drainer ever touches
    /// `working` (other threads read the published `current`, which the mailbox updates between jobs).
    var state: State {
        if isInlineDrainer { return working }
        return lock.withLock { current }
    }

    /// Whether the calling thread is reducing an event inline on this engine right now.
    @inline(__always)
    private var isInlineDrainer: Bool { inlineThread.load(ordering: .relaxed) == currentThreadID() }

    /// Publishes the drainer's state now (before effects are performed).
    func commit() {
        lock.withLock { commitLocked() }
    }

    /// Before a render, which reads `state`: publishes the drainer's state, except on an inline
    /// job, whose render reads the working copy and whose state the mailbox publishes as it goes
    /// idle right after (one lock round trip less per rendering event).
    func commitForRender() {
        if !isInlineDrainer { commit() }
    }

    func commitLocked() {
        if dirty {
            current = working
            dirty = false
        }
    }

    @inline(__always)
    func reduceSync<Event: GraniteEvent>(
        _ event: Event, replyTo: (any GraniteNode)?, fromLink: Bool,
        _ reduce: (UnsafeMutableRawPointer, GraniteConnection) -> Void
    ) {
        withHost { host in
            // Only the drainer (us) touches `working`: no lock. The mailbox publishes it.
            outbox.begin()
            if host.wantsBefore {
                let before = working
                reduceWithConnection(replyTo: replyTo, host: host, reduce)
                outbox.end()
                dirty = true
                if !outbox.isEmpty { commit() }
                host.didReduce(event, fromLink: fromLink, before: before, after: working, error: nil)
            } else {
                reduceWithConnection(replyTo: replyTo, host: host, reduce)
                outbox.end()
                dirty = true
                if !outbox.isEmpty { commit() }
                host.didReduce(behavior: event.behavior, fromLink: fromLink, failed: false)
            }
            outbox.flush(node: host, replyTo: replyTo)
        }
    }

    /// Runs `reduce` on `working` (by address) with the prebuilt connection (borrowed in place: no copy, no
    /// reference counting) or, when someone waits for a reply, one made for it.
    @inline(__always)
    private func reduceWithConnection(
        replyTo: (any GraniteNode)?, host: Host, _ reduce: (UnsafeMutableRawPointer, GraniteConnection) -> Void
    ) {
        if replyTo == nil, connectionReady {
            reduce(UnsafeMutableRawPointer(workingSlot), connectionSlot.pointee)
        } else {
            reduce(UnsafeMutableRawPointer(workingSlot), GraniteConnection(node: host, replyTo: replyTo, outbox: outbox))
        }
    }

    func reduceAsync(
        _ event: any GraniteEvent, replyTo: (any GraniteNode)?, fromLink: Bool,
        _ reduce: (inout State, GraniteConnection) async throws -> Void
    ) async {
        let host = self.host
        // Effects requested while the reducer runs — on whatever thread it resumes — wait here
        // until its state is published, as a synchronous reducer's do.
        let deferred = DeferredEffects()
        let connection = GraniteConnection(node: host, replyTo: replyTo, deferred: deferred)
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
        let effects = deferred.close()
        self.working = working
        dirty = true
        commit()
        if let failure { host.report(failure) }
        if host.wantsBefore {
            host.didReduce(event, fromLink: fromLink, before: before, after: working, error: failure)
        } else {
            host.didReduce(behavior: event.behavior, fromLink: fromLink, failed: failure != nil)
        }
        // A failed reducer's state was rolled back, so its effects would show a change that
        // never happened: they are dropped with it.
        if failure == nil { Outbox.perform(effects, node: host, replyTo: replyTo) }
    }

    // MARK: MailboxOwner

    func executor(for job: Job) -> GraniteExecutor? {
        if case let .event(event, _, _, _) = job { return event.executor }
        return nil
    }

    func mailboxDidClose() {
        withHost { $0.detach() }
        disconnect()
    }

    var anchor: any GraniteNode { host }

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

    /// Reduces the event inline when the mailbox is idle and the route is synchronous with no
    /// executor; otherwise queues it. Generic, so the fast path neither boxes the event nor casts it.
    @inline(__always)
    func submitting<Event: GraniteEvent>(
        _ event: Event, key: EventKey, replyTo: (any GraniteNode)?, fromLink: Bool
    ) -> Submitted {
        guard let routeRef = routeRef(key) else { return .noRoute }
        let inline = routeRef._withUnsafeGuaranteedRef { route in
            !route.isAsync && event.executor == nil && mailboxRef!._withUnsafeGuaranteedRef { $0.tryAcquireInline() }
        }
        if inline {
            inlineThread.store(currentThreadID(), ordering: .relaxed)
            routeRef._withUnsafeGuaranteedRef { $0.runSync(typed: event, replyTo: replyTo, fromLink: fromLink) }
            inlineThread.store(0, ordering: .relaxed)
            mailboxRef!._withUnsafeGuaranteedRef { $0.drainRest { self.commitLocked() } }
            return .queued
        }
        let job = Job.event(event, routeRef.takeUnretainedValue(), replyTo: replyTo, fromLink: fromLink)
        return mailbox.submit(job) ? .queued : .closed
    }
}

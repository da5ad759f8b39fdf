#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GraniteSync
import Synchronization

/// What a reducer may do besides changing its state: the seed's `GraniteConnection`.
///
/// A connection is handed to every expedition. It routes follow-up events by beam, reaches
/// children (`hear`) and parents (`.contact`), relays (`.rebound`) and shared dependencies.
///
/// Inside a reducer, everything but dependency reads and writes is an *effect*: it is performed
/// after the reducer returned and its state was published, in the order requested — so whoever
/// sees an effect also sees the state change that caused it.
///
/// This holds for synchronous and asynchronous reducers alike: an async reducer's effects wait,
/// from whichever thread it requested them, until it returned and its state was published (and
/// are dropped with its state when it fails).
///
/// A connection may outlive its reducer (a relay's pump keeps one to broadcast frames): used
/// after the reducer returned, or (for a synchronous reducer) from another thread, it acts at
/// once. It holds its node, so a kept connection keeps that node alive.
public struct GraniteConnection: Sendable {
    let node: any GraniteNode
    /// For a relay's reducer: the component that asked (the `.rebound` target).
    let replyTo: (any GraniteNode)?
    /// Where a reducer's effects wait until its state is published (one field: the connection
    /// stays the size it was before async reducers deferred).
    private enum Deferral {
        /// Act at once.
        case none
        /// A synchronous reducer's outbox (defers on the reducing thread only).
        case sync(Outbox)
        /// An asynchronous reducer's effects (defers from any thread until it returned).
        case async(DeferredEffects)
    }
    private let deferral: Deferral

    init(node: any GraniteNode, replyTo: (any GraniteNode)?, outbox: Outbox? = nil, deferred: DeferredEffects? = nil) {
        self.node = node
        self.replyTo = replyTo
        if let outbox { deferral = .sync(outbox) } else if let deferred { deferral = .async(deferred) } else { deferral = .none }
    }

    /// Defers `effect` when a reducer of this connection is running; false: act now.
    @inline(__always)
    private func deferring(_ effect: @autoclosure () -> Outbox.Effect) -> Bool {
        switch deferral {
        case .none: return false
        case let .sync(outbox):
            guard outbox.isDeferring else { return false }
            outbox.append(effect())
            return true
        case let .async(deferred): return deferred.append(effect())
        }
    }

    /// Pushes an event down to the children listening to this component (`listen(to:)`):
    /// `.passthrough` children forward it, `.broadcastable` ones reduce it, `.quiet` ones ignore it.
    public func hear(event: some GraniteEvent) {
        if deferring(.hear(event)) { return }
        node.hearDown(event, key: EventKey(type(of: event)))
    }

    /// Sends an event along a beam (the event's own ``GraniteEvent/beam`` when none is given).
    ///
    /// - `.contact`: to the parent this component attached to, and on up while unhandled.
    /// - `.rebound`: from a component, to the hosted relay that handles it; from a relay, back
    ///   to the one component that asked.
    /// - `.broadcast`: from a relay, to every broadcastable component hosting it; from a
    ///   component, the same as ``hear(event:)``.
    /// - `.none`: a follow-up event to this component (or relay) itself, reduced after the current one.
    public func request(_ event: some GraniteEvent, _ beam: GraniteBeamType? = nil) {
        if deferring(.request(event, beam)) { return }
        perform(event, beam)
    }

    func perform(_ event: any GraniteEvent, _ beam: GraniteBeamType?) {
        let key = EventKey(type(of: event))
        switch beam ?? event.beam {
        case .contact:
            if node is any AnyGraniteService, let replyTo {
                replyTo.enqueue(event, key: key, replyTo: nil)
            } else {
                node.contactUp(event, key: key)
            }
        case .rebound:
            if node is any AnyGraniteService {
                guard let replyTo else {
                    node.report(.noExpedition(event: String(reflecting: type(of: event)), component: "the caller of \(node.nodeName)"))
                    return
                }
                replyTo.enqueue(event, key: key, replyTo: nil)
                return
            }
            guard let relay = node.relayNodes.first(where: { $0.handles(key) }) else {
                node.report(.noRelay(event: String(reflecting: type(of: event)), component: node.nodeName))
                return
            }
            relay.enqueue(event, key: key, replyTo: node)
        case .broadcast:
            if node is any AnyGraniteService {
                node.broadcastToHosts(event, key: key)
            } else {
                node.hearDown(event, key: key)
            }
        case .none:
            sendNow(event)
        }
    }

    /// A follow-up event to this component (or relay) itself, reduced after the current one.
    public func send(_ event: some GraniteEvent) {
        if deferring(.send(event)) { return }
        sendNow(event)
    }

    func sendNow(_ event: any GraniteEvent) {
        let key = EventKey(type(of: event))
        guard node.handles(key) else {
            node.report(.noExpedition(event: String(reflecting: type(of: event)), component: node.nodeName))
            return
        }
        node.enqueue(event, key: key, replyTo: replyTo)
    }

    /// Writes a value into a shared dependency, then re-renders whom the lander names (an effect).
    /// Throws ``GraniteError/missingDependency(dependency:component:)`` when the center does not declare it.
    public func update<D: GraniteDependable, V: Sendable>(
        _ keyPath: ReferenceWritableKeyPath<D, V>, value: V, _ lander: GraniteLander = .quiet
    ) throws(GraniteError) {
        let box = try dependencyBox(D.self)
        box.write { ($0 as! D)[keyPath: keyPath] = value }
        if deferring(.land(lander)) { return }
        land(lander)
    }

    /// Reads a value from a shared dependency.
    /// Throws ``GraniteError/missingDependency(dependency:component:)`` when the center does not declare it.
    public func retrieve<D: GraniteDependable, V: Sendable>(_ keyPath: KeyPath<D, V>) throws(GraniteError) -> V {
        try dependencyBox(D.self).read { ($0 as! D)[keyPath: keyPath] }
    }

    private func dependencyBox<D: GraniteDependable>(_ type: D.Type) throws(GraniteError) -> DependencyBox {
        guard let box = node.dependency(ObjectIdentifier(D.self)) else {
            throw .missingDependency(dependency: String(reflecting: D.self), component: node.nodeName)
        }
        return box
    }

    /// True when the reducer's work was cancelled (its component unmounted).
    public var isCancelled: Bool { Task.isCancelled }

    func land(_ lander: GraniteLander) {
        switch lander {
        case .quiet:
            return
        case .here:
            node.enqueueRender()
        case let .target(center):
            node.runtime?.mounted(center: ObjectIdentifier(center)).forEach { $0.enqueueRender() }
        case .home:
            node.homeNode.enqueueRender()
        }
    }
}

/// A synchronous reducer's effects, performed after its state is published. Owned by one engine;
/// only the thread running that engine's reducer defers into it (others act at once).
///
/// `@unchecked Sendable` — invariant: `effects` is touched only by the thread between ``begin()``
/// and ``end()`` and by the same drainer's ``flush(node:replyTo:)`` right after; the engine's
/// mailbox lets one drainer run at a time.
final class Outbox: @unchecked Sendable {
    /// The thread running a reducer of this engine now (0: none).
    private let reducing = Atomic<UInt>(0)

    /// True on the thread that is running this engine's reducer.
    var isDeferring: Bool { reducing.load(ordering: .relaxed) == Outbox.currentThread }

    /// Marks the start and the end of a reducer on this thread.
    func begin() { reducing.store(Outbox.currentThread, ordering: .relaxed) }
    func end() { reducing.store(0, ordering: .relaxed) }

    private static var currentThread: UInt { UInt(pthread_self()) }

    enum Effect: Sendable {
        case hear(any GraniteEvent)
        case request(any GraniteEvent, GraniteBeamType?)
        case send(any GraniteEvent)
        case land(GraniteLander)
    }

    /// Invariant: see the type's comment (one thread at a time, ordered by the mailbox).
    @exclusivity(unchecked) private var effects: [Effect] = []

    var isEmpty: Bool { effects.isEmpty }

    func append(_ effect: Effect) { effects.append(effect) }

    /// Performs and clears the effects, in order, through an immediate connection.
    func flush(node: any GraniteNode, replyTo: (any GraniteNode)?) {
        guard !effects.isEmpty else { return }
        let pending = effects
        effects.removeAll(keepingCapacity: true)
        Outbox.perform(pending, node: node, replyTo: replyTo)
    }

    /// Performs effects in order, as `node`'s immediate connection would.
    static func perform(_ effects: [Effect], node: any GraniteNode, replyTo: (any GraniteNode)?) {
        guard !effects.isEmpty else { return }
        let connection = GraniteConnection(node: node, replyTo: replyTo)
        for effect in effects {
            switch effect {
            case let .hear(event): node.hearDown(event, key: EventKey(type(of: event)))
            case let .request(event, beam): connection.perform(event, beam)
            case let .send(event): connection.sendNow(event)
            case let .land(lander): connection.land(lander)
            }
        }
    }
}

/// An asynchronous reducer's effects: whoever asks while the reducer runs (it may resume on any
/// thread, or start child tasks) has the effect kept until the engine published the state.
final class DeferredEffects: Sendable {
    private let pending = Locked<(open: Bool, effects: [Outbox.Effect])>((true, []))

    /// Keeps `effect` while the reducer runs; false once it returned (the caller acts at once).
    func append(_ effect: Outbox.Effect) -> Bool {
        pending.withLock { pending in
            guard pending.open else { return false }
            pending.effects.append(effect)
            return true
        }
    }

    /// The reducer returned: hands back what it asked for and stops deferring.
    func close() -> [Outbox.Effect] {
        pending.withLock { pending in
            pending.open = false
            defer { pending.effects = [] }
            return pending.effects
        }
    }
}

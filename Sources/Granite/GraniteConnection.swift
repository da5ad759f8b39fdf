#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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
/// A connection may outlive its reducer (a relay's pump keeps one to broadcast frames): used
/// after the reducer returned, or from another thread, it acts at once.
public struct GraniteConnection: Sendable {
    let node: any GraniteNode
    /// For a relay's reducer: the component that asked (the `.rebound` target).
    let replyTo: (any GraniteNode)?
    /// Where a reducer's effects wait until its state is published; `nil` acts at once.
    private let outbox: Outbox?

    init(node: any GraniteNode, replyTo: (any GraniteNode)?, outbox: Outbox? = nil) {
        self.node = node
        self.replyTo = replyTo
        self.outbox = outbox
    }

    /// Pushes an event down to the children listening to this component (`listen(to:)`):
    /// `.passthrough` children forward it, `.broadcastable` ones reduce it, `.quiet` ones ignore it.
    public func hear(event: some GraniteEvent) {
        if let outbox, outbox.isDeferring { return outbox.append(.hear(event)) }
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
        if let outbox, outbox.isDeferring { return outbox.append(.request(event, beam)) }
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
        if let outbox, outbox.isDeferring { return outbox.append(.send(event)) }
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

    /// Writes a value into a shared dependency, then re-renders whom the lander names.
    public func update<D: GraniteDependable, V: Sendable>(
        _ keyPath: ReferenceWritableKeyPath<D, V>, value: V, _ lander: GraniteLander = .quiet
    ) {
        guard let box = node.dependency(ObjectIdentifier(D.self)) else {
            node.report(.missingDependency(dependency: String(reflecting: D.self), component: node.nodeName))
            return
        }
        box.write { ($0 as! D)[keyPath: keyPath] = value }
        if let outbox, outbox.isDeferring { return outbox.append(.land(lander)) }
        land(lander)
    }

    /// Reads a value from a shared dependency; `nil` (and a reported error) if the center does not declare it.
    public func retrieve<D: GraniteDependable, V: Sendable>(_ keyPath: KeyPath<D, V>) -> V? {
        guard let box = node.dependency(ObjectIdentifier(D.self)) else {
            node.report(.missingDependency(dependency: String(reflecting: D.self), component: node.nodeName))
            return nil
        }
        return box.read { ($0 as! D)[keyPath: keyPath] }
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

/// A reducer's effects, performed after its state is published. Owned by one engine; only the
/// thread running that engine's reducer defers into it (others act at once).
final class Outbox: @unchecked Sendable {
    /// The thread running a reducer of this engine now (0: none).
    private let reducing = Atomic<UInt>(0)

    /// True on the thread that is running this engine's reducer.
    var isDeferring: Bool { reducing.load(ordering: .relaxed) == Outbox.currentThread }

    /// Marks the start and the end of a reducer on this thread.
    func begin() { reducing.store(Outbox.currentThread, ordering: .relaxed) }
    func end() { reducing.store(0, ordering: .relaxed) }

    private static var currentThread: UInt { UInt(pthread_self()) }

    enum Effect {
        case hear(any GraniteEvent)
        case request(any GraniteEvent, GraniteBeamType?)
        case send(any GraniteEvent)
        case land(GraniteLander)
    }

    @exclusivity(unchecked) private var effects: [Effect] = []

    var isEmpty: Bool { effects.isEmpty }

    func append(_ effect: Effect) { effects.append(effect) }

    /// Performs and clears the effects, in order, through an immediate connection.
    func flush(node: any GraniteNode, replyTo: (any GraniteNode)?) {
        guard !effects.isEmpty else { return }
        let pending = effects
        effects.removeAll(keepingCapacity: true)
        let connection = GraniteConnection(node: node, replyTo: replyTo)
        for effect in pending {
            switch effect {
            case let .hear(event): node.hearDown(event, key: EventKey(type(of: event)))
            case let .request(event, beam): connection.perform(event, beam)
            case let .send(event): connection.sendNow(event)
            case let .land(lander): connection.land(lander)
            }
        }
    }
}

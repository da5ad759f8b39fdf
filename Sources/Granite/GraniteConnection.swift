/// What a reducer may do besides changing its state: the seed's `GraniteConnection`.
///
/// A connection is handed to every expedition. It routes follow-up events by beam, reaches
/// children (`hear`) and parents (`.contact`), relays (`.rebound`) and shared dependencies.
///
/// Inside a reducer, everything but dependency reads and writes is an *effect*: it is performed
/// after the reducer returned and its state was published, in the order requested — so whoever
/// sees an effect also sees the state change that caused it.
///
/// A synchronous reducer's connection is valid while `reduce` runs: to act later, send an event.
/// An async reducer's connection keeps its component alive until the reducer returns.
public struct GraniteConnection: Sendable {
    // Not retained on the hot path: the mailbox draining this reducer keeps the node alive.
    unowned(unsafe) let node: any GraniteNode
    /// Keeps the node alive across an async reducer's suspension points.
    private let retained: (any GraniteNode)?
    /// For a relay's reducer: the component that asked (the `.rebound` target).
    let replyTo: (any GraniteNode)?
    /// Where a reducer's effects wait until its state is published; `nil` acts at once.
    private let outbox: Outbox?

    init(node: any GraniteNode, replyTo: (any GraniteNode)?, retain: Bool = false, outbox: Outbox? = nil) {
        self.node = node
        self.retained = retain ? node : nil
        self.replyTo = replyTo
        self.outbox = outbox
    }

    /// Pushes an event down to the children listening to this component (`listen(to:)`):
    /// `.passthrough` children forward it, `.broadcastable` ones reduce it, `.quiet` ones ignore it.
    public func hear(event: some GraniteEvent) {
        if let outbox { return outbox.append(.hear(event)) }
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
        if let outbox { return outbox.append(.request(event, beam)) }
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
        if let outbox { return outbox.append(.send(event)) }
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
        if let outbox { return outbox.append(.land(lander)) }
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

/// A reducer's effects, performed after its state is published. Owned by one engine and used
/// only by its drainer.
final class Outbox: @unchecked Sendable {
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

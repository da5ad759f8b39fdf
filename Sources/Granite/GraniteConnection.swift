/// What a reducer may do besides changing its state: the seed's `GraniteConnection`.
///
/// A connection is handed to every expedition. It routes follow-up events by beam, reaches
/// children (`hear`) and parents (`.contact`), relays (`.rebound`) and shared dependencies.
public struct GraniteConnection: Sendable {
    let node: any GraniteNode
    /// For a relay's reducer: the component that asked (the `.rebound` target).
    let replyTo: (any GraniteNode)?

    init(node: any GraniteNode, replyTo: (any GraniteNode)?) {
        self.node = node
        self.replyTo = replyTo
    }

    /// Pushes an event down to the children listening to this component (`listen(to:)`):
    /// `.passthrough` children forward it, `.broadcastable` ones reduce it, `.quiet` ones ignore it.
    public func hear(event: some GraniteEvent) {
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
            send(event)
        }
    }

    /// A follow-up event to this component (or relay) itself, reduced after the current one.
    public func send(_ event: some GraniteEvent) {
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

    private func land(_ lander: GraniteLander) {
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

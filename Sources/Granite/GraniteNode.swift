/// The face components (``GraniteCommand``) and relays (``GraniteService``) show the router.
protocol GraniteNode: AnyObject, Sendable {
    /// A readable name for errors: the center's type.
    var nodeName: String { get }
    /// The center's type, for ``GraniteLander/target(_:)``.
    var centerID: ObjectIdentifier { get }
    /// How this node treats events heard from its parent and relay broadcasts.
    var centerBehavior: GraniteEventBehavior { get }
    /// Whether the center has an expedition for this event type.
    func handles(_ key: EventKey) -> Bool
    /// Queues an event for this node's reducer; false when it has no expedition for it (nothing
    /// is reported) or is unmounted.
    @discardableResult
    func enqueue(_ event: any GraniteEvent, key: EventKey, replyTo: (any GraniteNode)?) -> Bool
    /// Queues one render (no-op for relays).
    func enqueueRender()
    /// The component this one attached to (its `.contact` target).
    var parentNode: (any GraniteNode)? { get }
    /// The components listening to this one (its `hear` targets).
    var listenerNodes: [any GraniteNode] { get }
    /// The relays this node's center hosts.
    var relayNodes: [any GraniteNode] { get }
    /// The runtime (dependencies, registry, error sink) this node is mounted in.
    var runtime: GraniteRuntime? { get }
    /// Reports an error that no caller can catch (routing, reducers on other threads).
    func report(_ error: GraniteError)
    /// The dependency instance of this type, if the center declares it.
    func dependency(_ id: ObjectIdentifier) -> DependencyBox?
    /// Sends a broadcast to subscribers (relays only).
    func broadcastToHosts(_ event: any GraniteEvent, key: EventKey)
    /// Jobs this node's mailbox accepted so far (only grows).
    var jobsAccepted: UInt64 { get }
    /// Waits until this node's mailbox has nothing queued or running.
    func waitUntilIdle() async
}

extension GraniteNode {
    /// `hear`: pushes an event down to listening children, by their center's behaviour.
    func hearDown(_ event: any GraniteEvent, key: EventKey) {
        for child in listenerNodes {
            switch child.centerBehavior {
            case .passthrough:
                child.hearDown(event, key: key)
            case .broadcastable, .none:
                child.enqueue(event, key: key, replyTo: nil)  // false (nothing queued) without a route
            case .quiet:
                continue
            }
        }
    }

    /// A relay broadcast reaching down from a host: each listening child whose center is
    /// `.broadcastable` reduces it (when it has an expedition for it) and passes it on to its own
    /// listeners; a `.passthrough` child only passes it on; `.quiet` and `.none` children take no
    /// broadcasts. Returns how many children reduce it.
    func broadcastDown(_ event: any GraniteEvent, key: EventKey) -> Int {
        var delivered = 0
        for child in listenerNodes {
            switch child.centerBehavior {
            case .broadcastable:
                if child.enqueue(event, key: key, replyTo: nil) { delivered += 1 }  // false without a route
                delivered += child.broadcastDown(event, key: key)
            case .passthrough:
                delivered += child.broadcastDown(event, key: key)
            case .quiet, .none:
                continue
            }
        }
        return delivered
    }

    /// `.contact`: bubbles up the attach chain to the first ancestor that handles the event.
    func contactUp(_ event: any GraniteEvent, key: EventKey) {
        var route: [String] = []
        var next = parentNode
        while let node = next {
            route.append(node.nodeName)
            if node.handles(key) {
                node.enqueue(event, key: key, replyTo: nil)
                return
            }
            next = node.parentNode
        }
        report(.unhandledContact(event: String(reflecting: type(of: event)), from: nodeName, route: route))
    }

    /// The root of this node's attach chain (``GraniteLander/home``).
    var homeNode: any GraniteNode {
        var node: any GraniteNode = self
        while let parent = node.parentNode { node = parent }
        return node
    }
}


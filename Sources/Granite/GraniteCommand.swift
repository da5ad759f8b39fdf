import Synchronization

/// A component's runtime: its center, its state, its mailbox, its place in the tree.
///
/// ```
///   sendEvent / hear / contact / relay ─► mailbox ─► expedition(event, &state, connection)
///                                                     └─► behaviour != .quiet ? render (body) : —
/// ```
/// Events are reduced one at a time in the order sent. `.quiet` events never render.
///
/// Events sent before the component mounts wait in its mailbox, unreduced (no dependency is
/// resolved and no relay hosted yet); mounting renders, fires the appear links, then reduces
/// them in the order sent. Unmounting drops what still waits; after it, sending throws
/// ``GraniteError/unmounted(component:)``.
public final class GraniteCommand<Center: GraniteCenter<State>, State: GraniteState>: EngineHost, @unchecked Sendable {
    /// The component's center (expeditions, links, relays, dependencies).
    public let center: Center
    let engine: Engine<GraniteCommand<Center, State>>
    let nodeName: String
    let centerID: ObjectIdentifier
    let centerBehavior: GraniteEventBehavior

    private struct Wiring: ~Copyable {
        var mounted = false
        var runtime: GraniteRuntime?
        /// Strong until unmount (no weak references: they make every retain of a node slow).
        var parent: (any GraniteNode)?
        var listeners: [any GraniteNode] = []
        var children: [ObjectIdentifier: @Sendable (GraniteRuntime) throws(GraniteError) -> Void] = [:]
        var childOrder: [ObjectIdentifier] = []
        var renderer: (@Sendable () -> Void)?
        var relays: [any GraniteRelay] = []
    }

    private let wiring = Mutex(Wiring())
    private let renders = Atomic<Int>(0)
    // Set during mount, before any event is reduced; read on the reducing thread without a lock.
    @exclusivity(unchecked) nonisolated(unsafe) private var links = LinkSet.empty
    @exclusivity(unchecked) nonisolated(unsafe) private var dependencies: [ObjectIdentifier: DependencyBox] = [:]
    @exclusivity(unchecked) nonisolated(unsafe) private var relayList: [any GraniteNode] = []
    @exclusivity(unchecked) nonisolated(unsafe) private var observer: (@Sendable (GraniteRecord<State>) -> Void)?
    @exclusivity(unchecked) nonisolated(unsafe) private(set) var wantsBefore = false
    @exclusivity(unchecked) nonisolated(unsafe) private var renderer: (@Sendable () -> Void)?

    /// A command for a component starting from `state`.
    public init(state: State = State()) {
        let center = Center()
        self.center = center
        nodeName = String(reflecting: Center.self)
        centerID = ObjectIdentifier(Center.self)
        centerBehavior = center.behavior
        engine = Engine(state: state, expeditions: center.expeditions, name: nodeName, home: nil, held: true)
        engine.host = self
    }

    /// The current state (a snapshot). Inside a reducer, use its `state` parameter instead.
    public var state: State { engine.state }

    /// How many times this component rendered (evaluated its `body`).
    public var renderCount: Int { renders.load(ordering: .relaxed) }

    /// Whether the component is mounted (and so takes events).
    public var isMounted: Bool { wiring.withLock { $0.mounted } }

    /// Events sent before mounting, waiting for it (0 once mounted).
    public var waitingForMount: Int { engine.mailbox.heldCount }

    /// Sends an event to this component's own expedition (before mounting: queued, reduced once it mounts).
    public func send(_ event: some GraniteEvent) throws(GraniteError) {
        switch engine.submitting(event, key: EventKey(type(of: event)), replyTo: nil, fromLink: false) {
        case .queued: return
        case .noRoute: throw .noExpedition(event: String(reflecting: type(of: event)), component: nodeName)
        case .closed: throw .unmounted(component: nodeName)
        }
    }

    /// Waits until every event queued so far (and their follow-ups) has been reduced.
    public func settle() async {
        await engine.mailbox.waitUntilIdle()
    }

    // MARK: Mounting

    func mount(runtime: GraniteRuntime, renderer: @escaping @Sendable () -> Void) throws(GraniteError) {
        if wiring.withLock({ $0.mounted }) { return }
        if let error = engine.tableError { throw error }
        links = try LinkSet(center.links, state: State.self, component: nodeName)
        for declared in center.declaredDependencies {
            let box = try runtime.resolve(declared.dependencyType)
            declared.bind(box.instance)
            dependencies[ObjectIdentifier(declared.dependencyType)] = box
        }
        let relays = center.declaredRelays
        for relay in relays { try relay.host(self, runtime: runtime) }
        relayList = relays.map(\.serviceNode)
        wantsBefore = observer != nil || !links.changes.isEmpty
        self.renderer = renderer
        let children = wiring.withLock { wiring in
            wiring.mounted = true
            wiring.runtime = runtime
            wiring.renderer = renderer
            wiring.relays = relays
            return wiring.childOrder.compactMap { wiring.children[$0] }
        }
        runtime.register(self)
        // The mount's render and appear links first, then the events sent before mounting, in order.
        let first = [Job.render(fromLink: false)] + (links.dependant + links.onAppear).compactMap(linkJob)
        engine.mailbox.start(first: first)
        for mountChild in children { try mountChild(runtime) }
    }

    /// Stops taking events, cancels async work in flight, unmounts children, releases relays.
    public func unmount() {
        let (children, relays, runtime) = wiring.withLock { wiring in
            wiring.mounted = false
            wiring.renderer = nil
            wiring.parent = nil
            let relays = wiring.relays
            wiring.relays = []
            return (wiring.listeners, relays, wiring.runtime)
        }
        engine.mailbox.close()
        for relay in relays { relay.unhost(self) }
        runtime?.unregister(self)
        for child in children { (child as? any Unmountable)?.unmount() }
    }

    func wire(child: any GraniteNode, attach: Bool, listen: Bool,
              mount: @escaping @Sendable (GraniteRuntime) throws(GraniteError) -> Void) {
        let id = ObjectIdentifier(child)
        let runtime: GraniteRuntime? = wiring.withLock { wiring in
            if listen, !wiring.listeners.contains(where: { $0 === child }) { wiring.listeners.append(child) }
            if wiring.children[id] == nil { wiring.childOrder.append(id) }
            wiring.children[id] = mount
            return wiring.mounted ? wiring.runtime : nil
        }
        if let runtime { try? mount(runtime) }
    }

    func setParent(_ parent: any GraniteNode) {
        wiring.withLock { $0.parent = parent }
    }

    /// Installs the observer the test store and metrics use; only before mounting.
    package func observe(_ observer: @escaping @Sendable (GraniteRecord<State>) -> Void) {
        precondition(!isMounted, "observe(_:) must be called before the component mounts")
        self.observer = observer
    }

    // MARK: EngineHost

    func didReduce(behavior: GraniteEventBehavior, fromLink: Bool, failed: Bool) {
        if !failed && behavior != .quiet { render(fromLink: fromLink) }
    }

    func didReduce(_ event: any GraniteEvent, fromLink: Bool, before: State, after: State, error: GraniteError?) {
        var rendered = 0
        if error == nil && event.behavior != .quiet {
            render(fromLink: fromLink)
            rendered = 1
        }
        for link in links.changes where link.changed(before, after) { enqueueLink(link.event) }
        observer?(GraniteRecord(event: event, before: before, after: after, renders: rendered, error: error))
    }

    func detach() { renderer = nil }

    func performRender(fromLink: Bool) {
        render(fromLink: fromLink)
        if let observer {
            let state = engine.state
            observer(GraniteRecord(event: nil, before: state, after: state, renders: 1, error: nil))
        }
    }

    private func render(fromLink: Bool) {
        engine.commit()  // the body reads `state`: publish the reducer's change first
        renders.add(1, ordering: .relaxed)
        renderer?()
        if !fromLink { for event in links.always { enqueueLink(event) } }
    }

    /// A link's event as a job for the mailbox (nil, reported, when no expedition takes it).
    private func linkJob(_ event: any GraniteEvent) -> Job? {
        let key = EventKey(type(of: event))
        guard let route = engine.route(key) else {
            report(.noExpedition(event: String(reflecting: type(of: event)), component: nodeName))
            return nil
        }
        return .event(event, route, replyTo: nil, fromLink: true)
    }

    private func enqueueLink(_ event: any GraniteEvent) {
        let key = EventKey(type(of: event))
        guard engine.handles(key) else {
            report(.noExpedition(event: String(reflecting: type(of: event)), component: nodeName))
            return
        }
        engine.submit(event, key: key, replyTo: nil, fromLink: true)
    }

    // MARK: GraniteNode

    func handles(_ key: EventKey) -> Bool { engine.handles(key) }

    @discardableResult
    func enqueue(_ event: any GraniteEvent, key: EventKey, replyTo: (any GraniteNode)?) -> Bool {
        engine.submit(event, key: key, replyTo: replyTo, fromLink: false)
    }

    func enqueueRender() { engine.mailbox.submit(.render(fromLink: false)) }

    var parentNode: (any GraniteNode)? { wiring.withLock { $0.parent } }
    var listenerNodes: [any GraniteNode] { wiring.withLock { $0.listeners } }
    var relayNodes: [any GraniteNode] { relayList }
    var runtime: GraniteRuntime? { wiring.withLock { $0.runtime } }

    func report(_ error: GraniteError) {
        (runtime ?? GraniteRuntime.shared).report(error)
    }

    func dependency(_ id: ObjectIdentifier) -> DependencyBox? { dependencies[id] }

    func broadcastToHosts(_ event: any GraniteEvent, key: EventKey) { hearDown(event, key: key) }
    var jobsAccepted: UInt64 { engine.mailbox.accepted }
    func waitUntilIdle() async { await engine.mailbox.waitUntilIdle() }
}

/// Things the parent can unmount without knowing their types.
protocol Unmountable { func unmount() }
extension GraniteCommand: Unmountable {}

extension LinkSet {
    static var empty: LinkSet { try! LinkSet([], state: EmptyLinkState.self, component: "") }
}

private struct EmptyLinkState: GraniteState {}

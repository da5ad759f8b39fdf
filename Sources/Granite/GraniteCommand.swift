import GraniteSync
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
///
/// Ownership runs one way: the component's caller (and, while mounted, its runtime and its
/// parent) hold the command; the command holds its center, engine, children and relays. A
/// child's reference to its parent and the engine's shared connection exist only while mounted,
/// so once ``unmount()`` has run (and work in flight finished) nothing inside the tree holds it:
/// it is freed when its caller lets go.
///
/// `@unchecked Sendable` — invariant: the mutable wiring is behind `wiring` (a `Locked`); the
/// `nonisolated(unsafe)` fields below are written only at mount (the mailbox is held, so no
/// reducer runs) and at ``detach()`` (the mailbox is closed and idle, so none runs again), and
/// read only by the mailbox's one drainer.
public final class GraniteCommand<Center: GraniteCenter<State>, State: GraniteState>: EngineHost, TreeNode, @unchecked Sendable {
    /// The component's center (expeditions, links, relays, dependencies).
    public let center: Center
    let engine: Engine<GraniteCommand<Center, State>>
    /// A readable name for errors: the center's type (made only when an error needs it).
    var nodeName: String { String(reflecting: Center.self) }
    let centerID: ObjectIdentifier
    let centerBehavior: GraniteEventBehavior

    private enum Phase { case new, mounted, unmounted }

    /// A wired child: how to mount it, and whether it contacts up to us and/or hears from us.
    private struct Child {
        let node: any TreeNode
        var attached: Bool
        var mount: @Sendable (GraniteRuntime) throws(GraniteError) -> Void
    }

    private struct Wiring: ~Copyable {
        var phase = Phase.new
        var runtime: GraniteRuntime?
        /// The component this one is attached to, set while mounted (the parent owns its children;
        /// this back reference is cleared at unmount, so it never keeps a tree alive).
        var parent: (any TreeNode)?
        var listeners: [any GraniteNode] = []
        /// In wiring order.
        var children: [Child] = []
        var relays: [any GraniteRelay] = []
    }

    private let wiring = Locked(Wiring())
    private let renders = Atomic<Int>(0)
    /// `wiring.listeners.count`, written under `wiring`'s lock, so a broadcast or `hear` that
    /// reaches a component with no listeners (most of them) takes no lock and copies nothing.
    private let listenerCount = Atomic<Int>(0)
    // Invariant for the five below: see the type's comment (written at mount and detach only,
    // read by the one drainer); exclusivity is proved by the mailbox, so its checks are skipped.
    @exclusivity(unchecked) nonisolated(unsafe) private var links = LinkSet.empty
    @exclusivity(unchecked) nonisolated(unsafe) private var dependencies: [ObjectIdentifier: DependencyBox] = [:]
    @exclusivity(unchecked) nonisolated(unsafe) private var relayList: [any GraniteNode] = []
    @exclusivity(unchecked) nonisolated(unsafe) private var observer: (@Sendable (GraniteRecord<State>) -> Void)?
    @exclusivity(unchecked) nonisolated(unsafe) private(set) var wantsBefore = false
    /// Holds the component (its `body`), so it exists only while mounted.
    @exclusivity(unchecked) nonisolated(unsafe) private var renderer: (@Sendable () -> Void)?

    /// A command for a component starting from `state`.
    public init(state: State = State()) {
        let center = Center()
        self.center = center
        centerID = ObjectIdentifier(Center.self)
        centerBehavior = center.behavior
        engine = Engine(state: state, expeditions: center.expeditions, name: String(reflecting: Center.self), home: nil, held: true)
        engine.host = self
    }

    /// The current state (a snapshot). Inside a reducer, use its `state` parameter instead.
    public var state: State { engine.state }

    /// How many times this component rendered (evaluated its `body`).
    public var renderCount: Int { renders.load(ordering: .relaxed) }

    /// Whether the component is mounted (and so takes events).
    public var isMounted: Bool { wiring.withLock { $0.phase == .mounted } }

    /// Events sent before mounting, waiting for it (0 once mounted).
    public var waitingForMount: Int { engine.mailbox.heldCount }

    /// Sends an event to this component's own expedition (before mounting: queued, reduced once it
    /// mounts). The public way is the component's ``GraniteComponent/sendEvent(_:_:)``.
    package func send(_ event: some GraniteEvent) throws(GraniteError) {
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
        switch wiring.withLock({ $0.phase }) {
        case .mounted: return
        case .unmounted: throw .unmounted(component: nodeName)
        case .new: break
        }
        if let error = engine.tableError { throw error }
        links = try LinkSet(center.links, state: State.self, component: nodeName)
        let parts = center.declaredParts
        for declared in parts.dependencies {
            let box = try runtime.resolve(declared.dependencyType)
            declared.bind(box.instance)
            dependencies[ObjectIdentifier(declared.dependencyType)] = box
        }
        let relays = parts.relays
        for relay in relays { try relay.host(self, runtime: runtime) }
        relayList = relays.map(\.serviceNode)
        wantsBefore = observer != nil || !links.changes.isEmpty
        self.renderer = renderer
        engine.connect()
        let children = wiring.withLock { wiring in
            wiring.phase = .mounted
            wiring.runtime = runtime
            wiring.relays = relays
            return wiring.children
        }
        runtime.register(self)
        // The mount's render and appear links first, then the events sent before mounting, in order.
        let first = [Job.render(fromLink: false)] + (links.dependant + links.onAppear).compactMap(linkJob)
        engine.mailbox.start(first: first)
        for child in children { try mount(child, runtime: runtime) }
    }

    private func mount(_ child: Child, runtime: GraniteRuntime) throws(GraniteError) {
        if child.attached { child.node.setParent(self) }
        try child.mount(runtime)
    }

    /// Unmounts the whole subtree: stops taking events (queued ones are dropped, async work in
    /// flight is cancelled), releases the relays it hosts, unmounts every child — attached or
    /// listening — and leaves its parent. Once the work in flight has finished, nothing in the
    /// tree refers to this component any more. A component once unmounted cannot mount again.
    public func unmount() {
        let taken: (children: [Child], relays: [any GraniteRelay], runtime: GraniteRuntime?, parent: (any TreeNode)?)? =
            wiring.withLock { wiring in
                guard wiring.phase != .unmounted else { return nil }
                wiring.phase = .unmounted
                defer {
                    wiring.children = []
                    wiring.listeners = []
                    listenerCount.store(0, ordering: .releasing)
                    wiring.relays = []
                    wiring.parent = nil
                    // `runtime` stays: an async reducer cancelled by this unmount reports there.
                }
                return (wiring.children, wiring.relays, wiring.runtime, wiring.parent)
            }
        guard let taken else { return }
        engine.mailbox.close()
        for relay in taken.relays { relay.unhost(self) }
        taken.runtime?.unregister(self)
        for child in taken.children { child.node.unmount() }
        taken.parent?.forget(child: self)
    }

    func wire(child: any TreeNode, attach: Bool, listen: Bool,
              mount: @escaping @Sendable (GraniteRuntime) throws(GraniteError) -> Void) {
        let wired: (child: Child, runtime: GraniteRuntime)? = wiring.withLock { wiring in
            guard wiring.phase != .unmounted else { return nil }
            if listen, !wiring.listeners.contains(where: { $0 === child }) {
                wiring.listeners.append(child)
                listenerCount.store(wiring.listeners.count, ordering: .releasing)
            }
            let entry: Child
            if let i = wiring.children.firstIndex(where: { $0.node === child }) {
                wiring.children[i].attached = wiring.children[i].attached || attach
                wiring.children[i].mount = mount
                entry = wiring.children[i]
            } else {
                entry = Child(node: child, attached: attach, mount: mount)
                wiring.children.append(entry)
            }
            guard wiring.phase == .mounted, let runtime = wiring.runtime else { return nil }
            return (entry, runtime)
        }
        if let wired { try? self.mount(wired.child, runtime: wired.runtime) }
    }

    func setParent(_ parent: any TreeNode) {
        wiring.withLock { $0.parent = parent }
    }

    /// A child unmounted on its own: it is no longer ours to hear from, mount or unmount.
    func forget(child: any TreeNode) {
        wiring.withLock { wiring in
            wiring.children.removeAll { $0.node === child }
            wiring.listeners.removeAll { $0 === child }
            listenerCount.store(wiring.listeners.count, ordering: .releasing)
        }
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

    /// The mailbox is closed and idle: nothing reduces or renders here again, so what reducing
    /// and rendering held goes (the renderer holds the component, the relays their services).
    func detach() {
        renderer = nil
        observer = nil
        links = .empty
        dependencies = [:]
        relayList = []
    }

    func performRender(fromLink: Bool) {
        render(fromLink: fromLink)
        if let observer {
            let state = engine.state
            observer(GraniteRecord(event: nil, before: state, after: state, renders: 1, error: nil))
        }
    }

    private func render(fromLink: Bool) {
        engine.commitForRender()  // the body reads `state`: the reducer's change first
        // Only the drainer renders, so a plain store counts (no locked read-modify-write).
        renders.store(renders.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
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
    var listenerNodes: [any GraniteNode] {
        listenerCount.load(ordering: .acquiring) == 0 ? [] : wiring.withLock { $0.listeners }
    }
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

/// A component's runtime as its parent sees it, whatever its types.
protocol TreeNode: GraniteNode {
    /// Unmounts it and its subtree.
    func unmount()
    /// Makes `parent` its `.contact` target (while mounted).
    func setParent(_ parent: any TreeNode)
    /// Drops a child that unmounted on its own.
    func forget(child: any TreeNode)
}

extension LinkSet {
    static var empty: LinkSet { try! LinkSet([], state: EmptyLinkState.self, component: "") }
}

private struct EmptyLinkState: GraniteState {}

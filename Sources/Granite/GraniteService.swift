import Dispatch
import GraniteSync
import Synchronization

/// Marks relay runtimes for the router.
protocol AnyGraniteService: GraniteNode {}

/// A relay's runtime: like a ``GraniteCommand`` but with its own executor, hosts instead of a
/// parent, and no render step.
///
/// ```
///  component ─.rebound─► [relay mailbox on its own queue] ─► expedition ─.rebound─► that component
///  relay work (thread, timer) ─► broadcast(event) ─► every broadcastable host's mailbox
///                                                   └─► their broadcastable listening children
/// ```
///
/// Lifetime: the relay's owner (the center that stores it, or ``GraniteRelay/shared``'s registry)
/// holds the service; its hosts are held only while they host it, and no connection of its own
/// refers back to it, so a relay whose owner lets go is freed once its queued work has run.
///
/// `@unchecked Sendable` — invariant: the only non-`Sendable` field is `center`, which is read
/// at hosting (its declared dependencies, under `hosting`'s lock) and by the reducers on the
/// relay's one executor; everything mutable is behind `hosting` (a `Locked`) or the engine.
public final class GraniteService<Center: GraniteCenter<State>, State: GraniteState>: EngineHost, AnyGraniteService, @unchecked Sendable {
    /// The relay's center.
    public let center: Center
    let engine: Engine<GraniteService<Center, State>>
    /// A readable name for errors: the center's type (made only when an error needs it).
    var nodeName: String { String(reflecting: Center.self) }
    let centerID: ObjectIdentifier
    let centerBehavior: GraniteEventBehavior
    /// The relay's own serial executor.
    public let executor: GraniteExecutor

    private struct Hosting: ~Copyable {
        /// Held until they unmount.
        var hosts: [any GraniteNode] = []
        var runtime: GraniteRuntime?
        var dependencies: [ObjectIdentifier: DependencyBox] = [:]
    }

    private let hosting = Locked(Hosting())
    let wantsBefore = false

    /// A relay runtime starting from `state`, reducing on its own serial executor.
    public init(state: State = State(), qos: DispatchQoS.QoSClass = .default) {
        let center = Center()
        self.center = center
        centerID = ObjectIdentifier(Center.self)
        centerBehavior = center.behavior
        executor = GraniteExecutor(label: "granite.relay.\(Center.self)", qos: DispatchQoS(qosClass: qos, relativePriority: 0))
        engine = Engine(state: state, expeditions: center.expeditions, name: String(reflecting: Center.self), home: executor)
        engine.host = self
    }

    /// The relay's current state (a snapshot).
    public var state: State { engine.state }

    /// Queues an event for the relay's own expedition (reduced on the relay's executor). The
    /// public way is the relay's ``GraniteRelay/sendEvent(_:)``.
    package func send(_ event: some GraniteEvent) throws(GraniteError) {
        if engine.submitting(event, key: EventKey(type(of: event)), replyTo: nil, fromLink: false) == .noRoute {
            throw .noExpedition(event: String(reflecting: type(of: event)), component: nodeName)
        }
    }

    /// Delivers an event to every broadcastable host with an expedition for it, and down each
    /// host's listening children to every broadcastable one that has an expedition for it (the
    /// seeds' "relays initialized higher in a component tree send to all child components ready
    /// to hear broadcasts"); returns how many reduce it.
    @discardableResult
    public func broadcast(_ event: some GraniteEvent) -> Int {
        deliver(event, key: EventKey(type(of: event)))
    }

    /// How many components host this relay now.
    public var hostCount: Int { hosting.withLock { $0.hosts.count } }

    /// Waits until every event queued to the relay so far has been reduced.
    public func settle() async { await engine.mailbox.waitUntilIdle() }

    private func deliver(_ event: any GraniteEvent, key: EventKey) -> Int {
        let hosts = hosting.withLock { $0.hosts }
        var delivered = 0
        for host in hosts {
            if host.centerBehavior == .broadcastable, host.enqueue(event, key: key, replyTo: nil) {
                delivered += 1
            }
            delivered += host.broadcastDown(event, key: key)
        }
        return delivered
    }

    /// Adds a host; true when it is the first (the relay should set up).
    func addHost(_ node: any GraniteNode, runtime: GraniteRuntime) throws(GraniteError) -> Bool {
        let first = hosting.withLock { $0.runtime == nil }
        if first {
            if let error = engine.tableError { throw error }
            var boxes: [ObjectIdentifier: DependencyBox] = [:]
            for declared in center.declaredParts.dependencies {
                let box = try runtime.resolve(declared.dependencyType)
                declared.bind(box.instance)
                boxes[ObjectIdentifier(declared.dependencyType)] = box
            }
            hosting.withLock { hosting in
                hosting.runtime = runtime
                hosting.dependencies = boxes
            }
        }
        return hosting.withLock { hosting in
            let wasEmpty = hosting.hosts.isEmpty
            if !hosting.hosts.contains(where: { $0 === node }) { hosting.hosts.append(node) }
            return wasEmpty
        }
    }

    /// Removes a host; true when it was the last (the relay should cancel and clean). The last
    /// host's leaving also lets go of the runtime and the dependencies: a next host resolves them anew.
    func removeHost(_ node: any GraniteNode) -> Bool {
        hosting.withLock { hosting in
            let before = hosting.hosts.count
            hosting.hosts.removeAll { $0 === node }
            guard before > 0 && hosting.hosts.isEmpty else { return false }
            hosting.runtime = nil
            hosting.dependencies = [:]
            return true
        }
    }

    // MARK: EngineHost and GraniteNode

    func didReduce(behavior: GraniteEventBehavior, fromLink: Bool, failed: Bool) {}
    func didReduce(_ event: any GraniteEvent, fromLink: Bool, before: State, after: State, error: GraniteError?) {}
    func performRender(fromLink: Bool) {}
    func detach() {}
    func handles(_ key: EventKey) -> Bool { engine.handles(key) }

    @discardableResult
    func enqueue(_ event: any GraniteEvent, key: EventKey, replyTo: (any GraniteNode)?) -> Bool {
        engine.submit(event, key: key, replyTo: replyTo, fromLink: false)
    }

    func enqueueRender() {}
    var parentNode: (any GraniteNode)? { nil }
    var listenerNodes: [any GraniteNode] { [] }
    var relayNodes: [any GraniteNode] { [] }
    var runtime: GraniteRuntime? { hosting.withLock { $0.runtime } }
    func report(_ error: GraniteError) { (runtime ?? GraniteRuntime.shared).report(error) }
    func dependency(_ id: ObjectIdentifier) -> DependencyBox? { hosting.withLock { $0.dependencies[id] } }
    func broadcastToHosts(_ event: any GraniteEvent, key: EventKey) { _ = deliver(event, key: key) }
    var jobsAccepted: UInt64 { engine.mailbox.accepted }
    func waitUntilIdle() async { await engine.mailbox.waitUntilIdle() }
}

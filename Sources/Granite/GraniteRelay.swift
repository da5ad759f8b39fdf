import GraniteSync

/// A service components host: capture, inference, uploads — work with its own executor.
///
/// ```swift
/// struct CounterRelay: GraniteRelay {
///     let command = GraniteService<CounterCenter, CounterState>()
///     func setup() { /* start a timer, open a device */ }
///     func cancel() { /* stop it */ }
/// }
/// ```
/// A center hosts a relay by holding it as a stored property. Components ask it with
/// `.rebound` requests (it answers the one that asked); it reaches every broadcastable host, and
/// the broadcastable children listening to them, with ``GraniteService/broadcast(_:)`` — a
/// standing subscription, the way a frame stream works.
/// Its reducers run on its own executor, so a relay never blocks a component, and a render never
/// stops it: only unmounting its last host does (``cancel()``, then ``clean()``).
public protocol GraniteRelay: Sendable {
    associatedtype GenericCenter: GraniteCenter<GenericState>
    associatedtype GenericState: GraniteState
    /// The relay's runtime.
    var command: GraniteService<GenericCenter, GenericState> { get }
    init()
    /// Called when the first host mounts.
    func setup()
    /// Called after ``cancel()`` when the last host unmounts.
    func clean()
    /// Called when the last host unmounts: stop producing work.
    func cancel()
}

extension GraniteRelay {
    public func setup() {}
    public func clean() {}
    public func cancel() {}

    /// The relay's current state.
    public var state: GenericState { command.state }

    /// One instance per relay type, for relays several components share. It lives as long as
    /// its registry entry: for the rest of the process, or until ``releaseShared()``.
    public static var shared: Self { RelayRegistry.instance(of: Self.self) }

    /// Drops the registry's instance behind ``shared`` (a later `shared` makes a new one); the
    /// relay is freed once its hosts have unmounted and nobody else holds it.
    public static func releaseShared() { RelayRegistry.release(Self.self) }

    /// Queues an event for the relay's own expedition (reduced on the relay's executor).
    public func sendEvent(_ event: some GraniteEvent) throws(GraniteError) {
        try command.send(event)
    }

    var serviceNode: any GraniteNode { command }

    func host(_ node: any GraniteNode, runtime: GraniteRuntime) throws(GraniteError) {
        if try command.addHost(node, runtime: runtime) { setup() }
    }

    func unhost(_ node: any GraniteNode) {
        if command.removeHost(node) {
            cancel()
            clean()
        }
    }
}

/// The process-wide instances behind ``GraniteRelay/shared``.
enum RelayRegistry {
    private static let instances = Locked<[ObjectIdentifier: any Sendable]>([:])

    static func instance<R: GraniteRelay>(of type: R.Type) -> R {
        instances.withLock { instances in
            if let relay = instances[ObjectIdentifier(type)] as? R { return relay }
            let relay = R()
            instances[ObjectIdentifier(type)] = relay
            return relay
        }
    }

    static func release<R: GraniteRelay>(_ type: R.Type) {
        _ = instances.withLock { $0.removeValue(forKey: ObjectIdentifier(type)) }
    }
}

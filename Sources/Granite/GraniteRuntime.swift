import DequeModule
import Logging
import GraniteSync

/// The world a tree of components lives in: its shared dependencies, the registry of mounted
/// components (for ``GraniteLander/target(_:)``), and where uncatchable errors go.
///
/// Most programs use ``shared``; tests make their own so nothing leaks between them.
public final class GraniteRuntime: Sendable {
    /// The process-wide runtime.
    public static let shared = GraniteRuntime()

    private struct Inner: ~Copyable {
        var dependencies: [ObjectIdentifier: DependencyBox] = [:]
        var configured: [String] = []
        /// Mounted components, held until they unmount (a mounted component is part of the program).
        var mounted: [ObjectIdentifier: [any GraniteNode]] = [:]
        /// The most recent errors (at most `errorLimit`); `errorCount` counts every one ever reported.
        var errors = Deque<GraniteError>()
        var errorCount = 0
        var onError: (@Sendable (GraniteError) -> Void)?
    }

    private let inner = Locked(Inner())
    private let logger: Logger
    /// How many recent errors ``errors`` keeps; older ones are only counted and logged.
    public let errorLimit: Int

    /// A fresh runtime with no dependencies created yet; it keeps the last `errorLimit` errors.
    public init(logger: Logger = Logger(label: "granite"), errorLimit: Int = 1024) {
        self.logger = logger
        self.errorLimit = max(1, errorLimit)
    }

    /// Installs a handler for errors raised where no caller can catch them (routing, async reducers).
    public func onError(_ handler: @escaping @Sendable (GraniteError) -> Void) {
        inner.withLock { $0.onError = handler }
    }

    /// The most recent errors (at most ``errorLimit``), oldest first. A long-running program that
    /// keeps failing does not grow without bound: ``errorCount`` still counts every one.
    public var errors: [GraniteError] { inner.withLock { Array($0.errors) } }

    /// How many errors were reported since the runtime was made (also those no longer kept).
    public var errorCount: Int { inner.withLock { $0.errorCount } }

    /// The errors reported after the first `count` ever reported (as far as they are still kept),
    /// how many of those were no longer kept, and the total so far (the next call's `count`).
    public func errors(after count: Int) -> (errors: [GraniteError], lost: Int, total: Int) {
        inner.withLock { inner in
            let firstKept = inner.errorCount - inner.errors.count
            let skip = max(0, count - firstKept)
            let lost = max(0, firstKept - count)
            return (Array(inner.errors.dropFirst(skip)), lost, inner.errorCount)
        }
    }

    /// Dependency type names in the order they were configured.
    public var configurationOrder: [String] { inner.withLock { $0.configured } }

    func report(_ error: GraniteError) {
        let handler = inner.withLock { inner in
            inner.errors.append(error)
            inner.errorCount += 1
            if inner.errors.count > errorLimit { inner.errors.removeFirst() }
            return inner.onError
        }
        logger.error("\(error.description)")
        handler?(error)
    }

    /// The dependency of this type, if a mounted component already resolved it.
    public func dependency<D: GraniteDependable>(_ type: D.Type) -> D? {
        inner.withLock { $0.dependencies[ObjectIdentifier(type)]?.instance as? D }
    }

    /// Creates (once) and configures a dependency and, first, everything it depends on.
    func resolve(_ type: any GraniteDependable.Type) throws(GraniteError) -> DependencyBox {
        try inner.withLock { (inner) throws(GraniteError) -> DependencyBox in
            try Self.resolve(type, path: [], into: &inner.dependencies, order: &inner.configured)
        }
    }

    private static func resolve(
        _ type: any GraniteDependable.Type, path: [any GraniteDependable.Type],
        into store: inout [ObjectIdentifier: DependencyBox], order: inout [String]
    ) throws(GraniteError) -> DependencyBox {
        let id = ObjectIdentifier(type)
        if let box = store[id] { return box }
        if let start = path.firstIndex(where: { ObjectIdentifier($0) == id }) {
            throw .dependencyCycle(chain: (path[start...] + [type]).map { String(reflecting: $0) })
        }
        for dependency in type.dependencies {
            _ = try resolve(dependency, path: path + [type], into: &store, order: &order)
        }
        let instance = type.init()
        instance.configure()
        let box = DependencyBox(instance)
        store[id] = box
        order.append(String(reflecting: type))
        return box
    }

    func register(_ node: any GraniteNode) {
        inner.withLock { inner in
            inner.mounted[node.centerID, default: []].append(node)
        }
    }

    func unregister(_ node: any GraniteNode) {
        inner.withLock { inner in
            inner.mounted[node.centerID]?.removeAll { $0 === node }
        }
    }

    /// Waits until every component mounted in this runtime, and every relay they host, has
    /// reduced everything queued — follow-ups included, however they bounce between components
    /// and relays. The shutdown step: after the work's producers stopped, `drain()` then unmount.
    ///
    /// A pass waits for each node in turn; the runtime is drained when a whole pass saw no node
    /// accept a new job. Work outside the tree (a thread or task that will send later) is the
    /// caller's to stop first.
    public func drain() async {
        while true {
            let nodes = drainableNodes()
            let before = nodes.reduce(UInt64(0)) { $0 &+ $1.jobsAccepted }
            for node in nodes { await node.waitUntilIdle() }
            let after = drainableNodes()
            if after.count == nodes.count, after.reduce(UInt64(0), { $0 &+ $1.jobsAccepted }) == before { return }
        }
    }

    /// The mounted components and the relays they host, each once.
    private func drainableNodes() -> [any GraniteNode] {
        let components = inner.withLock { $0.mounted.values.flatMap { $0 } }
        var seen = Set<ObjectIdentifier>()
        var nodes: [any GraniteNode] = []
        for node in components + components.flatMap(\.relayNodes) where seen.insert(ObjectIdentifier(node)).inserted {
            nodes.append(node)
        }
        return nodes
    }

    func mounted(center: ObjectIdentifier) -> [any GraniteNode] {
        inner.withLock { $0.mounted[center] ?? [] }
    }
}

import Logging
import Synchronization

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
        var mounted: [ObjectIdentifier: [WeakNode]] = [:]
        var errors: [GraniteError] = []
        var onError: (@Sendable (GraniteError) -> Void)?
    }

    private let inner = Mutex(Inner())
    private let logger: Logger

    /// A fresh runtime with no dependencies created yet.
    public init(logger: Logger = Logger(label: "granite")) {
        self.logger = logger
    }

    /// Installs a handler for errors raised where no caller can catch them (routing, async reducers).
    public func onError(_ handler: @escaping @Sendable (GraniteError) -> Void) {
        inner.withLock { $0.onError = handler }
    }

    /// Every error reported so far, oldest first.
    public var errors: [GraniteError] { inner.withLock { $0.errors } }

    /// Dependency type names in the order they were configured.
    public var configurationOrder: [String] { inner.withLock { $0.configured } }

    func report(_ error: GraniteError) {
        let handler = inner.withLock { inner in
            inner.errors.append(error)
            return inner.onError
        }
        logger.error("\(error.description)")
        handler?(error)
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
            inner.mounted[node.centerID, default: []].removeAll { $0.node == nil }
            inner.mounted[node.centerID, default: []].append(WeakNode(node))
        }
    }

    func unregister(_ node: any GraniteNode) {
        inner.withLock { inner in
            inner.mounted[node.centerID]?.removeAll { $0.node == nil || $0.node === node }
        }
    }

    func mounted(center: ObjectIdentifier) -> [any GraniteNode] {
        inner.withLock { $0.mounted[center]?.compactMap(\.node) ?? [] }
    }
}

import GraniteSync

/// A shared object several components read and update: user data, settings, a model.
///
/// Declare what it needs in ``dependencies``; they are created and configured first (Spezi's
/// order). A circle is an error naming the chain. Reads and writes through a connection's
/// `retrieve`/`update` are serialised per dependency.
public protocol GraniteDependable: AnyObject, Sendable {
    init()
    /// Dependables this one needs configured before it.
    static var dependencies: [any GraniteDependable.Type] { get }
    /// Called once, after every dependency in ``dependencies`` was configured.
    func configure()
}

extension GraniteDependable {
    public static var dependencies: [any GraniteDependable.Type] { [] }
    public func configure() {}
}

/// One dependency instance with the lock that serialises `retrieve` and `update`.
final class DependencyBox: Sendable {
    let instance: any GraniteDependable
    private let lock = Locked(())

    init(_ instance: any GraniteDependable) { self.instance = instance }

    func read<V>(_ body: (any GraniteDependable) -> V) -> V {
        lock.withLock { _ in body(instance) }
    }

    func write(_ body: (any GraniteDependable) -> Void) {
        lock.withLock { _ in body(instance) }
    }
}

/// Declares a dependency in a center: `@GraniteDependency var env: EnvironmentDependency`.
@propertyWrapper
public final class GraniteDependency<D: GraniteDependable>: AnyGraniteDependency, Sendable {
    private let box = Locked<D?>(nil)

    public init() {}

    /// The resolved instance. Reading it before the component mounted is a programming error.
    public var wrappedValue: D {
        guard let value = box.withLock({ $0 }) else {
            preconditionFailure("@GraniteDependency \(D.self) read before its component mounted")
        }
        return value
    }

    var dependencyType: any GraniteDependable.Type { D.self }

    func bind(_ instance: any GraniteDependable) {
        box.withLock { $0 = (instance as! D) }
    }
}

/// Type-erased face of ``GraniteDependency`` for discovery by reflection.
protocol AnyGraniteDependency: Sendable {
    var dependencyType: any GraniteDependable.Type { get }
    func bind(_ instance: any GraniteDependable)
}

import GraniteSync

/// Center types whose instances declare no dependency and no relay (their stored properties are
/// fixed by the type, so one reflection says it for all of them).
private let centersWithoutParts = Locked<Set<ObjectIdentifier>>([])

/// The seed's `GraniteAdAstra`: what every center is, whatever its state type.
public protocol AnyGraniteCenter: AnyObject {}

/// A component's rules: its expeditions (reducers), links, dependencies, relays and behaviour.
///
/// ```swift
/// final class MainCenter: GraniteCenter<MainState> {
///     @GraniteDependency var env: EnvironmentDependency
///     let counter = CounterRelay.shared
///     override var expeditions: [GraniteBaseExpedition] { [PingExpedition.Discovery()] }
///     override var links: [GraniteLink] { [.onAppear(MainEvents.Prepare(), .dependant)] }
///     override var behavior: GraniteEventBehavior { .broadcastable }
/// }
/// ```
/// Relays and dependencies are found by reflection on the center's stored properties, so
/// declaring them is all it takes. The computed properties are read once, at mount.
open class GraniteCenter<State: GraniteState>: AnyGraniteCenter {
    public required init() {}

    /// The reducers this component runs, one per event type.
    open var expeditions: [GraniteBaseExpedition] { [] }

    /// Events fired on appearance, on render, or on a state change.
    open var links: [GraniteLink] { [] }

    /// How events heard from the parent and relay broadcasts are treated (seed default: `.quiet`).
    open var behavior: GraniteEventBehavior { .quiet }

    /// The dependencies and relays among the stored properties of this center and its
    /// superclasses, found in one reflection walk. A center type found to declare neither is
    /// remembered, so mounting its later instances reflects nothing.
    final var declaredParts: (dependencies: [any AnyGraniteDependency], relays: [any GraniteRelay]) {
        let type = ObjectIdentifier(Swift.type(of: self))
        if centersWithoutParts.withLock({ $0.contains(type) }) { return ([], []) }
        var dependencies: [any AnyGraniteDependency] = [], relays: [any GraniteRelay] = []
        var mirror: Mirror? = Mirror(reflecting: self)
        while let m = mirror {
            for child in m.children {
                if let dependency = child.value as? any AnyGraniteDependency { dependencies.append(dependency) }
                else if let relay = child.value as? any GraniteRelay { relays.append(relay) }
            }
            mirror = m.superclassMirror
        }
        if dependencies.isEmpty && relays.isEmpty { centersWithoutParts.withLock { _ = $0.insert(type) } }
        return (dependencies, relays)
    }

}

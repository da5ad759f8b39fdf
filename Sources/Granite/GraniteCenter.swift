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

    /// The stored properties of this center and its superclasses.
    final var storedValues: [Any] {
        var values: [Any] = []
        var mirror: Mirror? = Mirror(reflecting: self)
        while let m = mirror {
            values.append(contentsOf: m.children.map(\.value))
            mirror = m.superclassMirror
        }
        return values
    }

    final var declaredDependencies: [any AnyGraniteDependency] {
        storedValues.compactMap { $0 as? any AnyGraniteDependency }
    }

    final var declaredRelays: [any GraniteRelay] {
        storedValues.compactMap { $0 as? any GraniteRelay }
    }
}

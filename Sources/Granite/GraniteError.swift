/// Everything the event core reports, each naming what and where.
public enum GraniteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An event was sent to a component (or relay) whose center has no expedition for it.
    case noExpedition(event: String, component: String)
    /// A `.contact` request bubbled to the top of the tree and nobody handled it.
    case unhandledContact(event: String, from: String, route: [String])
    /// A `.rebound` request found no relay in the component's center that handles the event.
    case noRelay(event: String, component: String)
    /// `retrieve`/`update` named a dependency the component's center does not declare.
    case missingDependency(dependency: String, component: String)
    /// Dependencies depend on each other in a circle; the chain lists it, first == last.
    case dependencyCycle(chain: [String])
    /// An expedition's state type is not its center's state type.
    case stateMismatch(expedition: String, expected: String, actual: String)
    /// Two expeditions in one center reduce the same event type.
    case duplicateExpedition(event: String, component: String)
    /// The component was unmounted; it takes no more events.
    case unmounted(component: String)
    /// A reducer threw.
    case reducerFailed(event: String, component: String, message: String)

    public var description: String {
        switch self {
        case let .noExpedition(event, component):
            return "\(component) has no expedition for event \(event)"
        case let .unhandledContact(event, from, route):
            return "contact event \(event) from \(from) was handled by nobody (tried: \(route.joined(separator: " → ")))"
        case let .noRelay(event, component):
            return "\(component) hosts no relay with an expedition for rebound event \(event)"
        case let .missingDependency(dependency, component):
            return "\(component) does not declare dependency \(dependency) (add @GraniteDependency to its center)"
        case let .dependencyCycle(chain):
            return "dependency cycle: \(chain.joined(separator: " → "))"
        case let .stateMismatch(expedition, expected, actual):
            return "expedition \(expedition) reduces \(actual), but its center's state is \(expected)"
        case let .duplicateExpedition(event, component):
            return "\(component) has two expeditions for event \(event)"
        case let .unmounted(component):
            return "\(component) is unmounted"
        case let .reducerFailed(event, component, message):
            return "reducer for \(event) in \(component) failed: \(message)"
        }
    }
}

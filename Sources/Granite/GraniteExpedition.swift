/// A reducer: it gets one event type, mutates the state `inout`, and acts through the connection.
///
/// ```swift
/// struct PingExpedition: GraniteExpedition {
///     func reduce(event: MainEvents.Ping, state: inout MainState, connection: GraniteConnection) {
///         state.pings += 1
///         connection.hear(event: ChildEvents.Ping())
///     }
/// }
/// ```
/// Synchronous reducers cannot fail; work that can fail belongs in a ``GraniteAsyncExpedition``
/// (whose failure rolls the state back) or in a relay.
public protocol GraniteExpedition: Sendable {
    associatedtype ExpeditionEvent: GraniteEvent
    associatedtype ExpeditionState: GraniteState
    /// Reduces one event into the state.
    func reduce(event: ExpeditionEvent, state: inout ExpeditionState, connection: GraniteConnection)
}

/// A reducer that awaits (I/O, another actor). Events to one component stay strictly ordered:
/// the next event is reduced only after this one returns. If it throws, the state is rolled back
/// and the error is reported as ``GraniteError/reducerFailed(event:component:message:)``.
public protocol GraniteAsyncExpedition: Sendable {
    associatedtype ExpeditionEvent: GraniteEvent
    associatedtype ExpeditionState: GraniteState
    /// Reduces one event into the state, asynchronously.
    func reduce(event: ExpeditionEvent, state: inout ExpeditionState, connection: GraniteConnection) async throws
}

/// An expedition with its types erased, as a center lists them: `[Ping.Discovery(), ...]`.
public struct GraniteBaseExpedition: Sendable {
    let eventKey: EventKey
    let eventName: String
    let stateID: ObjectIdentifier
    let stateName: String
    let name: String
    /// A `Reducer<S>` for the expedition's state type `S`.
    let reducer: any Sendable

    /// Erases a synchronous expedition.
    public init<E: GraniteExpedition>(_ expedition: E) {
        eventKey = EventKey(E.ExpeditionEvent.self)
        eventName = String(reflecting: E.ExpeditionEvent.self)
        stateID = ObjectIdentifier(E.ExpeditionState.self)
        stateName = String(reflecting: E.ExpeditionState.self)
        name = String(reflecting: E.self)
        reducer = Reducer<E.ExpeditionState>.sync { event, state, connection in
            expedition.reduce(event: event as! E.ExpeditionEvent, state: &state, connection: connection)
        }
    }

    /// Erases an asynchronous expedition.
    public init<E: GraniteAsyncExpedition>(_ expedition: E) {
        eventKey = EventKey(E.ExpeditionEvent.self)
        eventName = String(reflecting: E.ExpeditionEvent.self)
        stateID = ObjectIdentifier(E.ExpeditionState.self)
        stateName = String(reflecting: E.ExpeditionState.self)
        name = String(reflecting: E.self)
        reducer = Reducer<E.ExpeditionState>.async { event, state, connection in
            try await expedition.reduce(event: event as! E.ExpeditionEvent, state: &state, connection: connection)
        }
    }
}

extension GraniteExpedition {
    /// This expedition, made discoverable by its center (the seed's `.Discovery()`).
    public func discovery() -> GraniteBaseExpedition { GraniteBaseExpedition(self) }
}

extension GraniteAsyncExpedition {
    /// This expedition, made discoverable by its center (the seed's `.Discovery()`).
    public func discovery() -> GraniteBaseExpedition { GraniteBaseExpedition(self) }
}

/// Expeditions with no configuration, listable the seed's way: `PingExpedition.Discovery()`.
public protocol GraniteDiscoverable {
    init()
}

extension GraniteExpedition where Self: GraniteDiscoverable {
    /// The seed's spelling: `[PingExpedition.Discovery()]`.
    public static func Discovery() -> GraniteBaseExpedition { GraniteBaseExpedition(Self()) }
}

extension GraniteAsyncExpedition where Self: GraniteDiscoverable {
    /// The seed's spelling: `[LoadExpedition.Discovery()]`.
    public static func Discovery() -> GraniteBaseExpedition { GraniteBaseExpedition(Self()) }
}

/// A typed reducer for one state type; the runtime's routing table holds these.
enum Reducer<State: GraniteState>: Sendable {
    case sync(@Sendable (any GraniteEvent, inout State, GraniteConnection) -> Void)
    case async(@Sendable (any GraniteEvent, inout State, GraniteConnection) async throws -> Void)

    var isAsync: Bool {
        if case .async = self { return true }
        return false
    }
}

/// The routing table of one center: event type → reducer, built and checked once at mount.
struct ExpeditionTable<State: GraniteState>: Sendable {
    private(set) var reducers: [EventKey: Reducer<State>] = [:]

    init(_ expeditions: [GraniteBaseExpedition], component: String) throws(GraniteError) {
        for expedition in expeditions {
            guard let reducer = expedition.reducer as? Reducer<State> else {
                throw .stateMismatch(expedition: expedition.name,
                                     expected: String(reflecting: State.self), actual: expedition.stateName)
            }
            guard reducers[expedition.eventKey] == nil else {
                throw .duplicateExpedition(event: expedition.eventName, component: component)
            }
            reducers[expedition.eventKey] = reducer
        }
    }

    @inline(__always)
    func reducer(for key: EventKey) -> Reducer<State>? { reducers[key] }
}

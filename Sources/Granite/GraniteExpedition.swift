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
    private let eventType: any GraniteEvent.Type
    private let stateType: any GraniteState.Type
    private let expeditionType: Any.Type
    // Names for errors, made only when one needs them (a center lists its expeditions at every mount).
    var eventName: String { String(reflecting: eventType) }
    var stateName: String { String(reflecting: stateType) }
    var name: String { String(reflecting: expeditionType) }
    /// Builds the typed route for an engine whose state type matches.
    let box: any ExpeditionBox

    /// Erases a synchronous expedition.
    public init<E: GraniteExpedition>(_ expedition: E) {
        self.init(E.self, event: E.ExpeditionEvent.self, state: E.ExpeditionState.self, box: SyncExpeditionBox(expedition))
    }

    /// Erases an asynchronous expedition.
    public init<E: GraniteAsyncExpedition>(_ expedition: E) {
        self.init(E.self, event: E.ExpeditionEvent.self, state: E.ExpeditionState.self, box: AsyncExpeditionBox(expedition))
    }

    private init(_ type: Any.Type, event: any GraniteEvent.Type, state: any GraniteState.Type, box: any ExpeditionBox) {
        eventKey = EventKey(event)
        eventType = event
        stateType = state
        expeditionType = type
        self.box = box
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

/// Makes the typed route of one expedition for one engine.
protocol ExpeditionBox: Sendable {
    /// The route, or `nil` when the engine's state is not the expedition's state type.
    func makeRoute<Host: EngineHost>(for engine: Engine<Host>) -> Route?
}

struct SyncExpeditionBox<E: GraniteExpedition>: ExpeditionBox {
    let expedition: E
    init(_ expedition: E) { self.expedition = expedition }

    func makeRoute<Host: EngineHost>(for engine: Engine<Host>) -> Route? {
        guard Host.State.self == E.ExpeditionState.self else { return nil }
        return SyncRoute<Host, E>(engine: engine, expedition: expedition)
    }
}

struct AsyncExpeditionBox<E: GraniteAsyncExpedition>: ExpeditionBox {
    let expedition: E
    init(_ expedition: E) { self.expedition = expedition }

    func makeRoute<Host: EngineHost>(for engine: Engine<Host>) -> Route? {
        guard Host.State.self == E.ExpeditionState.self else { return nil }
        return AsyncRoute<Host, E>(engine: engine, expedition: expedition)
    }
}

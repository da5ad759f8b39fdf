/// How to reduce one event type in one node, resolved once at init, so reducing an event is one
/// virtual call: no dictionary, no closure contexts, no reference counting of the engine.
///
/// `@unchecked Sendable` (also for the subclasses) — invariant: immutable after init (`isAsync`,
/// the expedition, the engine pointer); the `Unmanaged` engine is safe because the engine owns
/// its routes (`Engine.routeList`) and runs them only from its own mailbox, so it outlives every
/// call; an async route takes a strong reference for the suspension.
class Route: @unchecked Sendable {
    let isAsync: Bool

    init(isAsync: Bool) { self.isAsync = isAsync }

    /// Reduces a synchronous event (the route's own type; the router checked it).
    func runSync(_ event: any GraniteEvent, replyTo: (any GraniteNode)?, fromLink: Bool) {
        preconditionFailure("runSync on an async route")
    }

    /// Reduces a synchronous event whose static type is the route's event type (the router
    /// matched its key), with no existential box and no dynamic cast.
    func runSync<Event: GraniteEvent>(typed event: Event, replyTo: (any GraniteNode)?, fromLink: Bool) {
        preconditionFailure("runSync on an async route")
    }

    /// Reduces an asynchronous event.
    func runAsync(_ event: any GraniteEvent, replyTo: (any GraniteNode)?, fromLink: Bool) async {
        preconditionFailure("runAsync on a sync route")
    }
}

/// A synchronous expedition bound to one engine. The engine owns its routes, so it outlives them.
final class SyncRoute<Host: EngineHost, E: GraniteExpedition>: Route, @unchecked Sendable {
    private let engine: Unmanaged<Engine<Host>>
    private let expedition: E

    init(engine: Engine<Host>, expedition: E) {
        self.engine = .passUnretained(engine)
        self.expedition = expedition
        super.init(isAsync: false)
    }

    override func runSync(_ event: any GraniteEvent, replyTo: (any GraniteNode)?, fromLink: Bool) {
        runSync(typed: event, replyTo: replyTo, fromLink: fromLink)  // opens the existential
    }

    override func runSync<Event: GraniteEvent>(typed event: Event, replyTo: (any GraniteNode)?, fromLink: Bool) {
        // The router matched `EventKey(Event.self)` to this route, so `Event` is `E.ExpeditionEvent`.
        assert(Event.self == E.ExpeditionEvent.self, "route for \(E.ExpeditionEvent.self) got \(Event.self)")
        engine._withUnsafeGuaranteedRef { engine in
            engine.reduceSync(event, replyTo: replyTo, fromLink: fromLink) { state, connection in
                // The box checked at init that Host.State is E.ExpeditionState; `state` points at it.
                expedition.reduce(event: unsafeBitCast(event, to: E.ExpeditionEvent.self),
                                  state: &state.assumingMemoryBound(to: E.ExpeditionState.self).pointee,
                                  connection: connection)
            }
        }
    }
}

/// An asynchronous expedition bound to one engine.
final class AsyncRoute<Host: EngineHost, E: GraniteAsyncExpedition>: Route, @unchecked Sendable {
    private let engine: Unmanaged<Engine<Host>>
    private let expedition: E

    init(engine: Engine<Host>, expedition: E) {
        self.engine = .passUnretained(engine)
        self.expedition = expedition
        super.init(isAsync: true)
    }

    override func runAsync(_ event: any GraniteEvent, replyTo: (any GraniteNode)?, fromLink: Bool) async {
        let typed = event as! E.ExpeditionEvent
        let expedition = self.expedition
        // Retained for the suspension: the component may be unmounted while this awaits.
        let engine = self.engine.takeUnretainedValue()
        await engine.reduceAsync(event, replyTo: replyTo, fromLink: fromLink) { state, connection in
            var typedState = state as! E.ExpeditionState
            try await expedition.reduce(event: typed, state: &typedState, connection: connection)
            state = typedState as! Host.State
        }
    }
}

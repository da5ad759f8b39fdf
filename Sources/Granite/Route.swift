/// How to reduce one event type in one node, resolved once at init, so reducing an event is one
/// virtual call: no dictionary, no closure contexts, no reference counting of the engine.
class Route: @unchecked Sendable {
    let isAsync: Bool

    init(isAsync: Bool) { self.isAsync = isAsync }

    /// Reduces a synchronous event (the route's own type; the router checked it).
    func runSync(_ event: any GraniteEvent, replyTo: (any GraniteNode)?, fromLink: Bool) {
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
        let typed = event as! E.ExpeditionEvent
        engine._withUnsafeGuaranteedRef { engine in
            engine.reduceSync(event, replyTo: replyTo, fromLink: fromLink) { state, connection in
                // The box checked at init that Host.State is E.ExpeditionState.
                withUnsafeMutablePointer(to: &state) { pointer in
                    pointer.withMemoryRebound(to: E.ExpeditionState.self, capacity: 1) {
                        expedition.reduce(event: typed, state: &$0.pointee, connection: connection)
                    }
                }
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

/// A unit of the program with state, reducers and a render step.
///
/// ```swift
/// struct StatusComponent: GraniteComponent {
///     let command = GraniteCommand<StatusCenter, StatusState>()
///     var body: String { "fps \(state.fps)" }   // the render step
/// }
/// let status = try StatusComponent().mount()
/// try status.sendEvent(StatusEvents.Tick())
/// ```
/// `body` is evaluated once per render; ``GraniteCommand/renderCount`` counts them. Children
/// join with ``attach(to:)`` (their `.contact` events bubble up to the parent) and
/// ``listen(to:)`` (the parent's `hear` reaches them); a child may do both.
public protocol GraniteComponent: Sendable {
    associatedtype GenericCenter: GraniteCenter<GenericState>
    associatedtype GenericState: GraniteState
    associatedtype Body
    /// The component's runtime.
    var command: GraniteCommand<GenericCenter, GenericState> { get }
    /// The render step: a status line, a preview frame, a written file.
    var body: Body { get }
}

extension GraniteComponent {
    /// The component's current state.
    public var state: GenericState { command.state }

    /// The component's center.
    public var center: GenericCenter { command.center }

    /// Mounts the component (and the children wired to it): resolves dependencies, starts
    /// hosted relays, renders once, fires appear links. Idempotent.
    @discardableResult
    public func mount(in runtime: GraniteRuntime = .shared) throws(GraniteError) -> Self {
        try command.mount(runtime: runtime, renderer: { _ = self.body })
        return self
    }

    /// Unmounts the component and its children; queued events are dropped, async work cancelled.
    public func unmount() { command.unmount() }

    /// Sends an event: to this component (`.none`), up to the parent (`.contact`), to a hosted
    /// relay (`.rebound`) or down to listening children (`.broadcast`).
    public func sendEvent(_ event: some GraniteEvent, _ beam: GraniteBeamType = .none) throws(GraniteError) {
        switch beam {
        case .none:
            try command.send(event)
        default:
            guard command.isMounted else { throw .unmounted(component: command.nodeName) }
            GraniteConnection(node: command, replyTo: nil).request(event, beam)
        }
    }

    /// Lets this component's `.contact` events bubble up to `parent`.
    public func attach<C, S>(to parent: GraniteCommand<C, S>) -> Self {
        command.setParent(parent)
        parent.wire(child: command, attach: true, listen: false, mount: mountClosure)
        return self
    }

    /// Lets `parent`'s `hear` reach down into this component.
    public func listen<C, S>(to parent: GraniteCommand<C, S>) -> Self {
        parent.wire(child: command, attach: false, listen: true, mount: mountClosure)
        return self
    }

    private var mountClosure: @Sendable (GraniteRuntime) throws(GraniteError) -> Void {
        { (runtime) throws(GraniteError) in try self.command.mount(runtime: runtime, renderer: { _ = self.body }) }
    }
}

/// An event a center fires by itself: when the component appears, on every render, or when a
/// state value changes.
///
/// ```swift
/// override var links: [GraniteLink] {
///     [.onAppear(MainEvents.Prepare(), .dependant),
///      .onChange(of: \MainState.selection, MainEvents.SelectionChanged())]
/// }
/// ```
public struct GraniteLink: Sendable {
    /// When an appear link fires.
    public enum When: Sendable {
        /// Once, after the component's dependencies resolved (at mount).
        case dependant
        /// Once, when the component first rendered (at mount, after the first render).
        case onAppear
        /// After every render. Renders caused by an `.always` link do not fire links again.
        case always
    }

    enum Trigger: Sendable {
        case appear(When)
        case change(stateID: ObjectIdentifier, path: String, changed: @Sendable (any Sendable, any Sendable) -> Bool)
    }

    let event: any GraniteEvent
    let trigger: Trigger

    /// Fires `event` once after dependencies resolve, once on first appearance, or on every render.
    public static func onAppear(_ event: some GraniteEvent, _ when: When = .dependant) -> GraniteLink {
        GraniteLink(event: event, trigger: .appear(when))
    }

    /// Fires `event` after any reducer changed the value at `keyPath`.
    public static func onChange<S: GraniteState, V: Equatable & Sendable>(
        of keyPath: KeyPath<S, V>, _ event: some GraniteEvent
    ) -> GraniteLink {
        // Invariant: a key path is an immutable value (its components are fixed at creation);
        // it is only read, from whichever thread reduces, so sharing it is safe.
        nonisolated(unsafe) let keyPath = keyPath
        return GraniteLink(event: event, trigger: .change(
            stateID: ObjectIdentifier(S.self), path: "\(keyPath)",
            changed: { old, new in (old as! S)[keyPath: keyPath] != (new as! S)[keyPath: keyPath] }))
    }
}

/// The links of one mounted component, split by trigger.
struct LinkSet: Sendable {
    var dependant: [any GraniteEvent] = []
    var onAppear: [any GraniteEvent] = []
    var always: [any GraniteEvent] = []
    var changes: [(event: any GraniteEvent, changed: @Sendable (any Sendable, any Sendable) -> Bool)] = []

    init<State: GraniteState>(_ links: [GraniteLink], state: State.Type, component: String) throws(GraniteError) {
        for link in links {
            switch link.trigger {
            case .appear(.dependant): dependant.append(link.event)
            case .appear(.onAppear): onAppear.append(link.event)
            case .appear(.always): always.append(link.event)
            case let .change(stateID, path, changed):
                guard stateID == ObjectIdentifier(State.self) else {
                    throw .stateMismatch(expedition: "link on \(path)", expected: String(reflecting: State.self), actual: path)
                }
                changes.append((link.event, changed))
            }
        }
    }
}

/// One step a component took, as observers (the test store, metrics) see it.
package struct GraniteRecord<State: GraniteState>: Sendable {
    /// The event reduced; `nil` for a render requested by a lander.
    package let event: (any GraniteEvent)?
    /// The state before and after the reducer (equal for a render-only step).
    package let before: State
    package let after: State
    /// Renders this step caused.
    package let renders: Int
    /// The error the reducer raised, if any (its state change was rolled back).
    package let error: GraniteError?
}

import GraniteSync

/// What one relay owns for the length of a run (its source, its model, its writer), handed to it
/// once while the component tree is built and before anything is mounted.
///
/// A relay is made by its center with no arguments (`GraniteRelay.init()`), so the part it owns
/// arrives afterwards, through ``set(_:)``; from then on only the relay's own expeditions read it.
/// Nothing of it travels in events or states: those carry values (frames, maps, counts).
final class Owned<Value: Sendable>: Sendable {
    private let slot = Locked<Value?>(nil)

    /// An empty box (the relay does nothing until it is given its part).
    init() {}

    /// Hands the part over (once, before mounting).
    func set(_ value: Value?) { slot.withLock { $0 = value } }

    /// The part, if the relay was given one.
    var value: Value? { slot.withLock { $0 } }
}

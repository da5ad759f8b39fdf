/// A component's or relay's state: a value that reducers mutate `inout`.
///
/// States are values (not the seed's classes) so a reducer's change is one observable step:
/// the test store compares the state before and after every event, and key-path links compare
/// the value they watch.
public protocol GraniteState: Sendable, Equatable {
    /// The default state a component starts from when none is injected.
    init()
}

/// Who re-renders after ``GraniteConnection/update(_:value:_:)`` changed a shared dependency.
public enum GraniteLander: Sendable {
    /// Nobody.
    case quiet
    /// The component whose reducer made the update (not its children).
    case here
    /// Every mounted component whose center is this type.
    case target(any (AnyGraniteCenter & SendableMetatype).Type)
    /// The root of the caller's attach chain.
    case home
}

import Dispatch

/// How an event affects rendering, and how a center treats events heard from its parent.
///
/// For an event: `.quiet` updates state and never renders (the hot path: every frame is quiet);
/// every other behaviour renders the component once after its reducer ran.
/// For a center (``GraniteCenter/behavior``): `.passthrough` forwards heard events to its own
/// listeners without reducing, `.broadcastable` reduces them (and receives relay broadcasts),
/// `.quiet` ignores them, `.none` reduces heard events but takes no relay broadcasts.
public enum GraniteEventBehavior: Sendable, Hashable {
    case passthrough
    case broadcastable
    case quiet
    case none
}

/// Where an event goes when an expedition requests it.
///
/// `.contact` goes to the parent the component attached to (and on up while unhandled);
/// `.rebound` goes to a relay, which answers the one component that asked; `.broadcast` from a
/// relay reaches every broadcastable component hosting it; `.none` is a follow-up to oneself.
public enum GraniteBeamType: Sendable, Hashable {
    case rebound
    case broadcast
    case contact
    case none
}

/// A serial place to run reducers, the Linux counterpart of the seed's `async: DispatchQueue?`.
public struct GraniteExecutor: Sendable {
    let queue: DispatchQueue

    /// A new serial executor with a descriptive label (it shows in debuggers and crash logs).
    public init(label: String, qos: DispatchQoS = .default) {
        queue = DispatchQueue(label: label, qos: qos)
    }

    /// Wraps an existing queue; concurrent queues lose ordering, so pass a serial one.
    public init(queue: DispatchQueue) {
        self.queue = queue
    }

    func run(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }
}

/// Something that happened: a button, a frame, a reply. Reduced by the expedition for its type.
///
/// Defaults: behaviour `.none` (renders), beam `.none`, no executor (reduced on the sender's
/// thread, or the relay's own executor for relay events).
public protocol GraniteEvent: Sendable {
    /// Whether reducing this event re-renders (see ``GraniteEventBehavior``).
    var behavior: GraniteEventBehavior { get }
    /// Where a `request` sends this event when no beam is given.
    var beam: GraniteBeamType { get }
    /// Where this event's reducer runs; `nil` keeps the default.
    var executor: GraniteExecutor? { get }
}

extension GraniteEvent {
    public var behavior: GraniteEventBehavior { .none }
    public var beam: GraniteBeamType { .none }
    public var executor: GraniteExecutor? { nil }

    /// The event's type name, as errors and test failures show it.
    var typeName: String { String(reflecting: Self.self) }
}

/// The key events are routed by: their dynamic type.
@usableFromInline
struct EventKey: Hashable, Sendable {
    let id: ObjectIdentifier
    @usableFromInline
    init(_ type: any GraniteEvent.Type) { id = ObjectIdentifier(type) }
}

import Granite

/// State of the pin relay.
public struct PinRelayState: GraniteState {
    /// Files journaled for pinning.
    public var queued: UInt64 = 0
    /// Files that could not be journaled.
    public var failed: UInt64 = 0
    /// A new instance.
    public init() {}
}

/// Events the pin relay reduces.
public enum PinRelayEvents {
    /// Journal one written file for pinning.
    public struct Submit: GraniteEvent {
        let path: String
        let handle: PipelineHandle
    }
}

/// Journals a written file (local CID, fsync) and wakes the pin worker; never waits on the node.
struct PinExpedition: GraniteExpedition {
    func reduce(event: PinRelayEvents.Submit, state: inout PinRelayState, connection: GraniteConnection) {
        guard let pins = event.handle.pipeline.pins else { return }
        do {
            try pins.submit([event.path])
            state.queued += 1
        } catch {
            state.failed += 1
            connection.request(CamEvents.Fault(message: "pin: \(event.path): \(error)"), .rebound)
        }
    }
}

/// The pin relay's center.
public final class PinRelayCenter: GraniteCenter<PinRelayState> {
    public override var expeditions: [GraniteBaseExpedition] { [PinExpedition().discovery()] }
}

/// Pin journaling on its own executor, so hashing a file never stalls the component.
public struct PinRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    public let command = GraniteService<PinRelayCenter, PinRelayState>(qos: .utility)
    /// A new instance.
    public init() {}

    /// From a component reducer: hands a written file to the pin relay when the run pins.
    static func submit(_ path: String?, state: CamState, connection: GraniteConnection) {
        guard let path, let handle = state.handle, handle.pipeline.pins != nil else { return }
        connection.request(PinRelayEvents.Submit(path: path, handle: handle), .rebound)
    }
}

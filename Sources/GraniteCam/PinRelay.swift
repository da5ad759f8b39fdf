import Granite

/// State of the pin relay.
struct PinRelayState: GraniteState {
    /// Files journaled for pinning.
    var queued: UInt64 = 0
    /// Files that could not be journaled.
    var failed: UInt64 = 0
    /// A new instance.
    init() {}
}

/// Events the pin relay reduces (values only).
enum PinRelayEvents {
    /// Journal one written file for pinning.
    struct Submit: GraniteEvent {
        /// Quiet.
        var behavior: GraniteEventBehavior { .quiet }
        let path: String
    }
}

/// Journals a written file (local CID, fsync) and wakes the pin worker; never waits on the node.
struct PinExpedition: GraniteExpedition {
    let session: Owned<CamPinning>

    func reduce(event: PinRelayEvents.Submit, state: inout PinRelayState, connection: GraniteConnection) {
        guard let pins = session.value else { return }
        do {
            try pins.submit([event.path])
            state.queued += 1
        } catch {
            state.failed += 1
            connection.request(CamEvents.Fault(message: "pin: \(event.path): \(error)"), .broadcast)
        }
    }
}

/// The pin relay's center: owns the pin session's journal side.
final class PinRelayCenter: GraniteCenter<PinRelayState> {
    let session = Owned<CamPinning>()

    override var expeditions: [GraniteBaseExpedition] { [PinExpedition(session: session).discovery()] }
}

/// Pin journaling on its own executor, so hashing a file never stalls the component.
struct PinRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    let command = GraniteService<PinRelayCenter, PinRelayState>(qos: .utility)
    /// A new instance.
    init() {}

    /// Hands the relay the run's pin session (before mounting).
    func own(_ pins: CamPinning?) { command.center.session.set(pins) }
}

import Granite
import GraniteCapture
import GraniteMedia

/// What the output relay owns: how frames are encoded and the folder they are written to.
struct OutputParts: Sendable {
    /// Encodes saved frames.
    let encoder: any FrameEncoder
    /// The output folder's writer (frames, depth PNGs, sidecars).
    let writer: OutputWriter
}

/// State of the output relay.
struct OutputRelayState: GraniteState {
    /// Frames written.
    var written: UInt64 = 0
    /// Depth maps written.
    var depthWritten: UInt64 = 0
    /// Writes that failed.
    var failed: UInt64 = 0
    /// A new instance.
    init() {}
}

/// Events the output relay reduces (values only).
enum OutputRelayEvents {
    /// Encodes and writes one frame.
    struct Save: GraniteEvent {
        /// Quiet.
        var behavior: GraniteEventBehavior { .quiet }
        let frame: Frame
        let processedNanos: UInt64
        /// The frame's place in the run's gate: done with once the file is written.
        let slot: FrameSlot
    }

    /// Writes one depth map (`gray16`) as `depth-SEQ.png`.
    struct SaveDepth: GraniteEvent {
        /// Quiet.
        var behavior: GraniteEventBehavior { .quiet }
        /// The estimate; its file image is made here, off the root.
        let maps: DepthEstimate
        let sequence: UInt64
        /// The frame's place in the run's gate (a non-live frame's own map: done with once it is
        /// written); nil for a live run's map, which holds no frame's place.
        let slot: FrameSlot?
    }
}

/// Encodes and writes one frame atomically, is done with the frame's place in the gate (freed
/// here when the file was its last outlet), then tells the tree (`Saved`, broadcast: pinning, the status).
struct SaveExpedition: GraniteExpedition {
    let parts: Owned<OutputParts>

    func reduce(event: OutputRelayEvents.Save, state: inout OutputRelayState, connection: GraniteConnection) {
        var failure: String?
        var path: String?
        do {
            guard let parts = parts.value else { throw CamError.invalidOptions("no output folder") }
            let bytes = try parts.encoder.encode(event.frame.image)
            path = try parts.writer.write(bytes, frame: event.frame, processedNanos: event.processedNanos)
            state.written += 1
        } catch {
            state.failed += 1
            failure = "\(error)"
        }
        event.slot.done()
        connection.request(CamEvents.Saved(sequence: event.frame.sequence, path: path, failure: failure), .broadcast)
    }
}

/// Writes one depth map, is done with its frame's place (a non-live frame's own map), then tells
/// the tree (`DepthSaved`, broadcast).
struct SaveDepthExpedition: GraniteExpedition {
    let parts: Owned<OutputParts>

    func reduce(event: OutputRelayEvents.SaveDepth, state: inout OutputRelayState, connection: GraniteConnection) {
        var failure: String?
        var path: String?
        do {
            guard let parts = parts.value else { throw CamError.invalidOptions("no output folder") }
            path = try parts.writer.writeDepth(try event.maps.png(), sequence: event.sequence)
            state.depthWritten += 1
        } catch {
            state.failed += 1
            failure = "\(error)"
        }
        event.slot?.done()
        connection.request(CamEvents.DepthSaved(sequence: event.sequence, path: path, failure: failure), .broadcast)
    }
}

/// The output relay's center: owns the encoder and the writer.
final class OutputRelayCenter: GraniteCenter<OutputRelayState> {
    let parts = Owned<OutputParts>()

    override var expeditions: [GraniteBaseExpedition] {
        [SaveExpedition(parts: parts).discovery(), SaveDepthExpedition(parts: parts).discovery()]
    }
}

/// Writes frames to disk on its own executor, so a slow disk never stalls the component.
/// Unhosted (the run unmounted), it closes its writer.
struct OutputRelay: GraniteRelay {
    /// The relay's runtime (its own executor).
    let command = GraniteService<OutputRelayCenter, OutputRelayState>()
    /// A new instance.
    init() {}

    /// Hands the relay the encoder and writer (before mounting).
    func own(_ parts: OutputParts?) { command.center.parts.set(parts) }

    /// Closes the sidecar files once the last host unmounted.
    func clean() { command.center.parts.value?.writer.close() }
}

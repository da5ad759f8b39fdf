import CPipeWire

/// A `pw_stream` with its listener, made and let go of in one place (the camera output and the
/// input share it). Every call with the loop locked.
final class PipeWireStream {
    /// The stream.
    let pointer: OpaquePointer
    private let events: UnsafeMutablePointer<pw_stream_events>
    private let hook: UnsafeMutablePointer<spa_hook>
    private let node: String
    private var destroyed = false

    /// Makes a stream called `name` with `properties` on `loop`'s core; `configure` sets the
    /// callbacks, which get `data`. Errors name `node`.
    init(loop: PipeWireLoop, name: String, node: String, properties: [(String, String)], data: UnsafeMutableRawPointer,
         configure: (inout pw_stream_events) -> Void) throws(CaptureError) {
        let props = cpw_properties_new()
        for (key, value) in properties { pw_properties_set(props, key, value) }
        guard let made = pw_stream_new(loop.core, name, props) else {
            throw .pipeWire(node: node, detail: "cannot make the stream: \(CaptureError.message(for: cpw_errno()))")
        }
        pointer = made
        self.node = node
        var table = pw_stream_events()
        table.version = UInt32(PW_VERSION_STREAM_EVENTS)
        configure(&table)
        events = .allocate(capacity: 1)
        events.initialize(to: table)
        hook = .allocate(capacity: 1)
        hook.initialize(to: spa_hook())
        pw_stream_add_listener(made, hook, events, data)
    }

    /// Connects `direction` with `flags` offering `params` (EnumFormat pods).
    func connect(_ direction: spa_direction, flags: [pw_stream_flags], params: UnsafeMutablePointer<UnsafePointer<spa_pod>?>,
                 count: UInt32) throws(CaptureError) {
        let combined = pw_stream_flags(rawValue: flags.reduce(0) { $0 | $1.rawValue })
        let result = pw_stream_connect(pointer, direction, cpw_id_any, combined, params, count)
        if result < 0 { throw .pipeWire(node: node, detail: "cannot connect the stream: \(CaptureError.message(for: -result))") }
    }

    /// Disconnects (the peers see the node go) and destroys the stream. Idempotent.
    func destroy() {
        guard !destroyed else { return }
        destroyed = true
        spa_hook_remove(hook)
        pw_stream_disconnect(pointer)
        pw_stream_destroy(pointer)
        events.deallocate()
        hook.deallocate()
    }
}

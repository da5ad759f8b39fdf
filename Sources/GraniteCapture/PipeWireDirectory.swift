import CPipeWire

/// A PipeWire node as the registry announces it.
public struct PipeWireNode: Sendable, Hashable, CustomStringConvertible {
    /// The node's id in the graph (changes when it is made again).
    public var id: UInt32
    /// `object.serial`: never reused in the daemon's life (what `target.object` should name).
    public var serial: String?
    /// `node.name`.
    public var name: String
    /// `node.description` (what camera lists show), or the name.
    public var nodeDescription: String
    /// `media.class` (`Video/Source`, `Audio/Source`).
    public var mediaClass: String
    /// `media.role` (`Camera` for cameras), if set.
    public var role: String?

    /// `42  granite.granite-cam  "Granite camera"  Video/Source (Camera)`.
    public var description: String {
        "\(id)  \(name)  \"\(nodeDescription)\"  \(mediaClass)" + (role.map { " (\($0))" } ?? "")
    }

    /// Whether `text` names this node: its id, serial, `node.name` or description.
    public func isNamed(_ text: String) -> Bool {
        text == String(id) || text == serial || text == name || text == nodeDescription
    }
}

/// What the PipeWire daemon of this session holds, read from its registry.
public enum PipeWireDirectory {
    /// Every node whose `media.class` is `Video/Source` (cameras through libcamera or V4L2, screen
    /// casts, other programs' streams, granite-cam's own `--pipewire-out`), in registry order.
    /// Throws when there is no daemon.
    public static func videoSources(loop given: PipeWireLoop? = nil) throws(CaptureError) -> [PipeWireNode] {
        try nodes(loop: given) { $0 == "Video/Source" }
    }

    /// Every node that captures sound (`media.class` `Audio/Source`, `Audio/Source/Virtual`,
    /// `Audio/Duplex`: microphones, line inputs, other programs' sources), in registry order.
    public static func audioSources(loop given: PipeWireLoop? = nil) throws(CaptureError) -> [PipeWireNode] {
        try nodes(loop: given) { $0.hasPrefix("Audio/Source") || $0 == "Audio/Duplex" }
    }

    /// The nodes whose `media.class` passes `wanted`, read from the registry in one round trip.
    static func nodes(loop given: PipeWireLoop?, wanted: @escaping (String) -> Bool) throws(CaptureError) -> [PipeWireNode] {
        let loop: PipeWireLoop
        if let given { loop = given } else { loop = try PipeWireLoop(client: "granite") }
        final class Found {
            var nodes: [PipeWireNode] = []
            let wanted: (String) -> Bool
            init(_ wanted: @escaping (String) -> Bool) { self.wanted = wanted }
        }
        let found = Found(wanted)
        let retained = Unmanaged.passRetained(found)
        defer { retained.release() }
        var events = pw_registry_events()
        events.version = UInt32(PW_VERSION_REGISTRY_EVENTS)
        events.global = { data, id, _, type, _, props in
            guard let type, String(cString: type) == "PipeWire:Interface:Node", let props else { return }
            func value(_ key: String) -> String? { spa_dict_lookup(props, key).map { String(cString: $0) } }
            let found = Unmanaged<Found>.fromOpaque(data!).takeUnretainedValue()
            guard let mediaClass = value("media.class"), found.wanted(mediaClass) else { return }
            let name = value("node.name") ?? "node \(id)"
            let node = PipeWireNode(id: id, serial: value("object.serial"), name: name,
                                    nodeDescription: value("node.description") ?? value("node.nick") ?? name,
                                    mediaClass: mediaClass, role: value("media.role"))
            found.nodes.append(node)
        }
        var hook = spa_hook()
        let answered = loop.locked { () -> Bool in
            guard let registry = cpw_core_get_registry(loop.core) else { return false }
            defer { cpw_registry_destroy(registry) }
            return withUnsafeMutablePointer(to: &hook) { hookPointer in
                withUnsafePointer(to: &events) { eventsPointer in
                    _ = cpw_registry_add_listener(registry, hookPointer, eventsPointer, retained.toOpaque())
                    defer { spa_hook_remove(hookPointer) }
                    return loop.roundTrip()
                }
            }
        }
        guard answered else { throw .pipeWire(node: "registry", detail: "the daemon did not list its nodes within 5 s") }
        return found.nodes
    }
}

/// Tells when one node leaves the graph (its producer stopped, the camera was unplugged): a
/// registry listener on `loop` that calls `removed` (on the loop thread) when the registry drops
/// the node's id. Made and closed with the loop locked.
///
/// A consumer's stream does not say so itself: when its producer goes, the stream only goes idle
/// (WirePlumber keeps it, waiting for its target), and a node made again later may even get the
/// same id, so the registry is the one witness.
final class PipeWireNodeWatch {
    private let registry: OpaquePointer
    private let events: UnsafeMutablePointer<pw_registry_events>
    private let hook: UnsafeMutablePointer<spa_hook>
    private let box: Unmanaged<Box>
    private var closed = false

    private final class Box {
        let id: UInt32
        let removed: () -> Void
        init(id: UInt32, removed: @escaping () -> Void) { self.id = id; self.removed = removed }
    }

    /// Watches `node`; `removed` runs once the registry drops it. Call locked.
    init(loop: PipeWireLoop, node: PipeWireNode, removed: @escaping () -> Void) throws(CaptureError) {
        guard let registry = cpw_core_get_registry(loop.core) else {
            throw .pipeWire(node: node.name, detail: "cannot get the registry: \(CaptureError.message(for: cpw_errno()))")
        }
        self.registry = registry
        box = Unmanaged.passRetained(Box(id: node.id, removed: removed))
        var table = pw_registry_events()
        table.version = UInt32(PW_VERSION_REGISTRY_EVENTS)
        table.global_remove = { data, id in
            let box = Unmanaged<Box>.fromOpaque(data!).takeUnretainedValue()
            if id == box.id { box.removed() }
        }
        events = .allocate(capacity: 1)
        events.initialize(to: table)
        hook = .allocate(capacity: 1)
        hook.initialize(to: spa_hook())
        _ = cpw_registry_add_listener(registry, hook, events, box.toOpaque())
    }

    /// Stops watching. Idempotent; call locked.
    func close() {
        guard !closed else { return }
        closed = true
        spa_hook_remove(hook)
        cpw_registry_destroy(registry)
        events.deallocate()
        hook.deallocate()
        box.release()
    }
}

#if canImport(Glibc)
import Glibc
#endif
import CPipeWire
import GraniteMedia

/// One connection to the PipeWire daemon, on its own thread: a `pw_thread_loop` with a context
/// and a core. The one owner of the loop; streams and registry listings borrow it.
///
/// ```
///  init: pw_init ─► pw_thread_loop_new ─► pw_context_new ─► start ─► pw_context_connect (core)
///  every PipeWire call from another thread: locked { … }   (callbacks run on the loop thread, locked)
///  deinit: stop ─► core disconnect ─► context destroy ─► loop destroy
/// ```
/// The lock is recursive, so a callback may call `locked` too.
public final class PipeWireLoop: @unchecked Sendable {
    // @unchecked: the pointers are only used with the loop's lock held (or on its thread).
    let loop: OpaquePointer
    let context: OpaquePointer
    let core: OpaquePointer

    /// `pw_init` once per process (it sets up logging and the plugin search path).
    private static let initialised: Void = { pw_init(nil, nil) }()

    /// Connects to the daemon of this session (`$XDG_RUNTIME_DIR/pipewire-0`, or `$PIPEWIRE_REMOTE`)
    /// as `client`; throws ``CaptureError/pipeWire(node:detail:)`` when there is none.
    public init(client: String = "granite") throws(CaptureError) {
        _ = PipeWireLoop.initialised
        guard let loop = pw_thread_loop_new("granite-pipewire", nil) else {
            throw .pipeWire(node: "libpipewire", detail: "cannot make a thread loop: \(CaptureError.message(for: cpw_errno()))")
        }
        let props = cpw_properties_new()
        pw_properties_set(props, "application.name", client)
        guard let context = pw_context_new(pw_thread_loop_get_loop(loop), props, 0) else {
            pw_thread_loop_destroy(loop)
            throw .pipeWire(node: "libpipewire", detail: "cannot make a context: \(CaptureError.message(for: cpw_errno()))")
        }
        if pw_thread_loop_start(loop) < 0 {
            pw_context_destroy(context)
            pw_thread_loop_destroy(loop)
            throw .pipeWire(node: "libpipewire", detail: "cannot start the loop thread")
        }
        pw_thread_loop_lock(loop)
        let core = pw_context_connect(context, nil, 0)
        let code = cpw_errno()
        pw_thread_loop_unlock(loop)
        guard let core else {
            pw_thread_loop_stop(loop)
            pw_context_destroy(context)
            pw_thread_loop_destroy(loop)
            let place = getenv("PIPEWIRE_REMOTE").map { String(cString: $0) }
                ?? (getenv("XDG_RUNTIME_DIR").map { String(cString: $0) + "/pipewire-0" } ?? "$XDG_RUNTIME_DIR unset")
            throw .pipeWire(node: place, detail: "cannot connect to the daemon: \(CaptureError.message(for: code)) (is pipewire running in this session?)")
        }
        self.loop = loop
        self.context = context
        self.core = core
    }

    /// Runs `body` with the loop locked (PipeWire objects are not thread-safe).
    func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        return try body()
    }

    /// Waits (locked) until a callback calls ``signal()`` or `seconds` pass; false on timeout.
    func wait(seconds: Int32) -> Bool {
        pw_thread_loop_timed_wait(loop, seconds) == 0
    }

    /// Wakes a ``wait(seconds:)`` (from a callback, on the loop thread).
    func signal() { pw_thread_loop_signal(loop, false) }

    /// Waits until the daemon has answered everything asked so far (a `sync` round trip); false
    /// when it does not answer within `seconds`. Call locked.
    func roundTrip(seconds: Int32 = 5) -> Bool {
        final class Box { var seq: Int32 = -1; var done = false; weak var loop: PipeWireLoop? }
        let box = Box()
        box.loop = self
        var events = pw_core_events()
        events.version = UInt32(PW_VERSION_CORE_EVENTS)
        events.done = { data, id, seq in
            let box = Unmanaged<Box>.fromOpaque(data!).takeUnretainedValue()
            if id == cpw_id_core && seq == box.seq {
                box.done = true
                box.loop?.signal()
            }
        }
        var hook = spa_hook()
        let retained = Unmanaged.passRetained(box)
        defer { retained.release() }
        return withUnsafeMutablePointer(to: &hook) { hookPointer in
            withUnsafePointer(to: &events) { eventsPointer in
                _ = cpw_core_add_listener(core, hookPointer, eventsPointer, retained.toOpaque())
                defer { spa_hook_remove(hookPointer) }
                box.seq = cpw_core_sync(core, 0)
                let deadline = monotonicNanos() + UInt64(seconds) * 1_000_000_000
                while !box.done, monotonicNanos() < deadline {
                    _ = wait(seconds: 1)
                }
                return box.done
            }
        }
    }

    deinit {
        pw_thread_loop_stop(loop)
        pw_core_disconnect(core)
        pw_context_destroy(context)
        pw_thread_loop_destroy(loop)
    }
}


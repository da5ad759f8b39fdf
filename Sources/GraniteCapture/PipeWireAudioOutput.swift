#if canImport(Glibc)
import Glibc
#endif
import CPipeWire
import GraniteMedia

/// A PipeWire `Audio/Source` node whose sound a callback makes, sample-exact on the capture clock:
/// the tier's producer of clicks that line up with a test pattern's flashes.
///
/// ```
///  init: loop ─► pw_stream_new (media.class Audio/Source, node.name NAME, in the daemon's timer-driven
///        group `pipewire.dummy`) ─► connect OUTPUT, map buffers, F32 interleaved at `rate`, `channels`
///  process (loop thread, each graph cycle T): dequeue ─► fill(samples, T) ─► queue
/// ```
/// The capture time: an output stream's callback in cycle T fills the buffer the graph hands on in
/// the next cycle (T + quantum), so the block stands for the quantum [T, T + quantum) — what a
/// sound card's source delivering it then would have captured. (Stamped T − quantum, every click
/// came out one quantum, 21.3 ms, late against the picture: the queue's cycle.) The group's driver
/// (the daemon's timer) stamps T on CLOCK_MONOTONIC, whatever the load does to the callback.
package final class PipeWireAudioOutput: @unchecked Sendable {
    // @unchecked: the stream is used with the loop locked or on its thread.
    /// The node's `node.name` (and description).
    package let name: String
    /// Samples per second, channels.
    package let rate: Int, channels: Int
    private let loop: PipeWireLoop
    private var stream: PipeWireStream?
    private let fill: (UnsafeMutableBufferPointer<Float>, UInt64) -> Void
    private let silent: Bool
    private var settled = false
    private var failure: String?
    private var blocks = 0
    /// Samples per cycle the node asks for.
    package static let quantum = 1024

    /// Publishes `name`; `fill` gets each block to write (interleaved, zeroed) and the capture time
    /// of its first sample. `silent`: the node links but never sends (a sound card that stalls).
    package init(name: String, rate: Int = 48_000, channels: Int = 1, silent: Bool = false,
                 fill: @escaping (UnsafeMutableBufferPointer<Float>, UInt64) -> Void) throws(CaptureError) {
        self.name = name
        self.rate = rate
        self.channels = channels
        self.fill = fill
        self.silent = silent
        loop = try PipeWireLoop(client: name)
        try loop.locked { () throws(CaptureError) in
            var properties = [("media.class", "Audio/Source"), ("media.type", "Audio"), ("media.category", "Capture"),
                              ("node.name", name), ("node.description", name),
                              ("node.latency", "\(PipeWireAudioOutput.quantum)/\(rate)"), ("node.rate", "1/\(rate)")]
            // Silent: the driver of its own graph that never starts a cycle (a stalled sound card),
            // so a consumer links and gets nothing — not even the silence a running graph fills in.
            properties += silent ? [("node.driver", "true"), ("priority.driver", "30000")] : [("node.group", "pipewire.dummy")]
            let made = try PipeWireStream(loop: loop, name: name, node: name, properties: properties,
                                          data: Unmanaged.passUnretained(self).toOpaque()) { events in
                events.state_changed = { data, _, state, error in
                    let me = Unmanaged<PipeWireAudioOutput>.fromOpaque(data!).takeUnretainedValue()
                    if state != PW_STREAM_STATE_CONNECTING { me.settled = true; me.loop.signal() }
                    if state == PW_STREAM_STATE_ERROR { me.failure = error.map { String(cString: $0) } ?? "stream error" }
                }
                events.process = { data in
                    Unmanaged<PipeWireAudioOutput>.fromOpaque(data!).takeUnretainedValue().process()
                }
            }
            stream = made
            let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: 512)
            defer { storage.deallocate() }
            var params: [UnsafePointer<spa_pod>?] = [cpw_audio_format(storage, 512, cpw_audio_f32, UInt32(rate), UInt32(channels))]
            guard params[0] != nil else { throw .pipeWire(node: name, detail: "cannot build the audio format") }
            try params.withUnsafeMutableBufferPointer { (all) throws(CaptureError) in
                try made.connect(SPA_DIRECTION_OUTPUT, flags: silent ? [PW_STREAM_FLAG_DRIVER, PW_STREAM_FLAG_MAP_BUFFERS] : [PW_STREAM_FLAG_MAP_BUFFERS],
                                 params: all.baseAddress!, count: 1)
            }
            let deadline = monotonicNanos() + 5_000_000_000
            while !settled, monotonicNanos() < deadline { _ = loop.wait(seconds: 1) }
            if let failure { throw .pipeWire(node: name, detail: failure) }
        }
    }

    /// Blocks sent so far.
    package var sent: Int { loop.locked { blocks } }

    /// Disconnects the node. Idempotent.
    package func close() {
        loop.locked {
            stream?.destroy()
            stream = nil
        }
    }

    deinit { close() }

    private func process() {
        guard let stream = stream?.pointer, let buffer = pw_stream_dequeue_buffer(stream) else { return }
        defer { pw_stream_queue_buffer(stream, buffer) }
        var room: UInt32 = 0, requested: UInt64 = 0
        guard !silent, let data = cpw_buffer_room(buffer, &room, &requested) else {
            cpw_buffer_filled(buffer, 0, 0)
            return
        }
        let frameBytes = 4 * channels
        let frames = min(Int(room) / frameBytes, requested > 0 ? Int(requested) : PipeWireAudioOutput.quantum)
        var now: Int64 = 0, delay: Int64 = 0, buffered: UInt64 = 0
        _ = cpw_stream_timing(stream, &now, &delay, &buffered)
        let first = now > 0 ? UInt64(now) : monotonicNanos()
        let samples = UnsafeMutableBufferPointer(start: UnsafeMutableRawPointer(data).bindMemory(to: Float.self, capacity: frames * channels),
                                                 count: frames * channels)
        samples.initialize(repeating: 0)
        fill(samples, first)
        cpw_buffer_filled(buffer, UInt32(frames * frameBytes), Int32(frameBytes))
        blocks += 1
    }
}

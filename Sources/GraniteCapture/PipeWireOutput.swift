#if canImport(Glibc)
import Glibc
#endif
import CPipeWire
import GraniteMedia

/// A PipeWire `Video/Source` node — a virtual camera without a kernel module — that frames are
/// written to, each straight into a buffer shared with the consumers.
///
/// ```
///  init: loop ─► pw_stream_new (media.class Video/Source, media.role Camera, node.description)
///        ─► connect OUTPUT, driver, map buffers; EnumFormat: each format at the frames' size and rate
///  a consumer links ─► param_changed(Format) ─► Buffers (memfd, one block) + Meta (header) ─► streaming
///  write: dequeue a free buffer ─► fill (the caller converts into it) ─► chunk + header ─► queue ─► trigger
///  no consumer / no free buffer: the frame is skipped and counted; the run goes on
/// ```
/// The node is the driver of its graph: a frame is pushed to the consumers the moment it is written.
/// A consumer that connects late, leaves or renegotiates changes the state the callbacks keep; the
/// writer only ever looks at it with the loop locked.
public final class PipeWireOutput: @unchecked Sendable {
    /// What one ``write(size:sequence:timestampNanos:fill:)`` did.
    public enum Outcome: Sendable, Equatable {
        /// The frame went out.
        case sent
        /// Nobody is reading (no consumer linked, or it paused): skipped.
        case noConsumer
        /// Every buffer is still with the consumer (it is slower than the run): skipped.
        case busy
        /// The frame size changed; the node offers the new size and waits for the consumer to
        /// take it: skipped.
        case renegotiating
    }

    /// Counters of the node.
    public struct Stats: Sendable, Equatable {
        /// Frames handed to a consumer.
        public var sent: UInt64 = 0
        /// Frames written while nobody was reading.
        public var noConsumer: UInt64 = 0
        /// Frames skipped because the consumer held every buffer.
        public var busy: UInt64 = 0
        /// Formats consumers fixed (the first link, then each renegotiation).
        public var negotiations: UInt64 = 0
    }

    /// The node's description (what camera lists show).
    public let name: String
    /// Formats offered, in order of preference.
    public let formats: [PipeWireVideoFormat]
    private let fps: Double
    /// Offers of its own (the tier's test producers: size ranges, lists of sizes and rates) in
    /// place of the formats at the frames' size; the frames are then written at the size a
    /// consumer fixed (``negotiatedSize``).
    private let offers: [PipeWireOffer]?
    private let loop: PipeWireLoop
    private var stream: PipeWireStream?
    // Loop-locked state (the callbacks run on the loop thread with the lock held).
    private var offered: FrameSize
    private var format: (format: PipeWireVideoFormat, size: FrameSize)?
    private var streaming = false
    private var settled = false
    private var failure: String?
    private var counters = Stats()

    /// Publishes the node `name` offering `formats` at `size` and `fps`; throws when there is no
    /// daemon or the stream cannot be made.
    public convenience init(name: String, size: FrameSize, fps: Double, formats: [PipeWireVideoFormat] = PipeWireVideoFormat.outputFormats,
                loop: PipeWireLoop? = nil) throws(CaptureError) {
        try self.init(name: name, size: size, fps: fps, formats: formats, offers: nil, loop: loop)
    }

    /// Publishes the node `name` offering exactly `offers` (raw formats only); frames are written
    /// at ``negotiatedSize``. For test producers.
    package convenience init(name: String, offers: [PipeWireOffer]) throws(CaptureError) {
        let first = offers.first?.sizes?.preferred ?? FrameSize(width: 320, height: 240)
        try self.init(name: name, size: first, fps: offers.first?.rates?.preferred.fps ?? 30, formats: [], offers: offers, loop: nil)
    }

    private init(name: String, size: FrameSize, fps: Double, formats: [PipeWireVideoFormat], offers: [PipeWireOffer]?,
                 loop: PipeWireLoop?) throws(CaptureError) {
        self.name = name
        self.formats = formats
        self.offers = offers
        self.fps = fps
        self.offered = size
        if let loop { self.loop = loop } else { self.loop = try PipeWireLoop(client: name) }
        try self.loop.locked { () throws(CaptureError) in
            let made = try PipeWireStream(loop: self.loop, name: name, node: name, properties: PipeWireOutput.properties(name: name),
                                          data: Unmanaged.passUnretained(self).toOpaque()) { events in
                events.state_changed = { data, _, state, error in
                    let me = Unmanaged<PipeWireOutput>.fromOpaque(data!).takeUnretainedValue()
                    me.streaming = state == PW_STREAM_STATE_STREAMING
                    if state != PW_STREAM_STATE_CONNECTING { me.settled = true; me.loop.signal() }
                    if state == PW_STREAM_STATE_ERROR { me.failure = error.map { String(cString: $0) } ?? "stream error" }
                    // Only close() disconnects on purpose (and it drops the listener first): this is the daemon going away.
                    if state == PW_STREAM_STATE_UNCONNECTED { me.failure = me.failure ?? "the connection to the PipeWire daemon was lost" }
                    if state != PW_STREAM_STATE_STREAMING && state != PW_STREAM_STATE_PAUSED { me.format = nil }
                }
                events.param_changed = { data, id, param in
                    guard id == SPA_PARAM_Format.rawValue else { return }
                    Unmanaged<PipeWireOutput>.fromOpaque(data!).takeUnretainedValue().formatChanged(param)
                }
            }
            stream = made
            try withFormatParams(size) { (params, count) throws(CaptureError) in
                try made.connect(SPA_DIRECTION_OUTPUT, flags: [PW_STREAM_FLAG_DRIVER, PW_STREAM_FLAG_MAP_BUFFERS], params: params, count: count)
            }
            // Registered (its id known) or refused, before the run starts.
            let deadline = monotonicNanos() + 5_000_000_000
            while !settled, monotonicNanos() < deadline { _ = self.loop.wait(seconds: 1) }
            if let failure { throw .pipeWire(node: name, detail: failure) }
        }
    }

    /// The properties camera applications look for: a `Video/Source` of role `Camera` with a description.
    static func properties(name: String) -> [(String, String)] {
        let nodeName = "granite." + String(name.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" })
        return [
            ("media.class", "Video/Source"),
            ("media.type", "Video"),
            ("media.category", "Capture"),
            ("media.role", "Camera"),
            ("node.name", nodeName),
            ("node.description", name),
            ("node.nick", name),
            ("node.driver", "true"),
            ("device.icon-name", "camera-web"),
        ]
    }

    /// The node's id in the graph (what `pw-dump` and `target.object` name), once it is registered.
    public var nodeID: UInt32? {
        loop.locked { stream.map { pw_stream_get_node_id($0.pointer) }.flatMap { $0 == cpw_id_any ? nil : $0 } }
    }

    /// The format and size a consumer fixed, if one is reading (`NV12 640x480`).
    public var negotiated: String? {
        loop.locked { format.map { "\($0.format) \($0.size)" } }
    }

    /// The size a consumer fixed, if one is reading.
    package var negotiatedSize: FrameSize? { loop.locked { format?.size } }

    /// Counters so far.
    public var stats: Stats { loop.locked { counters } }

    /// Writes one frame of `size`: when a consumer is reading and a buffer is free, `fill` gets the
    /// negotiated format and the buffer (``PipeWireVideoFormat/byteCount(width:height:)`` bytes)
    /// and must set every byte. Throws when the stream failed (the daemon went away).
    public func write(size: FrameSize, sequence: UInt64, timestampNanos: UInt64,
                      fill: (PipeWireVideoFormat, UnsafeMutableRawBufferPointer) -> Void) throws(CaptureError) -> Outcome {
        try loop.locked { () throws(CaptureError) -> Outcome in
            if let failure { throw .pipeWire(node: name, detail: failure) }
            guard let stream = stream?.pointer else { throw .pipeWire(node: name, detail: "the node is closed") }
            if offers == nil, size != offered {
                offered = size
                format = nil
                _ = try withFormatParams(size) { params, count in pw_stream_update_params(stream, params, count) }
            }
            guard streaming, let format else {
                counters.noConsumer += 1
                return .noConsumer
            }
            guard format.size == size else { return .renegotiating }
            guard let buffer = pw_stream_dequeue_buffer(stream) else {
                counters.busy += 1
                return .busy
            }
            var chunk: UInt32 = 0, stride: Int32 = 0, room: UInt32 = 0
            let need = format.format.byteCount(width: size.width, height: size.height)
            guard let data = cpw_buffer_plane(buffer, 0, &chunk, &stride, &room), Int(room) >= need else {
                cpw_buffer_filled(buffer, 0, 0)
                pw_stream_queue_buffer(stream, buffer)
                throw .pipeWire(node: name, detail: "the consumer's buffer holds \(room) bytes, a \(format.format) \(size) frame needs \(need)")
            }
            fill(format.format, UnsafeMutableRawBufferPointer(start: data, count: need))
            cpw_buffer_filled(buffer, UInt32(need), Int32(format.format.stride(width: size.width)))
            cpw_buffer_set_header(buffer, sequence, Int64(timestampNanos))
            pw_stream_queue_buffer(stream, buffer)
            pw_stream_trigger_process(stream)
            counters.sent += 1
            return .sent
        }
    }

    /// Disconnects the node (consumers see it go) and lets go of the stream. Idempotent.
    public func close() {
        loop.locked {
            stream?.destroy()
            stream = nil
            streaming = false
            format = nil
        }
    }

    deinit { close() }

    // MARK: Loop thread

    /// A consumer fixed a format (or cleared it): remember it and ask for buffers that fit it.
    private func formatChanged(_ param: UnsafePointer<spa_pod>?) {
        guard let stream = stream?.pointer else { return }
        var id: UInt32 = 0, w: UInt32 = 0, h: UInt32 = 0, num: UInt32 = 0, den: UInt32 = 0
        guard let param, cpw_parse_video_format(param, &id, &w, &h, &num, &den) == 0,
              let chosen = PipeWireVideoFormat(spaID: id) else {
            format = nil
            return
        }
        let size = FrameSize(width: Int(w), height: Int(h))
        format = (chosen, size)
        counters.negotiations += 1
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: 1024)
        defer { storage.deallocate() }
        var params = [UnsafePointer<spa_pod>?](repeating: nil, count: 2)
        let count = cpw_buffer_params(storage, 1024, UInt32(chosen.byteCount(width: size.width, height: size.height)),
                                      UInt32(chosen.stride(width: size.width)), &params)
        if count > 0 { _ = pw_stream_update_params(stream, &params, UInt32(count)) }
    }

    /// The EnumFormat params for `size` (one per format), handed to `body`.
    private func withFormatParams<T>(_ size: FrameSize,
                                     _ body: (UnsafeMutablePointer<UnsafePointer<spa_pod>?>, UInt32) throws(CaptureError) -> T) throws(CaptureError) -> T {
        if let offers {
            let bytes = 1024 * offers.count
            let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes, alignment: 8)
            defer { storage.deallocate() }
            var params = [UnsafePointer<spa_pod>?](repeating: nil, count: offers.count)
            for (i, offer) in offers.enumerated() {
                guard let pod = offer.pod(in: UnsafeMutableRawBufferPointer(rebasing: storage[(i * 1024)..<((i + 1) * 1024)])) else {
                    throw .pipeWire(node: name, detail: "cannot build the offer \(offer)")
                }
                params[i] = pod
            }
            return try params.withUnsafeMutableBufferPointer { (all) throws(CaptureError) -> T in try body(all.baseAddress!, UInt32(offers.count)) }
        }
        let rate = FrameInterval(fps: fps) ?? FrameInterval(numerator: 1, denominator: 30)
        let bytes = 512 * max(1, formats.count)
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes)
        defer { storage.deallocate() }
        var params = [UnsafePointer<spa_pod>?](repeating: nil, count: formats.count)
        let ids = formats.map(\.spaID)
        let count = cpw_video_formats(storage, UInt32(bytes), ids, UInt32(ids.count),
                                      UInt32(size.width), UInt32(size.height), rate.denominator, rate.numerator, &params)
        guard count > 0 else { throw .pipeWire(node: name, detail: "cannot build the format list (\(count))") }
        return try params.withUnsafeMutableBufferPointer { (all) throws(CaptureError) -> T in try body(all.baseAddress!, UInt32(count)) }
    }
}

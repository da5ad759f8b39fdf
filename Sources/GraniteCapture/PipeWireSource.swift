#if canImport(Glibc)
import Glibc
#endif
import CPipeWire
import GraniteMedia

/// A PipeWire video source as a ``FrameSource`` (`--source pipewire[:NODE]`): a camera through
/// libcamera or V4L2, a screen cast, another program's stream (GStreamer's `pipewiresink`,
/// granite-cam's own `--pipewire-out`).
///
/// ```
///  start: registry ─► the Video/Source named NODE (id, serial, node.name or description; none: the first)
///        ─► its EnumFormat offers (formats, size and rate choices) ─► one picked (``PipeWireChosenFormat``:
///           the request's format or YUY2 NV12 I420 RGBx BGRx RGBA BGRA MJPEG, the nearest size and rate;
///           none fits: ``CaptureError/unsupportedFormat(device:requested:offered:)`` listing the offers)
///        ─► pw_stream INPUT, target.object = its serial, asking for exactly that format
///  no frame within `firstFrameTimeout` of linking (or of a reconnect): a last fault (.noFirstFrame) and the stream ends
///  process (loop thread): dequeue ─► copy out (yuyv, nv12 or rgba8 rows, strides dropped; MJPEG decoded) ─► emit ─► queue back
///  sequence: the buffer header's (gaps: dropped by the source), else counted here; continued across reconnects
///  the node leaves the registry ─► fault (.disconnected) ─► registry polled (`reconnect`'s back-off) until a node
///        of that name is back ─► a new stream, `.started` again ─► frames; not back within `reconnect`'s limit:
///        a last fault (.pipeWire naming the node) and the stream ends
/// ```
/// Live: a slow consumer loses the oldest frames (counted), never stalls the graph.
public final class PipeWireSource: FrameSource, @unchecked Sendable {
    // @unchecked: the capture's state is used on the loop thread, or with the loop locked.
    /// The node asked for (nil: the first video source).
    public let target: String?
    /// How a node that went away is waited for: the registry is polled with its back-off, up to its limits.
    public let reconnect: ReconnectPolicy
    /// The format, size and rate asked for (`auto`: the chain's preference; size and rate: the nearest offered).
    public let request: CaptureRequest
    /// How long a linked node may take to send its first frame (after linking, and after each reconnect).
    public let firstFrameTimeout: Double
    let decoder: (any ImageDecoder)?
    let runner: SourceRunner
    /// The default bound on the first frame, in seconds.
    public static let defaultFirstFrameTimeout = 10.0
    /// The default wait for a node that went away: polled every 0.1–0.5 s for 30 s.
    public static let defaultReconnect = ReconnectPolicy(initialDelay: 0.1, maximumDelay: 0.5, maximumWait: 30)

    /// A source reading `target` (nil: the first `Video/Source` the daemon lists), waiting for it
    /// as `reconnect` says when it goes away (by its `node.name` or description, it is found again
    /// when its producer makes it anew; an id or serial names only the node that was).
    /// `request` picks among the node's offers; `decoder` decodes MJPEG (without one, a node that
    /// offers only MJPEG is refused).
    public init(target: String?, request: CaptureRequest = CaptureRequest(), decoder: (any ImageDecoder)? = nil,
                reconnect: ReconnectPolicy = PipeWireSource.defaultReconnect,
                firstFrameTimeout: Double = PipeWireSource.defaultFirstFrameTimeout) {
        self.target = target
        self.request = request
        self.decoder = decoder
        self.reconnect = reconnect
        self.firstFrameTimeout = firstFrameTimeout
        runner = SourceRunner(name: target.map { "pipewire:\($0)" } ?? "pipewire")
    }

    public var name: String { runner.name }
    public var stats: CaptureStats { runner.stats }

    public func start(_ delivery: FrameDelivery = .live(buffering: 2)) throws(CaptureError) -> AsyncStream<CaptureEvent> {
        let loop = try PipeWireLoop(client: "granite-cam")
        let node = try choose(among: try PipeWireDirectory.videoSources(loop: loop))
        let first = try PipeWireCapture(loop: loop, node: node, source: self, sequenceBase: nil)
        return try runner.start(delivery) { runner in
            var capture = first
            // A format fixed before the stream existed (a quick producer) was announced to no one: again.
            if let format = capture.announced { runner.announce(format) }
            while true {
                while !runner.isStopping, capture.failure == nil {
                    _ = runner.sleep(until: monotonicNanos() + 50_000_000)
                    if let overdue = capture.overdue() {
                        capture.close()
                        runner.fault(overdue)
                        return
                    }
                }
                capture.close()
                guard !runner.isStopping, let failure = capture.failure else { return }
                guard failure.isTransient else {
                    runner.fault(failure)
                    return
                }
                let gone = monotonicNanos()
                let last = runner.lastSequence.map { " after frame \($0)" } ?? ""
                runner.fault(.disconnected(device: self.name, detail: "the node went away\(last); waiting \(self.reconnect.limitDescription) for it to come back"))
                guard let next = self.awaitReturn(loop: loop, since: gone, runner: runner) else { return }
                capture = next
                runner.reconnected(goneSince: gone)
            }
        }
    }

    public func stop() { runner.stop() }

    /// The node `target` names among `sources` (none: the first).
    private func choose(among sources: [PipeWireNode]) throws(CaptureError) -> PipeWireNode {
        if let target {
            guard let found = sources.first(where: { $0.isNamed(target) }) else {
                throw .pipeWire(node: target, detail: "no such video source; the daemon has: "
                                + (sources.isEmpty ? "none" : sources.map { "\($0.name) (\($0.id))" }.joined(separator: ", ")))
            }
            return found
        }
        guard let first = sources.first else { throw .pipeWire(node: "pipewire", detail: "the daemon has no video source") }
        return first
    }

    /// Polls the registry until the node is back and streams from it again; nil when stopped or
    /// past the policy's limits (reported as the last fault, naming the node).
    private func awaitReturn(loop: PipeWireLoop, since gone: UInt64, runner: SourceRunner) -> PipeWireCapture? {
        var attempt = 0
        var lastError: CaptureError?
        while true {
            guard runner.sleep(until: monotonicNanos() + UInt64(reconnect.delay(attempt: attempt) * 1e9)) else { return nil }
            attempt += 1
            do throws(CaptureError) {
                let node = try choose(among: try PipeWireDirectory.videoSources(loop: loop))
                return try PipeWireCapture(loop: loop, node: node, source: self,
                                           sequenceBase: runner.lastSequence.map { $0 + 1 } ?? 0)
            } catch {
                lastError = error
            }
            if reconnect.givesUp(attempts: attempt, since: gone) {
                let waited = ReconnectPolicy.seconds(reconnect.maximumWait ?? Double(monotonicNanos() - gone) / 1e9)
                var detail = "the node went away and did not come back within \(waited) s"
                if case let .pipeWire(_, why)? = lastError, !why.hasPrefix("no such video source") { detail += " (last try: \(why))" }
                runner.fault(.pipeWire(node: name, detail: detail))
                return nil
            }
        }
    }
}

/// The input stream of a ``PipeWireSource``: negotiation and copying out, on the loop thread.
final class PipeWireCapture: @unchecked Sendable {
    private let loop: PipeWireLoop
    private let runner: SourceRunner
    private let label: String
    private var stream: PipeWireStream?
    private let decoder: (any ImageDecoder)?
    /// What was asked of the node (nil: it listed no formats, so every readable one was offered).
    private let chosen: PipeWireChosenFormat?
    /// What the node offered, for messages.
    private let offers: [PipeWireOffer]
    /// The format in effect (format nil: MJPEG).
    private var format: (format: PipeWireVideoFormat?, size: FrameSize, fps: Double?)?
    private var counted: UInt64 = 0
    /// The first-frame bound, from making the stream.
    private var waiting: FirstFrameWait
    /// The last format announced.
    private var lastAnnounced: StreamFormat?

    /// The last format announced (the source's loop announces it again once its stream exists).
    var announced: StreamFormat? { loop.locked { lastAnnounced } }
    /// Where this stream's numbering starts when it follows another (a reconnect: the producer's
    /// numbers restart); nil: the producer's own numbers as they are.
    private let sequenceBase: UInt64?
    /// The producer's first header sequence number on this stream (the numbers restart with a new producer).
    private var firstHeaderSequence: UInt64?
    private var streamed = false
    private var nodeGone = false
    private var watch: PipeWireNodeWatch?
    private var storage = RecycledBytes(slots: 8)
    private var failed: CaptureError?

    /// Why the capture ended (the node left the graph, a stream error), read by the source's
    /// thread. The node leaving wins over the stream error it may cause: that one is worth waiting out.
    var failure: CaptureError? {
        loop.locked { nodeGone ? .disconnected(device: label, detail: "the node went away") : failed }
    }

    /// The last fault when no frame came within the source's first-frame bound of making the stream, else nil.
    func overdue() -> CaptureError? {
        loop.locked { () -> CaptureError? in
            guard waiting.isOverdue(now: monotonicNanos()), !nodeGone, failed == nil else { return nil }
            let negotiated = format.map { "\($0.format?.rawValue ?? "MJPEG") \($0.size)" + ($0.fps.map { " @ \(StreamFormat.describeRate($0)) fps" } ?? "") }
            let what = negotiated.map { "negotiated \($0)" }
                ?? "no format agreed" + (chosen.map { " (asked for \($0))" } ?? "") + "; the node offers " + offers.map(\.description).joined(separator: "; ")
            return .noFirstFrame(device: label, seconds: waiting.timeout, detail: what)
        }
    }

    init(loop: PipeWireLoop, node: PipeWireNode, source: PipeWireSource, sequenceBase: UInt64?) throws(CaptureError) {
        self.loop = loop
        self.runner = source.runner
        self.label = source.name
        self.sequenceBase = sequenceBase
        self.decoder = source.decoder
        waiting = FirstFrameWait(since: monotonicNanos(), timeout: source.firstFrameTimeout)
        let offers = try PipeWireOffer.offers(of: node, loop: loop, label: label)
        self.offers = offers
        chosen = offers.isEmpty ? nil : try PipeWireChosenFormat.choose(among: offers, for: source.request, mjpeg: decoder != nil, node: label)
        try loop.locked { () throws(CaptureError) in
            watch = try PipeWireNodeWatch(loop: loop, node: node) { [unowned self] in self.nodeGone = true }
            let properties = [("media.type", "Video"), ("media.category", "Capture"), ("media.role", "Camera"),
                              ("node.name", "granite-cam.input"), ("target.object", node.serial ?? String(node.id))]
            let made = try PipeWireStream(loop: loop, name: "granite-cam", node: label, properties: properties,
                                          data: Unmanaged.passUnretained(self).toOpaque()) { events in
                events.state_changed = { data, _, state, error in
                    let me = Unmanaged<PipeWireCapture>.fromOpaque(data!).takeUnretainedValue()
                    if state == PW_STREAM_STATE_STREAMING { me.streamed = true }
                    if state == PW_STREAM_STATE_ERROR {
                        me.failed = .pipeWire(node: me.label, detail: error.map { String(cString: $0) } ?? "stream error")
                    } else if state == PW_STREAM_STATE_UNCONNECTED, me.streamed {
                        me.failed = .disconnected(device: me.label, detail: "the PipeWire source went away")
                    }
                }
                events.param_changed = { data, id, param in
                    guard id == SPA_PARAM_Format.rawValue else { return }
                    Unmanaged<PipeWireCapture>.fromOpaque(data!).takeUnretainedValue().formatChanged(param)
                }
                events.process = { data in
                    Unmanaged<PipeWireCapture>.fromOpaque(data!).takeUnretainedValue().process()
                }
            }
            stream = made
            let ids = PipeWireChosenFormat.preference.map(\.spaID)
            let bytes = 512 * ids.count
            let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes)
            defer { buffer.deallocate() }
            var params = [UnsafePointer<spa_pod>?](repeating: nil, count: ids.count)
            var count: Int32
            if let chosen {
                // Exactly the chosen format: what a camera client asks for once it has picked.
                let subtype = chosen.format == nil ? SPA_MEDIA_SUBTYPE_mjpg.rawValue : SPA_MEDIA_SUBTYPE_raw.rawValue
                params[0] = cpw_video_format_fixed(buffer, UInt32(bytes), subtype, chosen.format?.spaID ?? 0,
                                                   UInt32(chosen.size.width), UInt32(chosen.size.height), chosen.rate.num, chosen.rate.den)
                count = params[0] == nil ? -ENOSPC : 1
            } else {
                count = cpw_video_formats(buffer, UInt32(bytes), ids, UInt32(ids.count), 0, 0, 0, 0, &params)
            }
            guard count > 0 else { throw .pipeWire(node: label, detail: "cannot build the format list (\(count))") }
            try params.withUnsafeMutableBufferPointer { (all) throws(CaptureError) in
                try made.connect(SPA_DIRECTION_INPUT, flags: [PW_STREAM_FLAG_AUTOCONNECT, PW_STREAM_FLAG_MAP_BUFFERS],
                                 params: all.baseAddress!, count: UInt32(count))
            }
        }
    }

    func close() {
        loop.locked {
            watch?.close()
            watch = nil
            stream?.destroy()
            stream = nil
        }
    }

    deinit { close() }

    private func formatChanged(_ param: UnsafePointer<spa_pod>?) {
        var subtype: UInt32 = 0, id: UInt32 = 0, w: UInt32 = 0, h: UInt32 = 0, num: UInt32 = 0, den: UInt32 = 0
        guard let stream = stream?.pointer, let param, cpw_parse_fixed_format(param, &subtype, &id, &w, &h, &num, &den) == 0 else {
            format = nil
            return
        }
        let raw = PipeWireVideoFormat(spaID: id)
        let mjpeg = subtype == SPA_MEDIA_SUBTYPE_mjpg.rawValue && decoder != nil
        guard mjpeg || (subtype == SPA_MEDIA_SUBTYPE_raw.rawValue && raw != nil) else {
            format = nil
            return
        }
        let chosen = mjpeg ? nil : raw
        let size = FrameSize(width: Int(w), height: Int(h))
        let fps: Double? = den > 0 && num > 0 ? Double(num) / Double(den) : nil
        format = (chosen, size, fps)
        let captureFormat: CaptureFormat = switch chosen {
        case nil: .mjpeg
        case .yuy2?: .yuyv
        case .nv12?, .i420?: .nv12
        default: .auto
        }
        var announced = StreamFormat(format: captureFormat, size: size, bytesPerLine: chosen?.stride(width: size.width) ?? 0, fps: fps)
        let among = offers.count > 1 || offers.first.map { if case let .raw(f) = $0.kind { f.count > 1 } else { false } } == true
            ? ", chosen among \(offers.map(\.description).joined(separator: "; "))" : ""
        announced.detail = "\(label) sends \(chosen?.rawValue ?? "MJPEG, decoded here")\(among)"
        lastAnnounced = announced
        runner.announce(announced)
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 512)
        defer { buffer.deallocate() }
        var params = [UnsafePointer<spa_pod>?](repeating: nil, count: 1)
        let count = cpw_buffer_params(buffer, 512, 0, 0, &params)
        if count > 0 { _ = pw_stream_update_params(stream, &params, UInt32(count)) }
    }

    private func process() {
        guard let stream = stream?.pointer else { return }
        // Only the newest buffer matters to a live run: older ones go straight back.
        var newest: UnsafeMutablePointer<pw_buffer>?
        while let next = pw_stream_dequeue_buffer(stream) {
            if let older = newest { pw_stream_queue_buffer(stream, older) }
            newest = next
        }
        guard let buffer = newest else { return }
        defer { pw_stream_queue_buffer(stream, buffer) }
        guard let format else { return }
        var seq: UInt64 = 0, pts: Int64 = 0
        let sequence: UInt64
        if cpw_buffer_header(buffer, &seq, &pts) != 0 {
            let first = firstHeaderSequence ?? seq
            firstHeaderSequence = first
            sequence = sequenceBase.map { $0 &+ (seq &- first) } ?? seq
        } else {
            sequence = (sequenceBase ?? 0) &+ counted
        }
        counted += 1
        let image: Image
        if let raw = format.format {
            guard let copied = copyOut(buffer, raw, format.size) else { return }
            image = copied
        } else {
            var chunk: UInt32 = 0, stride: Int32 = 0, room: UInt32 = 0
            guard let decoder, let data = cpw_buffer_plane(buffer, 0, &chunk, &stride, &room), chunk > 0 else { return }
            do throws(CaptureError) {
                image = try decoder.decode(Array(UnsafeBufferPointer(start: data, count: Int(chunk))), path: "\(label) (MJPEG frame)")
            } catch {
                runner.fault(error)
                return
            }
        }
        waiting.frameArrived()
        runner.emit(Frame(image: image, sequence: sequence, timestampNanos: PipeWireCapture.captureTime(pts: pts, now: monotonicNanos()),
                          source: label))
    }

    /// The producer's time stamp when its header carries one on this machine's monotonic clock
    /// (granite-cam's node: the capture time; PipeWire's V4L2 and libcamera sources; GStreamer's
    /// `pipewiresink`: when it sent the buffer) and it is at most 5 s old, else `now`.
    static func captureTime(pts: Int64, now: UInt64) -> UInt64 {
        pts > 0 ? CaptureClock.plausible(UInt64(pts), now: now) : now
    }

    /// The buffer's picture as `yuyv`, `nv12` or `rgba8`, rows packed.
    private func copyOut(_ buffer: UnsafeMutablePointer<pw_buffer>, _ format: PipeWireVideoFormat, _ size: FrameSize) -> Image? {
        let w = size.width, h = size.height
        var chunk: UInt32 = 0, stride: Int32 = 0, room: UInt32 = 0
        guard let plane0 = cpw_buffer_plane(buffer, 0, &chunk, &stride, &room) else { return nil }
        let planes = cpw_buffer_planes(buffer)
        let layout = format.yuvLayout(width: w)
        let lumaStride = stride > 0 ? Int(stride) : format.stride(width: w)
        // Further planes: their own data blocks (multi-planar producers), or after the first (one block).
        func plane(_ i: UInt32, defaultOffset: Int, defaultStride: Int) -> (UnsafePointer<UInt8>, Int)? {
            if planes > i {
                var c: UInt32 = 0, s: Int32 = 0, r: UInt32 = 0
                guard let p = cpw_buffer_plane(buffer, i, &c, &s, &r) else { return nil }
                return (UnsafePointer(p), s > 0 ? Int(s) : defaultStride)
            }
            guard defaultOffset + defaultStride * ((h + 1) / 2) <= Int(chunk) else { return nil }
            return (UnsafePointer(plane0 + defaultOffset), defaultStride)
        }
        let pixel: PixelFormat = format == .yuy2 ? .yuyv : (layout != nil ? .nv12 : .rgba8)
        let row = pixel.minimumBytesPerRow(width: w)
        guard Int(chunk) >= lumaStride * (h - 1) + row else { return nil }
        var ok = true
        let bytes = storage.make(count: pixel.byteCount(width: w, height: h)) { out in
            let o = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
            switch format {
            case .yuy2:
                for y in 0..<h { (o + y * row).update(from: plane0 + y * lumaStride, count: row) }
            case .nv12, .i420:
                for y in 0..<h { (o + y * w).update(from: plane0 + y * lumaStride, count: w) }
                let cw = (w + 1) / 2, ch = (h + 1) / 2, uv = o + w * h
                let chromaStride = layout!.strides(width: w).chroma
                let lumaBytes = lumaStride * ((h + 1) / 2 * 2)   // GStreamer rounds the luma plane to even rows
                if format == .nv12 {
                    guard let (p, s) = plane(1, defaultOffset: lumaBytes, defaultStride: lumaStride) else { ok = false; return }
                    for y in 0..<ch { (uv + y * cw * 2).update(from: p + y * s, count: cw * 2) }
                } else {
                    guard let (u, us) = plane(1, defaultOffset: lumaBytes, defaultStride: chromaStride),
                          let (v, vs) = plane(2, defaultOffset: lumaBytes + chromaStride * ch, defaultStride: chromaStride) else { ok = false; return }
                    for y in 0..<ch {
                        let d = uv + y * cw * 2
                        for x in 0..<cw { d[2 * x] = u[y * us + x]; d[2 * x + 1] = v[y * vs + x] }
                    }
                }
            case .rgbx, .rgba, .bgrx, .bgra:
                let swap = format.isBGR
                for y in 0..<h {
                    let s = UnsafeRawPointer(plane0 + y * lumaStride), d = UnsafeMutableRawPointer(o + y * row)
                    for x in 0..<w {
                        let p = s.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self)
                        let q = swap ? (p & 0x0000_FF00) | ((p & 0xFF) << 16) | ((p >> 16) & 0xFF) : p & 0x00FF_FFFF
                        d.storeBytes(of: q | 0xFF00_0000, toByteOffset: x * 4, as: UInt32.self)
                    }
                }
            }
        }
        guard ok else { return nil }
        return try? Image(width: w, height: h, format: pixel, bytes: bytes)
    }
}

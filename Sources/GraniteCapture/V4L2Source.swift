import GraniteMedia
import GraniteSync

/// How a source retries after its device went away: exponential back-off, optionally bounded.
public struct ReconnectPolicy: Sendable, Hashable {
    /// Delay before the first reopen attempt, in seconds.
    public var initialDelay: Double
    /// The delay doubles up to this, in seconds.
    public var maximumDelay: Double
    /// Give up after this many failed attempts in a row (`nil`: keep trying until stopped).
    public var maximumAttempts: Int?
    /// Give up when the source has been gone this many seconds (`nil`: no time limit).
    public var maximumWait: Double?

    /// A policy.
    public init(initialDelay: Double = 0.1, maximumDelay: Double = 2, maximumAttempts: Int? = nil, maximumWait: Double? = nil) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.maximumAttempts = maximumAttempts
        self.maximumWait = maximumWait
    }

    /// Whether a source gone since `since` (monotonic ns) after `attempts` failed tries should give up.
    public func givesUp(attempts: Int, since: UInt64, now: UInt64 = monotonicNanos()) -> Bool {
        if let limit = maximumAttempts, attempts >= limit { return true }
        if let wait = maximumWait, now >= since, Double(now - since) / 1e9 >= wait { return true }
        return false
    }

    /// What the limits are, for messages: `30 s`, `5 attempts`, `without end`.
    public var limitDescription: String {
        var parts: [String] = []
        if let maximumWait { parts.append("\(ReconnectPolicy.seconds(maximumWait)) s") }
        if let maximumAttempts { parts.append("\(maximumAttempts) attempts") }
        return parts.isEmpty ? "without end" : "up to " + parts.joined(separator: " or ")
    }

    /// Seconds for a message: `30`, `2.3`.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String((value * 10).rounded() / 10)
    }

    /// The delay before attempt `n` (0-based).
    public func delay(attempt n: Int) -> Double {
        min(maximumDelay, initialDelay * Double(1 << min(n, 20)))
    }
}

/// A V4L2 camera as a ``FrameSource``: negotiates on `start` (then sets the request's controls), streams from an mmap ring on its
/// own thread, reports a vanished device as a `.fault` and reopens it with back-off.
///
/// Frame sequence numbers are the kernel's, offset after each reopen so they keep increasing;
/// timestamps are the kernel's `CLOCK_MONOTONIC` capture times.
public final class V4L2Source: FrameSource {
    /// The device node.
    public let path: String
    /// What was asked for.
    public let request: CaptureRequest
    private let bufferCount: Int
    private let decoder: (any ImageDecoder)?
    private let reconnect: ReconnectPolicy
    private let stallTimeout: Double
    private let firstFrameTimeout: Double
    private let runner: SourceRunner
    private let negotiatedFormat = Locked<StreamFormat?>(nil)

    /// A camera source; nothing is opened until `start`.
    /// - Parameters:
    ///   - bufferCount: buffers in the mmap ring (drivers may grant more or fewer).
    ///   - decoder: decodes MJPEG frames; without one `auto` never picks MJPEG.
    ///   - stallTimeout: seconds without a frame before the device counts as gone.
    ///   - firstFrameTimeout: seconds a device that streams may take to send its first frame (after
    ///     opening, and after each reopen) before the run ends (``CaptureError/noFirstFrame(device:seconds:detail:)``);
    ///     until then a stall is this, not a device gone.
    public init(path: String, request: CaptureRequest = CaptureRequest(), bufferCount: Int = 4,
                decoder: (any ImageDecoder)? = nil, reconnect: ReconnectPolicy = ReconnectPolicy(),
                stallTimeout: Double = 5, firstFrameTimeout: Double = 10) {
        self.path = path
        self.request = request
        self.bufferCount = bufferCount
        self.decoder = decoder
        self.reconnect = reconnect
        self.stallTimeout = stallTimeout
        self.firstFrameTimeout = firstFrameTimeout
        runner = SourceRunner(name: path)
    }

    public var name: String { path }

    /// What the driver chose at the last (re)open, read back from it; `nil` before `start`.
    public var negotiated: StreamFormat? { negotiatedFormat.withLock { $0 } }

    public var stats: CaptureStats { runner.stats }

    public func start(_ delivery: FrameDelivery = .live(buffering: 4)) throws(CaptureError) -> AsyncStream<CaptureEvent> {
        let (device, format, chosen) = try open(request.format)
        negotiatedFormat.withLock { $0 = format }
        let handoff = DeviceHandoff(device)
        return try runner.start(delivery) { runner in
            runner.announce(format)
            self.capture(handoff.take(), format: format, chosen: chosen, runner: runner)
        }
    }

    public func stop() { runner.stop() }

    /// Opens, describes, negotiates and starts streaming; the device is closed on any failure.
    private func open(_ wanted: CaptureFormat) throws(CaptureError) -> (V4L2Device, StreamFormat, CaptureFormat) {
        let device = try V4L2Device(path: path)
        do throws(CaptureError) {
            let info = try device.describe()
            guard info.canCapture else {
                throw CaptureError.notACaptureDevice(device: path, card: info.card, capabilities: info.capabilities)
            }
            let chosen = try chooseFormat(wanted, info: info)
            var format = try device.negotiate(format: chosen, size: request.size, fps: request.fps, info: info)
            // What the driver made of each --ctrl, read back: the status line shows it.
            format.controls = try device.apply(request.controls).map(\.readBack)
            try device.startStreaming(count: bufferCount)
            return (device, format, chosen)
        } catch {
            device.close()
            throw error
        }
    }

    /// The format to negotiate among what `info` offers: `auto` takes MJPEG only when this source
    /// has a decoder; asking for MJPEG without one is an error.
    func chooseFormat(_ wanted: CaptureFormat, info: DeviceInfo) throws(CaptureError) -> CaptureFormat {
        let chosen = try info.choose(CaptureRequest(format: wanted, size: request.size, fps: request.fps),
                                     allowMJPEG: decoder != nil)
        if chosen == .mjpeg && decoder == nil {
            throw CaptureError.invalidRequest("\(path): MJPEG needs a JPEG decoder; ask for rgb24 to let libv4l2 convert")
        }
        return chosen
    }

    /// The capture loop: dequeue, unpack, emit; on a transient fault, close and reopen.
    private func capture(_ first: V4L2Device, format first_format: StreamFormat, chosen: CaptureFormat, runner: SourceRunner) {
        var device: V4L2Device? = first
        var format = first_format
        var assembler = FrameAssembler(device: path, decoder: decoder)
        var lastFrameAt = monotonicNanos()
        var waiting = FirstFrameWait(since: lastFrameAt, timeout: firstFrameTimeout)
        while !runner.isStopping, let current = device {
            do throws(CaptureError) {
                guard let raw = try current.dequeue(timeoutMillis: 100) else {
                    let now = monotonicNanos()
                    if waiting.isOverdue(now: now) {
                        current.close()
                        device = nil
                        runner.fault(.noFirstFrame(device: path, seconds: firstFrameTimeout, detail: "streaming \(format)"))
                        return
                    }
                    if !waiting.isWaiting, Double(now - lastFrameAt) / 1e9 > stallTimeout {
                        throw .timedOut(device: path, seconds: stallTimeout)
                    }
                    continue
                }
                lastFrameAt = monotonicNanos()
                waiting.frameArrived()
                assembler.deliver(raw, format: format, runner: runner)
            } catch {
                current.close()
                device = nil
                let gone = monotonicNanos()
                runner.fault(error)
                guard error.isTransient else { return }
                assembler.sequenceBase = (runner.lastSequence ?? 0) + 1
                guard let (reopened, newFormat) = reopen(chosen, since: gone, runner: runner) else { return }
                device = reopened
                format = newFormat
                negotiatedFormat.withLock { $0 = newFormat }
                lastFrameAt = monotonicNanos()
                waiting = FirstFrameWait(since: lastFrameAt, timeout: firstFrameTimeout)
                runner.reconnected(goneSince: gone)
                runner.announce(newFormat)
            }
        }
        device?.close()
    }

    /// Reopen attempts with back-off; `nil` when stopped or out of attempts (reported as a fault).
    private func reopen(_ chosen: CaptureFormat, since gone: UInt64, runner: SourceRunner) -> (V4L2Device, StreamFormat)? {
        var attempt = 0
        while true {
            let delay = UInt64(reconnect.delay(attempt: attempt) * 1e9)
            guard runner.sleep(until: monotonicNanos() + delay) else { return nil }
            do throws(CaptureError) {
                let (device, format, _) = try open(chosen)
                return (device, format)
            } catch {
                attempt += 1
                if reconnect.givesUp(attempts: attempt, since: gone) {
                    let waited = Double(monotonicNanos() - gone) / 1e9
                    runner.fault(.disconnected(device: path, detail: "gave up after \(attempt) reopen attempts in \(ReconnectPolicy.seconds(waited)) s; last: \(error)"))
                    return nil
                }
            }
        }
    }
}

/// Moves a device opened on the caller's thread to the capture thread, which owns it afterwards.
/// `@unchecked` because `V4L2Device` is not thread-safe; the hand-off is the only shared access.
private final class DeviceHandoff: @unchecked Sendable {
    private var device: V4L2Device?
    init(_ device: V4L2Device) { self.device = device }
    func take() -> V4L2Device {
        defer { device = nil }
        return device!
    }
}

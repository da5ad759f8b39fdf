#if canImport(Glibc)
import Glibc
#endif
import CALSA
import Dispatch
import GraniteMedia
import GraniteSync

/// Sound from an ALSA PCM (`granite-cam --audio alsa[:PCM]`): a sound card's `hw:1,0` or
/// `plughw:…`, ALSA's `default`, or a plugin PCM such as `pipewire` (pipewire-alsa), where there is
/// no PipeWire session to ask for a node.
///
/// ```
///  start: snd_pcm_open(PCM, capture, non-blocking: a busy card answers at once) ─► blocking again
///        ─► hw params: interleaved, FLOAT_LE (else S16_LE), 2 channels (else 1), 48 kHz or the
///        nearest, periods of about 1024 samples, about half a second of buffer ─► snd_pcm_start
///        ─► waits for the first block (none within `firstBlockTimeout`: ``CaptureError/noFirstFrame``)
///  reader (its own thread): snd_pcm_wait ─► snd_pcm_readi(everything there is) ─► F32 ─► deliver(block)
///        ─► a PCM ahead of real time (`null` reads as fast as it is asked): sleeps until it is not
///        block time: ALSA's own, from snd_pcm_status after the read (timestamps on CLOCK_MONOTONIC):
///        its newest sample was captured `delay` samples before the status's time, so the block
///        ends there; a PCM whose status says nothing usable (no time, or one that is not between
///        a second before the read and the read): ``AudioArrivalClock`` (the least-delayed arrival),
///        as PipeWire's source where the graph gives no time
///        an overrun (-EPIPE): snd_pcm_prepare + start (and a fresh arrival clock): the next block is
///        stamped after the sound that was lost, a gap the recorder fills with silence
/// ```
/// (Measured through pipewire-alsa: the status times put every block within 0.01 ms of the
/// same line, where arrivals scatter over 20 ms and a few samples the plugin lost at the start
/// put the arrival clock 42 ms off until a gap of a tenth of a second corrects it.) Each read
/// takes everything the PCM holds, so a block ends with the newest sample. Every error names the PCM.
public final class ALSAAudioSource: AudioCaptureSource, @unchecked Sendable {
    // @unchecked: `pcm` is set in start before the reader runs and closed in stop after it ended;
    // everything the two threads share is in `state`.
    /// The ALSA name asked for.
    public let pcmName: String
    /// How long the PCM may take to give its first block.
    public let firstBlockTimeout: Double
    /// `alsa:PCM`.
    public let name: String
    /// Samples per second and interleaved channels to ask for (the PCM may give the nearest it has).
    public let preferredRate: Int
    private var pcm: OpaquePointer?
    private var reader: DispatchSemaphore?
    private let firstBlock = DispatchSemaphore(value: 0)

    private struct State {
        var format: (sampleRate: Int, channels: Int, float: Bool)?
        var delivered = 0
        var overruns = 0
        var failure: CaptureError?
        var stopping = false
        var deliver: (@Sendable (AudioBlock) -> Void)?
    }
    private let state = Locked(State())

    public init(pcm: String, firstBlockTimeout: Double = PipeWireSource.defaultFirstFrameTimeout, preferredRate: Int = 48_000) {
        pcmName = pcm
        self.firstBlockTimeout = firstBlockTimeout
        self.preferredRate = preferredRate
        name = "alsa:\(pcm)"
    }

    public var format: (sampleRate: Int, channels: Int)? { state.withLock { $0.format.map { ($0.sampleRate, $0.channels) } } }
    public var samplesDelivered: Int { state.withLock { $0.delivered } }
    /// Overruns so far (the reader fell behind and the PCM lost sound; each one a gap the recorder fills).
    public var overruns: Int { state.withLock { $0.overruns } }
    public var failure: CaptureError? { state.withLock { $0.failure } }

    /// Opens and configures the PCM, starts the reader and waits for the first block. Throws,
    /// naming the PCM, when it does not exist, is busy, offers no format read here, or gives no
    /// sound within ``firstBlockTimeout``; nothing is left open then.
    public func start(_ deliver: @escaping @Sendable (AudioBlock) -> Void) throws(CaptureError) {
        guard pcm == nil else { throw .alsa(pcm: pcmName, detail: "already started") }
        calsa_silence_errors()
        var opened: OpaquePointer?
        try alsa("snd_pcm_open", opening: true) { snd_pcm_open(&opened, pcmName, SND_PCM_STREAM_CAPTURE, calsa_nonblock) }
        guard let opened else { throw .alsa(pcm: pcmName, detail: "snd_pcm_open gave no PCM") }
        pcm = opened
        do {
            try alsa("snd_pcm_nonblock") { snd_pcm_nonblock(opened, 0) }
            let format = try configure(opened)
            state.withLock {
                $0.format = format
                $0.deliver = deliver
            }
            try alsa("snd_pcm_prepare") { snd_pcm_prepare(opened) }
            try alsa("snd_pcm_start") { snd_pcm_start(opened) }
        } catch {
            close()
            throw error
        }
        let ended = DispatchSemaphore(value: 0)
        reader = ended
        DispatchQueue(label: "granite.audio.\(name)", qos: .userInteractive).async { [self] in
            read()
            ended.signal()
        }
        let gotFirst = firstBlock.wait(timeout: .now() + .nanoseconds(Int(min(firstBlockTimeout, 1e6) * 1e9))) == .success
        if let failure = failure {
            stop()
            throw failure
        }
        if !gotFirst {
            let what = state.withLock { $0.format }.map {
                "negotiated \($0.float ? "F32" : "S16") \($0.sampleRate) Hz, \($0.channels) channel\($0.channels == 1 ? "" : "s") with \(pcmName)"
            } ?? "not configured"
            stop()
            throw .noFirstFrame(device: name, seconds: firstBlockTimeout, detail: what + "; no sound arrived")
        }
    }

    /// Ends the reader (within a fifth of a second) and closes the PCM. Idempotent.
    public func stop() {
        state.withLock {
            $0.stopping = true
            $0.deliver = nil
        }
        if let reader {
            reader.wait()
            self.reader = nil
        }
        close()
    }

    deinit { stop() }

    private func close() {
        if let pcm { snd_pcm_close(pcm) }
        pcm = nil
    }

    /// Interleaved access, F32 (else S16), stereo (else mono), the rate nearest `preferredRate`,
    /// periods near 1024 samples and a buffer near half a second.
    private func configure(_ pcm: OpaquePointer) throws(CaptureError) -> (sampleRate: Int, channels: Int, float: Bool) {
        let hw = try allocate("snd_pcm_hw_params_malloc") { snd_pcm_hw_params_malloc($0) }
        defer { snd_pcm_hw_params_free(hw) }
        try alsa("snd_pcm_hw_params_any") { snd_pcm_hw_params_any(pcm, hw) }
        try alsa("snd_pcm_hw_params_set_access") { snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED) }
        let float = snd_pcm_hw_params_test_format(pcm, hw, SND_PCM_FORMAT_FLOAT_LE) == 0
        guard float || snd_pcm_hw_params_test_format(pcm, hw, SND_PCM_FORMAT_S16_LE) == 0 else {
            throw .alsa(pcm: pcmName, detail: "offers neither 32-bit float nor 16-bit samples (FLOAT_LE, S16_LE); "
                        + "plughw:… converts what a card has")
        }
        try alsa("snd_pcm_hw_params_set_format") { snd_pcm_hw_params_set_format(pcm, hw, float ? SND_PCM_FORMAT_FLOAT_LE : SND_PCM_FORMAT_S16_LE) }
        guard let channels: UInt32 = [2, 1].first(where: { snd_pcm_hw_params_test_channels(pcm, hw, $0) == 0 }) else {
            var least: UInt32 = 0
            _ = snd_pcm_hw_params_get_channels_min(hw, &least)
            throw .alsa(pcm: pcmName, detail: "offers \(least) channels or more; a recording takes 1 or 2 (plughw:… mixes them down)")
        }
        try alsa("snd_pcm_hw_params_set_channels") { snd_pcm_hw_params_set_channels(pcm, hw, channels) }
        var rate = UInt32(preferredRate)
        try alsa("snd_pcm_hw_params_set_rate_near") { snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, nil) }
        var period = snd_pcm_uframes_t(1024)
        try alsa("snd_pcm_hw_params_set_period_size_near") { snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, nil) }
        var buffer = snd_pcm_uframes_t(rate / 2)
        try alsa("snd_pcm_hw_params_set_buffer_size_near") { snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer) }
        try alsa("snd_pcm_hw_params") { snd_pcm_hw_params(pcm, hw) }
        // Status times on CLOCK_MONOTONIC, the frames' clock.
        let sw = try allocate("snd_pcm_sw_params_malloc") { snd_pcm_sw_params_malloc($0) }
        defer { snd_pcm_sw_params_free(sw) }
        try alsa("snd_pcm_sw_params_current") { snd_pcm_sw_params_current(pcm, sw) }
        try alsa("snd_pcm_sw_params_set_tstamp_mode") { snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE) }
        try alsa("snd_pcm_sw_params_set_tstamp_type") { snd_pcm_sw_params_set_tstamp_type(pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC) }
        try alsa("snd_pcm_sw_params") { snd_pcm_sw_params(pcm, sw) }
        return (Int(rate), Int(channels), float)
    }

    /// The reader: waits, reads everything there is, stamps and delivers it; recovers overruns;
    /// ends on stop or a failure (kept in ``failure``).
    private func read() {
        guard let pcm, let format = state.withLock({ $0.format }) else { return }
        // Reads of up to a tenth of a second, into zeros: the `null` PCM writes nothing, its silence is these.
        let width = format.float ? 4 : 2, capacity = max(1024, format.sampleRate / 10)
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: capacity * format.channels * width, alignment: 16)
        bytes.initializeMemory(as: UInt8.self, repeating: 0, count: capacity * format.channels * width)
        defer { bytes.deallocate() }
        let status: OpaquePointer
        do { status = try allocate("snd_pcm_status_malloc") { snd_pcm_status_malloc($0) } } catch {
            state.withLock { $0.failure = error }
            firstBlock.signal()
            return
        }
        defer { snd_pcm_status_free(status) }
        var clock = AudioArrivalClock(rate: format.sampleRate)
        // Samples read since the PCM (re)started, and when: a plugin that does not pace itself
        // (`null`, `file`) is held to real time, as a sound card is by its clock.
        var pace = (since: monotonicNanos(), frames: 0)
        var signalled = false
        while !state.withLock({ $0.stopping }) {
            var code = Int(snd_pcm_wait(pcm, 200)), call = "snd_pcm_wait"
            if code == 0 { continue }   // nothing within 200 ms: look at `stopping` again
            if code > 0 {
                code = snd_pcm_readi(pcm, bytes, snd_pcm_uframes_t(capacity))
                call = "snd_pcm_readi"
            }
            let arrival = monotonicNanos()
            if code == -Int(EAGAIN) || code == -Int(EINTR) { continue }
            if code == -Int(EPIPE) || code == -Int(ESTRPIPE) {
                // An overrun (or a suspend): the sound in between is lost. Restarted, with a fresh
                // clock: the next block's time is after the loss, a gap the recorder fills.
                if code == -Int(ESTRPIPE) { while snd_pcm_resume(pcm) == -EAGAIN { usleep(10_000) } }
                let restarted = snd_pcm_prepare(pcm) >= 0 && snd_pcm_start(pcm) >= 0
                state.withLock { $0.overruns += 1 }
                if restarted {
                    clock = AudioArrivalClock(rate: format.sampleRate)
                    pace = (monotonicNanos(), 0)
                    continue
                }
            }
            guard code > 0 else {
                let failure = readFailure(call, code: Int32(-code), seconds: Double(samplesDelivered) / Double(format.sampleRate))
                state.withLock { $0.failure = $0.stopping ? nil : failure }
                break
            }
            let count = code * format.channels
            let samples = format.float ? AudioBlock.floats(f32: bytes, count: count) : AudioBlock.floats(s16: bytes, count: count)
            var blocks = clock.stamp([samples], channels: format.channels, arrival: arrival)
            if let start = Self.captureStart(status: snd_pcm_status(pcm, status) >= 0 ? status : nil, frames: code,
                                             rate: format.sampleRate, arrival: arrival) {
                blocks = [AudioBlock(samples: samples, timestampNanos: start, sampleRate: format.sampleRate, channels: format.channels)]
            }
            let deliver = state.withLock { state in
                state.delivered += code
                return state.deliver
            }
            for block in blocks { deliver?(block) }
            if !signalled {
                firstBlock.signal()
                signalled = true
            }
            pace.frames += code
            let ahead = Self.secondsAhead(frames: pace.frames, rate: format.sampleRate, elapsedNanos: monotonicNanos() - pace.since)
            if ahead > 0 { usleep(UInt32(min(ahead, 0.2) * 1e6)) }
        }
        if !signalled { firstBlock.signal() }   // a start still waiting learns of the failure (or the stop) now
    }

    /// The capture time of the first of `frames` samples just read, from the PCM's status taken
    /// after the read: its newest sample was captured `delay` samples before the status's time.
    /// Nil where the status says nothing usable (no time; an end after the read or more than a
    /// second before it).
    static func captureStart(status: OpaquePointer?, frames: Int, rate: Int, arrival: UInt64) -> UInt64? {
        guard let status else { return nil }
        var time = timespec()
        snd_pcm_status_get_htstamp(status, &time)
        let nanos = Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
        return captureStart(statusNanos: nanos, delay: Int(snd_pcm_status_get_delay(status)), frames: frames, rate: rate, arrival: arrival)
    }

    /// ``captureStart(status:frames:rate:arrival:)``'s rule, over plain numbers.
    static func captureStart(statusNanos: Double, delay: Int, frames: Int, rate: Int, arrival: UInt64) -> UInt64? {
        let end = statusNanos - Double(max(0, delay)) * 1e9 / Double(rate)
        guard statusNanos > 0, end <= Double(arrival) + 2e6, end >= Double(arrival) - 1e9 else { return nil }
        return UInt64(max(0, end - Double(frames) * 1e9 / Double(rate)))
    }

    /// How far (s) `frames` read in `elapsedNanos` since the start run ahead of what a sound card
    /// could have captured by then (no more than the time gone), beyond a tenth of a second (a
    /// plugin's first cycle may hold sound from just before the start) and a clock up to 0.5 %
    /// fast (a card's is within 0.01 %): > 0 only for a PCM that does not pace itself.
    static func secondsAhead(frames: Int, rate: Int, elapsedNanos: UInt64) -> Double {
        Double(frames) / Double(rate) - Double(elapsedNanos) / 1e9 * 1.005 - 0.1
    }

    /// One of libasound's opaque parameter objects from its `_malloc` (free it with the matching `_free`).
    private func allocate(_ call: String, _ malloc: (UnsafeMutablePointer<OpaquePointer?>) -> Int32) throws(CaptureError) -> OpaquePointer {
        var made: OpaquePointer?
        try alsa(call) { malloc(&made) }
        guard let made else { throw .alsa(pcm: pcmName, detail: "\(call): out of memory") }
        return made
    }

    /// Runs one libasound call (negative: an error code) through GraniteMedia's EINTR-retrying
    /// ``SystemCall/retryingEINTR(_:failure:)``, its failure typed, naming the PCM.
    @discardableResult
    private func alsa(_ call: String, opening: Bool = false, _ body: () -> Int32) throws(CaptureError) -> Int32 {
        try SystemCall.retryingEINTR({ () -> Int32 in
            let code = body()
            if code >= 0 { return code }
            errno = -code
            return -1
        }, failure: { code in self.error(call, code: code, opening: opening) })
    }

    /// The typed error for libasound's error `code` (positive) from `call`.
    func error(_ call: String, code: Int32, opening: Bool) -> CaptureError {
        if code == EBUSY { return .alsa(pcm: pcmName, detail: "busy: another program is capturing from it (\(call))") }
        if opening && [ENOENT, ENODEV, ENXIO, EINVAL].contains(code) {
            // hw:99,0 answers EINVAL (no card 99), an unknown name ENOENT.
            return .alsa(pcm: pcmName, detail: "no such PCM (\(call): \(Self.message(-code))); " + Self.cards())
        }
        if opening && (code == EHOSTDOWN || code == ECONNREFUSED) {
            return .alsa(pcm: pcmName, detail: "the sound server it routes to is not running (\(call): \(Self.message(-code)))")
        }
        return .alsa(pcm: pcmName, detail: "\(call) failed: \(Self.message(-code))")
    }

    /// Why the sound stopped mid-run, from libasound's error `code` (positive) in `call` after
    /// `seconds` of sound: a card that went away (unplugged, its driver unbound: ENODEV; EIO; an
    /// overrun that would not restart: EPIPE) is ``CaptureError/disconnected(device:detail:)``,
    /// anything else a failed call; both name the PCM.
    func readFailure(_ call: String, code: Int32, seconds: Double) -> CaptureError {
        let after = "after \(ReconnectPolicy.seconds(seconds)) s of sound"
        guard [ENODEV, EIO, EPIPE].contains(code) else {
            return .alsa(pcm: pcmName, detail: "\(call) failed: \(Self.message(-code)), \(after)")
        }
        return .disconnected(device: name, detail: "\(call): \(Self.message(-code)), \(after)")
    }

    /// libasound's text for a (negative) error code.
    static func message(_ code: Int32) -> String { String(cString: snd_strerror(code)) }

    /// The sound cards the kernel has (`/proc/asound/cards`: " 0 [PCH            ]: HDA-Intel - …"),
    /// for an error about a missing PCM.
    static func cards() -> String {
        var names: [String] = []
        if let file = fopen("/proc/asound/cards", "re") {
            defer { fclose(file) }
            var line = [CChar](repeating: 0, count: 512)
            while fgets(&line, Int32(line.count), file) != nil {
                let text = String(cString: line)
                guard let open = text.firstIndex(of: "["), let close = text.firstIndex(of: "]"), open < close,
                      let number = Int(text[..<open].filter { $0 != " " }) else { continue }
                names.append("hw:\(number) (\(text[text.index(after: open)..<close].filter { $0 != " " }))")
            }
        }
        return names.isEmpty ? "this machine has no sound card (plugin PCMs such as null, or pipewire with pipewire-alsa, still open)"
            : "the cards are " + names.joined(separator: ", ") + " (`arecord -L` lists every PCM)"
    }
}

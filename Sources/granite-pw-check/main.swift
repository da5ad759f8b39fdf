// granite-pw-check: the PipeWire tier's and benchmark's consumer and reader (scripts/tiers/45-pipewire.sh).
//
//   granite-pw-check counters FILE WxH [--min N] [--each LIST]
//       raw RGBA frames (what `gst-launch-1.0 … ! videoconvert ! video/x-raw,format=RGBA ! filesink`
//       recorded): reads each one's drawn test-pattern counter; fails unless every frame has one,
//       they rise strictly, and there are at least N; --each: LIST gets each frame's counter, a line
//       each (to match frames of two recordings by counter)
//   granite-pw-check consume [NODE | /dev/videoN] [--frames N] [--seconds S] [--counters WxH] [--min N]
//                            [--arrivals FILE]
//       reads a PipeWire video source through GraniteCapture's PipeWireSource (the same code as
//       `granite-cam --source pipewire:NODE`), or a V4L2 capture node through V4L2Source (a
//       v4l2loopback camera that `granite-cam --v4l2-out` writes: the benchmark's other side);
//       prints frames, fps, latency capture→here p50/p99 by the time stamp the transport carried
//       (only where it is a monotonic capture time), drops and CPU time per frame. --arrivals:
//       one line `COUNTER ARRIVAL_NS` per frame (CLOCK_MONOTONIC when it reached this loop), the
//       counter read from the pixels with --counters, else the frame's sequence (the header's)
//   granite-pw-check latency CAPTURES ARRIVALS
//       joins a producer's capture times with a consumer's arrivals by frame counter: latency
//       p50/p99 from capture to the consumer's hands, on one clock, whatever time stamps the
//       transport carried. CAPTURES: `COUNTER CAPTURE_NS` lines (granite-cam's
//       GRANITE_CAPTURE_LOG), or the log of `GST_DEBUG=basesrc:6 gst-launch-1.0 videotestsrc
//       is-live=true …` (frame k, the buffer offset pipewiresink sends as the header's sequence,
//       is released at base time + its start, on the monotonic system clock: the k-th
//       "waiting for clock" line)
//   granite-pw-check publish NAME WxH [--fps N | --unpaced] [--seconds S] [--format yuy2]
//       publishes the test pattern through GraniteCapture's PipeWireOutput (the node of
//       `granite-cam --pipewire-out`, without the rest of granite-cam's pipeline), converting each
//       frame into the shared buffer; prints frames sent and CPU time per frame sent;
//       GRANITE_CAPTURE_LOG=FILE: each frame's counter and drawing time, as granite-cam's
//   granite-pw-check publish NAME --offer 'FORMATS SIZES @ RATES[; …]' [--seconds S] [--silent]
//       the same node offering exactly these EnumFormat pods (the tier's producers with choices):
//       FORMATS yuy2,nv12,…; SIZES WxH, WxH,WxH (a list) or WxH..WxH[/WxH] (a range[, its step]);
//       RATES 30, 30,15 (a list) or 1..60; frames are drawn at the size the consumer fixed.
//       --silent: the node links but never sends a frame
//   granite-pw-check publish-av VIDEO AUDIO WxH [--fps N] [--seconds S] [--silent-audio]
//       a camera and a microphone made from one clock (the A/V sync check): the Video/Source VIDEO
//       (YUY2; node.name granite.NAME-lowercased), each frame stamped with the CLOCK_MONOTONIC time
//       it was due, plain grey with a flash from each whole second after the start: white, then two
//       fading frames (255, 215, 175), so a reader that lost the first still knows where it began
//       (made once and copied, so the camera keeps its pace on a loaded machine); and the
//       Audio/Source AUDIO (node.name AUDIO, 48 kHz mono F32): silence with a 10 ms 2 kHz click
//       starting at each of those same seconds, each sample placed by its capture time
//       (PipeWireAudioOutput's stamp)
//       --silent-audio: the audio node links but never sends
//   granite-pw-check list
//       the daemon's video sources
import GraniteCapture
import GraniteMedia

#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String, code: Int32 = 1) -> Never {
    print("granite-pw-check: \(message)")
    exit(code)
}

func option(_ name: String, in arguments: inout [String]) -> String? {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count else { return nil }
    let value = arguments[i + 1]
    arguments.removeSubrange(i...(i + 1))
    return value
}

/// Counters read from `frames`, in order; fails on an unreadable one or a step back.
func checkCounters(_ counters: [UInt64?], min: Int) -> String {
    var last: UInt64?
    for (i, counter) in counters.enumerated() {
        guard let counter else { fail("frame \(i): no readable counter") }
        if let last, counter <= last { fail("frame \(i): counter \(counter) after \(last) (out of order)") }
        last = counter
    }
    guard counters.count >= min else { fail("\(counters.count) frames, wanted at least \(min)") }
    let values = counters.compactMap { $0 }
    let gaps = zip(values.dropFirst(), values).map { $0 - $1 - 1 }.reduce(0, +)
    return "\(counters.count) frames, counters \(values.first.map(String.init) ?? "-")...\(values.last.map(String.init) ?? "-") in order, \(gaps) skipped"
}

/// `value` with `places` decimals (no Foundation here).
func fixed(_ value: Double, _ places: Int = 2) -> String {
    let scale = Double((0..<places).reduce(1) { r, _ in r * 10 })
    let n = Int((value * scale).rounded())
    let whole = String(abs(n) / Int(scale)), part = String(abs(n) % Int(scale))
    return (n < 0 ? "-" : "") + whole + (places > 0 ? "." + String(repeating: "0", count: places - part.count) + part : "")
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Writes `bytes` to `path` (atomically), or fails naming it.
func writeFile(_ bytes: [UInt8], to path: String) {
    do {
        let file = try AtomicWriter(path: path) { path, call, code in CaptureError.systemCall(device: path, call: call, errno: code) }
        try file.append(bytes)
        try file.commit()
    } catch { fail("\(error)") }
}

/// The whole file at `path` as text, nil when it cannot be read.
func readText(_ path: String) -> String? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = fread(&chunk, 1, chunk.count, file)
        if n == 0 { break }
        bytes += chunk[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// A producer's capture times by frame counter (monotonic ns).
enum CaptureTimes {
    /// `COUNTER NS` lines, or GStreamer basesrc's debug log (frame k: the k-th "waiting for
    /// clock, base time B, stream_start S" line, captured at B + S).
    static func parse(_ text: String) -> [UInt64: UInt64] {
        var times: [UInt64: UInt64] = [:]
        var k: UInt64 = 0
        for line in text.split(separator: "\n") {
            if let base = after("waiting for clock, base time ", in: line).flatMap(clockTime),
               let start = after("stream_start ", in: line).flatMap(clockTime) {
                times[k] = base + start
                k += 1
                continue
            }
            let fields = line.split(separator: " ")
            if fields.count == 2, let counter = UInt64(fields[0]), let ns = UInt64(fields[1]) { times[counter] = ns }
        }
        return times
    }

    /// What follows the first `marker` in `line`, nil without one.
    static func after(_ marker: String, in line: Substring) -> Substring? {
        let m = Array(marker.utf8), bytes = Array(line.utf8)
        guard bytes.count >= m.count else { return nil }
        for i in 0...(bytes.count - m.count) where bytes[i..<(i + m.count)].elementsEqual(m) {
            return Substring(String(decoding: bytes[(i + m.count)...], as: UTF8.self))
        }
        return nil
    }

    /// GStreamer's `H:MM:SS.NNNNNNNNN` at the start of `text`, in nanoseconds.
    static func clockTime(_ text: Substring) -> UInt64? {
        let token = text.prefix { $0.isNumber || $0 == ":" || $0 == "." }
        let parts = token.split(separator: ":")
        guard parts.count == 3, let h = UInt64(parts[0]), let m = UInt64(parts[1]) else { return nil }
        let second = parts[2].split(separator: ".")
        guard second.count == 2, let s = UInt64(second[0]), second[1].count == 9, let ns = UInt64(second[1]) else { return nil }
        return ((h * 60 + m) * 60 + s) * 1_000_000_000 + ns
    }
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first else { fail("usage: granite-pw-check counters|consume|list …", code: 64) }
arguments.removeFirst()
switch mode {
case "counters":
    let minimum = option("--min", in: &arguments).flatMap(Int.init) ?? 1
    let each = option("--each", in: &arguments)
    guard arguments.count == 2, let size = FrameSize(parsing: arguments[1]) else { fail("usage: counters FILE WxH [--min N] [--each LIST]", code: 64) }
    guard let file = fopen(arguments[0], "rb") else { fail("\(arguments[0]): cannot open") }
    let pattern = TestPattern(size: size)
    let frameBytes = size.width * size.height * 4
    var counters: [UInt64?] = []
    var bytes = [UInt8](repeating: 0, count: frameBytes)
    while fread(&bytes, 1, frameBytes, file) == frameBytes {
        counters.append(pattern.readCounter(try! Image(width: size.width, height: size.height, format: .rgba8, bytes: bytes)))
    }
    fclose(file)
    if let each {
        guard let list = fopen(each, "w") else { fail("\(each): cannot write") }
        for counter in counters { fputs((counter.map(String.init) ?? "-") + "\n", list) }
        guard fclose(list) == 0 else { fail("\(each): cannot write") }
    }
    print("granite-pw-check: \(arguments[0]): \(checkCounters(counters, min: minimum))")
case "consume":
    let want = option("--frames", in: &arguments).flatMap(Int.init) ?? 100
    let seconds = option("--seconds", in: &arguments).flatMap(Double.init) ?? 30
    let counterSize = option("--counters", in: &arguments).flatMap { FrameSize(parsing: $0) }
    let minimum = option("--min", in: &arguments).flatMap(Int.init) ?? want
    let arrivalsPath = option("--arrivals", in: &arguments)
    let source: any FrameSource = arguments.first.map { $0.hasPrefix("/dev/") } == true
        ? V4L2Source(path: arguments[0], reconnect: ReconnectPolicy(maximumAttempts: 1))
        : PipeWireSource(target: arguments.first)
    let stream: AsyncStream<CaptureEvent>
    do { stream = try source.start(.live(buffering: 4)) } catch { fail("\(error)") }
    let pattern = counterSize.map { TestPattern(size: $0) }
    var latencies: [Double] = []
    var counters: [UInt64?] = []
    var arrivals: [UInt8] = []
    var frames = 0, format = "?"
    var first: UInt64?, last: UInt64 = 0, cpuAtFirst = 0.0
    let deadline = monotonicNanos() + UInt64(seconds * 1e9)
    let watchdog = Task { while monotonicNanos() < deadline { try? await Task.sleep(nanoseconds: 50_000_000) }; source.stop() }
    loop: for await event in stream {
        switch event {
        case let .started(f): format = "\(f.format) \(f.size)"
        case let .fault(error): print("granite-pw-check: fault: \(error)")
        case let .frame(frame):
            let now = monotonicNanos()
            if first == nil { first = now; cpuAtFirst = cpuSeconds() }
            last = now
            frames += 1
            if frame.timestampNanos < now { latencies.append(Double(now - frame.timestampNanos) / 1e6) }
            if let pattern {
                // Read in place (luma) where the format allows, else from the frame made rgba8.
                let counter = pattern.readCounter(frame.image) ?? pattern.readCounter(try! ColorConversion.rgba(frame.image))
                counters.append(counter)
                if let counter, arrivalsPath != nil { arrivals += Array("\(counter) \(now)\n".utf8) }
            } else if arrivalsPath != nil {
                arrivals += Array("\(frame.sequence) \(now)\n".utf8)
            }
            if frames >= want { break loop }
        }
    }
    let cpu = cpuSeconds() - cpuAtFirst
    source.stop()
    watchdog.cancel()
    let span = first.map { Double(last - $0) / 1e9 } ?? 0
    latencies.sort()
    func quantile(_ q: Double) -> String {
        latencies.isEmpty ? "n/a" : fixed(latencies[min(latencies.count - 1, Int(Double(latencies.count) * q))])
    }
    let stats = source.stats
    print("granite-pw-check: \(source.name) \(format): \(frames) frames in \(fixed(span)) s = "
          + "\(fixed(span > 0 ? Double(frames - 1) / span : 0, 1)) fps, latency ms p50 \(quantile(0.5)) p99 \(quantile(0.99)), "
          + "dropped \(stats.droppedBySource) by the source + \(stats.droppedByConsumer) here, "
          + "consumer CPU \(fixed(frames > 1 ? cpu * 1000 / Double(frames - 1) : 0)) ms/frame")
    if let arrivalsPath {
        // The arrivals are a measurement, not a check: frames without a readable counter (a
        // loopback's buffer before the writer filled it) are left out and counted.
        writeFile(arrivals, to: arrivalsPath)
        if pattern != nil {
            print("granite-pw-check: \(counters.filter { $0 != nil }.count) arrivals logged, \(counters.filter { $0 == nil }.count) frames without a readable counter")
        }
    } else if pattern != nil {
        print("granite-pw-check: \(checkCounters(counters, min: minimum))")
    }
    if frames < minimum { fail("\(frames) frames, wanted at least \(minimum)") }
case "publish":
    let seconds = option("--seconds", in: &arguments).flatMap(Double.init) ?? 10
    let fps = option("--fps", in: &arguments).flatMap(Double.init) ?? 30
    let format = option("--format", in: &arguments).flatMap { PipeWireVideoFormat(name: $0) } ?? .yuy2
    let unpaced = arguments.contains("--unpaced"), silent = arguments.contains("--silent")
    arguments.removeAll { $0 == "--unpaced" || $0 == "--silent" }
    let offers: [PipeWireOffer]?
    do { offers = try option("--offer", in: &arguments).map { spec in try spec.split(separator: ";").map { try parseOffer(String($0)) } } }
    catch { fail("\(error)", code: 64) }
    guard arguments.count == (offers == nil ? 2 : 1) else { fail("usage: publish NAME WxH … | publish NAME --offer SPEC …", code: 64) }
    let output: PipeWireOutput
    do {
        if let offers {
            output = try PipeWireOutput(name: arguments[0], offers: offers)
        } else {
            guard let size = FrameSize(parsing: arguments[1]) else { fail("usage: publish NAME WxH …", code: 64) }
            output = try PipeWireOutput(name: arguments[0], size: size, fps: fps, formats: [format])
        }
    } catch { fail("\(error)") }
    var size = offers?.first?.sizes?.preferred ?? FrameSize(parsing: arguments.count > 1 ? arguments[1] : "")!
    var pattern = TestPattern(size: size, fps: fps)
    var storage = RecycledBytes(slots: 2)
    // GRANITE_CAPTURE_LOG=FILE: each frame's counter and the time it was drawn (as granite-cam's).
    let captureLog = getenv("GRANITE_CAPTURE_LOG").map { String(cString: $0) }
    var captures: [UInt8] = []
    let start = monotonicNanos(), cpuAtStart = cpuSeconds()
    var index: UInt64 = 0
    while monotonicNanos() < start + UInt64(seconds * 1e9) {
        if !unpaced {
            let due = start + UInt64(Double(index) * 1e9 / fps), now = monotonicNanos()
            if due > now { var t = timespec(tv_sec: Int((due - now) / 1_000_000_000), tv_nsec: Int((due - now) % 1_000_000_000)); nanosleep(&t, nil) }
        }
        if silent {
            index += 1
            continue
        }
        if offers != nil, let fixed = output.negotiatedSize, fixed != size {
            size = fixed
            pattern = TestPattern(size: size, fps: fps)
        }
        let image = pattern.render(index: index, recycling: &storage)
        let taken = monotonicNanos()
        if captureLog != nil { captures += Array("\(index) \(taken)\n".utf8) }
        do {
            _ = try output.write(size: size, sequence: index, timestampNanos: taken) { chosen, buffer in
                if let layout = chosen.yuvLayout(width: size.width) {
                    ColorConversion.yuv(image, layout: layout, into: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
                } else {
                    image.bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<buffer.count])) }
                }
            }
        } catch { fail("\(error)") }
        index += 1
    }
    let stats = output.stats
    output.close()
    if let captureLog { writeFile(captures, to: captureLog) }
    print("granite-pw-check: published \(index) frames: \(stats.sent) sent, \(stats.noConsumer) with no consumer, \(stats.busy) busy; "
          + "CPU \(fixed(stats.sent > 0 ? (cpuSeconds() - cpuAtStart) * 1000 / Double(stats.sent) : 0)) ms per frame sent")
case "publish-av":
    let seconds = option("--seconds", in: &arguments).flatMap(Double.init) ?? 30
    let fps = option("--fps", in: &arguments).flatMap(Double.init) ?? 30
    let silentAudio = arguments.contains("--silent-audio")
    arguments.removeAll { $0 == "--silent-audio" }
    guard arguments.count == 3, let size = FrameSize(parsing: arguments[2]), fps == fps.rounded(), fps >= 1 else {
        fail("usage: publish-av VIDEO AUDIO WxH [--fps N (whole)] [--seconds S] [--silent-audio]", code: 64)
    }
    let start = monotonicNanos()
    let rate = 48_000
    // The click: 10 ms of a 2 kHz tone from each whole second after the start (the first at 1 s).
    let click = { (samples: UnsafeMutableBufferPointer<Float>, first: UInt64) in
        for i in samples.indices {
            let t = Double(first) + Double(i) * 1e9 / Double(rate) - Double(start)
            guard t >= 1e9 else { continue }
            let phase = t.truncatingRemainder(dividingBy: 1e9)
            if phase < 10_000_000 { samples[i] = 0.8 * Float(sin(2 * Double.pi * 2000 * phase / 1e9)) }
        }
    }
    let microphone: PipeWireAudioOutput
    let camera: PipeWireOutput
    do {
        microphone = try PipeWireAudioOutput(name: arguments[1], rate: rate, channels: 1, silent: silentAudio, fill: click)
        camera = try PipeWireOutput(name: arguments[0], size: size, fps: fps, formats: [.yuy2])
    } catch { fail("\(error)") }
    // Two pictures made once (a mid grey and the white flash), copied into each buffer: the
    // producer keeps its pace on a loaded machine, so each frame goes out at the time it is stamped with.
    func picture(_ value: UInt8) -> [UInt8] {
        let rgba = try! Image(width: size.width, height: size.height, format: .rgba8, bytes: [UInt8](repeating: value, count: size.width * size.height * 4))
        let layout = PipeWireVideoFormat.yuy2.yuvLayout(width: size.width)!
        var bytes = [UInt8](repeating: 0, count: PipeWireVideoFormat.yuy2.byteCount(width: size.width, height: size.height))
        bytes.withUnsafeMutableBufferPointer { ColorConversion.yuv(rgba, layout: layout, into: $0.baseAddress!) }
        return bytes
    }
    // The flash fades over three frames (255, 215, 175 against a grey of 96), so that a reader
    // that missed its first frame still knows where it began: a frame's level says how far in it is.
    let grey = picture(96), flashFrames = [picture(255), picture(215), picture(175)]
    var index: UInt64 = 0, flashes = 0, late = 0
    while monotonicNanos() < start + UInt64(seconds * 1e9) {
        let due = start + UInt64(Double(index) * 1e9 / fps), now = monotonicNanos()
        if due > now { var t = timespec(tv_sec: Int((due - now) / 1_000_000_000), tv_nsec: Int((due - now) % 1_000_000_000)); nanosleep(&t, nil) }
        if monotonicNanos() > due + 5_000_000 { late += 1 }
        let step = Int(index % UInt64(fps)), flash = index >= UInt64(fps) && step < flashFrames.count
        do {
            let outcome = try camera.write(size: size, sequence: index, timestampNanos: due) { _, buffer in
                (flash ? flashFrames[step] : grey).withUnsafeBytes { buffer.copyMemory(from: $0) }
            }
            if flash && step == 0 && outcome == .sent { flashes += 1 }
        } catch { fail("\(error)") }
        index += 1
    }
    print("granite-pw-check: published \(index) frames (\(flashes) flashes sent, \(late) more than 5 ms late) and \(microphone.sent) audio blocks")
    camera.close()
    microphone.close()
case "latency":
    guard arguments.count == 2 else { fail("usage: latency CAPTURES ARRIVALS", code: 64) }
    guard let captureText = readText(arguments[0]), let arrivalText = readText(arguments[1]) else {
        fail("cannot read \(arguments[0]) or \(arguments[1])")
    }
    let captures = CaptureTimes.parse(captureText)
    var latencies: [Double] = [], unmatched = 0
    for line in arrivalText.split(separator: "\n") {
        let fields = line.split(separator: " ")
        guard fields.count == 2, let counter = UInt64(fields[0]), let arrival = UInt64(fields[1]) else { continue }
        guard let taken = captures[counter], taken <= arrival else { unmatched += 1; continue }
        latencies.append(Double(arrival - taken) / 1e6)
    }
    guard !latencies.isEmpty else { fail("no arrival matches a capture (\(captures.count) captures, \(unmatched) arrivals unmatched)") }
    latencies.sort()
    let quantile = { (q: Double) in fixed(latencies[min(latencies.count - 1, Int(Double(latencies.count) * q))]) }
    print("granite-pw-check: latency ms p50 \(quantile(0.5)) p99 \(quantile(0.99)) over \(latencies.count) frames, \(unmatched) unmatched")
case "list":
    do {
        for node in try PipeWireDirectory.videoSources() { print(node) }
    } catch { fail("\(error)") }
default:
    fail("unknown mode \(mode): counters, consume or list", code: 64)
}

/// One `--offer` pod: `FORMATS SIZES @ RATES` (see the usage above).
func parseOffer(_ text: String) throws -> PipeWireOffer {
    struct BadOffer: Error, CustomStringConvertible { let description: String }
    let parts = text.split(separator: " ").map(String.init)
    guard parts.count == 4, parts[2] == "@" else { throw BadOffer(description: "--offer: want 'FORMATS SIZES @ RATES', got '\(text)'") }
    let formats = parts[0].split(separator: ",").map { PipeWireVideoFormat(name: String($0)) }
    guard !formats.isEmpty, formats.allSatisfy({ $0 != nil }) else { throw BadOffer(description: "--offer: unknown format in '\(parts[0])'") }
    func choice<V>(_ text: String, _ parse: (String) -> V?) -> PipeWireChoice<V>? {
        if let dots = text.range(of: "..") {
            let tail = text[dots.upperBound...].split(separator: "/").map(String.init)
            guard let lo = parse(String(text[..<dots.lowerBound])), let hi = tail.first.flatMap(parse) else { return nil }
            let step = tail.count > 1 ? parse(tail[1]) : nil
            return .range(default: lo, min: lo, max: hi, step: step)
        }
        let values = text.split(separator: ",").map { parse(String($0)) }
        guard !values.isEmpty, values.allSatisfy({ $0 != nil }) else { return nil }
        return values.count == 1 ? .one(values[0]!) : .list(values.map { $0! })
    }
    guard let sizes = choice(parts[1], FrameSize.init(parsing:)) else { throw BadOffer(description: "--offer: bad sizes '\(parts[1])'") }
    guard let rates = choice(parts[3], { UInt32($0).map { PipeWireRate(num: $0, den: 1) } }) else {
        throw BadOffer(description: "--offer: bad rates '\(parts[3])'")
    }
    return PipeWireOffer(kind: .raw(formats: formats.map { $0!.spaID }), sizes: sizes, rates: rates)
}

// granite-pw-check: the PipeWire tier's and benchmark's consumer and reader (scripts/tiers/45-pipewire.sh).
//
//   granite-pw-check counters FILE WxH [--min N]
//       raw RGBA frames (what `gst-launch-1.0 … ! videoconvert ! video/x-raw,format=RGBA ! filesink`
//       recorded): reads each one's drawn test-pattern counter; fails unless every frame has one,
//       they rise strictly, and there are at least N
//   granite-pw-check consume [NODE | /dev/videoN] [--frames N] [--seconds S] [--counters WxH] [--min N]
//       reads a PipeWire video source through GraniteCapture's PipeWireSource (the same code as
//       `granite-cam --source pipewire:NODE`), or a V4L2 capture node through V4L2Source (a
//       v4l2loopback camera that `granite-cam --v4l2-out` writes: the benchmark's other side);
//       prints frames, fps, latency capture→here p50/p99 (when the producer stamps monotonic
//       capture times), drops and CPU time per frame
//   granite-pw-check publish NAME WxH [--fps N | --unpaced] [--seconds S] [--format yuy2]
//       publishes the test pattern through GraniteCapture's PipeWireOutput (the node of
//       `granite-cam --pipewire-out`, without the rest of granite-cam's pipeline), converting each
//       frame into the shared buffer; prints frames sent and CPU time per frame sent
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

var arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first else { fail("usage: granite-pw-check counters|consume|list …", code: 64) }
arguments.removeFirst()
switch mode {
case "counters":
    let minimum = option("--min", in: &arguments).flatMap(Int.init) ?? 1
    guard arguments.count == 2, let size = FrameSize(parsing: arguments[1]) else { fail("usage: counters FILE WxH [--min N]", code: 64) }
    guard let file = fopen(arguments[0], "rb") else { fail("\(arguments[0]): cannot open") }
    let pattern = TestPattern(size: size)
    let frameBytes = size.width * size.height * 4
    var counters: [UInt64?] = []
    var bytes = [UInt8](repeating: 0, count: frameBytes)
    while fread(&bytes, 1, frameBytes, file) == frameBytes {
        counters.append(pattern.readCounter(try! Image(width: size.width, height: size.height, format: .rgba8, bytes: bytes)))
    }
    fclose(file)
    print("granite-pw-check: \(arguments[0]): \(checkCounters(counters, min: minimum))")
case "consume":
    let want = option("--frames", in: &arguments).flatMap(Int.init) ?? 100
    let seconds = option("--seconds", in: &arguments).flatMap(Double.init) ?? 30
    let counterSize = option("--counters", in: &arguments).flatMap { FrameSize(parsing: $0) }
    let minimum = option("--min", in: &arguments).flatMap(Int.init) ?? want
    let source: any FrameSource = arguments.first.map { $0.hasPrefix("/dev/") } == true
        ? V4L2Source(path: arguments[0], reconnect: ReconnectPolicy(maximumAttempts: 1))
        : PipeWireSource(target: arguments.first)
    let stream: AsyncStream<CaptureEvent>
    do { stream = try source.start(.live(buffering: 4)) } catch { fail("\(error)") }
    let pattern = counterSize.map { TestPattern(size: $0) }
    var latencies: [Double] = []
    var counters: [UInt64?] = []
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
            if let pattern { counters.append(pattern.readCounter(try! ColorConversion.rgba(frame.image))) }
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
    if pattern != nil { print("granite-pw-check: \(checkCounters(counters, min: minimum))") }
    if frames < minimum { fail("\(frames) frames, wanted at least \(minimum)") }
case "publish":
    let seconds = option("--seconds", in: &arguments).flatMap(Double.init) ?? 10
    let fps = option("--fps", in: &arguments).flatMap(Double.init) ?? 30
    let format = option("--format", in: &arguments).flatMap { PipeWireVideoFormat(name: $0) } ?? .yuy2
    let unpaced = arguments.contains("--unpaced")
    arguments.removeAll { $0 == "--unpaced" }
    guard arguments.count == 2, let size = FrameSize(parsing: arguments[1]) else { fail("usage: publish NAME WxH …", code: 64) }
    let output: PipeWireOutput
    do { output = try PipeWireOutput(name: arguments[0], size: size, fps: fps, formats: [format]) } catch { fail("\(error)") }
    let pattern = TestPattern(size: size, fps: fps)
    var storage = RecycledBytes(slots: 2)
    let start = monotonicNanos(), cpuAtStart = cpuSeconds()
    var index: UInt64 = 0
    while monotonicNanos() < start + UInt64(seconds * 1e9) {
        if !unpaced {
            let due = start + UInt64(Double(index) * 1e9 / fps), now = monotonicNanos()
            if due > now { var t = timespec(tv_sec: Int((due - now) / 1_000_000_000), tv_nsec: Int((due - now) % 1_000_000_000)); nanosleep(&t, nil) }
        }
        let taken = monotonicNanos()
        let image = pattern.render(index: index, recycling: &storage)
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
    print("granite-pw-check: published \(index) frames: \(stats.sent) sent, \(stats.noConsumer) with no consumer, \(stats.busy) busy; "
          + "CPU \(fixed(stats.sent > 0 ? (cpuSeconds() - cpuAtStart) * 1000 / Double(stats.sent) : 0)) ms per frame sent")
case "list":
    do {
        for node in try PipeWireDirectory.videoSources() { print(node) }
    } catch { fail("\(error)") }
default:
    fail("unknown mode \(mode): counters, consume or list", code: 64)
}

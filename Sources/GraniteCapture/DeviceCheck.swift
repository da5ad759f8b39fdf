#if canImport(Glibc)
import Glibc
#endif
import GraniteMedia

/// The outcome of one device check.
public struct CheckResult: Sendable, CustomStringConvertible {
    /// Short name (`negotiate-adjusted-size`).
    public var name: String
    /// Whether it held.
    public var passed: Bool
    /// What was measured or what went wrong.
    public var detail: String

    public var description: String { "\(passed ? "PASS" : "FAIL") \(name): \(detail)" }
}

/// A self-test of a V4L2 device through the same code `granite-cam` uses: format negotiation
/// (read back, adjusted sizes), two pixel formats, a sustained stream at the negotiated rate,
/// busy and missing devices, and a disconnect mid-stream with recovery.
///
/// The project's VM tier runs it against the kernel's `vivid` driver (`granite-v4l2-check`);
/// on a machine with a camera, the XCTests run the parts that need no driver control.
public struct DeviceCheck: Sendable {
    /// The node under test.
    public var path: String
    /// Frames to stream for the rate check.
    public var rateFrames: Int
    /// The rate to ask for.
    public var fps: Double
    /// A shell command that brings the device back after a disconnect (e.g. reloading vivid);
    /// `nil` skips the recovery half of the disconnect check.
    public var replugCommand: String?

    /// A check of `path`.
    public init(path: String, rateFrames: Int = 60, fps: Double = 30, replugCommand: String? = nil) {
        self.path = path
        self.rateFrames = rateFrames
        self.fps = fps
        self.replugCommand = replugCommand
    }

    /// Checks that need nothing but the device: describe, negotiate, stream, faults.
    public func runBasic(log: @Sendable (CheckResult) -> Void = { _ in }) async -> [CheckResult] {
        var results: [CheckResult] = []
        func record(_ r: CheckResult) { results.append(r); log(r) }
        record(describe())
        record(adjustedSize())
        record(unsupportedFormat())
        record(missingDevice())
        record(await busy())
        record(await rate(format: .yuyv, size: FrameSize(width: 640, height: 360)))
        for format in [CaptureFormat.nv12, .rgb24] {
            record(await rate(format: format, size: FrameSize(width: 320, height: 180), frames: 10))
        }
        return results
    }

    /// Every check, the disconnect (which unplugs a vivid device) last.
    public func runAll(log: @Sendable (CheckResult) -> Void = { _ in }) async -> [CheckResult] {
        var results = await runBasic(log: log)
        let r = await disconnect()
        log(r)
        results.append(r)
        return results
    }

    func describe() -> CheckResult {
        do throws(CaptureError) {
            let info = try CaptureDevices.describe(path)
            let shown = info.formats.prefix(6).map { f in "\(f.code)[\(f.sizes.count) sizes]" }.joined(separator: " ")
            let formats = info.formats.count > 6 ? "\(shown) … (\(info.formats.count) formats)" : shown
            let ok = info.canCapture && info.formats.contains { $0.format == .yuyv }
                && info.formats.allSatisfy { !$0.sizes.isEmpty }
            return CheckResult(name: "describe", passed: ok, detail: "\(info.card) (\(info.driver)): \(formats)")
        } catch {
            return CheckResult(name: "describe", passed: false, detail: "\(error)")
        }
    }

    func adjustedSize() -> CheckResult {
        let asked = FrameSize(width: 320, height: 240)
        let source = V4L2Source(path: path, request: CaptureRequest(format: .yuyv, size: asked, fps: fps))
        do throws(CaptureError) {
            let info = try CaptureDevices.describe(path)
            let stream = try source.start(buffering: 2)
            defer { source.stop() }
            _ = stream
            guard let format = source.negotiated else { return CheckResult(name: "negotiate-read-back", passed: false, detail: "no format") }
            let sizes = info.formats.first { $0.format == .yuyv }?.sizes.map(\.size) ?? []
            let offered = sizes.contains(format.size) || sizes.count <= 2   // stepwise lists bounds only
            let rateOK = format.fps.map { $0 > 0 } ?? false
            return CheckResult(name: "negotiate-read-back", passed: format.format == .yuyv && offered && rateOK,
                               detail: "asked yuyv \(asked) @ \(StreamFormat.formatRate(fps)) fps, driver chose \(format)"
                                   + (format.size == asked ? "" : " (adjusted)"))
        } catch {
            return CheckResult(name: "negotiate-read-back", passed: false, detail: "\(error)")
        }
    }

    func unsupportedFormat() -> CheckResult {
        let name = "unsupported-format"
        do throws(CaptureError) {
            let info = try CaptureDevices.describe(path)
            guard let missing = [CaptureFormat.mjpeg, .nv12, .rgb24, .yuyv].first(where: { (f: CaptureFormat) in !info.formats.contains { $0.format == f } }) else {
                return CheckResult(name: name, passed: true, detail: "skipped: the device offers every format")
            }
            let source = V4L2Source(path: path, request: CaptureRequest(format: missing))
            _ = try source.start()
            source.stop()
            return CheckResult(name: name, passed: false, detail: "asking for \(missing) did not fail")
        } catch let .unsupportedFormat(device, requested, offered) {
            let ok = device == path && !offered.isEmpty
            return CheckResult(name: name, passed: ok, detail: "\(CaptureError.unsupportedFormat(device: device, requested: requested, offered: offered))")
        } catch {
            return CheckResult(name: name, passed: false, detail: "wrong error: \(error)")
        }
    }

    func missingDevice() -> CheckResult {
        let ghost = "/dev/video97"
        do throws(CaptureError) {
            _ = try V4L2Source(path: ghost).start()
            return CheckResult(name: "missing-device", passed: false, detail: "\(ghost) opened")
        } catch .deviceMissing(let device) {
            return CheckResult(name: "missing-device", passed: device == ghost, detail: "\(CaptureError.deviceMissing(device: device))")
        } catch {
            return CheckResult(name: "missing-device", passed: false, detail: "wrong error: \(error)")
        }
    }

    func busy() async -> CheckResult {
        let first = V4L2Source(path: path, request: CaptureRequest(format: .yuyv, size: FrameSize(width: 320, height: 180)))
        do throws(CaptureError) {
            let stream = try first.start(buffering: 2)
            defer { first.stop() }
            _ = stream
            do throws(CaptureError) {
                let second = V4L2Source(path: path, request: CaptureRequest(format: .yuyv))
                _ = try second.start()
                second.stop()
                return CheckResult(name: "busy", passed: false, detail: "a second stream on \(path) was allowed")
            } catch .deviceBusy(let device) {
                return CheckResult(name: "busy", passed: device == path, detail: "\(CaptureError.deviceBusy(device: device))")
            } catch {
                return CheckResult(name: "busy", passed: false, detail: "wrong error: \(error)")
            }
        } catch {
            return CheckResult(name: "busy", passed: false, detail: "first open failed: \(error)")
        }
    }

    func rate(format: CaptureFormat, size: FrameSize, frames: Int? = nil) async -> CheckResult {
        let name = "stream-\(format)"
        let wanted = frames ?? rateFrames
        let source = V4L2Source(path: path, request: CaptureRequest(format: format, size: size, fps: fps))
        do throws(CaptureError) {
            let stream = try source.start(buffering: 8)
            guard let negotiated = source.negotiated else { return CheckResult(name: name, passed: false, detail: "no format") }
            var collected: [Frame] = []
            let deadline = monotonicNanos() + UInt64(Double(wanted) / (negotiated.fps ?? fps) * 3e9) + 5_000_000_000
            for await event in stream {
                if case let .frame(frame) = event { collected.append(frame) }
                if case let .fault(error) = event { source.stop(); return CheckResult(name: name, passed: false, detail: "fault: \(error)") }
                if collected.count >= wanted || monotonicNanos() > deadline { break }
            }
            source.stop()
            return judge(name: name, frames: collected, wanted: wanted, format: negotiated, stats: source.stats)
        } catch {
            return CheckResult(name: name, passed: false, detail: "\(error)")
        }
    }

    private func judge(name: String, frames: [Frame], wanted: Int, format: StreamFormat, stats: CaptureStats) -> CheckResult {
        guard frames.count >= wanted, let first = frames.first, let last = frames.last else {
            return CheckResult(name: name, passed: false, detail: "only \(frames.count) of \(wanted) frames")
        }
        let broken = zip(frames, frames.dropFirst()).enumerated().first { _, pair in
            pair.0.sequence >= pair.1.sequence || pair.0.timestampNanos > pair.1.timestampNanos
        }
        let ordered = broken == nil
        let sized = frames.allSatisfy { $0.width == format.size.width && $0.height == format.size.height && $0.format == format.format.pixelFormat }
        let lit = frames.allSatisfy { frame in frame.image.bytes.contains { $0 != frame.image.bytes[0] } }
        let seconds = Double(last.timestampNanos - first.timestampNanos) / 1e9
        let measured = Double(frames.count - 1) / max(seconds, 1e-9)
        let spanFrames = Double(last.sequence - first.sequence)
        let kernelRate = spanFrames / max(seconds, 1e-9)   // counts frames the driver skipped too
        let target = format.fps ?? fps
        let rateOK = abs(kernelRate - target) / target < 0.1
        let detail = "\(frames.count) frames of \(format), delivered \(StreamFormat.formatRate(measured)) fps,"
            + " kernel sequence rate \(StreamFormat.formatRate(kernelRate)) fps (set \(StreamFormat.formatRate(target))),"
            + " dropped \(stats.droppedBySource) by driver, \(stats.droppedByConsumer) by consumer"
            + (stats.repairedTimestamps > 0 ? ", \(stats.repairedTimestamps) backwards driver timestamps replaced" : "")
            + (broken.map { i, pair in
                ", ORDER BROKEN at \(i): sequence \(pair.0.sequence)→\(pair.1.sequence), time \(pair.0.timestampNanos)→\(pair.1.timestampNanos)"
            } ?? "") + (sized ? "" : ", WRONG SIZE/FORMAT") + (lit ? "" : ", BLANK FRAMES")
        return CheckResult(name: name, passed: ordered && sized && lit && rateOK, detail: detail)
    }

    func disconnect() async -> CheckResult {
        let name = "disconnect-recover"
        let source = V4L2Source(path: path, request: CaptureRequest(format: .yuyv, size: FrameSize(width: 320, height: 180), fps: fps),
                                reconnect: ReconnectPolicy(initialDelay: 0.1, maximumDelay: 0.5, maximumAttempts: 40))
        do throws(CaptureError) {
            let stream = try source.start(buffering: 8)
            var before = 0, after = 0, lastBefore: UInt64 = 0, firstAfter: UInt64?
            var fault: CaptureError?
            var restarted = false
            let deadline = monotonicNanos() + 30_000_000_000
            for await event in stream {
                switch event {
                case let .frame(frame):
                    if fault == nil {
                        before += 1
                        lastBefore = frame.sequence
                        if before == 10 {
                            do throws(CaptureError) { try CaptureDevices.pressButton(named: "Disconnect", on: path) } catch {
                                source.stop()
                                return CheckResult(name: name, passed: false, detail: "cannot press Disconnect: \(error)")
                            }
                        }
                    } else {
                        after += 1
                        if firstAfter == nil { firstAfter = frame.sequence }
                    }
                case let .fault(error):
                    if fault == nil {
                        fault = error
                        guard let command = replugCommand else { break }
                        let status = runShell(command)
                        if status != 0 { source.stop(); return CheckResult(name: name, passed: false, detail: "replug command exited \(status)") }
                    }
                case .started:
                    if fault != nil { restarted = true }
                }
                if (replugCommand == nil && fault != nil) || after >= 10 || monotonicNanos() > deadline { break }
            }
            let t0 = monotonicNanos()
            source.stop()
            let stopMillis = Double(monotonicNanos() - t0) / 1e6
            let stats = source.stats
            guard let fault else { return CheckResult(name: name, passed: false, detail: "no fault after pressing Disconnect (\(before) frames)") }
            var detail = "fault delivered: \(fault); stop took \(StreamFormat.formatRate(stopMillis)) ms"
            var ok = stopMillis < 2000 && before >= 10
            if replugCommand != nil {
                ok = ok && restarted && after >= 10 && (firstAfter ?? 0) > lastBefore && stats.reconnects == 1
                detail += "; reopened (\(stats.reconnects) reconnect), \(after) frames after, sequence \(lastBefore) → \(firstAfter.map(String.init) ?? "none")"
            }
            return CheckResult(name: name, passed: ok, detail: detail)
        } catch {
            return CheckResult(name: name, passed: false, detail: "\(error)")
        }
    }
}

/// Runs `/bin/sh -c command` and waits; returns its exit status (-1 if it could not start).
func runShell(_ command: String) -> Int32 {
    var pid: pid_t = 0
    let args = ["/bin/sh", "-c", command]
    var cArgs = args.map { strdup($0) } + [nil]
    defer { for arg in cArgs { free(arg) } }
    guard posix_spawn(&pid, "/bin/sh", nil, nil, &cArgs, environ) == 0 else { return -1 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    return (status >> 8) & 0xff
}

import GraniteMedia

extension DeviceCheck {
    /// Reads the test pattern's frame counters from a capture node that loops a video output
    /// back (vivid's "Loop Video"), while another program writes the pattern to the output.
    ///
    /// Captures YUYV at `size` for up to `seconds` or until `want` counters were read; frames
    /// whose caption cannot be read (before the writer started, a frame in between) are
    /// counted, not failed. Passes when at least `want` counters were read and they never go
    /// backwards (a counter may repeat: the capture side can run faster than the writer).
    public func loopedCounters(size: FrameSize, fps: Double = 30, want: Int = 5, seconds: Double = 60) async -> CheckResult {
        let name = "v4l2-out-loop"
        let pattern = TestPattern(size: size)
        let source = V4L2Source(path: path, request: CaptureRequest(format: .yuyv, size: size, fps: fps), stallTimeout: seconds)
        var counters: [UInt64] = []
        var unreadable = 0
        do throws(CaptureError) {
            let stream = try source.start(buffering: 8)
            let deadline = monotonicNanos() + UInt64(seconds * 1e9)
            for await event in stream {
                if monotonicNanos() > deadline { break }
                guard case let .frame(frame) = event else { continue }
                if let counter = pattern.readCounter(DeviceCheck.lumaAsRGBA(frame.image)) {
                    if counters.last != counter { counters.append(counter) }
                    if counters.count >= want { break }
                } else {
                    unreadable += 1
                }
            }
            source.stop()
        } catch {
            return CheckResult(name: name, passed: false, detail: "\(error)")
        }
        let ordered = zip(counters, counters.dropFirst()).allSatisfy { $0 < $1 }
        let shown = counters.map(String.init).joined(separator: ", ")
        return CheckResult(name: name, passed: counters.count >= want && ordered,
                           detail: "\(source.negotiated.map { "\($0)" } ?? "?"): read \(counters.count) distinct counters in order \(ordered ? "yes" : "NO") [\(shown)], "
                               + "\(unreadable) frames without a readable caption")
    }

    /// A YUYV frame's luma as grey `rgba8` (what the caption reader thresholds).
    static func lumaAsRGBA(_ image: Image) -> Image {
        guard image.format == .yuyv else { return image }
        var out = [UInt8](repeating: 255, count: image.pixelCount * 4)
        let row = image.bytesPerRow
        for y in 0..<image.height {
            for x in 0..<image.width {
                let luma = image.bytes[y * row + x * 2]
                let i = (y * image.width + x) * 4
                out[i] = luma; out[i + 1] = luma; out[i + 2] = luma
            }
        }
        return (try? Image(width: image.width, height: image.height, format: .rgba8, bytes: out)) ?? image
    }
}

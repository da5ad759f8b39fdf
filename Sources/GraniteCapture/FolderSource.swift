import GraniteMedia

/// A folder of images played as frames, in file-name order: for tests, demos and replays.
///
/// Files are read and decoded one at a time on the source's thread (never all at once); a file
/// that fails to decode is reported as a `.fault` and skipped. Sequence numbers count frames
/// emitted plus skipped, so a skipped file shows as a dropped frame.
///
/// Looping, the first pass's decoded frames are kept while they fit in `loopCacheBytes` (256 MiB
/// by default): a short clip looped as a stand-in camera then costs what a camera's frames do (no
/// file read and decode per frame, dropped ones included); a longer folder is read again each pass.
public final class FolderSource: FrameSource {
    /// The folder.
    public let path: String
    /// Frames per second, or `nil` for unpaced.
    public let fps: Double?
    /// Start again from the first file after the last.
    public let loop: Bool
    /// Stop after this many frames (`nil`: the folder once, or forever when looping).
    public let frameLimit: UInt64?
    /// Looping: the most decoded bytes kept from the first pass (0: every pass reads the files).
    public let loopCacheBytes: Int
    private let decoder: any ImageDecoder
    private let runner: SourceRunner

    /// A folder source; `decoder` defaults to Netpbm only (add GraniteCodecs for JPEG/PNG).
    public init(path: String, decoder: any ImageDecoder = NetpbmDecoder(), fps: Double? = nil,
                loop: Bool = false, frameLimit: UInt64? = nil, loopCacheBytes: Int = 256 << 20) {
        self.path = path
        self.decoder = decoder
        self.fps = fps
        self.loop = loop
        self.frameLimit = frameLimit
        self.loopCacheBytes = loopCacheBytes
        runner = SourceRunner(name: "folder:\(path)")
    }

    public var name: String { "folder:\(path)" }

    public var stats: CaptureStats { runner.stats }

    /// The files that will play, in order.
    public func files() throws(CaptureError) -> [String] {
        let extensions = decoder.fileExtensions
        let names = try readDirectory(path).filter { name in
            guard let dot = name.lastIndex(of: "."), !name.hasPrefix(".") else { return false }
            return extensions.contains(name[name.index(after: dot)...].lowercased())
        }
        return names.sorted().map { path.hasSuffix("/") ? path + $0 : "\(path)/\($0)" }
    }

    public func start(_ delivery: FrameDelivery = .live(buffering: 4)) throws(CaptureError) -> AsyncStream<CaptureEvent> {
        let files = try self.files()
        guard !files.isEmpty else { throw .emptyFolder(path: path) }
        let decoder = self.decoder, fps = self.fps, loop = self.loop, limit = self.frameLimit, name = self.name
        let budget = loop ? loopCacheBytes : 0
        return try runner.start(delivery) { runner in
            let interval = fps.map { UInt64(1e9 / $0) }
            let origin = monotonicNanos()
            var index: UInt64 = 0
            var announced = false
            var emittedThisPass = false
            // The first pass's frames by file, while they fit the budget (nil: they did not).
            var kept: [Int: Image]? = budget > 0 ? [:] : nil
            var keptBytes = 0
            repeat {
                emittedThisPass = false
                for (position, file) in files.enumerated() {
                    if runner.isStopping || limit.map({ index >= $0 }) ?? false { return }
                    if let interval, !runner.sleep(until: origin + index * interval) { return }
                    defer { index += 1 }
                    let image: Image
                    if let frame = kept?[position] {
                        image = frame
                    } else {
                        do throws(CaptureError) {
                            image = try decoder.decode(try readFile(file), path: file)
                        } catch {
                            runner.fault(FolderSource.asDecodeFailure(error, file: file))
                            continue
                        }
                        if kept != nil {
                            keptBytes += image.bytes.count
                            if keptBytes <= budget { kept?[position] = image } else { kept = nil }
                        }
                    }
                    if !announced {
                        announced = true
                        runner.announce(StreamFormat(format: .auto, size: FrameSize(width: image.width, height: image.height),
                                                     bytesPerLine: image.bytesPerRow, fps: fps))
                    }
                    runner.emit(Frame(image: image, sequence: index, timestampNanos: monotonicNanos(), source: name))
                    emittedThisPass = true
                }
            } while loop && emittedThisPass && !runner.isStopping
        }
    }

    public func stop() { runner.stop() }

    private static func asDecodeFailure(_ error: CaptureError, file: String) -> CaptureError {
        if case .decodeFailed = error { return error }
        return .decodeFailed(path: file, reason: "cannot read: \(error)")
    }
}

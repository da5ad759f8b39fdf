#if canImport(Glibc)
import Glibc
#endif
import GraniteCodecs
import GraniteMedia
import GraniteML
import GraniteSync
import Synchronization

/// Writes frames into a folder atomically (GraniteCodecs' ``AtomicFile``: temporary name, fsync,
/// rename, fsync of the folder) and appends one JSON line per frame to `frames.jsonl` (and per
/// depth map to `depth.jsonl`) through GraniteMedia's `AppendLog`, so a crash never leaves a half
/// file under a final name; a line torn by a crash is ended before the next run's first.
final class OutputWriter: Sendable {
    let directory: String
    let fileExtension: String
    /// Whether each depth map also gets its colour view (``depthPreviewFileName(sequence:)``).
    let depthPreview: Bool
    /// What the model's maps are (``DepthStage/mapName``): `depth-NNNNNNNN.png` and `depth.jsonl`,
    /// or `mask-NNNNNNNN.png` and `mask.jsonl`.
    let mapName: String
    private let sidecar: AppendLog<CamError>
    private let depthSidecar = Locked<AppendLog<CamError>?>(nil)

    /// A line of `frames.jsonl`.
    struct FrameLine: Encodable {
        let sequence: UInt64, file: String, captureNanos: UInt64, processedNanos: UInt64, writtenNanos: UInt64
        let width: Int, height: Int, source: String
        enum CodingKeys: String, CodingKey {
            case sequence, file, width, height, source
            case captureNanos = "capture_ns", processedNanos = "processed_ns", writtenNanos = "written_ns"
        }
    }

    /// A line of `depth.jsonl`.
    struct DepthLine: Encodable {
        let sequence: UInt64, file: String, writtenNanos: UInt64, width: Int, height: Int, bits: Int
        /// The colour view's file, when one was written.
        var preview: String? = nil
        enum CodingKeys: String, CodingKey {
            case sequence, file, width, height, bits, preview
            case writtenNanos = "written_ns"
        }
    }

    /// Opens a sidecar log: one fsync when it is closed, not one per frame.
    private static func log(_ path: String) throws(CamError) -> AppendLog<CamError> {
        try AppendLog(path: path, sync: .atClose) { path, operation, code in CamError.output(path: path, call: operation, errno: code) }
    }

    init(directory: String, fileExtension: String, depthPreview: Bool = false, mapName: String = "depth") throws(CamError) {
        self.directory = directory
        self.fileExtension = fileExtension
        self.mapName = mapName
        // The colour view is for depth maps; a mask (8-bit, 255 = person) is itself a picture.
        self.depthPreview = depthPreview && mapName == "depth"
        do { try AtomicFile.createDirectories(directory) } catch {
            guard case let .io(path, operation, code) = error else { throw .output(path: directory, call: "mkdir", errno: EIO) }
            throw .output(path: path, call: operation, errno: code)
        }
        sidecar = try Self.log("\(directory)/frames.jsonl")
    }

    deinit { close() }

    /// The final name of frame `sequence`.
    func fileName(sequence: UInt64) -> String {
        let digits = String(sequence)
        return "frame_" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits + "." + fileExtension
    }

    /// Writes one encoded frame and its sidecar line; returns the final path.
    @discardableResult
    func write(_ bytes: [UInt8], frame: Frame, processedNanos: UInt64) throws(CamError) -> String {
        let name = fileName(sequence: frame.sequence)
        let final = "\(directory)/\(name)"
        do { try AtomicFile.write(bytes, to: final) } catch {
            guard case let .io(path, operation, code) = error else { throw .output(path: final, call: "write", errno: EIO) }
            throw .output(path: path, call: operation, errno: code)
        }
        try sidecar.appendLine(FrameLine(sequence: frame.sequence, file: name, captureNanos: frame.timestampNanos,
                                         processedNanos: processedNanos, writtenNanos: monotonicNanos(),
                                         width: frame.width, height: frame.height, source: frame.source))
        return final
    }

    /// The final name of the model's map of frame `sequence`.
    func depthFileName(sequence: UInt64) -> String {
        let digits = String(sequence)
        return mapName + "-" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits + ".png"
    }

    /// The final name of the colour view of the depth map of frame `sequence`
    /// (`depth-00000005.preview.png` beside `depth-00000005.png`, as `granite depth` writes `NAME.preview.png`).
    func depthPreviewFileName(sequence: UInt64) -> String {
        String(depthFileName(sequence: sequence).dropLast(".png".count)) + ".preview.png"
    }

    /// Writes a `gray16` depth map as a 16-bit PNG (a `gray8` mask as an 8-bit one) atomically,
    /// a depth map's colour view when asked (``depthPreviewPNG(_:path:)``), and a line in
    /// `depth.jsonl` (`mask.jsonl`); returns the map's final path.
    @discardableResult
    func writeDepth(_ map: Image, sequence: UInt64) throws(CamError) -> String {
        let name = depthFileName(sequence: sequence)
        let final = "\(directory)/\(name)"
        let previewName = depthPreview ? depthPreviewFileName(sequence: sequence) : nil
        do {
            try AtomicFile.write(try Codecs.encodePNG(map, path: final), to: final)
            if let previewName {
                let path = "\(directory)/\(previewName)"
                try AtomicFile.write(try Self.depthPreviewPNG(map, path: path), to: path)
            }
        } catch {
            throw .stage(name: "\(mapName) output", sequence: sequence, message: "\(final): \(error)")
        }
        let line = DepthLine(sequence: sequence, file: name, writtenNanos: monotonicNanos(), width: map.width, height: map.height,
                             bits: map.format == .gray8 ? 8 : 16, preview: previewName)
        let log = try depthSidecar.withLock { (log: inout AppendLog<CamError>?) throws(CamError) -> AppendLog<CamError> in
            if let log { return log }
            let opened = try Self.log("\(directory)/\(mapName).jsonl")
            log = opened
            return opened
        }
        try log.appendLine(line)
        return final
    }

    /// The colour view of a `gray16` depth map as written (larger = farther): an 8-bit indexed PNG
    /// in GraniteML's viridis (``ColorMap/palette``, yellow = near, dark purple = far), spread over
    /// the map's own range of samples (``NearnessScale``) — the colours of `granite depth`'s
    /// `NAME.preview.png` and of the preview page. Any image viewer shows it; the 16-bit map beside
    /// it holds the data (millimetres for a metric model).
    static func depthPreviewPNG(_ map: Image, path: String) throws(CodecError) -> [UInt8] {
        guard map.format == .gray16 else { throw .encode(path: path, reason: "a depth map is gray16, got \(map.format)") }
        let width = map.width
        let samples: [Float] = map.bytes.withUnsafeBytes { raw in raw.bindMemory(to: UInt16.self).map { Float($0) } }
        let scale = NearnessScale(lo: samples.min() ?? 0, hi: samples.max() ?? 0, meaning: .depth)
        var encoder = try PNGRowEncoder(width: width, height: map.height, layout: .indexed(palette: ColorMap.palette), path: path)
        encoder.filter = .up
        encoder.strategy = .rle
        return try encoder.encode(path: path) { y, out in
            samples.withUnsafeBufferPointer { scale.paletteIndices($0.baseAddress! + y * width, count: width, into: out) }
        }
    }

    /// Flushes the sidecar to disk.
    func flush() {
        try? sidecar.sync()
    }

    func close() {
        try? sidecar.close()
        try? depthSidecar.withLock { $0 }?.close()
    }
}

#if canImport(Glibc)
import Glibc
#endif
import GraniteCodecs
import GraniteMedia
import Synchronization

/// Writes frames into a folder atomically (GraniteCodecs' ``AtomicFile``: temporary name, fsync,
/// rename, fsync of the folder) and appends one JSON
/// line per frame to `frames.jsonl`, so a crash never leaves a half file under a final name.
final class OutputWriter: Sendable {
    let directory: String
    let fileExtension: String
    private let sidecar = Mutex<Int32>(-1)
    private let depthSidecar = Mutex<Int32>(-1)

    init(directory: String, fileExtension: String) throws(CamError) {
        self.directory = directory
        self.fileExtension = fileExtension
        do { try AtomicFile.createDirectories(directory) } catch {
            guard case let .io(path, operation, code) = error else { throw .output(path: directory, call: "mkdir", errno: EIO) }
            throw .output(path: path, call: operation, errno: code)
        }
        let path = "\(directory)/frames.jsonl"
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .output(path: path, call: "open", errno: errno) }
        sidecar.withLock { $0 = fd }
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
        let line = "{\"sequence\":\(frame.sequence),\"file\":\"\(name)\",\"capture_ns\":\(frame.timestampNanos),"
            + "\"processed_ns\":\(processedNanos),\"written_ns\":\(monotonicNanos()),"
            + "\"width\":\(frame.width),\"height\":\(frame.height),\"source\":\"\(OutputWriter.escape(frame.source))\"}\n"
        try sidecar.withLock { (fd: inout Int32) throws(CamError) in
            try writeAll(fd, Array(line.utf8), path: "\(directory)/frames.jsonl")
        }
        return final
    }

    /// The final name of the depth map of frame `sequence`.
    func depthFileName(sequence: UInt64) -> String {
        let digits = String(sequence)
        return "depth-" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits + ".png"
    }

    /// Writes a `gray16` depth map as a 16-bit PNG (atomically) and a line in `depth.jsonl`;
    /// returns the final path.
    @discardableResult
    func writeDepth(_ map: Image, sequence: UInt64) throws(CamError) -> String {
        let name = depthFileName(sequence: sequence)
        let final = "\(directory)/\(name)"
        do {
            try AtomicFile.write(try Codecs.encodePNG(map, path: final), to: final)
        } catch {
            throw .stage(name: "depth output", sequence: sequence, message: "\(final): \(error)")
        }
        let line = "{\"sequence\":\(sequence),\"file\":\"\(name)\",\"written_ns\":\(monotonicNanos()),"
            + "\"width\":\(map.width),\"height\":\(map.height),\"bits\":16}\n"
        let path = "\(directory)/depth.jsonl"
        try depthSidecar.withLock { (fd: inout Int32) throws(CamError) in
            if fd < 0 {
                fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
                guard fd >= 0 else { throw .output(path: path, call: "open", errno: errno) }
            }
            try writeAll(fd, Array(line.utf8), path: path)
        }
        return final
    }

    /// Flushes the sidecar to disk.
    func flush() {
        sidecar.withLock { fd in if fd >= 0 { _ = fsync(fd) } }
    }

    func close() {
        sidecar.withLock { OutputWriter.closeSidecar(&$0) }
        depthSidecar.withLock { OutputWriter.closeSidecar(&$0) }
    }

    private static func closeSidecar(_ fd: inout Int32) {
        if fd >= 0 {
            _ = fsync(fd)
            _ = Glibc.close(fd)
            fd = -1
        }
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(CamError) {
        var offset = 0
        while offset < bytes.count {
            offset += try SystemCall.retryingEINTR({
                bytes.withUnsafeBytes { raw in Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset) }
            }, failure: { CamError.output(path: path, call: "write", errno: $0) })
        }
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

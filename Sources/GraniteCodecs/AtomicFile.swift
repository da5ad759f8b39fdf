#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes files so that the final name only ever holds a complete file.
///
/// ```
/// bytes ─► DIR/.NAME.tmp-PID-N (O_EXCL) ─► write all ─► fsync ─► rename ─► DIR/NAME ─► fsync(DIR)
/// ```
/// A kill or a full disk leaves at worst a temporary `.NAME.tmp-*` file, never a partial `NAME`.
public enum AtomicFile {
    /// The prefix every temporary file carries, so leftovers can be recognised and removed.
    public static let temporaryMarker = ".tmp-"

    /// Writes `bytes` to `path` atomically (temporary name in the same folder, fsync, rename, fsync folder).
    public static func write(_ bytes: [UInt8], to path: String, permissions: mode_t = 0o644) throws(CodecError) {
        let (dir, name) = split(path)
        let temp = "\(dir)/.\(name)\(temporaryMarker)\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
        let fd = try retryingEINTR(temp, "create temporary file") {
            open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, permissions)
        }
        var ok = false
        defer {
            if !ok { unlink(temp) }
        }
        do {
            try writeAll(fd, bytes, temp)
            try retryingEINTR(temp, "fsync") { fsync(fd) }
        } catch {
            close(fd)
            throw error
        }
        guard close(fd) == 0 else { throw .io(path: temp, operation: "close", errno: errno) }
        guard rename(temp, path) == 0 else { throw .io(path: path, operation: "rename into place", errno: errno) }
        ok = true
        try syncDirectory(dir)
    }

    /// Creates `path` and every missing folder above it (`mkdir -p`); a folder that exists is fine,
    /// a file in the way is an error naming it. Every program's output folder is made through this.
    public static func createDirectories(_ path: String, permissions: mode_t = 0o755) throws(CodecError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            if mkdir(prefix, permissions) == 0 { continue }
            let failure = errno
            var info = stat()
            guard failure == EEXIST, stat(prefix, &info) == 0 else {
                throw .io(path: prefix, operation: "create folder", errno: failure)
            }
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw .io(path: prefix, operation: "create folder (a file is in the way)", errno: ENOTDIR) }
        }
    }

    /// fsyncs a folder so a rename in it survives a crash.
    public static func syncDirectory(_ dir: String) throws(CodecError) {
        let dfd = try retryingEINTR(dir, "open folder") { open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(dfd) }
        try retryingEINTR(dir, "fsync folder") { fsync(dfd) }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], _ path: String) throws(CodecError) {
        var done = 0
        while done < bytes.count {
            done += try retryingEINTR(path, "write") {
                bytes.withUnsafeBytes { buf in Glibc.write(fd, buf.baseAddress! + done, bytes.count - done) }
            }
        }
    }

    static func split(_ path: String) -> (dir: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let dir = String(path[..<slash])
        return (dir.isEmpty ? "/" : dir, String(path[path.index(after: slash)...]))
    }
}

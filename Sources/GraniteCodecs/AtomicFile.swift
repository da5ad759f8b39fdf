#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GraniteMedia

/// Writes files so that the final name only ever holds a complete file.
///
/// ```
/// bytes ─► DIR/.NAME.tmp-PID-N (O_EXCL) ─► write all ─► fsync ─► rename ─► DIR/NAME ─► fsync(DIR)
/// ```
/// A kill or a full disk leaves at worst a temporary `.NAME.tmp-*` file, never a partial `NAME`.
public enum AtomicFile {
    /// The prefix every temporary file carries, so leftovers can be recognised and removed.
    public static var temporaryMarker: String { AtomicWriter<CodecError>.temporaryMarker }

    /// Writes `bytes` to `path` atomically (temporary name in the same folder, fsync, rename, fsync
    /// folder), through GraniteMedia's ``AtomicWriter``: the project's one atomic writer.
    public static func write(_ bytes: [UInt8], to path: String, permissions: mode_t = 0o644) throws(CodecError) {
        try AtomicWriter.write(bytes, to: path, permissions: permissions) { CodecError.io(path: $0, operation: $1, errno: $2) }
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
        try AtomicWriter.syncDirectory(dir) { CodecError.io(path: $0, operation: $1, errno: $2) }
    }
}

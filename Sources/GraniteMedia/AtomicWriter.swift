#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The project's one atomic file writer: a file is written under a temporary name in its folder
/// and renamed into place only once complete and on disk. GraniteCodecs' `AtomicFile.write`
/// (every image, manifest and depth file) and GraniteIPFS's CAR export and journal compaction
/// write through it; each maps failures to its own typed error with `failure`. Files that grow
/// by records (journals, logs) go through its sibling ``AppendLog``.
///
/// ```
/// init ─► DIR/.NAME.tmp-PID-N (O_EXCL) ─► append… ─► commit: fsync ─► rename ─► DIR/NAME ─► fsync(DIR)
///                        └── not committed (error, kill of the writer object): temporary removed
/// ```
public final class AtomicWriter<Failure: Error> {
    /// The prefix of every temporary name (after `.NAME`), so leftovers can be recognised.
    public static var temporaryMarker: String { ".tmp-" }

    /// The final path.
    public let path: String
    private let temp: String
    private var fd: Int32
    private let failure: (_ path: String, _ operation: String, _ errno: Int32) -> Failure

    /// Opens a temporary file beside `path`; `failure` maps a failed call (path, what, errno).
    public init(path: String, permissions: mode_t = 0o644,
                failure: @escaping (_ path: String, _ operation: String, _ errno: Int32) -> Failure) throws(Failure) {
        let (dir, name) = Self.split(path)
        let temp = "\(dir)/.\(name)\(Self.temporaryMarker)\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
        fd = try SystemCall.retryingEINTR({ open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, permissions) },
                                          failure: { failure(temp, "create temporary file", $0) })
        self.path = path
        self.temp = temp
        self.failure = failure
    }

    deinit {
        if fd >= 0 {   // never committed
            close(fd)
            unlink(temp)
        }
    }

    /// Appends all of `bytes` (short writes and EINTR retried).
    public func append(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        var done = 0
        while done < bytes.count {
            let start = done
            done += try SystemCall.retryingEINTR({ systemWrite(fd, bytes.baseAddress! + start, bytes.count - start) },
                                                 failure: { failure(temp, "write", $0) })
        }
    }

    /// Appends all of `bytes`.
    public func append(_ bytes: [UInt8]) throws(Failure) {
        let result = bytes.withUnsafeBytes { raw in Result { () throws(Failure) in try append(raw) } }
        try result.get()
    }

    /// Appends the whole content of the file at `source`, 1 MiB at a time.
    public func append(contentsOf source: String) throws(Failure) {
        let input = try SystemCall.retryingEINTR({ open(source, O_RDONLY | O_CLOEXEC) }, failure: { failure(source, "open", $0) })
        defer { close(input) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = try SystemCall.retryingEINTR({ read(input, buffer.baseAddress!, buffer.count) }, failure: { failure(source, "read", $0) })
            if n == 0 { return }
            try append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
    }

    /// fsyncs the file, renames it to ``path`` and fsyncs the folder: the complete file, or nothing.
    public func commit() throws(Failure) {
        try SystemCall.retryingEINTR({ fsync(fd) }, failure: { failure(temp, "fsync", $0) })
        let closed = close(fd)
        fd = -1
        guard closed == 0 else { let code = errno; unlink(temp); throw failure(temp, "close", code) }
        guard rename(temp, path) == 0 else { let code = errno; unlink(temp); throw failure(path, "rename into place", code) }
        try Self.syncDirectory(Self.split(path).dir, failure: failure)
    }

    /// Writes `bytes` to `path` atomically.
    public static func write(_ bytes: [UInt8], to path: String, permissions: mode_t = 0o644,
                             failure: @escaping (_ path: String, _ operation: String, _ errno: Int32) -> Failure) throws(Failure) {
        let writer = try AtomicWriter(path: path, permissions: permissions, failure: failure)
        try writer.append(bytes)
        try writer.commit()
    }

    /// fsyncs a folder so a rename in it survives a crash.
    public static func syncDirectory(_ dir: String, failure: (_ path: String, _ operation: String, _ errno: Int32) -> Failure) throws(Failure) {
        let dfd = try SystemCall.retryingEINTR({ open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }, failure: { failure(dir, "open folder", $0) })
        defer { close(dfd) }
        try SystemCall.retryingEINTR({ fsync(dfd) }, failure: { failure(dir, "fsync folder", $0) })
    }

    /// A path's folder (`.` for a bare name) and last component.
    public static func split(_ path: String) -> (dir: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let dir = String(path[..<slash])
        return (dir.isEmpty ? "/" : dir, String(path[path.index(after: slash)...]))
    }
}

/// `write(2)` (inside ``AtomicWriter`` the name is its static `write`).
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}

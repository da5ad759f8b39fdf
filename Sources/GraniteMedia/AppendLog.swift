#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GraniteSync
import Synchronization

/// The project's one append-only log writer, beside ``AtomicWriter``: records (JSON lines, or raw
/// bytes) appended to a file that only grows. The pin journal, `granite convert`'s manifest
/// journal, `granite-cam`'s `frames.jsonl`/`depth.jsonl` and the CAR export's block side file
/// write through it; each maps failures to its own typed error with `failure`.
///
/// ```
/// init ─► open(O_RDWR | O_APPEND | O_CREAT) ─► a torn last line (a crash mid-append)? ─► end it with "\n"
/// append(record) ─► lock ─► write(2) until every byte is out (EINTR and short writes retried) ─► unlock
///                                 └── sync == .eachRecord: fdatasync before append returns
/// sync() ─► fsync          close() / deinit ─► fsync (.atClose) ─► close
/// ```
/// A record goes out whole under the log's lock, so records from threads sharing one log never
/// interleave; with `O_APPEND` every record lands at the end also when several processes append
/// (the pin journal adds an `flock` around its appends for that). Readers skip a torn last line:
/// its `append` never returned, so nobody was told it was written.
public final class AppendLog<Failure: Error>: Sendable {
    /// When records reach the disk: the policy is chosen by each log, never implied.
    public enum Sync: Sendable, Equatable {
        /// `fdatasync` after every record: durable when `append` returns (the manifest journal:
        /// an output is renamed into place only once its record is on disk).
        case eachRecord
        /// One `fsync` when the log is closed (`frames.jsonl`: a line per frame, no sync per frame).
        case atClose
        /// Only when the owner calls ``sync()`` or ``sync(path:failure:)`` (the pin journal, which
        /// shares one fsync among appends from several threads), never on its own; a scratch file
        /// that nobody syncs is thrown away after a crash (the CAR export's block side file).
        case onRequest
    }

    /// `write(2)`'s shape; replaced only by the tests' fault-injection hook.
    package typealias WriteCall = @Sendable (_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int

    /// The log file.
    public let path: String
    /// Its sync policy.
    public let policy: Sync
    private let fd: Locked<Int32>
    private let failure: @Sendable (_ path: String, _ operation: String, _ errno: Int32) -> Failure
    private let writeCall: WriteCall

    /// Opens `path` for appending (created when missing; emptied first with `truncate`); ends a
    /// torn last line so the next record starts on a line of its own. `failure` maps a failed
    /// call (path, what, errno).
    public convenience init(path: String, truncate: Bool = false, sync: Sync,
                            failure: @escaping @Sendable (_ path: String, _ operation: String, _ errno: Int32) -> Failure) throws(Failure) {
        try self.init(path: path, truncate: truncate, sync: sync, failure: failure, faultInjection: { fd, buffer, count in write(fd, buffer, count) })
    }

    /// As ``init(path:truncate:sync:failure:)``, every `write(2)` going through `faultInjection`
    /// instead: the tests' hook to return short counts or fail with `EINTR`.
    package init(path: String, truncate: Bool = false, sync: Sync,
                 failure: @escaping @Sendable (_ path: String, _ operation: String, _ errno: Int32) -> Failure,
                 faultInjection: @escaping WriteCall) throws(Failure) {
        // Read access too, to look at the last byte; writes still land at the end (O_APPEND).
        let flags = O_RDWR | O_CREAT | O_CLOEXEC | O_APPEND | (truncate ? O_TRUNC : 0)
        let fd = try SystemCall.retryingEINTR({ open(path, flags, 0o644) }, failure: { failure(path, "open", $0) })
        self.path = path
        self.policy = sync
        self.failure = failure
        self.writeCall = faultInjection
        self.fd = Locked(fd)
        guard !truncate else { return }
        var st = stat()
        var last: UInt8 = 0
        if fstat(fd, &st) == 0, st.st_size > 0, pread(fd, &last, 1, st.st_size - 1) == 1, last != UInt8(ascii: "\n") {
            try append([UInt8(ascii: "\n")])
        }
    }

    deinit {
        let fd = self.fd.withLock { $0 }
        if fd >= 0 {
            if policy == .atClose { _ = fsync(fd) }
            systemClose(fd)
        }
    }

    /// Appends `bytes` as one record: all of it, before any other thread's record (EINTR and
    /// short writes retried); synced first under ``Sync/eachRecord``.
    public func append(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        try fd.withLock { (fd: inout Int32) throws(Failure) in
            guard fd >= 0 else { throw failure(path, "write after close", EBADF) }
            var done = 0
            while done < bytes.count {
                let start = done
                let n = try SystemCall.retryingEINTR({ writeCall(fd, bytes.baseAddress! + start, bytes.count - start) },
                                                     failure: { failure(path, "write", $0) })
                guard n > 0 else { throw failure(path, "write (no progress)", EIO) }
                done += n
            }
            if policy == .eachRecord {
                try SystemCall.retryingEINTR({ fdatasync(fd) }, failure: { failure(path, "fdatasync", $0) })
            }
        }
    }

    /// Appends `bytes` as one record.
    public func append(_ bytes: [UInt8]) throws(Failure) {
        let result = bytes.withUnsafeBytes { raw in Result { () throws(Failure) in try append(raw) } }
        try result.get()
    }

    /// Appends `values` as JSON lines (``jsonLine(_:)``), in one record.
    public func appendLines<T: Encodable>(_ values: [T]) throws(Failure) {
        var bytes: [UInt8] = []
        for value in values {
            do { bytes += try Self.jsonLine(value) } catch { throw failure(path, "encode JSON (\(error))", EINVAL) }
        }
        try append(bytes)
    }

    /// Appends `value` as one JSON line.
    public func appendLine<T: Encodable>(_ value: T) throws(Failure) {
        try appendLines([value])
    }

    /// fsyncs the file: every record appended so far is on disk when this returns.
    public func sync() throws(Failure) {
        try fd.withLock { (fd: inout Int32) throws(Failure) in
            guard fd >= 0 else { return }
            try SystemCall.retryingEINTR({ fsync(fd) }, failure: { failure(path, "fsync", $0) })
        }
    }

    /// Closes the file, syncing it first under ``Sync/atClose``; appends after this throw. Idempotent.
    public func close() throws(Failure) {
        try fd.withLock { (fd: inout Int32) throws(Failure) in
            guard fd >= 0 else { return }
            defer { systemClose(fd); fd = -1 }
            if policy == .atClose { try SystemCall.retryingEINTR({ fsync(fd) }, failure: { failure(path, "fsync", $0) }) }
        }
    }

    /// fsyncs the log at `path` without appending (a log reopened per append, such as the pin
    /// journal, syncs what earlier appends wrote).
    public static func sync(path: String, failure: (_ path: String, _ operation: String, _ errno: Int32) -> Failure) throws(Failure) {
        let fd = try SystemCall.retryingEINTR({ open(path, O_RDONLY | O_CLOEXEC) }, failure: { failure(path, "open", $0) })
        defer { systemClose(fd) }
        try SystemCall.retryingEINTR({ fsync(fd) }, failure: { failure(path, "fsync", $0) })
    }

    /// `value` as one line of JSON, the project's one encoding of log records: compact (a record
    /// never holds a raw newline), keys sorted, slashes unescaped, then `\n`.
    public static func jsonLine<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return [UInt8](try encoder.encode(value)) + [UInt8(ascii: "\n")]
    }
}

/// `close(2)` (inside ``AppendLog`` the name is its `close()`).
private func systemClose(_ fd: Int32) {
    _ = close(fd)
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An append-only file written with `write(2)` and made durable with `fsync(2)` (the pin journal
/// and the CAR export's block side file; whole files are written through GraniteMedia's `AtomicWriter`).
///
/// Errors are mapped by the owner's `error` closure, so each phase reports its own typed error
/// (`DurableFile<PinJournalError>`, `DurableFile<IPFSError>`).
final class DurableFile<Failure: Error> {
    let path: String
    private let fd: Int32
    private let error: (String) -> Failure

    init(path: String, truncate: Bool, error: @escaping (String) -> Failure) throws(Failure) {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : O_APPEND)
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else { throw error(String(cString: strerror(errno))) }
        self.path = path
        self.fd = fd
        self.error = error
    }

    deinit { close(fd) }

    /// Appends all of `bytes` (retrying short writes and EINTR).
    func append(_ bytes: [UInt8]) throws(Failure) {
        // withUnsafeBytes rethrows untyped: carry the typed error out in a Result.
        let result = bytes.withUnsafeBytes { raw in Result { () throws(Failure) in try append(raw) } }
        try result.get()
    }

    /// Appends all of `bytes` (retrying short writes and EINTR).
    func append(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw error(String(cString: strerror(errno)))
            }
            offset += n
        }
    }

    /// Flushes data and metadata to disk.
    func sync() throws(Failure) {
        guard fsync(fd) == 0 else { throw error(String(cString: strerror(errno))) }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one EINTR-retrying wrapper for C calls that return -1 and set `errno` on failure (open,
/// ioctl, fsync, read, write…). Every module's typed wrapper (capture's `systemCall`, the codecs'
/// file I/O and `AtomicFile`-style writers, ``AtomicWriter``, ``AppendLog``) goes through it and only maps `errno` to its own error.
public enum SystemCall {
    /// Runs `body` until it does not fail with `EINTR`; another failure (-1) becomes `failure(errno)`.
    @discardableResult
    @inlinable
    public static func retryingEINTR<T: BinaryInteger, E: Error>(_ body: () -> T, failure: (Int32) -> E) throws(E) -> T {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = errno
            if code == EINTR { continue }
            throw failure(code)
        }
    }
}

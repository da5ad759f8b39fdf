#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain mutex for the event core's hot paths.
///
/// `Synchronization.Mutex` on Linux asks the kernel for the thread id (`gettid`) on every lock
/// (it uses priority-inheriting futexes), which costs more than the whole quiet-event path
/// otherwise does; an uncontended `pthread_mutex_t` stays in user space.
///
/// `@unchecked Sendable` — invariant: the only state is a `pthread_mutex_t` in its own allocation,
/// which is made for use from many threads; it never moves and is destroyed only in `deinit`.
final class FastLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` holding the lock.
    @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// This thread's identity, for "am I the thread that ...?" checks on hot paths (``Engine/state``).
@inline(__always)
func currentThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}

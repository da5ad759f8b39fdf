#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain mutex: `pthread_mutex_t`, the one lock of the package.
///
/// Why not `Synchronization.Mutex`: on Linux (Swift 6.3) it locks with priority-inheriting futexes,
/// which (1) ask the kernel for the thread id (`gettid`) on every lock — more than the event core's
/// whole quiet-event path costs otherwise — and (2) hand a contended lock over inside the kernel,
/// where ThreadSanitizer cannot see it: every contended `Mutex` is reported as a data race (a
/// four-thread counter under `Mutex` is reported; the same under this lock is not), so the sanitizer
/// tier could prove nothing about code that used it. ThreadSanitizer intercepts `pthread_mutex_*`,
/// and an uncontended `pthread_mutex_t` stays in user space.
///
/// `@unchecked Sendable` — invariant: the only state is a `pthread_mutex_t` in its own allocation,
/// which is made for use from many threads; it never moves and is destroyed only in `deinit`.
public final class Lock: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
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
    @inlinable @inline(__always)
    public func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A value that is only read or changed holding its lock — `Synchronization.Mutex`'s shape
/// (`withLock { state in … }`) over ``Lock``, for the reasons given there.
///
/// `@unchecked Sendable` — invariant: `value` is touched only inside `withLock`, which holds `lock`.
public final class Locked<Value: ~Copyable>: @unchecked Sendable {
    @usableFromInline let lock = Lock()
    @usableFromInline var value: Value

    public init(_ value: consuming Value) {
        self.value = value
    }

    /// Runs `body` on the value holding the lock.
    @inlinable @inline(__always)
    public func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(lock.mutex)
        defer { pthread_mutex_unlock(lock.mutex) }
        return try body(&value)
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value guarded by a POSIX mutex: the project's one lock type.
///
/// ```swift
/// let seen = Locked<Set<Int>>([])
/// seen.withLock { _ = $0.insert(7) }
/// let lock = Lock()  // guards fields declared beside it
/// lock.withLock { counter += 1 }
/// ```
///
/// Why not `Synchronization.Mutex`: on Linux it waits on futexes that ThreadSanitizer does not see,
/// so a correct program that touches state under it is reported full of races (CONTRIBUTING.md,
/// "Sanitizers"), and real races would drown among them. `pthread_mutex_lock` is what ThreadSanitizer
/// intercepts, so every access under this lock is ordered in its eyes. Why not `NSLock`: it is the
/// same pthread mutex behind a class of Foundation, without a guarded value.
///
/// What it costs (callgrind, 2026-11-27): 68 instructions per uncontended `withLock` against 18 for
/// `Mutex`; about 3,500 more instructions per durable one-object commit (W7, ~1 % of the commit's
/// instructions, ~1 µs of a ~170 µs commit); nothing on W6's lookups or W10's iteration, which take
/// no lock.
///
/// The mutex and the value live in memory of their own (a pthread mutex must not move), freed
/// with the lock. Not recursive: calling `withLock` again from inside `body` on the same lock
/// deadlocks.
///
/// `@unchecked Sendable`: the value is reached only inside `withLock`, under the mutex, and goes
/// in and out as `sending`, as with `Mutex`.
package final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let value: UnsafeMutablePointer<Value>
    /// For ``wait(on:until:)``: threads wait on one of them until another changes the value and
    /// wakes them (the group commit's queue: writers wait for the transaction on one, committed
    /// writers for their sync on the other, so neither kind wakes the other).
    let conditions: UnsafeMutablePointer<pthread_cond_t>
    let conditionCount: Int

    package convenience init(_ initial: sending Value) { self.init(initial, conditions: 1) }

    /// - Parameter conditions: how many conditions threads may wait on (``wait(on:until:)``).
    package init(_ initial: sending Value, conditions: Int) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
        precondition(conditions >= 1, "a lock needs one condition")
        conditionCount = conditions
        self.conditions = .allocate(capacity: conditions)
        self.conditions.initialize(repeating: pthread_cond_t(), count: conditions)
        for i in 0..<conditions {
            status = pthread_cond_init(self.conditions + i, nil)
            precondition(status == 0, "pthread_cond_init failed: \(status)")
        }
        value = .allocate(capacity: 1)
        value.initialize(to: initial)
    }

    deinit {
        for i in 0..<conditionCount { pthread_cond_destroy(conditions + i) }
        conditions.deinitialize(count: conditionCount)
        conditions.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Holds the lock and calls `ready` with the value until it returns non-nil, sleeping on
    /// condition `condition` between calls (so only after a ``broadcast(_:)`` or ``signal(_:)`` of
    /// it); returns what it returned.
    ///
    /// ```swift
    /// let queue = Locked(0)
    /// // Another thread: queue.withLock { $0 += 1 }; queue.broadcast()
    /// let seen = queue.wait { $0 > 0 ? $0 : nil }
    /// ```
    package func wait<Result>(on condition: Int = 0, until ready: (inout sending Value) -> sending Result?) -> sending Result {
        precondition(condition >= 0 && condition < conditionCount, "no condition \(condition)")
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let r = ready(&value.pointee) { return r }
            pthread_cond_wait(conditions + condition, mutex)
        }
    }

    /// Wakes every thread waiting on condition `condition` in ``wait(on:until:)`` to call its
    /// `ready` again.
    package func broadcast(_ condition: Int = 0) {
        precondition(condition >= 0 && condition < conditionCount, "no condition \(condition)")
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(conditions + condition)
        pthread_mutex_unlock(mutex)
    }

    /// Wakes one thread waiting on condition `condition` (when what it waits for can serve only
    /// one: the others would wake to sleep again). Whoever takes what it waited for must signal
    /// again when it gives it back.
    package func signal(_ condition: Int = 0) {
        precondition(condition >= 0 && condition < conditionCount, "no condition \(condition)")
        pthread_mutex_lock(mutex)
        pthread_cond_signal(conditions + condition)
        pthread_mutex_unlock(mutex)
    }

    /// Runs `body` with the value while holding the lock.
    @inlinable
    package func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}

/// A lock for state declared beside it (`lock.withLock { count += 1 }`).
package typealias Lock = Locked<Void>

extension Locked where Value == Void {
    package convenience init() { self.init(()) }

    /// Runs `body` while holding the lock.
    @inlinable
    package func withLock<Result, E: Error>(_ body: () throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

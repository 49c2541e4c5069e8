import Synchronization

/// Named failure points in the system-call wrapper, so tests can fail the n-th `pwrite`, `fsync`,
/// `ftruncate`, `mmap` or `rename` and then check that the file is still at its previous version.
/// Compiled into debug builds only; in release builds `check` is a no-op.
package enum FaultPoint: String, CaseIterable, Sendable {
    case pwrite, fsync, ftruncate, mmap, rename, open
}

package enum FaultInjection {
    struct State {
        var armed: [FaultPoint: Int] = [:]
        var counts: [FaultPoint: Int] = [:]
    }
    static let state = Mutex(State())

    /// Makes the `n`-th (1-based) future call at `point` fail with `EIO`.
    package static func arm(_ point: FaultPoint, after n: Int) {
        state.withLock { $0.armed[point] = n }
    }

    /// Disarms every point and resets counters.
    package static func reset() {
        state.withLock { $0 = State() }
    }

    /// Counts calls per point since the last reset (lets a test enumerate every failure point).
    package static func calls(_ point: FaultPoint) -> Int {
        state.withLock { $0.counts[point, default: 0] }
    }

    /// Whether fault injection is compiled in.
    package static var isAvailable: Bool {
        #if DEBUG
            true
        #else
            false
        #endif
    }

    /// Returns true when the current call at `point` must fail.
    @inline(__always)
    static func shouldFail(_ point: FaultPoint) -> Bool {
        #if DEBUG
            return state.withLock { s in
                s.counts[point, default: 0] += 1
                guard let n = s.armed[point] else { return false }
                if n <= 1 {
                    s.armed[point] = nil
                    return true
                }
                s.armed[point] = n - 1
                return false
            }
        #else
            return false
        #endif
    }
}

import Synchronization

/// Named failure points in the system-call wrapper, so tests can fail the n-th `pwrite`, `fsync`,
/// `ftruncate`, `mmap`, `rename` or `open` and then check that the file is still at its previous
/// version. Compiled into debug builds, and into release builds given `-DREALM_FAULT_INJECTION` (the
/// fuzz build, Fuzz/run.sh); otherwise `shouldFail` is a constant false.
package enum FaultPoint: String, CaseIterable, Sendable {
    case pwrite, fsync, ftruncate, mmap, rename, open
}

/// A plan of failures, active for the code run inside ``FaultInjection/run(_:_:)`` (task-local, so
/// tests running in parallel do not see each other's faults).
package final class FaultPlan: Sendable {
    struct State {
        var armed: [FaultPoint: Int] = [:]
        var counts: [FaultPoint: Int] = [:]
    }
    let state = Mutex(State())

    package init() {}

    /// Makes the `n`-th (1-based) call at `point` fail with `EIO`.
    package func arm(_ point: FaultPoint, at n: Int) {
        state.withLock { $0.armed[point] = n }
    }

    /// Calls seen at `point` so far.
    package func calls(_ point: FaultPoint) -> Int { state.withLock { $0.counts[point, default: 0] } }

    func hit(_ point: FaultPoint) -> Bool {
        state.withLock { s in
            s.counts[point, default: 0] += 1
            return s.armed[point] == s.counts[point]
        }
    }
}

package enum FaultInjection {
    @TaskLocal static var plan: FaultPlan?

    /// Runs `body` with `plan` active.
    package static func run<R>(_ plan: FaultPlan, _ body: () throws -> R) rethrows -> R {
        try $plan.withValue(plan) { try body() }
    }

    /// Whether fault injection is compiled in.
    package static var isAvailable: Bool {
        #if DEBUG || REALM_FAULT_INJECTION
            true
        #else
            false
        #endif
    }

    @inline(__always)
    static func shouldFail(_ point: FaultPoint) -> Bool {
        #if DEBUG || REALM_FAULT_INJECTION
            return plan?.hit(point) ?? false
        #else
            return false
        #endif
    }
}

/// Named failure points in the system-call wrapper, so tests can fail the n-th `pwrite`, `fsync`,
/// `ftruncate`, `mmap`, `rename` or `open` and then check that the file is still at its previous
/// version. Compiled into debug builds, and into release builds given `-DREALM_FAULT_INJECTION` (the
/// fuzz build, Fuzz/run.sh); otherwise `shouldFail` is a constant false.
package enum FaultPoint: String, CaseIterable, Sendable {
    case pwrite, fsync, ftruncate, mmap, rename, open, fallocate
}

/// A plan of failures, active for the code run inside ``FaultInjection/run(_:_:)`` (task-local, so
/// tests running in parallel do not see each other's faults).
package final class FaultPlan: Sendable {
    struct State {
        var armed: [FaultPoint: Int] = [:]
        var counts: [FaultPoint: Int] = [:]
    }
    let state = Locked(State())
    /// Where the calls under this plan record their writes and syncs (``WriteLog``), if anywhere.
    let log: WriteLog?

    package init(log: WriteLog? = nil) { self.log = log }

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

/// What a run wrote to one file and when it synced it, in order: the material of the power-cut
/// tests, which build from it every disk state a power cut could leave (writes since the last
/// completed sync lost, reordered or torn at sectors) and check what recovery makes of each.
/// Recorded only inside ``FaultInjection/recording(_:_:)`` and only where fault injection is
/// compiled in.
package final class WriteLog: Sendable {
    package enum Event: Sendable, Equatable {
        /// A `pwrite` of these bytes at this offset.
        case write(offset: Int, bytes: [UInt8])
        /// An `ftruncate` to this length.
        case truncate(length: Int)
        /// An `fdatasync` or `fsync` that returned: everything before it is durable.
        case sync
    }

    /// The file recorded (the path its `SystemFile` was opened with).
    package let path: String
    private let log = Locked<[Event]>([])

    package init(path: String) { self.path = path }

    /// The events so far, in the order they happened.
    package var events: [Event] { log.withLock { $0 } }

    func note(_ path: String, _ event: () -> Event) {
        guard path == self.path else { return }
        let e = event()
        log.withLock { $0.append(e) }
    }
}

extension FaultInjection {
    /// Runs `body` recording into `log` what it writes to `log.path` (through the task's fault
    /// plan, which then fails nothing).
    package static func recording<R>(_ log: WriteLog, _ body: () throws -> R) rethrows -> R {
        try run(FaultPlan(log: log), body)
    }

    @inline(__always)
    static func note(_ path: String, _ event: () -> WriteLog.Event) {
        #if DEBUG || REALM_FAULT_INJECTION
            plan?.log?.note(path, event)
        #endif
    }
}

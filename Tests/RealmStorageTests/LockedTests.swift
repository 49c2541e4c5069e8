import Foundation
import Testing

@testable import RealmStorage

/// The project's one lock type: mutual exclusion, values in and out, errors through, and (run
/// under ThreadSanitizer in CI) no reported race for state touched only under it.
@Suite struct LockedTests {
    @Test func guardsAValueAcrossThreads() {
        let seen = Locked<Set<Int>>([])
        let counter = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for i in 0..<500 {
                seen.withLock { _ = $0.insert(thread * 1000 + i) }
                counter.withLock { $0 += 1 }
            }
        }
        #expect(seen.withLock { $0.count } == 4000)
        #expect(counter.withLock { $0 } == 4000)
    }

    @Test func guardsStateBesideIt() {
        final class Box: @unchecked Sendable {  // `total` is touched only under `lock`
            let lock = Lock()
            var total = 0
        }
        let box = Box()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<1000 { box.lock.withLock { box.total += 1 } }
        }
        #expect(box.lock.withLock { box.total } == 4000)
    }

    @Test func returnsTheBodysResultAndPassesItsError() throws {
        struct Refused: Error {}
        let l = Locked([1, 2, 3])
        #expect(l.withLock { $0.reduce(0, +) } == 6)
        #expect(throws: Refused.self) {
            try l.withLock { (v: inout [Int]) throws(Refused) -> Void in
                v.append(4)
                throw Refused()
            }
        }
        // What the body changed before throwing stays, and the lock was released.
        #expect(l.withLock { $0 } == [1, 2, 3, 4])
        let plain = Lock()
        #expect(throws: Refused.self) { try plain.withLock { () throws(Refused) -> Int in throw Refused() } }
        #expect(plain.withLock { 5 } == 5)
    }

    /// Threads wait on one of two conditions: each token a producer adds wakes one waiter of the
    /// first (``Locked/signal(_:)``), and every waiter of the second wakes on its broadcast; each
    /// token is taken once, and every thread ends. The producer starts once every thread has
    /// looked and gone to sleep.
    @Test func waitersOnEachConditionWakeOnItsOwnSignals() {
        let queue = Locked((tokens: 0, open: false, looks: 0), conditions: 2)
        let taken = Locked(0)
        let group = DispatchGroup()
        // Threads of their own: the dispatch pool adds blocked threads slowly.
        func spawn(_ body: @escaping @Sendable () -> Void) {
            group.enter()
            Thread {
                body()
                group.leave()
            }.start()
        }
        for _ in 0..<4 {
            spawn {
                for _ in 0..<50 {
                    _ = queue.wait(on: 0) { s -> Bool? in
                        guard s.tokens > 0 else {
                            s.looks += 1
                            return nil
                        }
                        s.tokens -= 1
                        return true
                    }
                    taken.withLock { $0 += 1 }
                }
            }
        }
        for _ in 0..<3 {
            spawn {
                _ = queue.wait(on: 1) { s -> Bool? in
                    if s.open { return true }
                    s.looks += 1
                    return nil
                }
            }
        }
        // A look that found nothing is followed by sleeping, under the same lock.
        while queue.withLock({ $0.looks }) < 7 { usleep(1000) }
        for _ in 0..<200 {
            queue.withLock { $0.tokens += 1 }
            queue.signal(0)
        }
        queue.withLock { $0.open = true }
        queue.broadcast(1)
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(taken.withLock { $0 } == 200)
        #expect(queue.withLock { $0.tokens } == 0)
    }

    @Test func releasesItsValueWithTheLock() {
        final class Canary: Sendable {
            let gone: Locked<Bool>
            init(_ gone: Locked<Bool>) { self.gone = gone }
            deinit { gone.withLock { $0 = true } }
        }
        let gone = Locked(false)
        do {
            let l = Locked<Canary?>(Canary(gone))
            #expect(l.withLock { $0 != nil })
        }
        #expect(gone.withLock { $0 })
    }
}

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

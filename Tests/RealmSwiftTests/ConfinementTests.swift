import Foundation
import RealmSwift
import RealmTestSupport
import Testing

/// Programmer errors stop the process with a message that names the fix (run in child processes).
@Suite struct ConfinementTests {
    static func stderr(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    @Test func writeOutsideATransactionStops() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try makeRealm()
            try realm.write { realm.add(Person(value: ["id": 1])) }
            realm.objects(Person.self)[0].name = "x"
        }
        #expect(Self.stderr(result).contains("outside of a write transaction; wrap the change in realm.write"))
    }

    @Test func useFromAnotherThreadStops() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try makeRealm()
            nonisolated(unsafe) let r = realm
            let t = Thread { _ = r.objects(Person.self).count }
            t.start()
            try await Task.sleep(for: .seconds(5))
        }
        #expect(Self.stderr(result).contains("use freeze() or ThreadSafeReference"))
    }

    @Test func useOfADeletedObjectStops() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try makeRealm()
            let p = Person(value: ["id": 1])
            try realm.write { realm.add(p) }
            try realm.write { realm.delete(p) }
            _ = p.name
        }
        #expect(Self.stderr(result).contains("Object has been deleted or invalidated"))
    }

    @Test func changingAPrimaryKeyStops() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try makeRealm()
            let p = Person(value: ["id": 1])
            try realm.write {
                realm.add(p)
                p.id = 2
            }
        }
        #expect(Self.stderr(result).contains("Primary key can't be changed"))
    }
}

/// The per-thread instance cache and the confinement check know a thread by an identity that is
/// never reused: a thread started after another ended often gets the ended thread's `pthread_t`,
/// and must get neither its Realm nor pass its Realm's confinement check.
@Suite struct ThreadIdentityTests {
    /// Runs `body` on a new thread and waits for it to end.
    static func onNewThread<T>(_ body: @escaping @Sendable () -> T) -> T {
        let box = LockedBox<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let t = Thread {
            box.set(body())
            done.signal()
        }
        t.start()
        done.wait()
        while t.isExecuting { usleep(100) }
        usleep(2000)  // let the thread end, so the next one may reuse its pthread_t
        return box.get()!
    }

    @Test func aThreadAfterAnEndedOneGetsItsOwnRealm() throws {
        let dir = TempDir()
        let config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self])
        nonisolated(unsafe) var kept: [Realm] = []
        var reused = 0
        for _ in 0..<20 {
            let first = Self.onNewThread { () -> UInt in
                let realm = try! Realm(configuration: config)
                kept.append(realm)  // referenced after its thread ended
                return UInt(bitPattern: Int(bitPattern: UInt(pthread_self())))
            }
            let (second, sameInstance) = Self.onNewThread { () -> (UInt, Bool) in
                let realm = try! Realm(configuration: config)
                return (UInt(bitPattern: Int(bitPattern: UInt(pthread_self()))), kept.contains { $0 === realm })
            }
            if first == second { reused += 1 }
            #expect(!sameInstance, "a new thread was handed the Realm of an ended thread")
        }
        // The check means something only when the system reuses thread handles, as glibc does.
        print("ThreadIdentityTests: \(reused) of 20 new threads had the ended thread's pthread_t")
        withExtendedLifetime(kept) {}
    }
}

extension ThreadIdentityTests {
    /// A Realm used on a thread started after its own ended (often with the same `pthread_t`)
    /// stops the process as any use from another thread does.
    @Test func aRealmOfAnEndedThreadFailsTheCheckOnANewThread() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            let config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self])
            for _ in 0..<20 {
                nonisolated(unsafe) let realm = ThreadIdentityTests.onNewThread { () -> Realm? in try? Realm(configuration: config) }
                _ = ThreadIdentityTests.onNewThread { realm?.objects(Person.self).count ?? -1 }
            }
        }
        #expect(ConfinementTests.stderr(result).contains("use freeze() or ThreadSafeReference"))
    }
}

/// A value set on one thread and read on another, under a lock.
final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ v: T) { value = v }
    func set(_ v: T) { lock.withLock { value = v } }
    func get() -> T { lock.withLock { value } }
}

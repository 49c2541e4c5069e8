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

import Foundation
import RealmSwift
import RealmTestSupport
import Testing

/// Frozen collections: fixed version, any thread, pins released, thaw back to live.
@Suite struct FrozenTests {
    func realm(_ dir: TempDir, limit: UInt? = nil) throws -> Realm {
        var config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self, Thing.self, Player.self])
        config.maximumNumberOfActiveVersions = limit
        return try Realm(configuration: config)
    }

    @Test func frozenResultsKeepTheirVersionAndThaw() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        try realm.write { for i in 0..<10 { realm.add(Person(value: ["id": i, "age": i])) } }
        let live = realm.objects(Person.self).filter("age >= 5")
        let frozen = live.freeze()
        #expect(frozen.isFrozen && !live.isFrozen)
        #expect(frozen.freeze().isFrozen)
        try realm.write {
            realm.add(Person(value: ["id": 10, "age": 50]))
            realm.delete(realm.objects(Person.self).filter("id == 5"))
        }
        #expect(live.count == 5)
        #expect(frozen.count == 5)
        #expect(frozen.map(\.id) == [5, 6, 7, 8, 9])
        #expect(frozen[0].isFrozen)
        let thawed = try #require(frozen.thaw())
        #expect(!thawed.isFrozen)
        #expect(thawed.map(\.id) == [6, 7, 8, 9, 10])
        #expect(live.thaw()?.count == 5)
    }

    @Test func frozenCollectionPropertiesAndThaw() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let person = Person(value: ["id": 1])
        person.dogs.append(Dog(value: ["name": "a"]))
        let thing = Thing(value: ["id": 1])
        thing.tags.insert("x")
        let player = Player(value: ["id": 1])
        player.scores["a"] = 1
        try realm.write {
            realm.add(person)
            realm.add(thing)
            realm.add(player)
        }
        let dogs = person.dogs.freeze()
        let tags = thing.tags.freeze()
        let scores = player.scores.freeze()
        let owners = person.dogs[0].owners.freeze()
        #expect(dogs.isFrozen && tags.isFrozen && scores.isFrozen && owners.isFrozen)
        try realm.write {
            person.dogs.append(Dog(value: ["name": "b"]))
            thing.tags.insert("y")
            player.scores["b"] = 2
            realm.add(Person(value: ["id": 2, "dogs": [person.dogs[0]]]))
        }
        #expect(dogs.map(\.name) == ["a"])
        #expect(Set(tags) == ["x"])
        #expect(scores.count == 1 && scores["a"] == 1)
        #expect(owners.map(\.id) == [1])
        #expect(dogs.thaw()?.map(\.name) == ["a", "b"])
        #expect(tags.thaw().map { Set($0) } == ["x", "y"])
        #expect(scores.thaw()?.count == 2)
        #expect(owners.thaw()?.count == 2)
        // The object of a thawed collection was deleted: thaw gives nil.
        try realm.write { realm.delete(person) }
        #expect(dogs.thaw() == nil)
        #expect(dogs.map(\.name) == ["a"])
    }

    /// Frozen results read concurrently from many tasks while the live Realm keeps writing.
    @Test func frozenResultsAreReadableFromManyTasksDuringWrites() async throws {
        let dir = TempDir()
        let realm = try realm(dir)
        try realm.write { for i in 0..<500 { realm.add(Person(value: ["id": i, "name": "p\(i)", "age": i % 50])) } }
        let frozen = realm.objects(Person.self).filter("age < 25").sorted(byKeyPath: "name")
            .freeze()
        let box = UncheckedBox(frozen)
        let config = realm.configuration
        let writer = Task.detached {
            let r = try Realm(configuration: config)
            for i in 500..<560 { try r.write { r.add(Person(value: ["id": i, "age": 1])) } }
        }
        let sums = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var total = 0
                    for _ in 0..<20 {
                        let results = box.value
                        total += results.count
                        total += results.reduce(0) { $0 + $1.age }
                    }
                    return total
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        try await writer.value
        let expected = 20 * (250 + (0..<500).filter { $0 % 50 < 25 }.reduce(0) { $0 + $1 % 50 })
        #expect(sums == [Int](repeating: expected, count: 8))
        #expect(frozen.count == 250)
    }

    /// Version pins of frozen results are released when the last frozen value is gone.
    @Test func frozenResultsPinTheirVersionUntilReleased() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        try realm.write { realm.add(Person(value: ["id": 1])) }
        let before = realm.numberOfActiveVersions
        var frozen: Results<Person>? = realm.objects(Person.self).freeze()
        var object: Person? = frozen?.first
        try realm.write { realm.add(Person(value: ["id": 2])) }
        #expect(realm.numberOfActiveVersions == before + 1)
        frozen = nil
        #expect(realm.numberOfActiveVersions == before + 1)  // the frozen object still pins it
        #expect(object?.id == 1)
        object = nil
        #expect(realm.numberOfActiveVersions == before)
    }

    /// The active-version example of LiveAndFrozenData.md (RealmSwift.docc) through frozen results: limit 3, frozen results at three versions →
    /// the next write throws; releasing one lets it succeed.
    @Test func maximumNumberOfActiveVersionsThroughFrozenResults() throws {
        let dir = TempDir()
        let realm = try realm(dir, limit: 3)
        var frozen: [Results<Person>] = []
        for i in 0..<3 {
            try realm.write { realm.add(Person(value: ["id": i])) }
            frozen.append(realm.objects(Person.self).freeze())
        }
        #expect(realm.numberOfActiveVersions == 3)
        #expect {
            try realm.write { realm.add(Person(value: ["id": 3])) }
        } throws: { ($0 as? Realm.Error)?.code == .maximumNumberOfActiveVersionsExceeded }
        frozen.removeFirst()
        try realm.write { realm.add(Person(value: ["id": 3])) }
        #expect(frozen.map(\.count) == [2, 3])
        #expect(realm.objects(Person.self).count == 4)
    }

    /// invalidate(): results made before read as empty and are invalidated; objects too.
    @Test func invalidateEmptiesResultsAndInvalidatesObjects() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        try realm.write { for i in 0..<3 { realm.add(Person(value: ["id": i])) } }
        let results = realm.objects(Person.self)
        let first = try #require(results.first)
        #expect(results.count == 3 && !results.isInvalidated && !first.isInvalidated)
        realm.invalidate()
        #expect(results.isInvalidated && results.isEmpty && results.count == 0)
        #expect(Array(results).isEmpty)
        #expect(first.isInvalidated)
        // A frozen copy of invalidated results stays invalidated (RealmSwift's answer).
        let frozen = results.freeze()
        #expect(frozen.isFrozen && frozen.isInvalidated && frozen.isEmpty)
        #expect(realm.objects(Person.self).count == 3)
        #expect(!realm.objects(Person.self).freeze().isInvalidated && realm.objects(Person.self).freeze().count == 3)
    }

    @Test func freezingInAWriteTransactionStops() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try makeRealm()
            try realm.write { _ = realm.objects(Person.self).freeze() }
        }
        #expect(ConfinementTests.stderr(result).contains("Cannot freeze during a write transaction"))
    }
}

/// Hands a frozen (immutable, thread-safe) value to tasks.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

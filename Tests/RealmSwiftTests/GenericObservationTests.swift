import Foundation
import RealmSwift
import RealmTestSupport
import Testing

/// `RealmCollection` carries `observe(keyPaths:on:_:)`: generic code observes any collection.
@Suite struct GenericObservationTests {
    func watch<C: RealmCollection>(_ c: C, on queue: DispatchQueue, _ seen: Recorder<Int>) -> NotificationToken {
        c.observe(keyPaths: nil, on: queue) { change in
            switch change {
            case .initial(let value): seen.append(value.count)
            case .update(let value, _, _, _): seen.append(value.count)
            case .error: seen.append(-1)
            }
        }
    }

    @Test func genericCodeObservesResultsListsAndLinkingObjects() async throws {
        let dir = TempDir()
        let config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self, Thing.self, Player.self])
        let realm = try Realm(configuration: config)
        try realm.write { realm.add(Person(value: ["id": 1, "name": "a", "dogs": [["name": "d0"]]])) }
        let queue = DispatchQueue(label: "generic observer")
        let results = Recorder<Int>()
        let list = Recorder<Int>()
        let owners = Recorder<Int>()
        let person = realm.objects(Person.self).first!
        let tokens = [
            watch(realm.objects(Person.self), on: queue, results), watch(person.dogs, on: queue, list),
            watch(person.dogs[0].owners, on: queue, owners),
        ]
        try await results.wait(for: 1)
        try await list.wait(for: 1)
        try await owners.wait(for: 1)
        do {
            let w = try Realm(configuration: config)
            try w.write {
                let p = w.objects(Person.self).first!
                p.dogs.append(Dog(value: ["name": "d1"]))
                let other = Person(value: ["id": 2])
                other.dogs.append(p.dogs[0])
                w.add(other)
            }
        }
        #expect(try await results.wait(for: 2) == [1, 2])
        #expect(try await list.wait(for: 2) == [1, 2])
        #expect(try await owners.wait(for: 2) == [1, 2])
        for t in tokens { t.invalidate() }
    }

    /// Key-path observation is on every collection of objects: a LinkingObjects and an
    /// AnyRealmCollection report a change of the observed property as a modification and ignore
    /// a change of another.
    @Test func swiftKeyPathsObserveLinkingObjectsAndAnyRealmCollection() async throws {
        let dir = TempDir()
        let config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self])
        let realm = try Realm(configuration: config)
        try realm.write { realm.add(Person(value: ["id": 1, "name": "a", "dogs": [["name": "d0"]]])) }
        let person = realm.objects(Person.self).first!
        let queue = DispatchQueue(label: "key path observer")
        let owners = Recorder<[Int]>()
        let any = Recorder<[Int]>()
        func record<C: RealmCollection>(_ r: Recorder<[Int]>) -> (RealmCollectionChange<C>) -> Void {
            { change in
                switch change {
                case .initial: r.append([])
                case .update(_, _, _, let modifications): r.append(modifications)
                case .error: r.append([-1])
                }
            }
        }
        let t1 = person.dogs[0].owners.observe(keyPaths: [\Person.name], on: queue, record(owners))
        let t2 = AnyRealmCollection(person.dogs).observe(keyPaths: [\Dog.age], on: queue, record(any))
        try await owners.wait(for: 1)
        try await any.wait(for: 1)
        let w = try Realm(configuration: config)
        try w.write { w.objects(Person.self).first!.age = 30 }  // neither observed property
        try w.write {
            w.objects(Person.self).first!.name = "b"
            w.objects(Dog.self).first!.age = 3
        }
        #expect(try await owners.wait(for: 2) == [[], [0]])
        #expect(try await any.wait(for: 2) == [[], [0]])
        t1.invalidate()
        t2.invalidate()

    }

    /// An AnyRealmCollection of a List<Int> filters, sorts and aggregates on `self`. (Not after an
    /// `await`: an async test may resume on another thread, where this thread's Realm must not go.)
    @Test func anyRealmCollectionOfValues() throws {
        let (realm, _) = try makeRealm()
        try realm.write { realm.add(AllTypes(value: ["ints": [3, 1, 2]])) }
        let ints = AnyRealmCollection(realm.objects(AllTypes.self).first!.ints)
        #expect(ints.filter("self > 1").count == 2 && ints.max() == 3 && ints.sum() == 6)
        #expect(ints.sorted(byKeyPath: "self").map { $0 } == [1, 2, 3])
    }
}

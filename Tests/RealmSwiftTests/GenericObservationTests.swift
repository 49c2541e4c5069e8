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
}

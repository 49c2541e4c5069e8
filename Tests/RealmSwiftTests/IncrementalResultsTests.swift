import Foundation
import RealmTestSupport
import Testing

@testable import RealmSwift

/// The incremental evaluation notifiers use agrees with a full evaluation after random writes.
@Suite struct IncrementalResultsTests {
    @Test(arguments: [1, 2])
    func incrementalMatchesFullEvaluation(seed: UInt64) throws {
        let (realm, _dir) = try makeRealm()
        _ = _dir
        var rng = SplitMix(seed: seed)
        try realm.write {
            for i in 0..<300 { realm.add(Person(value: ["id": i, "name": "n\(rng.next() % 40)", "age": Int(rng.next() % 50)])) }
        }
        let queries: [Results<Person>] = [
            realm.objects(Person.self),
            realm.objects(Person.self).filter("age > 20"),
            realm.objects(Person.self).filter("age > 10 AND name BEGINSWITH 'n1'").sorted(byKeyPath: "name"),
            realm.objects(Person.self).sorted(byKeyPath: "age", ascending: false),
            realm.objects(Person.self).sorted(byKeyPath: "name").sorted(byKeyPath: "age"),
            realm.objects(Person.self).filter("age < 40").sorted(by: [
                SortDescriptor(keyPath: "age"), SortDescriptor(keyPath: "name", ascending: false),
            ]),
        ]
        let table = "Person"
        var previous = try queries.map { try $0.base.query.evaluate(table, realm) }
        var incrementalRuns = 0
        var next = 1000
        for _ in 0..<40 {
            let before = realm.store.currentVersion
            try realm.write {
                for _ in 0..<Int(rng.next() % 6) + 1 {
                    let all = realm.objects(Person.self)
                    switch rng.next() % 4 {
                    case 0:
                        realm.add(Person(value: ["id": next, "name": "n\(rng.next() % 40)", "age": Int(rng.next() % 50)]))
                        next += 1
                    case 1: realm.delete(all[Int(rng.next() % UInt64(all.count))])
                    case 2: all[Int(rng.next() % UInt64(all.count))].age = Int(rng.next() % 50)
                    default: all[Int(rng.next() % UInt64(all.count))].name = "n\(rng.next() % 40)"
                    }
                }
            }
            let snap = try realm.store.snapshot()
            let changes = try snap.changes(since: before)
            for (i, q) in queries.enumerated() {
                let full = try q.base.query.evaluate(table, in: snap)
                if let inc = try q.base.query.incremental(table, previous: previous[i], changes: changes, in: snap) {
                    incrementalRuns += 1
                    #expect(inc == full, "query \(i)")
                }
                previous[i] = full
            }
        }
        #expect(incrementalRuns > 150)
    }
}

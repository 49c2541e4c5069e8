import Foundation
import RealmStorage
import RealmSwift

final class Person: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var score = 0.0
    @Persisted var active = false

    /// Person number `i` of Tools/Benchmarks/results/NOTES.md, "Workloads", unmanaged.
    static func make(_ i: Int) -> Person {
        let p = Person()
        p.id = i
        p.name = Data6.name(i)
        p.age = Data6.age(i)
        p.score = Data6.score(i)
        p.active = Data6.active(i)
        return p
    }
}

/// This library, through its public RealmSwift API only.
final class RealmSystem: BenchSystem {
    let name = "this library"
    let path: String
    let realm: Realm

    static func configuration(_ path: String) -> Realm.Configuration {
        Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Person.self])
    }

    init(path: String) throws {
        self.path = path
        realm = try Realm(configuration: Self.configuration(path))
    }

    func w1Insert(_ n: Int) throws {
        try realm.write { for i in 0..<n { realm.add(Person.make(i)) } }
    }

    var people: Results<Person> { realm.objects(Person.self) }

    func w2Count() throws -> Int { people.filter("age > 50").count }

    func w3Count() throws -> Int { people.filter("age BETWEEN {20, 30} AND name BEGINSWITH 'name-1'").count }

    func w4Aggregates() throws -> Aggregates {
        let p = people
        return Aggregates(
            sumScore: p.sum(ofProperty: "score"), averageAge: p.average(ofProperty: "age") ?? .nan, minAge: p.min(ofProperty: "age") ?? -1,
            maxScore: p.max(ofProperty: "score") ?? .nan)
    }

    func w5Top100() throws -> Int {
        people.sorted(by: [SortDescriptor(keyPath: "score", ascending: false), SortDescriptor(keyPath: "id")]).prefix(100).reduce(0) {
            $0 + $1.id
        }
    }

    func w6Lookups(_ keys: [Int]) throws -> Int {
        var bytes = 0
        for k in keys {
            if let p = realm.object(ofType: Person.self, forPrimaryKey: k) { bytes += p.name.utf8.count }
        }
        return bytes
    }

    func w7Commits(start: Int, count: Int) throws {
        for i in start..<(start + count) { try realm.write { realm.add(Person.make(i)) } }
    }

    func w7cCommits(start: Int, threads: Int, perThread: Int) throws {
        let config = Self.configuration(path)
        try onThreads(threads) { t in
            // Each thread's own Realm (RealmSwift's instances are per thread).
            let realm = try Realm(configuration: config)
            let first = start + t * perThread
            for i in first..<(first + perThread) { try realm.write { realm.add(Person.make(i)) } }
        }
    }

    func removeObjects(from start: Int) throws {
        realm.refresh()
        try realm.write { realm.delete(realm.objects(Person.self).where { $0.id >= start }) }
    }

    func w8Update(_ n: Int) throws {
        try realm.write {
            for i in stride(from: 0, to: n, by: 10) {
                if let p = realm.object(ofType: Person.self, forPrimaryKey: i) { p.age += 1 }
            }
        }
    }

    func w10Iterate() throws -> (Int, Int) {
        var count = 0
        var ages = 0
        for p in people {
            count += p.name.utf8.isEmpty ? 0 : 1
            ages += p.age
        }
        return (count, ages)
    }

    func fileSize() throws -> Int { sizeOnDisk([path]) }

    func compactedSize() throws -> Int {
        let copy = path + ".compacted"
        try? FileManager.default.removeItem(atPath: copy)
        try realm.writeCopy(toFile: URL(fileURLWithPath: copy))
        defer { try? FileManager.default.removeItem(atPath: copy) }
        return sizeOnDisk([copy])
    }

    /// W9 in a fresh process: open the file and count the objects.
    static func openAndCount(_ path: String) throws -> Int {
        try Realm(configuration: configuration(path)).objects(Person.self).count
    }

    /// W9 through the engine alone, as the tools open a file: no model class to discover.
    static func engineOpenAndCount(_ path: String) throws -> Int {
        try RealmStorage.Store.open(at: path, options: .init(readOnly: true)).snapshot().objectCount("Person")
    }

    static func remove(_ path: String) {
        for p in [path, path + ".lock", path + ".compacted"] { try? FileManager.default.removeItem(atPath: p) }
    }
}

import Foundation
import RealmTestSupport
import Testing

@testable import RealmSwift

/// A class holding one collection of each kind, of objects and of values.
final class Kennel: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var dogs: List<Dog>
    @Persisted var dogSet: MutableSet<Dog>
    @Persisted var dogMap: Map<String, Dog?>
    @Persisted var ints: List<Int>
    @Persisted var optInts: List<Int?>
    @Persisted var int8s: List<Int8>
    @Persisted var doubles: List<Double>
    @Persisted var optDoubles: List<Double?>
    @Persisted var floats: List<Float>
    @Persisted var decimals: List<Decimal128>
    @Persisted var dates: List<Date>
    @Persisted var optDates: List<Date?>
    @Persisted var strings: List<String>
    @Persisted var optStrings: List<String?>
    @Persisted var intSet: MutableSet<Int>
    @Persisted var stringSet: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var optScores: Map<String, Double?>
}

/// A Realm with the shared test models and `Kennel`.
func makeKennelRealm() throws -> (Realm, TempDir) {
    try makeRealm(types: [Person.self, Dog.self, Address.self, AllTypes.self, Kennel.self])
}

/// Queries on lists, sets, maps and linking objects: `Results` in collection order, live and lazy.
@Suite struct CollectionQueryTests {
    /// Ten dogs `d0`…`d9` (ages 5, 1, 8, 3, 3, 9, 0, 7, 3, 6), in a kennel whose list holds them in
    /// the order 7, 2, 9, 0, 4, 3, 2, 8 (d2 twice), whose set holds 5, 1, 3, 6 and whose map
    /// holds a: d6, b: nil, c: d1, é: d4, B: d8.
    static let ages = [5, 1, 8, 3, 3, 9, 0, 7, 3, 6]
    static let listOrder = [7, 2, 9, 0, 4, 3, 2, 8]

    func seeded() throws -> (Realm, TempDir, Kennel) {
        let (realm, dir) = try makeKennelRealm()
        let kennel = Kennel(value: ["id": 1])
        try realm.write {
            let dogs = Self.ages.enumerated().map { i, age in realm.create(Dog.self, value: ["name": "d\(i)", "age": age]) }
            dogs[3].friend = dogs[9]
            dogs[7].friend = dogs[0]
            realm.add(kennel)
            kennel.dogs.append(objectsIn: Self.listOrder.map { dogs[$0] })
            kennel.dogSet.insert(objectsIn: [5, 1, 3, 6].map { dogs[$0] })
            for (key, i) in [("a", 6), ("c", 1), ("é", 4), ("B", 8)] { kennel.dogMap[key] = dogs[i] }
            kennel.dogMap["b"] = .some(nil)
            realm.add(Person(value: ["id": 1, "name": "Ann", "age": 30, "dogs": [dogs[2], dogs[4]]]))
            realm.add(Person(value: ["id": 2, "name": "Bob", "age": 50, "dogs": [dogs[4]]]))
            realm.add(Person(value: ["id": 3, "name": "Cid", "age": 40, "dogs": [dogs[4], dogs[2], dogs[4]]]))
        }
        return (realm, dir, kennel)
    }

    static func names<C: Sequence>(_ c: C) -> [String] where C.Element == Dog { c.map(\.name) }
    static func names<C: Sequence>(_ c: C) -> [String] where C.Element == Dog? { c.map { $0?.name ?? "nil" } }

    @Test func filterKeepsListOrderAndDuplicates() throws {
        let (_, _, kennel) = try seeded()
        let dogs = kennel.dogs
        #expect(
            Self.names(dogs.filter("age >= 3"))
                == ["d7", "d2", "d9", "d0", "d4", "d3", "d2", "d8"].filter { name in
                    Self.ages[Int(name.dropFirst())!] >= 3
                })
        #expect(Self.names(dogs.filter("age > %@ AND name != %@", 3, "d9")) == ["d7", "d2", "d0", "d2"])
        #expect(Self.names(dogs.filter("%K BEGINSWITH %@", "name", "d2")) == ["d2", "d2"])
        #expect(Self.names(dogs.filter("friend.age > 5")) == ["d3"])
        #expect(Self.names(dogs.filter("friend == nil AND age < 4")) == ["d4", "d8"])
        #expect(Self.names(dogs.where { $0.age > 3 && $0.name != "d9" }) == ["d7", "d2", "d0", "d2"])
        #expect(Self.names(dogs.filter("age > 3").filter("age < 8")) == ["d7", "d9", "d0"])
        #expect(Self.names(try dogs.filter(checking: "age == %@", [3])) == ["d4", "d3", "d8"])
        #expect(dogs.filter("age > 100").isEmpty && dogs.filter("TRUEPREDICATE").count == 8)
    }

    @Test func malformedQueriesThrowInTheCheckingForm() throws {
        let (_, _, kennel) = try seeded()
        for bad in ["age >", "nope == 1", "age == 'x'", "name > 3", "(age > 1", "age == %@", "friend.nope == 1"] {
            #expect(throws: Realm.Error.self, "\(bad)") { try kennel.dogs.filter(checking: bad) }
            #expect(throws: Realm.Error.self, "\(bad)") { try kennel.dogSet.filter(checking: bad) }
            #expect(throws: Realm.Error.self, "\(bad)") { try kennel.dogMap.filter(checking: bad) }
        }
        do {
            _ = try kennel.dogs.filter(checking: "nope == 1")
            Issue.record("no error")
        } catch let e as Realm.Error {
            #expect(e.code == .invalidQuery && "\(e)".contains("nope"))
        }
        #expect(throws: Realm.Error.self) { try kennel.dogs.filter(checking: "age > %@", [Data()]) }
    }

    @Test func sortingAndDistinctStartFromListOrder() throws {
        let (_, _, kennel) = try seeded()
        let dogs = kennel.dogs
        // Stable: dogs of equal age keep their list order (d4, d3, d8 are all 3).
        #expect(Self.names(dogs.sorted(byKeyPath: "age")) == ["d4", "d3", "d8", "d0", "d9", "d7", "d2", "d2"])
        #expect(Self.names(dogs.sorted(byKeyPath: "age", ascending: false)) == ["d2", "d2", "d7", "d9", "d0", "d4", "d3", "d8"])
        #expect(Self.names(dogs.sorted(by: \.age, ascending: false).prefix(3)) == ["d2", "d2", "d7"])
        #expect(
            Self.names(dogs.sorted(by: [SortDescriptor(keyPath: "age"), SortDescriptor(keyPath: "name", ascending: false)]))
                == ["d8", "d4", "d3", "d0", "d9", "d7", "d2", "d2"])
        // Optional key paths sort too; an object whose link is nil sorts last ascending.
        #expect(Self.names(dogs.sorted(by: \.friend?.age)) == ["d7", "d3", "d2", "d9", "d0", "d4", "d2", "d8"])
        #expect(Self.names(dogs.distinct(by: ["age"])) == ["d7", "d2", "d9", "d0", "d4"])
        #expect(Self.names(dogs.distinct(by: [\Dog.age])) == ["d7", "d2", "d9", "d0", "d4"])
        #expect(Self.names(dogs.distinct(by: ["name"])) == ["d7", "d2", "d9", "d0", "d4", "d3", "d8"])
        #expect(Self.names(dogs.sorted(byKeyPath: "age").distinct(by: ["age"])) == ["d4", "d0", "d9", "d7", "d2"])
        #expect(Self.names(dogs.filter("age < 8").sorted(byKeyPath: "name").filter("age > 3")) == ["d0", "d7", "d9"])
    }

    @Test func indexMatchingAndObjectsAt() throws {
        let (_, _, kennel) = try seeded()
        let dogs = kennel.dogs
        #expect(dogs.index(matching: "age == 3") == 4)
        #expect(dogs.index(matching: "name == %@", "d2") == 1)  // the first of the two
        #expect(dogs.index(matching: "age > 100") == nil)
        #expect(dogs.index(matching: { $0.age == 6 }) == 2)
        #expect(dogs.index(matching: { $0.age == 9 }) == nil)
        #expect(dogs.index(matching: { $0.name == "nope" }) == nil)
        #expect(kennel.dogSet.index(matching: "age < 2") == 1)
        #expect(Self.names(dogs.objects(at: [0, 7])) == ["d7", "d8"])
        #expect(dogs.index(of: dogs[3]) == 3)
        #expect(kennel.dogSet.index(of: kennel.dogSet[2]) == 2)
    }

    @Test func aggregatesCountListElements() throws {
        let (_, _, kennel) = try seeded()
        let dogs = kennel.dogs
        let listAges = Self.listOrder.map { Self.ages[$0] }
        #expect(dogs.min(ofProperty: "age") == 3 as Int?)
        #expect(dogs.max(ofProperty: "age") == 8 as Int?)
        #expect(dogs.sum(ofProperty: "age") == listAges.reduce(0, +))  // d2 counts twice, as in the list
        #expect(dogs.average(ofProperty: "age") == Double(listAges.reduce(0, +)) / 8 as Double?)
        #expect(dogs.min(of: \.age) == 3 && dogs.max(of: \.age) == 8 && dogs.sum(of: \.age) == 43)
        #expect(dogs.average(of: \.age) == 5)  // an int property's average as Int truncates, as in RealmSwift
        #expect(dogs.average(ofProperty: "age") == 5 as Int?)
        #expect(dogs.max(ofProperty: "friend.age") == 6 as Int?)
        let none = dogs.filter("age > 100")
        #expect(none.sum(ofProperty: "age") == 0 && none.min(ofProperty: "age") as Int? == nil && none.average(of: \.age) == nil)
        #expect(kennel.dogSet.sum(ofProperty: "age") == 13 && kennel.dogSet.min(of: \.age) == 0)
        #expect(kennel.dogMap.sum(ofProperty: "age") == 7 && kennel.dogMap.max(ofProperty: "age") == 3 as Int?)
    }

    @Test func setsMapsAndLinkingObjects() throws {
        let (realm, _, kennel) = try seeded()
        #expect(Self.names(kennel.dogSet.filter("age > 1")) == ["d5", "d3"])
        #expect(Self.names(kennel.dogSet.sorted(byKeyPath: "age")) == ["d6", "d1", "d3", "d5"])
        #expect(Self.names(kennel.dogSet.where { $0.age < 4 }) == ["d1", "d3", "d6"])
        // Map values in the order of their keys' UTF-8 bytes (B a c é), nil values skipped.
        #expect(Self.names(kennel.dogMap.filter("TRUEPREDICATE")) == ["d8", "d6", "d1", "d4"])
        #expect(Self.names(kennel.dogMap.filter("age >= 1")) == ["d8", "d1", "d4"])
        #expect(Self.names(kennel.dogMap.where { $0.age == 3 }) == ["d8", "d4"])
        #expect(Self.names(kennel.dogMap.sorted(byKeyPath: "age", ascending: false)) == ["d8", "d4", "d1", "d6"])
        #expect(Self.names(kennel.dogMap.distinct(by: ["age"])) == ["d8", "d6", "d1"])
        // Linking objects: the people whose list holds the dog, in key order.
        let d4 = realm.objects(Dog.self).filter("name == 'd4'").first!
        #expect(d4.owners.map(\.name) == ["Ann", "Bob", "Cid"])
        #expect(d4.owners.filter("age >= 40").map(\.name) == ["Bob", "Cid"])
        #expect(d4.owners.sorted(byKeyPath: "age", ascending: false).map(\.name) == ["Bob", "Cid", "Ann"])
        #expect(d4.owners.where { $0.name.starts(with: "C") }.map(\.id) == [3])
        #expect(d4.owners.sum(ofProperty: "age") == 120 && d4.owners.max(of: \.age) == 50)
        #expect(d4.owners.index(matching: "name == 'Cid'") == 2)
        #expect(d4.owners.distinct(by: ["name"]).count == 3)
        let d2 = realm.objects(Dog.self).filter("name == 'd2'").first!
        #expect(d2.owners.map(\.name) == ["Ann", "Cid"] && d2.owners.average(ofProperty: "age") == 35.0)
    }

    /// One generic function over every kind of collection, through `RealmCollection`.
    @Test func genericOverEveryKind() throws {
        let (realm, _, kennel) = try seeded()
        func summary<C: RealmCollection>(_ c: C) -> String where C.Element == Dog {
            let young = c.filter("age < %@", 4)
            return "\(c.count) \(young.count) \(c.sum(ofProperty: "age") as Int) \(c.sorted(byKeyPath: "name").first?.name ?? "-")"
        }
        #expect(summary(kennel.dogs) == "8 3 43 d0")
        #expect(summary(kennel.dogSet) == "4 3 13 d1")
        #expect(summary(realm.objects(Dog.self)) == "10 5 45 d0")
        #expect(summary(realm.objects(Dog.self).filter("age > 5")) == "4 0 30 d2")
        let d4 = realm.objects(Dog.self).filter("name == 'd4'").first!
        func people<C: RealmCollection>(_ c: C) -> [String] where C.Element == Person { c.sorted(by: \.name).map(\.name) }
        #expect(people(d4.owners) == ["Ann", "Bob", "Cid"])
        func frozenCount<C: RealmCollection>(_ c: C) -> Int { c.freeze().thaw()?.count ?? -1 }
        #expect(frozenCount(kennel.dogs) == 8 && frozenCount(d4.owners) == 3 && frozenCount(kennel.intSet) == 0)
    }

    @Test func resultsOverAListAreLive() throws {
        let (realm, _, kennel) = try seeded()
        let older = kennel.dogs.filter("age >= 6")
        let sorted = kennel.dogs.sorted(byKeyPath: "age")
        #expect(Self.names(older) == ["d7", "d2", "d9", "d2"])
        try realm.write {
            kennel.dogs.move(from: 2, to: 0)  // d9 first
            kennel.dogs.remove(at: 2)  // the first d2
            kennel.dogs.append(realm.create(Dog.self, value: ["name": "d10", "age": 6]))
            kennel.dogs[0].age = 2  // d9 is 2 now
            // Inside the write transaction, results see its changes.
            #expect(Self.names(older) == ["d7", "d2", "d10"])
        }
        #expect(Self.names(older) == ["d7", "d2", "d10"])
        #expect(Self.names(sorted).prefix(3) == ["d9", "d4", "d3"])
        #expect(older.count == 3 && kennel.dogs.sum(ofProperty: "age") == 2 + 5 + 7 + 3 + 3 + 8 + 3 + 6)
        try realm.write { kennel.dogs.removeAll() }
        #expect(older.isEmpty && sorted.isEmpty)
        // A deleted owner leaves empty results.
        let set = kennel.dogSet.filter("TRUEPREDICATE")
        #expect(set.count == 4)
        try realm.write { realm.delete(kennel) }
        #expect(set.isEmpty)
    }

    @Test func resultsOverAListAreLazy() throws {
        let (realm, _, kennel) = try seeded()
        let chain = kennel.dogs.filter("age > 1").sorted(byKeyPath: "age").filter("name != 'd9'").distinct(by: ["age"])
        #expect(chain.base.evaluations == 0)  // nothing evaluated yet
        #expect(Self.names(chain) == ["d4", "d0", "d7", "d2"])
        _ = chain.count
        _ = chain.first
        #expect(chain.base.evaluations == 1)  // one evaluation for the chain
        let filtered = kennel.dogs.filter("age > 1")
        _ = filtered.count
        _ = filtered.count
        #expect(filtered.base.evaluations == 1)
        try realm.write { kennel.dogs.append(kennel.dogs[0]) }
        #expect(filtered.count == 9 && filtered.base.evaluations == 2)  // re-evaluated once for the new version
        _ = filtered.last
        #expect(filtered.base.evaluations == 2)
    }

    @Test func frozenAndThawed() throws {
        let (realm, _, kennel) = try seeded()
        let frozen = kennel.dogs.freeze().filter("age >= 6")
        let frozenResults = kennel.dogs.filter("age >= 6").freeze()
        try realm.write { kennel.dogs.removeAll() }
        #expect(Self.names(frozen) == ["d7", "d2", "d9", "d2"] && frozen.isFrozen)
        #expect(Self.names(frozenResults) == ["d7", "d2", "d9", "d2"])
        #expect(frozenResults.thaw()?.isEmpty == true)
    }

    @Test func observingResultsOverAList() throws {
        let (realm, _, kennel) = try seeded()
        var seen: [[Int]] = []
        var names: [[String]] = []
        let token = kennel.dogs.filter("age >= 6").observe { change in
            switch change {
            case .initial(let r): names.append(Self.names(r))
            case .update(let r, let deletions, let insertions, _):
                seen.append(deletions + [-1] + insertions)
                names.append(Self.names(r))
            case .error: break
            }
        }
        realm.refresh()
        #expect(names == [["d7", "d2", "d9", "d2"]])
        try realm.write { kennel.dogs.append(kennel.dogs[0]) }  // only the kennel's table changes
        realm.refresh()
        #expect(names.last == ["d7", "d2", "d9", "d2", "d7"] && seen.last == [-1, 4])
        try realm.write { kennel.dogs.remove(at: 1) }
        realm.refresh()
        #expect(names.last == ["d7", "d9", "d2", "d7"] && seen.last == [1, -1])
        token.invalidate()
    }

    /// Random lists (duplicates included) and predicates from a fixed pool: `list.filter(p)` equals
    /// a Swift filter over the list's elements, in order, and sorting equals a stable Swift sort.
    @Test func differentialAgainstSwiftFilter() throws {
        let (realm, _) = try makeKennelRealm()
        var rng = SplitMix(seed: 0x5EED_C011)
        let pool: [(String, [Any], (Dog) -> Bool)] = [
            ("age > %@", [4], { $0.age > 4 }),
            ("age <= %@ AND name BEGINSWITH 'd1'", [6], { $0.age <= 6 && $0.name.hasPrefix("d1") }),
            ("age == 3 OR age == 7", [], { $0.age == 3 || $0.age == 7 }),
            ("NOT (age BETWEEN {2, 5})", [], { !(2...5).contains($0.age) }),
            ("friend == nil", [], { $0.friend == nil }),
            ("friend.age >= %@", [5], { ($0.friend?.age ?? -1) >= 5 }),
            ("name CONTAINS '2' || age < 1", [], { $0.name.contains("2") || $0.age < 1 }),
            ("age IN %@", [[1, 8, 9]], { [1, 8, 9].contains($0.age) }),
            ("TRUEPREDICATE", [], { _ in true }),
            ("FALSEPREDICATE", [], { _ in false }),
        ]
        for round in 0..<30 {
            let kennel = Kennel(value: ["id": round])
            try realm.write {
                let dogs = (0..<(1 + rng.below(12))).map { i in
                    realm.create(Dog.self, value: ["name": "d\(i)", "age": rng.below(10)])
                }
                for d in dogs where rng.below(3) == 0 { d.friend = dogs[rng.below(dogs.count)] }
                realm.add(kennel)
                for _ in 0..<rng.below(16) { kennel.dogs.append(dogs[rng.below(dogs.count)]) }
            }
            let elements = Array(kennel.dogs)
            for (text, args, predicate) in pool {
                let got = try kennel.dogs.filter(checking: text, args.map { $0 as Any? })
                #expect(got.map(\.name) == elements.filter(predicate).map(\.name), "round \(round): \(text)")
                let sorted = got.sorted(byKeyPath: "age", ascending: round % 2 == 0)
                let expected = elements.filter(predicate).enumerated().sorted { a, b in
                    a.element.age != b.element.age ? (round % 2 == 0) == (a.element.age < b.element.age) : a.offset < b.offset
                }
                #expect(sorted.map(\.name) == expected.map(\.element.name), "round \(round): sorted \(text)")
            }
        }
    }

    @Test func unmanagedCollectionsAggregateButDoNotQuery() async throws {
        let list = List<Dog>()
        list.append(objectsIn: [Dog(value: ["name": "a", "age": 4]), Dog(value: ["name": "b", "age": 2])])
        #expect(list.sum(ofProperty: "age") == 6 && list.min(of: \.age) == 2 && list.average(ofProperty: "age") == 3.0)
        #expect(List<Dog>().max(ofProperty: "age") as Int? == nil && List<Dog>().sum(of: \.age) == 0)
        let set = MutableSet<Dog>()
        set.insert(Dog(value: ["name": "c", "age": 9]))
        #expect(set.max(of: \.age) == 9)
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let list = List<Dog>()
            _ = list.filter("age > 1")
        }
        #expect(ConfinementTests.stderr(result).contains("needs a managed list"))
        let unknown = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, _, kennel) = try CollectionQueryTests().seeded()
            let _: Int? = kennel.dogs.min(ofProperty: "nope")
        }
        #expect(ConfinementTests.stderr(unknown).contains("nope"))
    }
}

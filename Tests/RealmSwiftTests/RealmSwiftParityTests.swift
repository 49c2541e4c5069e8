import Foundation
import Logging
import RealmSwift
import RealmTestSupport
import Testing

// Models in RealmSwift's spelling for Codable (as its CodableTests declare them).
final class CodableDog: Object, Codable {
    @Persisted var name = ""
    @Persisted var age: Int
    @Persisted var weight: Double?
    @Persisted var born: Date
    @Persisted var chip: UUID?
    @Persisted var id: ObjectId
    @Persisted var price: Decimal128
    @Persisted var photo: Data?
    @Persisted var tricks: List<String>
    @Persisted var scores: List<Int?>
    @Persisted var tags: MutableSet<String>
    @Persisted var marks: Map<String, Int>
    @Persisted var best: CodableDog?
    @Persisted var collar: CodableCollar?
}

final class CodableCollar: EmbeddedObject, Codable {
    @Persisted var color = ""
}

/// A model whose `CodingKeys` rename one property and leave another out.
final class RenamedDog: Object, Codable {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var secret = "kept"

    enum CodingKeys: String, CodingKey {
        case name = "dog_name"
        case age
    }
}

/// Behaviour RealmSwift's own tests check (issue 29): Codable models, collection equality,
/// sections inserted with their rows, thawing into the thread's Realm, read-only Realms.
@Suite struct RealmSwiftParityTests {
    static let types: [ObjectBase.Type] = [
        CodableDog.self, CodableCollar.self, RenamedDog.self, Person.self, Dog.self, Address.self, AllTypes.self,
    ]

    // MARK: Codable

    static let dogJSON = """
        {"age":3,"best":{"age":9,"best":null,"born":0,"chip":null,"collar":null,"id":"000000000000000000000001","marks":{},\
        "name":"Old","photo":null,"price":"0","scores":[],"tags":[],"tricks":[],"weight":null},\
        "born":86400,"chip":"00000000-0000-0000-0000-000000000001","collar":{"color":"red"},\
        "id":"1234567890abcdef12345678","marks":{"a":1},"name":"Rex","photo":"ZGVm","price":"1.5",\
        "scores":[1,null],"tags":["x"],"tricks":["sit","roll"],"weight":12.5}
        """

    @Test func aCodableModelRoundTripsThroughJSON() throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let dog = try decoder.decode(CodableDog.self, from: Data(Self.dogJSON.utf8))
        #expect(dog.realm == nil)
        #expect(dog.name == "Rex" && dog.age == 3 && dog.weight == 12.5)
        #expect(dog.born == Date(timeIntervalSince1970: 86400))
        #expect(dog.chip == UUID(uuidString: "00000000-0000-0000-0000-000000000001"))
        #expect(dog.id == (try ObjectId(string: "1234567890abcdef12345678")) && dog.price == Decimal128(stringLiteral: "1.5"))
        #expect(dog.photo == Data("def".utf8))
        #expect(Array(dog.tricks) == ["sit", "roll"] && Array(dog.scores) == [1, nil] && Array(dog.tags) == ["x"])
        #expect(dog.marks["a"] == 1 && dog.best?.name == "Old" && dog.collar?.color == "red")

        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        #expect(String(decoding: try encoder.encode(dog), as: UTF8.self) == Self.dogJSON)

        // Managed objects encode too (RealmSwift throws for them; see DifferencesFromRealmSwift.md).
        let (realm, _) = try makeRealm(types: Self.types)
        try realm.write { realm.add(dog) }
        let managed = realm.objects(CodableDog.self).filter("name == 'Rex'").first!
        #expect(String(decoding: try encoder.encode(managed), as: UTF8.self) == Self.dogJSON)
        #expect(
            try encoder.encode(realm.objects(CodableDog.self).sorted(byKeyPath: "name", ascending: false))
                == encoder.encode([dog, dog.best!]))
    }

    @Test func missingOptionalKeysDecodeAsNil() throws {
        let json =
            #"{"name":"a","age":1,"born":0,"id":"1234567890abcdef12345678","price":"2","tricks":[],"scores":[],"tags":[],"marks":{}}"#
        let dog = try JSONDecoder().decode(CodableDog.self, from: Data(json.utf8))
        #expect(dog.weight == nil && dog.chip == nil && dog.photo == nil && dog.best == nil && dog.collar == nil)
        // A missing required key is an error, as in RealmSwift.
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(CodableDog.self, from: Data(#"{"name":"a"}"#.utf8)) }
    }

    @Test func codingKeysRenameAndOmitInBothDirections() throws {
        let dog = try JSONDecoder().decode(RenamedDog.self, from: Data(#"{"dog_name":"Rex","age":4}"#.utf8))
        #expect(dog.name == "Rex" && dog.age == 4 && dog.secret == "kept")
        dog.secret = "changed"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(String(decoding: try encoder.encode(dog), as: UTF8.self) == #"{"age":4,"dog_name":"Rex"}"#)
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let plain = CodableDog()
        plain.name = "n"
        let keys = try JSONSerialization.jsonObject(with: encoder.encode(plain)) as! [String: Any]
        #expect(keys["name"] as? String == "n" && keys.keys.contains("born"))
    }

    @Test func customStrategiesApplyToEveryProperty() throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode("custom: \(date.timeIntervalSince1970)")
        }
        let dog = CodableDog()
        dog.born = Date(timeIntervalSince1970: 1)
        let dict = try JSONSerialization.jsonObject(with: encoder.encode(dog)) as! [String: Any]
        #expect(dict["born"] as? String == "custom: 1.0")
    }

    // MARK: Equality

    @Test func resultsAreEqualOnlyToThemselves() throws {
        let (realm, _) = try makeRealm()
        try realm.write { realm.add(Person(value: ["id": 1])) }
        let a = realm.objects(Person.self)
        let b = realm.objects(Person.self)
        #expect(a == a && b == b && a != b)
        let copy = a
        #expect(copy == a)
        // The results a notification carries are the observed ones.
        var delivered: Results<Person>?
        let token = a.observe { change in
            if case .initial(let r) = change { delivered = r }
        }
        realm.refresh()
        #expect(delivered == a)
        token.invalidate()
    }

    @Test func collectionsCompareAsRealmSwiftDoes() throws {
        let (realm, _) = try makeRealm()
        let p = Person(value: ["id": 1])
        try realm.write { realm.add(p) }
        let again = realm.object(ofType: Person.self, forPrimaryKey: 1)!
        #expect(p.dogs == again.dogs)
        let other = Person(value: ["id": 2])
        try realm.write { realm.add(other) }
        #expect(p.dogs != other.dogs)
        let l1 = List<Int>(), l2 = List<Int>()
        l1.append(objectsIn: [1, 2])
        l2.append(objectsIn: [1, 2])
        #expect(l1 == l2)
        l2.append(3)
        #expect(l1 != l2)
        func generic<C: RealmCollection>(_ c: C) -> Bool { c == c }
        #expect(generic(p.dogs) && generic(realm.objects(Dog.self)))
    }

    // MARK: Aggregates on enums and mixed values

    @Test func aggregatesOfEnumsAndMixedValues() throws {
        let (realm, _) = try makeRealm()
        try realm.write {
            realm.add(AllTypes(value: ["id": 1, "kind": Kind.large, "int64": 5]))
            realm.add(AllTypes(value: ["id": 2, "kind": Kind.small, "int64": 7]))
        }
        let all = realm.objects(AllTypes.self)
        #expect(all.max(ofProperty: "kind") as Kind? == .large)
        #expect(all.min(of: \.kind) == .small)
        #expect(all.sum(of: \.int64) == 12)
        let mixed = List<AnyRealmValue>()
        mixed.append(objectsIn: [.int(2), .double(3.5)])
        #expect(mixed.max() == .double(3.5) && mixed.min() == .int(2))
        mixed.append(.string("x"))
        // Sums and means take the numbers among mixed values (Spec/QUERY.md §7.10).
        #expect(mixed.sum() == .double(5.5))
        #expect(mixed.average() as Double? == 2.75)
    }

    // MARK: Sections

    @Test func aNewSectionListsItsRowsAsInsertions() throws {
        let (realm, _) = try makeRealm()
        try realm.write { for (i, age) in [1, 1, 2].enumerated() { realm.add(Person(value: ["id": i, "age": age])) } }
        let sections = realm.objects(Person.self).sectioned(by: \.age, ascending: true)
        var updates: [(insertions: [IndexPath], sectionsToInsert: IndexSet)] = []
        let token = sections.observe { change in
            if case .update(_, _, let insertions, _, let sectionsToInsert, _) = change { updates.append((insertions, sectionsToInsert)) }
        }
        realm.refresh()
        try realm.write {
            realm.add(Person(value: ["id": 10, "age": 3]))
            realm.add(Person(value: ["id": 11, "age": 3]))
        }
        realm.refresh()
        #expect(updates.count == 1)
        #expect(updates.first?.sectionsToInsert == [2])
        #expect(updates.first?.insertions == [IndexPath(item: 0, section: 2), IndexPath(item: 1, section: 2)])

        // Observing one section: it reappears with its row.
        let first = sections[0]
        var sectionUpdates: [(insertions: [IndexPath], sectionsToInsert: IndexSet, sectionsToDelete: IndexSet)] = []
        let sectionToken = first.observe { change in
            if case .update(_, _, let insertions, _, let toInsert, let toDelete) = change {
                sectionUpdates.append((insertions, toInsert, toDelete))
            }
        }
        realm.refresh()
        try realm.write { realm.delete(realm.objects(Person.self).filter("age == 1")) }
        realm.refresh()
        try realm.write { realm.add(Person(value: ["id": 20, "age": 1])) }
        realm.refresh()
        #expect(sectionUpdates.count == 2)
        #expect(sectionUpdates.first?.sectionsToDelete == [0])
        #expect(sectionUpdates.last?.sectionsToInsert == [0] && sectionUpdates.last?.insertions == [IndexPath(item: 0, section: 0)])
        token.invalidate()
        sectionToken.invalidate()
    }

    @Test func everyCollectionOfObjectsSections() throws {
        let (realm, _) = try makeRealm()
        let p = Person(value: ["id": 1])
        try realm.write {
            realm.add(p)
            p.dogs.append(objectsIn: [
                Dog(value: ["name": "a", "age": 2]), Dog(value: ["name": "b", "age": 1]), Dog(value: ["name": "c", "age": 2]),
            ])
        }
        let byAge = p.dogs.sectioned(by: \.age, ascending: true)
        #expect(byAge.allKeys == [1, 2] && byAge[1].map(\.name) == ["a", "c"])
        func sections<C: RealmCollection>(_ c: C) -> [String] where C.Element == Dog {
            c.sectioned(by: { String($0.name.prefix(1)) }, sortDescriptors: [SortDescriptor(keyPath: "name")]).allKeys
        }
        #expect(sections(p.dogs) == ["a", "b", "c"])
        let owners = p.dogs[0].owners.sectioned(sortDescriptors: [SortDescriptor(keyPath: "id")]) { $0.id }
        #expect(owners.allKeys == [1])
        // Live, like the list.
        try realm.write { p.dogs.append(Dog(value: ["name": "d", "age": 7])) }
        #expect(byAge.allKeys == [1, 2, 7])
    }

    // MARK: Queries

    /// Inside a SUBQUERY a key path without the variable names a property of the collection's
    /// objects (RealmSwift resolves the predicate against their class); a fractional number
    /// against an int property is an error, as RealmSwift's query builder makes it.
    @Test func subqueryKeyPathsWithoutTheVariableAndFractionsAgainstInts() throws {
        let (realm, _) = try makeRealm()
        try realm.write {
            for i in 0..<4 {
                let p = Person(value: ["id": i, "name": "p\(i)"])
                for a in 0..<i { p.dogs.append(Dog(value: ["name": "d\(i)\(a)", "age": a * 3])) }
                realm.add(p)
            }
        }
        let people = realm.objects(Person.self)
        let bare = people.filter("SUBQUERY(dogs, $d, age > 2 AND name BEGINSWITH 'd').@count > 0").map(\.id)
        let named = people.filter("SUBQUERY(dogs, $d, $d.age > 2 AND $d.name BEGINSWITH 'd').@count > 0").map(\.id)
        #expect(Array(bare) == [2, 3] && Array(bare) == Array(named))
        #expect(throws: Realm.Error.self) { try people.filter(checking: "age > 1.5") }
        #expect(throws: Realm.Error.self) { try people.filter(checking: "age == %@", [2.0]) }
    }

    // MARK: One instance per thread

    /// As in RealmSwift, `Realm(configuration:)` returns the instance already open on the file on
    /// this thread: it shares its write transaction and its version, and an object read through
    /// one `Realm()` can be changed inside a write on another.
    @Test func openingAgainOnAThreadReturnsItsInstance() throws {
        let (realm, dir) = try makeRealm()
        let config = realm.configuration
        let again = try Realm(configuration: config)
        #expect(again === realm)
        try realm.write { realm.add(Person(value: ["id": 1, "age": 1])) }
        // An object read through a Realm that was not kept, changed in a write on a new `Realm()`.
        func first() throws -> Person? { try Realm(configuration: config).objects(Person.self).first }
        let person = try #require(try first())
        let writer = try Realm(configuration: config)
        try writer.write { person.age += 1 }
        #expect(person.realm === writer && person.age == 2)
        // Inside a write, a `Realm()` is that Realm, already writing.
        realm.beginWrite()
        let inside = try Realm(configuration: config)
        #expect(inside.isInWriteTransaction)
        inside.add(Person(value: ["id": 2]))
        try realm.commitWrite()
        #expect(again.objects(Person.self).count == 2)
        // Another thread has its own instance.
        let elsewhere = try onAnotherThread { ObjectIdentifier(try Realm(configuration: config)) }
        #expect(elsewhere != ObjectIdentifier(realm))
        // A queue has its own, and returns it again on the queue.
        let queue = DispatchQueue(label: "realm")
        let onQueue = try Realm(configuration: config, queue: queue)
        queue.sync {
            let again = try? Realm(configuration: config, queue: queue)
            #expect(again === onQueue)
            #expect(onQueue !== realm && onQueue.objects(Person.self).count == 2)
        }
        _ = dir
    }

    /// When every reference to a thread's instance is gone, the next open is a new instance, and a
    /// write left open ended with the old one.
    @Test func aReleasedInstanceIsNotReturnedAgain() throws {
        let dir = TempDir()
        let config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self])
        weak var dropped: Realm?
        do {
            let realm = try Realm(configuration: config)
            dropped = realm
            realm.beginWrite()
            realm.add(Person(value: ["id": 1]))
        }
        #expect(dropped == nil)
        let realm = try Realm(configuration: config)
        try realm.write { realm.add(Person(value: ["id": 2])) }
        #expect(realm.objects(Person.self).map(\.id) == [2])
    }

    /// Opening the thread's file again with a different `readOnly` setting fails, as in RealmSwift
    /// ("already opened with different read permissions"); on another thread it opens.
    @Test func aDifferentReadOnlySettingOnTheSameThreadFails() throws {
        let (realm, dir) = try makeRealm()
        try realm.write { realm.add(Person(value: ["id": 1])) }
        var readOnly = realm.configuration
        readOnly.readOnly = true
        let config = readOnly
        do {
            _ = try Realm(configuration: config)
            Issue.record("opened read-only on a thread whose instance is read-write")
        } catch let error as Realm.Error {
            #expect("\(error)".contains("different read permissions"))
        }
        #expect(try onAnotherThread { try Realm(configuration: config).objects(Person.self).count } == 1)
        _ = dir
    }

    /// Beginning a write on the thread's instance while it is writing stops, as RealmSwift's
    /// "already in a write transaction".
    @Test func beginningASecondWriteOnTheThreadStops() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (first, dir) = try makeRealm()
            first.beginWrite()
            try Realm(configuration: first.configuration).beginWrite()
            _ = dir
        }
        #expect(ConfinementTests.stderr(result).contains("already in a write transaction"))
    }

    // MARK: Thawing

    @Test func thawedResultsAdvanceWithTheThreadsRealm() throws {
        let (realm, _) = try makeRealm()
        try realm.write { realm.add(Person(value: ["id": 1])) }
        let frozen = realm.objects(Person.self).freeze()
        let thawed = try #require(frozen.thaw())
        #expect(thawed.realm === realm)
        #expect(frozen.realm?.thaw() === realm)
        try realm.write { realm.add(Person(value: ["id": 2])) }
        #expect(thawed.count == 2 && frozen.count == 1)
        let frozenPerson = realm.objects(Person.self).first!.freeze()
        #expect(frozenPerson.thaw()?.realm === realm)
    }

    /// Frozen data from another thread's Realm, thawed on a thread with no instance alive: thaw
    /// opens the thread's instance, and later thaws (and `Realm()`) on the thread return it.
    @Test func thawOnAThreadWithoutAnInstanceOpensOneAndReusesIt() throws {
        let dir = TempDir()
        let config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self])
        let frozen = try onAnotherThread {
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(Person(value: ["id": 1])) }
            return UncheckedBox(realm.objects(Person.self).freeze())
        }.value
        let first = try #require(frozen.thaw())
        #expect(first.realm?.isFrozen == false)
        let second = try #require(frozen.thaw())
        #expect(second.realm === first.realm)
        #expect(try Realm(configuration: config) === first.realm)
        try first.realm!.write { first.realm!.add(Person(value: ["id": 2])) }
        #expect(second.count == 2 && frozen.count == 1)
    }

    // MARK: Description

    @Test func descriptionNumbersTheRowsInOrder() throws {
        let (realm, _) = try makeRealm()
        try realm.write { for i in 0..<3 { realm.add(Person(value: ["id": i, "name": "p\(i)"])) } }
        let text = realm.objects(Person.self).sorted(byKeyPath: "id", ascending: false).description
        #expect(text.hasPrefix("Results<Person> <count 3> (\n\t[0] Person {"))
        let order = ["[0]", "[1]", "[2]"].map { text.range(of: $0)!.lowerBound }
        #expect(order == order.sorted())
        #expect(text.range(of: "p2")!.lowerBound < text.range(of: "p0")!.lowerBound)
    }

    // MARK: Read-only Realms

    @Test func observingAReadOnlyRealmStops() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            var config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self])
            // The thread's read-write instance is released before the read-only open.
            do {
                let realm = try Realm(configuration: config)
                try realm.write { realm.add(Person(value: ["id": 1])) }
            }
            config.readOnly = true
            let readOnly = try Realm(configuration: config)
            _ = readOnly.objects(Person.self).observe { _ in }
        }
        #expect(ConfinementTests.stderr(result).contains("Read-only Realms do not have change notifications"))
    }

    @Test func freezingAReadOnlyRealmStops() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            var config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self])
            do { _ = try Realm(configuration: config) }
            config.readOnly = true
            let readOnly = try Realm(configuration: config)
            _ = readOnly.objects(Person.self).freeze()
        }
        #expect(ConfinementTests.stderr(result).contains("A read-only Realm cannot be frozen"))
    }

    // MARK: Logging

    @Test func theConfigurationsLoggerHearsTheStore() throws {
        final class Lines: LogHandler, @unchecked Sendable {
            let lines = NSLock()
            var messages: [String] = []
            var metadata: Logger.Metadata = [:]
            var logLevel: Logger.Level = .trace
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) { lines.withLock { messages.append("\(event.level) \(event.message)") } }
        }
        let handler = Lines()
        let dir = TempDir()
        var config = Realm.Configuration(fileURL: dir.url())
        config.objectTypes = [Person.self, Dog.self, Address.self]
        config.logger = Logger(label: "test") { _ in handler }
        let realm = try Realm(configuration: config)
        try realm.write { realm.add(Person(value: ["id": 1])) }
        #expect(handler.lines.withLock { handler.messages.contains { $0.hasPrefix("debug opened at version") } })
    }
}

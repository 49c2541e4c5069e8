import Foundation
import RealmSwift
import RealmTestSupport
import Testing

/// Query answers as RealmSwift (≥ 10.53, NSPredicate parser) gives them (issue 29): nil under
/// `<=`/`>=`, bools against 0 and 1, string ordering by UTF-8 bytes, decimal128 constants as text.
@Suite struct QuerySemanticsTests {
    static func fixture() throws -> (Realm, TempDir) {
        let (realm, dir) = try makeRealm()
        try realm.write {
            realm.add(
                AllTypes(value: ["id": 1, "bool": true, "string": "apple", "optInt": 5, "decimal": Decimal128(stringLiteral: "1.5")]))
            realm.add(AllTypes(value: ["id": 2, "bool": false, "string": "banana", "decimal": Decimal128(stringLiteral: "-3")]))
            realm.add(
                AllTypes(value: ["id": 3, "bool": true, "string": "Cherry", "optInt": 9, "decimal": Decimal128(stringLiteral: "1E10")]))
            realm.add(AllTypes(value: ["id": 4, "bool": false, "string": "", "decimal": Decimal128.infinity]))
        }
        return (realm, dir)
    }

    static func ids(_ realm: Realm, _ query: String, _ args: [Any?] = []) throws -> [Int] {
        try realm.objects(AllTypes.self).filter(checking: query, args).map(\.id).sorted()
    }

    @Test func nilMatchesLessOrEqualAndGreaterOrEqualButNeverStrictOrder() throws {
        let (realm, _) = try Self.fixture()
        #expect(try Self.ids(realm, "optInt <= nil") == [2, 4])
        #expect(try Self.ids(realm, "optInt >= nil") == [2, 4])
        #expect(try Self.ids(realm, "optInt < nil") == [])
        #expect(try Self.ids(realm, "optInt > nil") == [])
        #expect(try Self.ids(realm, "optInt >= %@", [nil]) == [2, 4])
        #expect(try Self.ids(realm, "optInt >= 5") == [1, 3])
    }

    @Test func boolsCompareWithZeroAndOne() throws {
        let (realm, _) = try Self.fixture()
        #expect(try Self.ids(realm, "bool == 1") == [1, 3])
        #expect(try Self.ids(realm, "bool == 0") == [2, 4])
        #expect(try Self.ids(realm, "0 != bool") == [1, 3])
        #expect(throws: Realm.Error.self) { try Self.ids(realm, "bool == 2") }
    }

    @Test func stringsOrderByTheirUTF8Bytes() throws {
        let (realm, _) = try Self.fixture()
        #expect(try Self.ids(realm, "string < 'b'") == [1, 3, 4])  // "Cherry" (0x43) and "" sort before 'b'
        #expect(try Self.ids(realm, "string >= 'banana'") == [2])
        #expect(try Self.ids(realm, "string > 'B'") == [1, 2, 3])
        #expect(try Self.ids(realm, "string <= ''") == [4])
        #expect(try Self.ids(realm, "string <[c] 'b'") == [1, 4])
        #expect(try Self.ids(realm, "string >[c] 'BANANA'") == [3])
        #expect(try Self.ids(realm, "string > %@", ["apple"]) == [2])
        #expect(throws: Realm.Error.self) { try Self.ids(realm, "string BETWEEN {'a', 'c'}") }
    }

    @Test func decimalsCompareWithTextConstants() throws {
        let (realm, _) = try Self.fixture()
        #expect(try Self.ids(realm, "decimal < 'Inf'") == [1, 2, 3])
        #expect(try Self.ids(realm, "decimal == 'Inf'") == [4])
        #expect(try Self.ids(realm, "decimal > '-Inf'") == [1, 2, 3, 4])
        #expect(try Self.ids(realm, "decimal == 'NaN'") == [])
        #expect(try Self.ids(realm, "decimal > '1e5'") == [3, 4])
        #expect(try Self.ids(realm, "decimal > '1E+6111'") == [4])
        #expect(try Self.ids(realm, "decimal BETWEEN {'-5', '2'}") == [1, 2])
        #expect(try Self.ids(realm, "decimal IN {'1.5', '-3.0'}") == [1, 2])
        #expect(throws: Realm.Error.self) { try Self.ids(realm, "decimal == 'lots'") }
    }

    @Test func listAggregatesCompareOnEitherSide() throws {
        let (realm, _) = try makeRealm()
        try realm.write {
            let p = Person(value: ["id": 1, "name": "a"])
            realm.add(p)
            for i in 0..<3 { p.dogs.append(Dog(value: ["name": "d\(i)", "age": i + 1])) }
            realm.add(Person(value: ["id": 2, "name": "b"]))
        }
        let people = realm.objects(Person.self)
        for q in [
            "dogs.@avg.age > 1", "1 < dogs.@avg.age", "dogs.@sum.age == 6", "6 == dogs.@sum.age", "dogs.@min.age <= 1",
            "3 <= dogs.@max.age",
        ] {
            #expect(try people.filter(checking: q).map(\.id) == [1], "\(q)")
        }
    }

    /// Through a to-one link: an object whose link is nil sorts after every other object
    /// ascending and before them descending; `distinct` leaves it out (RealmSwift's answers).
    @Test func sortingAndDistinctThroughANilLink() throws {
        let (realm, _) = try makeRealm()
        try realm.write {
            let a = Dog(value: ["name": "a", "age": 5])
            let b = Dog(value: ["name": "b", "age": 1])
            realm.add(Person(value: ["id": 1, "name": "p1", "dog": a]))
            realm.add(Person(value: ["id": 2, "name": "p2"]))
            realm.add(Person(value: ["id": 3, "name": "p3", "dog": b]))
            realm.add(Person(value: ["id": 4, "name": "p4", "dog": a]))
            realm.add(Person(value: ["id": 5, "name": "p5"]))
        }
        let people = realm.objects(Person.self)
        #expect(people.sorted(byKeyPath: "dog.age").map(\.id) == [3, 1, 4, 2, 5])
        #expect(people.sorted(byKeyPath: "dog.age", ascending: false).map(\.id) == [2, 5, 1, 4, 3])
        #expect(
            people.sorted(by: [SortDescriptor(keyPath: "dog.name", ascending: false), SortDescriptor(keyPath: "id")]).map(\.id) == [
                2, 5, 3, 1, 4,
            ])
        #expect(people.distinct(by: ["dog.age"]).map(\.id) == [1, 3])
        #expect(people.distinct(by: ["dog.age", "name"]).map(\.id) == [1, 3, 4])
        #expect(people.distinct(by: ["name"]).count == 5)
    }
}

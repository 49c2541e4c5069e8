import Foundation
import RealmQuery
import RealmTestSupport
import Testing

@testable import RealmSwift

@Suite struct ResultsQueryTests {
    func seeded() throws -> (Realm, TempDir) {
        let (realm, dir) = try makeRealm()
        try realm.write {
            for i in 0..<20 {
                let p = Person(value: ["id": i, "name": "name-\(i % 7)", "age": (i * 7) % 30])
                if i % 4 == 0 { p.dog = Dog(value: ["name": "dog-\(i)", "age": i]) }
                if i % 5 == 0 {
                    p.dogs.append(objectsIn: [Dog(value: ["name": "a\(i)", "age": 1]), Dog(value: ["name": "b\(i)", "age": 2])])
                }
                realm.add(p)
            }
        }
        return (realm, dir)
    }

    @Test func filterWithArgumentsAndChaining() throws {
        let (realm, _) = try seeded()
        let people = realm.objects(Person.self)
        let expected = (0..<20).filter { ($0 * 7) % 30 > 10 }
        #expect(people.filter("age > %@", 10).map(\.id) == expected)
        #expect(people.filter("age > 10").filter("name BEGINSWITH %@", "name-1").map(\.id) == expected.filter { $0 % 7 == 1 })
        #expect(people.filter("%K == %@", "name", "name-3").map(\.id) == [3, 10, 17])
        #expect(people.filter("id IN %@", [1, 5, 99]).map(\.id) == [1, 5])
        #expect(people.filter("dog.name == 'dog-8'").map(\.id) == [8])
        #expect(people.filter("dog == nil").count == 15)
        #expect(people.filter("ANY dogs.name BEGINSWITH 'b'").map(\.id) == [0, 5, 10, 15])
        #expect(people.filter("dogs.@count == 2").count == 4)
        let rex = people[8].dog!
        #expect(people.filter("dog == %@", rex).map(\.id) == [8])
        #expect(people.filter("age BETWEEN {5, 9}").map(\.id) == (0..<20).filter { (5...9).contains(($0 * 7) % 30) })
    }

    @Test func typedQueries() throws {
        let (realm, _) = try seeded()
        let people = realm.objects(Person.self)
        #expect(people.where { $0.age > 10 }.map(\.id) == people.filter("age > 10").map(\.id))
        #expect(
            people.where { $0.name.starts(with: "NAME-1", options: .caseInsensitive) && $0.age < 25 }.map(\.id)
                == people.filter("name BEGINSWITH[c] 'NAME-1' AND age < 25").map(\.id))
        #expect(people.where { $0.dog.name == "dog-8" }.map(\.id) == [8])
        #expect(people.where { $0.dogs.name.contains("b1") }.map(\.id) == [10, 15])
        #expect(people.where { $0.dogs.count > 1 }.count == 4)
        #expect(people.where { $0.id.in([2, 3]) || !($0.age >= 0) }.map(\.id) == [2, 3])
        #expect(people.where { $0.age.contains(5...9) }.count == people.filter("age BETWEEN {5, 9}").count)
        #expect(people.where { $0.dogs.where { $0.age > 1 }.count == 1 }.map(\.id) == [0, 5, 10, 15])
    }

    @Test func sortingDistinctAndAggregates() throws {
        let (realm, _) = try seeded()
        let people = realm.objects(Person.self)
        #expect(people.sorted(byKeyPath: "age").map(\.age) == people.map(\.age).sorted())
        #expect(people.sorted(byKeyPath: "age", ascending: false).map(\.age) == people.map(\.age).sorted(by: >))
        let byNameThenAge = people.sorted(by: [SortDescriptor(keyPath: "name"), SortDescriptor(keyPath: "age", ascending: false)])
        let model = people.map { ($0.name, $0.age, $0.id) }.sorted { ($0.0, -$0.1) < ($1.0, -$1.1) }
        #expect(byNameThenAge.map(\.id) == model.map(\.2))
        #expect(people.sorted(by: \Person.id, ascending: false).first?.id == 19)
        // Objects whose link is nil sort last ascending, first descending.
        #expect(people.sorted(byKeyPath: "dog.age").suffix(15).allSatisfy { $0.dog == nil })
        #expect(people.sorted(byKeyPath: "dog.age", ascending: false).prefix(15).allSatisfy { $0.dog == nil })
        #expect(people.distinct(by: ["name"]).map(\.id) == [0, 1, 2, 3, 4, 5, 6])
        #expect(people.sorted(byKeyPath: "id", ascending: false).distinct(by: ["name"]).map(\.id) == [19, 18, 17, 16, 15, 14, 13])
        #expect(people.min(ofProperty: "age") == 0 as Int?)
        #expect(people.max(ofProperty: "age") == people.map(\.age).max())
        #expect(people.sum(ofProperty: "age") == people.map(\.age).reduce(0, +))
        let avg: Double? = people.average(ofProperty: "age")
        #expect(avg == Double(people.map(\.age).reduce(0, +)) / 20)
        let none = people.filter("age > 1000")
        #expect(
            none.sum(ofProperty: "age") == 0 && none.min(ofProperty: "age") as Int? == nil
                && none.average(ofProperty: "age") as Double? == nil)
        #expect(people.max(of: \.age) == people.map(\.age).max())
        #expect(people.index(matching: "id == 3") == 3)
        #expect(people.index(matching: { $0.id == 4 }) == 4)
        #expect(people.objects(at: [1, 2]).map(\.id) == [1, 2])
    }

    @Test func badQueriesAreTypedErrors() throws {
        let (realm, _) = try seeded()
        let people = realm.objects(Person.self)
        for bad in ["age >", "nope == 1", "age == 'x'", "name > 3", "age > 5.5", "(age > 1", "age == %@"] {
            #expect(throws: Realm.Error.self, "\(bad)") { try people.filter(checking: bad) }
        }
        do {
            _ = try people.filter(checking: "age >> 3")
            Issue.record("no error")
        } catch let e as Realm.Error {
            #expect(e.code == .invalidQuery)
            // The query engine's error is kept typed: its code, and where in the text it is.
            #expect(e.query?.code == .syntax)
            #expect(e.queryOffset == 5)
            #expect(e.reason.contains("^"))
        }
        do {
            _ = try people.filter(checking: "nope == 1")
            Issue.record("no error")
        } catch let e as Realm.Error {
            #expect(e.query?.code == .unknownProperty)
            #expect(e.queryOffset == 0)
        }
        // Errors that are not about text have no query details.
        #expect(Realm.Error(.fail, "x").queryOffset == nil)
    }

    @Test func whereBuildsTheSyntaxTreeDirectly() throws {
        // The tree `where { }` builds is the one the parser makes of the equivalent text.
        func tree(_ isIncluded: (Query<Person>) -> Query<Bool>) -> QueryPredicate { Query<Person>.root().predicate(of: isIncluded) }
        func parsed(_ text: String, _ args: [Any?] = []) throws -> QueryPredicate {
            try QueryPredicate.parse(text, arguments: try QueryArguments.convert(args))
        }
        #expect(
            tree { $0.age > 18 && $0.name.starts(with: "A", options: .caseInsensitive) }
                == (try parsed("age > 18 AND name BEGINSWITH[c] 'A'")))
        #expect(tree { $0.dog.name == "Rex" || !($0.age.in([1, 2])) } == (try parsed("dog.name == 'Rex' OR NOT age IN {1, 2}")))
        #expect(
            tree { $0.dogs.where { $0.age > 5 && $0.friend.name.contains("a") }.count > 0 }
                == (try parsed("SUBQUERY(dogs, $x1, $x1.age > 5 AND $x1.friend.name CONTAINS 'a').@count > 0")))
        #expect(tree { $0.dogs.count >= 2 && $0.age.contains(3...9) } == (try parsed("dogs.@count >= 2 AND age BETWEEN {3, 9}")))
        #expect(tree { $0.age.contains(3..<9) } == (try parsed("age >= 3 AND age < 9")))
        #expect(tree { $0.dog == nil } == (try parsed("dog == nil")))
        // Text that needs quoting or escaping in the dialect goes in as a value, untouched.
        let odd = "it's \"%@\" AND TRUEPREDICATE"
        #expect(tree { $0.name == odd } == (try parsed("name == %@", [odd])))
        // And it answers as the text does.
        let (realm, _) = try seeded()
        let people = realm.objects(Person.self)
        #expect(
            people.where { $0.age > 10 && $0.name.ends(with: "3") }.map(\.id) == people.filter("age > 10 AND name ENDSWITH '3'").map(\.id))
        #expect(people.where { $0.name == odd }.isEmpty)
    }

    @Test func resultsAreLazyLiveAndSeeTheOpenTransaction() throws {
        let (realm, _) = try seeded()
        let chain = realm.objects(Person.self).filter("age > 10").sorted(byKeyPath: "age").filter("id < 15")
        #expect(chain.base.evaluations == 0)  // nothing evaluated yet
        _ = chain.first
        let n = chain.count
        _ = chain.count
        #expect(chain.base.evaluations == 1)  // one evaluation for the chain
        let counted = realm.objects(Person.self).filter("age > 10")
        #expect(counted.count == counted.count && counted.base.evaluations == 1)  // count alone: no keys, cached
        try realm.write {
            realm.add(Person(value: ["id": 100, "age": 29]))
            realm.add(Person(value: ["id": 1, "age": 29]), update: .modified)
            #expect(realm.objects(Person.self).filter("age == 29").map(\.id).contains(100))
        }
        #expect(chain.count == n + 1)
    }

    /// LinkingObjects properties can be named in query text and sorted through.
    @Test func linkingObjectsInQueryText() throws {
        let (realm, _) = try makeRealm()
        try realm.write {
            let rex = Dog(value: ["name": "rex"])
            let max = Dog(value: ["name": "max"])
            realm.add(Person(value: ["id": 1, "name": "Ada", "dogs": [rex, max]]))
            realm.add(Person(value: ["id": 2, "name": "Bob", "dogs": [rex]]))
            realm.add(Dog(value: ["name": "stray"]))
        }
        let dogs = realm.objects(Dog.self)
        #expect(dogs.filter("ANY owners.name == 'Bob'").map(\.name) == ["rex"])
        #expect(dogs.filter("owners.@count == 0").map(\.name) == ["stray"])
        #expect(dogs.filter("owners.@count > 1").map(\.name) == ["rex"])
        #expect(throws: Realm.Error.self) { try dogs.filter(checking: "ANY owners.nope == 1") }
    }
}

import Foundation
import RealmSwift
import RealmTestSupport
import Testing

/// The README's RealmSwift tour, compiled and checked (keep the two in sync).
enum Tour {
    final class Person: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted(indexed: true) var age = 0
        @Persisted var dogs: List<Dog>
        @Persisted var address: Address?
        @Persisted var tags: MutableSet<String>
        @Persisted var scores: Map<String, Int>
        @Persisted var extra: AnyRealmValue
    }
    final class Dog: Object, Encodable {
        @Persisted var name = ""
        @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
    }
    final class Address: EmbeddedObject {
        @Persisted var city = ""
    }
}

@Suite struct ReadmeTourTests {
    @Test func theTourRuns() throws {
        typealias Person = Tour.Person
        typealias Dog = Tour.Dog
        typealias Address = Tour.Address
        let dir = TempDir()
        let config = Realm.Configuration(fileURL: dir.url("people.realm"), objectTypes: [Person.self, Dog.self, Address.self])
        let realm = try Realm(configuration: config)

        try realm.write {
            let ada = Person(value: ["id": 1, "name": "Ada", "age": 36])
            ada.dogs.append(Dog(value: ["name": "Rex"]))
            ada.address = Address(value: ["city": "London"])
            ada.tags.insert(objectsIn: ["math", "engines", "math"])
            ada.scores["chess"] = 1200
            ada.extra = .string("first programmer")
            realm.add(ada)
            realm.create(Person.self, value: [2, "Grace", 45])
        }
        let people = realm.objects(Person.self)
        #expect(people.count == 2)
        #expect(people.filter("age > %@ AND name BEGINSWITH[c] %@", 30, "a").count == 1)
        #expect(people.where { $0.dogs.count > 0 && $0.tags.contains("math") }.count == 1)
        #expect(people.sorted(byKeyPath: "age", ascending: false).first?.name == "Grace")
        #expect(people.average(ofProperty: "age") as Double? == 40.5)
        let byAge = people.sectioned(by: \.age, ascending: false)
        #expect(byAge.allKeys == [45, 36])
        #expect(byAge[IndexPath(item: 0, section: 1)].name == "Ada")
        let ada = realm.object(ofType: Person.self, forPrimaryKey: 1)!
        #expect(ada.dogs.first?.owners.first?.name == "Ada")
        #expect(ada.scores["chess"] == 1200 && ada.tags.count == 2 && ada.extra == .string("first programmer"))
        #expect(ada.dogs.filter("name BEGINSWITH 'R'").first?.name == "Rex")
        #expect(ada.dogs.first?.owners.sorted(byKeyPath: "age").first?.name == "Ada")
        #expect(ada.scores.max() == 1200)
        #expect(Array(ada.tags.filter("self BEGINSWITH 'e'")) == ["engines"])
        #expect(people.value(forKey: "name") as? [String] == ["Ada", "Grace"])
        #expect(String(decoding: try JSONEncoder().encode(ada.dogs), as: UTF8.self) == #"[{"name":"Rex"}]"#)

        let frozen = realm.freeze()
        try realm.write { ada.age += 1 }
        #expect(frozen.object(ofType: Person.self, forPrimaryKey: 1)!.age == 36)
        #expect(ada.age == 37)

        var changes: [[Int]] = []
        let token = people.observe(keyPaths: ["age"]) { change in
            if case .update(_, _, _, let modifications) = change { changes.append(modifications) }
        }
        realm.refresh()
        try realm.write { ada.age += 1 }
        realm.refresh()
        #expect(changes == [[0]])
        token.invalidate()

        var caught = false
        do { try realm.write { try realm.checkedAdd(Person(value: ["id": 1])) } } catch Realm.Error.primaryKeyExists { caught = true }
        #expect(caught)

        let dynamic = try Realm(configuration: .init(fileURL: config.fileURL, objectTypes: []))
        #expect(dynamic.dynamicObjects("Person").first?["name"] as? String == "Ada")
    }

    /// The README summarizes the differences and links the DocC article, the one full list, which
    /// the README's every link leads to inside the repository.
    @Test func theReadmeLinksTheFullListOfDifferences() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "## Differences from RealmSwift"))
        let end = try #require(readme.range(of: "\n## ", range: start.upperBound..<readme.endIndex))
        let link = "Sources/RealmSwift/RealmSwift.docc/DifferencesFromRealmSwift.md"
        #expect(readme[start.upperBound..<end.lowerBound].contains("(\(link))"))
        let article = try String(contentsOf: root.appendingPathComponent(link), encoding: .utf8)
        #expect(article.components(separatedBy: "\n- ").count > 10)
        // At most 400 lines, and every relative link names a file of the repository.
        #expect(readme.split(separator: "\n", omittingEmptySubsequences: false).count <= 400)
        let links = try Regex(#"\]\(([^)#:]+)(#[^)]*)?\)"#)
        for m in readme.matches(of: links) {
            let target = String(readme[m.range]).dropFirst(2).prefix { $0 != ")" && $0 != "#" }
            #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(String(target)).path), "\(target)")
        }
        #expect(!readme.contains("DESIGN.md") && !readme.contains("STYLE.md") && !readme.contains("TOOLCHAIN.md"))
    }
}

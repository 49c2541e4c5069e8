import Foundation
import RealmSwift

final class Person: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted(indexed: true) var age = 0
    @Persisted var dogs: List<Dog>
}

final class Dog: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
}

/// The main job, end to end: model classes, a durable write, lookups, a frozen view that keeps
/// its version while newer commits land, and the live view beside it.
@main
struct Demo {
    static func main() throws {
        let url = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory() + "realm-demo.realm")
        let config = Realm.Configuration(fileURL: url, objectTypes: [Person.self, Dog.self])
        _ = try? Realm.deleteFiles(for: config)
        let realm = try Realm(configuration: config)
        print("Opened \(url.path)")

        // 1. One write transaction: 100,000 people, every tenth with a dog.
        let started = Date()
        try realm.write {
            for i in 0..<100_000 {
                let p = Person()
                p.id = i
                p.name = "name-\(i % 10_000)"
                p.age = i * 7 % 100
                if i % 10 == 0 { p.dogs.append(Dog(value: ["name": "dog-\(i)"])) }
                realm.add(p)
            }
        }
        print(String(format: "Added 100,000 people and 10,000 dogs in %.0f ms (durable)", Date().timeIntervalSince(started) * 1000))

        // 2. Lookups by primary key and through links.
        let ada = realm.object(ofType: Person.self, forPrimaryKey: 4_210)!
        print("person 4210: \(ada.name), \(ada.age), dogs: \(ada.dogs.map(\.name))")
        print("owner of \(ada.dogs[0].name): \(ada.dogs[0].owners.map(\.name))")

        // 3. Queries: the NSPredicate dialect, or the type-safe builder.
        let people = realm.objects(Person.self)
        let over50 = people.filter("age > %@", 50)
        let dogOwners = people.where { $0.dogs.count > 0 && $0.name.starts(with: "name-42") }
        print("over 50: \(over50.count); owners of a dog named name-42…: \(dogOwners.count)")
        let oldest = people.sorted(byKeyPath: "age", ascending: false).first!
        print("oldest: \(oldest.name) (\(oldest.age)); average age \(people.average(ofProperty: "age") as Double? ?? 0)")

        // 4. Freeze this version, then keep writing.
        let frozen = realm.freeze()
        try realm.write {
            ada.name = "Ada"
            ada.age += 1
            realm.delete(realm.objects(Person.self).prefix(1000))
        }

        // 5. The frozen view still shows the old version; the live one shows the new.
        func describe(_ r: Realm) -> String {
            let people = r.objects(Person.self)
            let p = r.object(ofType: Person.self, forPrimaryKey: 4_210)!
            let first = people.first.map { "\($0.id)" } ?? "-"
            return "\(people.count) people, first id \(first), person 4210 is \(p.name) aged \(p.age)"
        }
        print("frozen: " + describe(frozen))
        print("live:   " + describe(realm))
        print("active versions: \(realm.numberOfActiveVersions)")
    }
}

import Foundation
import RealmSwift
import RealmTestSupport
import Testing

@Suite struct RealmTests {
    @Test func writeQueryAndReopen() throws {
        let dir = TempDir()
        do {
            let (realm, _) = try makeRealm(dir)
            try realm.write {
                realm.add(Person(value: ["id": 1, "name": "Ada", "age": 36]))
                realm.add(Person(value: [2, "Grace", 45]))
            }
            #expect(realm.objects(Person.self).count == 2)
            #expect(realm.object(ofType: Person.self, forPrimaryKey: 2)?.name == "Grace")
            #expect(realm.object(ofType: Person.self, forPrimaryKey: 3) == nil)
        }
        let (realm, _) = try makeRealm(dir)
        let people = realm.objects(Person.self)
        #expect(people.map(\.name) == ["Ada", "Grace"])
        #expect(people.first?.age == 36)
        #expect(people.last?.id == 2)
        #expect(!realm.isEmpty)
    }

    @Test func managedObjectsAreLiveAndEqualByIdentity() throws {
        let (realm, _) = try makeRealm()
        let p = Person()
        p.id = 7
        p.name = "before"
        #expect(p.realm == nil)
        try realm.write { realm.add(p) }
        #expect(p.realm != nil)
        let again = realm.object(ofType: Person.self, forPrimaryKey: 7)!
        #expect(again == p)
        #expect(again.isSameObject(as: p))
        try realm.write { again.name = "after" }
        #expect(p.name == "after")
        #expect(p["name"] as? String == "after")
        #expect(p.description.contains("name = \"after\""))
        #expect(throws: Realm.Error.self) { try p.value(forProperty: "nope") }
    }

    @Test func writeReturnsValueAndRollsBackOnThrow() throws {
        let (realm, _) = try makeRealm()
        let n = try realm.write { () -> Int in
            realm.add(Person(value: ["id": 1]))
            return 42
        }
        #expect(n == 42)
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try realm.write {
                realm.add(Person(value: ["id": 2]))
                throw Boom()
            }
        }
        #expect(realm.objects(Person.self).count == 1)
        #expect(!realm.isInWriteTransaction)
        try realm.beginWrite()
        let p = Person(value: ["id": 3])
        realm.add(p)
        #expect(realm.objects(Person.self).count == 2)
        realm.cancelWrite()
        #expect(realm.objects(Person.self).count == 1)
        #expect(p.isInvalidated)
    }

    @Test func duplicatePrimaryKeyIsATypedError() throws {
        let (realm, _) = try makeRealm()
        try realm.write { realm.add(Person(value: ["id": 1, "name": "a"])) }
        try realm.write {
            do {
                try realm.checkedAdd(Person(value: ["id": 1, "name": "b"]))
                Issue.record("expected an error")
            } catch Realm.Error.primaryKeyExists {
                // expected
            }
        }
        #expect(realm.objects(Person.self).first?.name == "a")
    }

    @Test func updatePolicies() throws {
        let (realm, _) = try makeRealm()
        try realm.write { realm.add(Person(value: ["id": 1, "name": "a", "age": 5])) }
        try realm.write { realm.add(Person(value: ["id": 1, "name": "b", "age": 6]), update: .modified) }
        #expect(realm.objects(Person.self).count == 1)
        #expect(realm.objects(Person.self)[0].name == "b")
        try realm.write { realm.create(Person.self, value: ["id": 1, "age": 9], update: .modified) }
        let p = realm.objects(Person.self)[0]
        #expect(p.name == "b" && p.age == 9)
        try realm.write { realm.add(Person(value: ["id": 1]), update: .all) }
        #expect(realm.objects(Person.self)[0].name == "")
    }

    @Test func addCascadesAndDeleteNullifiesLinks() throws {
        let (realm, _) = try makeRealm()
        let rex = Dog(value: ["name": "Rex", "age": 3])
        let fido = Dog(value: ["name": "Fido"])
        rex.friend = fido
        fido.friend = rex  // a cycle
        let p = Person(value: ["id": 1, "name": "Ada"])
        p.dog = rex
        p.dogs.append(rex)
        p.dogs.append(fido)
        p.address = Address(value: ["street": "Main", "city": "Paris"])
        try realm.write { realm.add(p) }
        #expect(realm.objects(Dog.self).count == 2)
        #expect(p.dog?.name == "Rex")
        #expect(p.dog?.friend?.friend?.name == "Rex")
        #expect(p.dogs.map(\.name) == ["Rex", "Fido"])
        #expect(p.address?.city == "Paris")
        #expect(rex.owners.count == 1 && rex.owners.first?.name == "Ada")
        try realm.write { realm.delete(realm.objects(Dog.self).first { $0.name == "Rex" }!) }
        #expect(p.dog == nil)
        #expect(p.dogs.map(\.name) == ["Fido"])
        #expect(fido.friend == nil)
        #expect(rex.isInvalidated)
        // Deleting the parent deletes its embedded object.
        #expect(realm.objects(Address.self).count == 1)
        try realm.write { realm.delete(p) }
        #expect(realm.objects(Address.self).count == 0)
        #expect(realm.objects(Dog.self).count == 1)
        try realm.write { realm.deleteAll() }
        #expect(realm.isEmpty)
    }

    @Test func errorsMatchInCatch() throws {
        let dir = TempDir()
        var config = Realm.Configuration(fileURL: dir.url("missing.realm"))
        config.readOnly = true
        do {
            _ = try Realm(configuration: config)
            Issue.record("expected an error")
        } catch Realm.Error.fileNotFound {
            // expected
        }
        try Data("not a realm file at all, definitely not".utf8).write(to: dir.url("bad.realm"))
        #expect {
            _ = try Realm(configuration: .init(fileURL: dir.url("bad.realm")))
        } throws: { ($0 as? Realm.Error)?.code == .invalidDatabase }
    }

    @Test func frozenRealmKeepsItsVersion() throws {
        let (realm, _) = try makeRealm()
        try realm.write { realm.add(Person(value: ["id": 1])) }
        let frozen = realm.freeze()
        #expect(frozen.isFrozen)
        try realm.write { realm.add(Person(value: ["id": 2])) }
        #expect(frozen.objects(Person.self).count == 1)
        #expect(realm.objects(Person.self).count == 2)
        #expect(realm.numberOfActiveVersions >= 2)
    }

    @Test func writeCopyAndDeleteFiles() throws {
        let dir = TempDir()
        let config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self])
        do {
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(Person(value: ["id": 1, "name": "x"])) }
            try realm.writeCopy(toFile: dir.url("copy.realm"))
            #expect(throws: Realm.Error.self) { try Realm.deleteFiles(for: config) }
        }
        let copy = try Realm(configuration: .init(fileURL: dir.url("copy.realm"), objectTypes: [Person.self, Dog.self, Address.self]))
        #expect(copy.objects(Person.self).first?.name == "x")
        #expect(try Realm.deleteFiles(for: config))
        #expect(!FileManager.default.fileExists(atPath: dir.file()))
    }

    @Test func inMemoryRealmsShareByIdentifierAndVanish() throws {
        var config = Realm.Configuration(inMemoryIdentifier: "mem-\(UUID().uuidString)")
        config.objectTypes = [Person.self, Dog.self, Address.self]
        do {
            let a = try Realm(configuration: config)
            try a.write { a.add(Person(value: ["id": 1])) }
            let b = try Realm(configuration: config)
            #expect(b.objects(Person.self).count == 1)
        }
        let c = try Realm(configuration: config)
        #expect(c.objects(Person.self).count == 0)
    }
}

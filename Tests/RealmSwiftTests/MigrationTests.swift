import Foundation
import RealmSwift
import RealmTestSupport
import Testing

enum PetV1 {
    final class Pet: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted var age = 0
        @Persisted var oldName = ""
        @Persisted var gone = 0.0
    }
}

enum PetV2 {
    final class Pet: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted var age = ""
        @Persisted var newName = ""
        @Persisted var extra = 0
    }
    final class Tag: Object {
        @Persisted var label = ""
    }
}

@Suite struct MigrationTests {
    func seed(_ dir: TempDir) throws {
        let realm = try Realm(configuration: .init(fileURL: dir.url(), objectTypes: [PetV1.Pet.self]))
        try realm.write {
            for i in 0..<5 { realm.add(PetV1.Pet(value: ["id": i, "name": "p\(i)", "age": i * 10, "oldName": "o\(i)", "gone": 1.5])) }
        }
    }

    @Test func aChangedSchemaWithoutAVersionBumpIsATypedError() throws {
        let dir = TempDir()
        try seed(dir)
        do {
            _ = try Realm(configuration: .init(fileURL: dir.url(), objectTypes: [PetV2.Pet.self]))
            Issue.record("expected a schema mismatch")
        } catch let e as Realm.Error {
            #expect(e.code == .schemaMismatch)
            #expect(e.reason.contains("Property 'Pet.age' has been changed from 'int' to 'string'."))
            #expect(e.reason.contains("Property 'Pet.newName' has been added."))
            #expect(e.reason.contains("Property 'Pet.gone' has been removed."))
        }
        // The file was not touched: the old model still opens.
        let old = try Realm(configuration: .init(fileURL: dir.url(), objectTypes: [PetV1.Pet.self]))
        #expect(old.objects(PetV1.Pet.self).count == 5)
    }

    @Test func migrationBlockSeesOldAndNewObjects() throws {
        let dir = TempDir()
        try seed(dir)
        var config = Realm.Configuration(fileURL: dir.url(), schemaVersion: 1, objectTypes: [PetV2.Pet.self, PetV2.Tag.self])
        config.migrationBlock = { migration, oldVersion in
            #expect(oldVersion == 0)
            #expect(migration.oldSchema["Pet"]?["gone"] != nil)
            #expect(migration.newSchema["Pet"]?["extra"] != nil)
            migration.renameProperty(onType: "Pet", from: "oldName", to: "newName")
            migration.enumerateObjects(ofType: "Pet") { old, new in
                let age = old!["age"] as! Int
                new!["age"] = "\(age) years"
                new!["extra"] = age + 1
            }
            migration.create("Tag", value: ["label": "migrated"])
        }
        let realm = try Realm(configuration: config)
        let pets = realm.objects(PetV2.Pet.self)
        #expect(pets.count == 5)
        #expect(pets.map(\.age) == (0..<5).map { "\($0 * 10) years" })
        #expect(pets.map(\.newName) == (0..<5).map { "o\($0)" })
        #expect(pets.map(\.extra) == (0..<5).map { $0 * 10 + 1 })
        #expect(realm.objects(PetV2.Tag.self).first?.label == "migrated")
        #expect(realm.schema["Pet"]?["gone"] == nil)

        // A lower version than the file's is refused.
        #expect {
            _ = try Realm(configuration: .init(fileURL: dir.url("other.realm"), objectTypes: [PetV2.Pet.self]))
            try FileManager.default.copyItem(atPath: dir.file(), toPath: dir.file("copy.realm"))
            _ = try Realm(configuration: .init(fileURL: dir.url("copy.realm"), schemaVersion: 0, objectTypes: [PetV2.Pet.self]))
        } throws: { ($0 as? Realm.Error)?.code == .schemaMismatch }
    }

    @Test func deleteRealmIfMigrationNeededStartsOver() throws {
        let dir = TempDir()
        try seed(dir)
        var config = Realm.Configuration(fileURL: dir.url(), objectTypes: [PetV2.Pet.self])
        config.deleteRealmIfMigrationNeeded = true
        let realm = try Realm(configuration: config)
        #expect(realm.objects(PetV2.Pet.self).isEmpty)
        try realm.write { realm.add(PetV2.Pet(value: ["id": 1, "age": "x"])) }
        #expect(realm.objects(PetV2.Pet.self).first?.age == "x")
    }

    @Test func aVersionBumpWithoutABlockKeepsData() throws {
        let dir = TempDir()
        try seed(dir)
        let realm = try Realm(configuration: .init(fileURL: dir.url(), schemaVersion: 3, objectTypes: [PetV2.Pet.self]))
        #expect(realm.objects(PetV2.Pet.self).map(\.name) == (0..<5).map { "p\($0)" })
        #expect(realm.objects(PetV2.Pet.self).allSatisfy { $0.age == "" && $0.extra == 0 })
    }
}

@Suite struct DynamicAPITests {
    @Test func readAndWriteAFileWithoutModelClasses() throws {
        let dir = TempDir()
        do {
            let (realm, _) = try makeRealm(dir)
            try realm.write {
                let p = Person(value: ["id": 1, "name": "Ada", "age": 36])
                p.dogs.append(Dog(value: ["name": "Rex"]))
                p.dog = p.dogs[0]
                realm.add(p)
            }
        }
        let realm = try Realm(configuration: .init(fileURL: dir.url(), objectTypes: []))
        #expect(realm.schema["Person"]?.primaryKeyProperty?.name == "id")
        let people = realm.dynamicObjects("Person")
        #expect(people.count == 1)
        let ada = people[0]
        #expect(ada.className == "Person")
        #expect(ada["name"] as? String == "Ada")
        #expect(ada["age"] as? Int == 36)
        #expect((ada["dog"] as? DynamicObject)?["name"] as? String == "Rex")
        #expect((ada["dogs"] as? List<DynamicObject>)?.first?["name"] as? String == "Rex")
        #expect(try realm.dynamicObject(ofType: "Person", forPrimaryKey: 1)?["name"] as? String == "Ada")
        #expect(throws: Realm.Error.self) { try realm.checkedDynamicObjects("Nope") }
        #expect(throws: Realm.Error.self) { try ada.value(forProperty: "nope") }
        try realm.write {
            ada["name"] = "Grace"
            try realm.checkedDynamicCreate("Person", value: ["id": 2, "name": "Linus"])
            #expect(throws: Realm.Error.self) { try realm.checkedDynamicCreate("Person", value: ["id": 2]) }
            #expect(throws: Realm.Error.self) { try ada.setValue("x", forProperty: "age") }
        }
        #expect(realm.dynamicObjects("Person").map { $0["name"] as? String } == ["Grace", "Linus"])
    }

    /// As in RealmSwift: a dynamic object's collections are live `List`, `MutableSet` and `Map`
    /// (of `DynamicObject` for objects, typed for values), `dynamicList`/`dynamicMutableSet`/
    /// `dynamicMap` read any managed object's collections of objects that way, writes through them
    /// land in the file, and members read as properties.
    @Test func collectionsAreLiveListsSetsAndMaps() throws {
        let dir = TempDir()
        var config = Realm.Configuration(fileURL: dir.url())
        config.objectTypes = [Kennel.self, Dog.self]
        let typed = try Realm(configuration: config)
        let kennel = Kennel(value: ["id": 1])
        try typed.write {
            kennel.dogs.append(objectsIn: [Dog(value: ["name": "Rex"]), Dog(value: ["name": "Fido"])])
            kennel.dogSet.insert(Dog(value: ["name": "Set"]))
            kennel.dogMap["a"] = Dog(value: ["name": "Mapped"])
            kennel.dogMap["none"] = nil as Dog?
            kennel.ints.append(objectsIn: [1, 2, 3])
            kennel.scores["x"] = 7
            typed.add(kennel)
        }
        // The typed object's collections of objects, read dynamically.
        #expect(kennel.dynamicList("dogs").map { $0["name"] as? String } == ["Rex", "Fido"])
        #expect(kennel.dynamicMutableSet("dogSet").first?["name"] as? String == "Set")
        let map: Map<String, DynamicObject?> = kennel.dynamicMap("dogMap")
        #expect(map["a"]??["name"] as? String == "Mapped" && map.count == 2)

        let realm = try Realm(configuration: .init(fileURL: dir.url(), objectTypes: []))
        let k = try #require(realm.dynamicObjects("Kennel").first)
        let dogs = try #require(k["dogs"] as? List<DynamicObject>)
        #expect(dogs.map { $0.name as? String } == ["Rex", "Fido"])
        #expect((k["ints"] as? List<Int>).map(Array.init) == [1, 2, 3])
        #expect((k["dogSet"] as? MutableSet<DynamicObject>)?.count == 1)
        #expect((k["dogMap"] as? Map<String, DynamicObject?>)?["a"]??["name"] as? String == "Mapped")
        #expect((k["scores"] as? Map<String, Int>)?["x"] == 7)
        #expect(k.id as? Int == 1)
        // Live: a write through the dynamic list is in the file, and the list sees it.
        try realm.write {
            let rover = realm.dynamicCreate("Dog", value: ["name": "Rover"])
            dogs.append(rover)
            k.dynamicList("dogs").swapAt(0, 1)
        }
        #expect(dogs.map { $0["name"] as? String } == ["Fido", "Rex", "Rover"])
        typed.refresh()
        #expect(kennel.dogs.map(\.name) == ["Fido", "Rex", "Rover"])
    }

    @Test func dynamicListOfAPropertyThatIsNotAListOfObjectsStops() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try makeRealm()
            let p = Person(value: ["id": 1])
            try realm.write { realm.add(p) }
            _ = p.dynamicList("name")
        }
        #expect(ConfinementTests.stderr(result).contains("Property 'name' of Person is not a list of objects."))
    }
}

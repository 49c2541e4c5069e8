import Foundation
import RealmStorage
import RealmSwift
import RealmTestSupport
import Testing

@Suite struct RealmTests {
    /// Adds of several classes interleaved in one write (a run of one class reuses its checked
    /// layout; another class, a cascade through links or a new transaction checks again).
    @Test func interleavedAddsOfSeveralClasses() throws {
        let (realm, _) = try makeRealm()
        try realm.write {
            for i in 0..<20 {
                realm.add(Dog(value: ["name": "d\(i)", "age": i]))
                let p = Person(value: ["id": i, "name": "p\(i)", "dogs": [["name": "c\(i)"]]])
                p.dog = Dog(value: ["name": "own\(i)"])
                realm.add(p)
                realm.add(Dog(value: ["name": "x\(i)"]))
            }
        }
        try realm.write { realm.add(Dog(value: ["name": "late"])) }
        #expect(realm.objects(Dog.self).count == 81 && realm.objects(Person.self).count == 20)
        let p7 = try #require(realm.object(ofType: Person.self, forPrimaryKey: 7))
        #expect(p7.name == "p7" && p7.dogs.first?.name == "c7" && p7.dog?.name == "own7")
        #expect(realm.objects(Dog.self).filter("name == 'd7'").first?.age == 7)
    }

    /// Lookups by primary key take the key as the property's type or as another integer type,
    /// inside and outside a write, for int, optional-int and string keys.
    @Test func primaryKeysOfSeveralTypes() throws {
        let (realm, _) = try makeRealm(types: [Person.self, Dog.self, Address.self, KeyedByName.self, KeyedByOptionalInt.self])
        try realm.write {
            for i in 0..<50 {
                realm.add(Person(value: ["id": i, "name": "p\(i)"]))
                realm.add(KeyedByName(value: ["key": "k\(i)", "n": i]))
                realm.add(KeyedByOptionalInt(value: ["key": i, "n": i]))
            }
            realm.add(KeyedByOptionalInt(value: ["key": nil as Int?, "n": -1]))
            #expect(realm.object(ofType: Person.self, forPrimaryKey: 49)?.name == "p49")
            #expect(realm.object(ofType: KeyedByName.self, forPrimaryKey: "k3")?.n == 3)
        }
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 7)?.name == "p7")
        #expect(realm.object(ofType: Person.self, forPrimaryKey: Int64(8))?.name == "p8")
        #expect(realm.object(ofType: Person.self, forPrimaryKey: Int32(9))?.name == "p9")
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 50) == nil)
        #expect(realm.object(ofType: Person.self, forPrimaryKey: -1) == nil)
        #expect(realm.object(ofType: KeyedByName.self, forPrimaryKey: "k12")?.n == 12)
        #expect(realm.object(ofType: KeyedByName.self, forPrimaryKey: "k50") == nil)
        #expect(realm.object(ofType: KeyedByOptionalInt.self, forPrimaryKey: 12)?.n == 12)
        #expect(realm.object(ofType: KeyedByOptionalInt.self, forPrimaryKey: Int?(13))?.n == 13)
        #expect(realm.object(ofType: KeyedByOptionalInt.self, forPrimaryKey: nil as Int?)?.n == -1)
        #expect(realm.object(ofType: KeyedByOptionalInt.self, forPrimaryKey: 99) == nil)
        let frozen = realm.freeze()
        #expect(frozen.object(ofType: Person.self, forPrimaryKey: 7)?.name == "p7")
        #expect(frozen.object(ofType: KeyedByOptionalInt.self, forPrimaryKey: 3)?.n == 3)
    }

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
        realm.beginWrite()
        let p = Person(value: ["id": 3])
        realm.add(p)
        #expect(realm.objects(Person.self).count == 2)
        realm.cancelWrite()
        #expect(realm.objects(Person.self).count == 1)
        #expect(p.isInvalidated)
    }

    /// A write whose sync fails throws, and the Realm reads the version before it: the commit
    /// released the Realm's snapshot of that version while the sync was in flight, and the Realm
    /// reads it again. The next write builds on it.
    @Test func aWriteWhoseSyncFailsLeavesTheRealmAtTheVersionBefore() throws {
        let (realm, _) = try makeRealm()
        try realm.write { realm.add(Person(value: ["id": 1, "name": "kept"])) }
        let results = realm.objects(Person.self)
        let plan = FaultPlan()
        plan.arm(.fsync, at: 1)
        #expect(throws: Realm.Error.self) {
            try FaultInjection.run(plan) { try realm.write { realm.add(Person(value: ["id": 2, "name": "lost"])) } }
        }
        #expect(!realm.isInWriteTransaction)
        #expect(results.count == 1 && results.first?.name == "kept")
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 2) == nil)
        try realm.write { realm.add(Person(value: ["id": 2, "name": "second try"])) }
        #expect(results.count == 2 && realm.object(ofType: Person.self, forPrimaryKey: 2)?.name == "second try")
        let reopened = try Realm(configuration: realm.configuration)
        #expect(reopened.objects(Person.self).map(\.name).sorted() == ["kept", "second try"])
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
        #expect(realm.dynamicObjects("Address").count == 1)
        try realm.write { realm.delete(p) }
        #expect(realm.dynamicObjects("Address").count == 0)
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

@Suite struct ThreadingTests {
    @Test func embeddedObjectsAreOwnedByTheirParent() throws {
        let (realm, _) = try makeRealm()
        let p = Person(value: ["id": 1, "address": ["street": "A", "city": "X"]])
        try realm.write { realm.add(p) }
        try realm.write { p.address = Address(value: ["street": "B"]) }
        #expect(realm.dynamicObjects("Address").count == 1)
        #expect(p.address?.street == "B")
        try realm.write {
            #expect(throws: Realm.Error.self) { try realm.checkedAdd(Address()) }
            let other = Person(value: ["id": 2])
            realm.add(other)
            #expect(throws: Realm.Error.self) { try other.setValue(p.address, forProperty: "address") }
            p.address = nil
        }
        #expect(realm.dynamicObjects("Address").count == 0)
    }

    @Test func frozenObjectsReadAnywhereAndThaw() async throws {
        let (realm, _) = try makeRealm()
        let p = Person(value: ["id": 1, "name": "old"])
        try realm.write { realm.add(p) }
        let frozen = p.freeze()
        #expect(frozen.isFrozen && !p.isFrozen)
        try realm.write { p.name = "new" }
        nonisolated(unsafe) let f = frozen
        let name = await Task.detached { f.name }.value
        #expect(name == "old")
        #expect(frozen.thaw()?.name == "new")
    }

    @Test func threadSafeReferencesResolveElsewhere() throws {
        let dir = TempDir()
        let (realm, _) = try makeRealm(dir)
        let p = Person(value: ["id": 1, "name": "Ada", "dogs": [["name": "b"], ["name": "a"], ["name": "c"]]])
        try realm.write {
            realm.add(p)
            realm.add(Person(value: ["id": 2, "name": "Bob"]))
        }
        let ref = ThreadSafeReference(to: p)
        let all = ThreadSafeReference(to: realm.objects(Person.self))
        // Filters, sorts and the collection a Results starts from travel with it.
        let filtered = ThreadSafeReference(to: realm.objects(Person.self).filter("name BEGINSWITH 'B'"))
        let sortedDogs = ThreadSafeReference(to: p.dogs.sorted(byKeyPath: "name", ascending: false))
        let url = dir.url()
        let result = Locked<String>("")
        let t = Thread {
            let other = try! Realm(configuration: .init(fileURL: url, objectTypes: [Person.self, Dog.self, Address.self, AllTypes.self]))
            let name = other.resolve(ref)?.name ?? "-"
            let count = other.resolve(all)?.count ?? -1
            let names = other.resolve(filtered)?.map(\.name) ?? []
            let dogs = other.resolve(sortedDogs)?.map(\.name) ?? []
            result.withLock { $0 = "\(name) \(count) \(names) \(dogs)" }
        }
        t.start()
        while result.withLock({ $0.isEmpty }) { Thread.sleep(forTimeInterval: 0.01) }
        #expect(result.withLock { $0 } == #"Ada 2 ["Bob"] ["c", "b", "a"]"#)
    }

    actor Worker {
        var realm: Realm?
        func run(_ url: URL) async throws -> Int {
            let realm = try await Realm(
                configuration: .init(fileURL: url, objectTypes: [Person.self, Dog.self, Address.self]), actor: self)
            self.realm = realm
            try await realm.asyncWrite {
                realm.add(Person(value: ["id": 5, "name": "actor"]))
            }
            return realm.objects(Person.self).count
        }
    }

    @Test func actorIsolatedRealmWritesAsynchronously() async throws {
        let dir = TempDir()
        let n = try await Worker().run(dir.url())
        #expect(n == 1)
        let realm = try Realm(configuration: .init(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self]))
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 5)?.name == "actor")
        var done = false
        realm.writeAsync({ realm.add(Person(value: ["id": 6])) }, onComplete: { done = $0 == nil })
        #expect(done && realm.objects(Person.self).count == 2)
    }

    @Test func anActorThatKeepsItsRealmIsReleased() async throws {
        // The Realm holds its actor weakly: `var realm: Realm?` in the actor makes no cycle.
        let dir = TempDir()
        weak var released: Worker?
        do {
            let worker = Worker()
            released = worker
            #expect(try await worker.run(dir.url()) == 1)
        }
        for _ in 0..<200 where released != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(released == nil)
    }

    @Test func shouldCompactOnLaunchRewritesTheFile() throws {
        let dir = TempDir()
        let types: [ObjectBase.Type] = [Person.self, Dog.self, Address.self]
        do {
            let realm = try Realm(configuration: .init(fileURL: dir.url(), objectTypes: types))
            for i in 0..<50 { try realm.write { realm.add(Person(value: ["id": i, "name": String(repeating: "x", count: 500)])) } }
        }
        let before = try FileManager.default.attributesOfItem(atPath: dir.file())[.size] as! Int
        let asked = Locked(false)
        var config = Realm.Configuration(fileURL: dir.url(), objectTypes: types)
        config.shouldCompactOnLaunch = { total, used in
            asked.withLock { $0 = true }
            return used < total
        }
        let realm = try Realm(configuration: config)
        let after = try FileManager.default.attributesOfItem(atPath: dir.file())[.size] as! Int
        #expect(asked.withLock { $0 })
        #expect(after < before)
        #expect(realm.objects(Person.self).count == 50)
    }
}

@Suite struct ActiveVersionTests {
    /// The active-version example of LiveAndFrozenData.md (RealmSwift.docc) through the object API: with a limit of 3, frozen Realms at three
    /// versions make the next write throw; releasing one lets it succeed.
    @Test func maximumNumberOfActiveVersionsThroughFrozenRealms() throws {
        let dir = TempDir()
        var config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self])
        config.maximumNumberOfActiveVersions = 3
        let realm = try Realm(configuration: config)
        var frozen: [Realm] = []
        for i in 0..<2 {
            try realm.write { realm.add(Person(value: ["id": i])) }
            frozen.append(realm.freeze())
        }
        // Pinned: the two frozen versions and the live Realm's current one.
        #expect(realm.numberOfActiveVersions == 2)
        try realm.write { realm.add(Person(value: ["id": 2])) }
        frozen.append(realm.freeze())
        #expect(realm.numberOfActiveVersions == 3)
        #expect {
            try realm.write { realm.add(Person(value: ["id": 3])) }
        } throws: { ($0 as? Realm.Error)?.code == .maximumNumberOfActiveVersionsExceeded }
        #expect(realm.objects(Person.self).count == 3)
        frozen.removeFirst()
        try realm.write { realm.add(Person(value: ["id": 3])) }
        #expect(realm.objects(Person.self).count == 4)
        #expect(frozen.map { $0.objects(Person.self).count } == [2, 3])
    }
}

final class KeyedByName: Object {
    @Persisted(primaryKey: true) var key = ""
    @Persisted var n = 0
}

final class KeyedByOptionalInt: Object {
    @Persisted(primaryKey: true) var key: Int?
    @Persisted var n = 0
}

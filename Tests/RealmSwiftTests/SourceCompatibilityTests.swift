import Foundation
import RealmSwift
import RealmTestSupport
import Testing

/// RealmSwift spellings that must compile and behave unchanged (issue 29): `beginWrite()` and
/// `thaw()` without `try`, `schemaVersionAtURL`, `ThreadSafeReference.isInvalidated`, and
/// `ObjectSchema.isEmbedded` in `realm.schema`.
@Suite struct SourceCompatibilityTests {
    @Test func beginWriteAndThawDoNotThrow() throws {
        let (realm, _) = try makeRealm()
        realm.beginWrite()
        realm.add(Person(value: ["name": "Ada", "age": 36]))
        try realm.commitWrite()
        #expect(realm.objects(Person.self).count == 1)
        let frozen = realm.freeze()
        let live = frozen.thaw()
        #expect(frozen.isFrozen && !live.isFrozen)
        #expect(live.objects(Person.self).first?.name == "Ada")
        // The throwing twins say why instead of stopping (a read-only Realm on another thread:
        // this thread's instance is read-write).
        var readOnlyConfig = realm.configuration
        readOnlyConfig.readOnly = true
        let config = readOnlyConfig
        try onAnotherThread {
            let readOnly = try Realm(configuration: config)
            do {
                try readOnly.checkedBeginWrite()
                Issue.record("a read-only Realm began a write")
            } catch let e as Realm.Error {
                #expect(e.code == .readOnly)
            }
        }
        #expect(try frozen.checkedThaw().objects(Person.self).count == 1)
    }

    @Test func schemaVersionAtURLReadsTheStoredVersion() throws {
        let dir = TempDir()
        var config = Realm.Configuration(fileURL: dir.url())
        config.objectTypes = [Person.self, Dog.self, Address.self]
        config.schemaVersion = 3
        do { _ = try Realm(configuration: config) }
        #expect(try schemaVersionAtURL(dir.url()) == 3)
        #expect(try Realm.schemaVersionAtURL(dir.url(), encryptionKey: nil) == 3)
        #expect(throws: Realm.Error.self) { try schemaVersionAtURL(dir.url("missing.realm")) }
        #expect(throws: Realm.Error.self) { try schemaVersionAtURL(dir.url(), encryptionKey: Data(count: 64)) }
        // A file whose version was never set reads 0.
        let plain = TempDir()
        var unversioned = Realm.Configuration(fileURL: plain.url())
        unversioned.objectTypes = [Dog.self]
        do { _ = try Realm(configuration: unversioned) }
        #expect(try schemaVersionAtURL(plain.url()) == 0)
    }

    @Test func aThreadSafeReferenceIsInvalidatedOnceResolved() async throws {
        let (realm, dir) = try makeRealm()
        let dog = Dog(value: ["name": "Rex"])
        try realm.write { realm.add(dog) }
        let ref = ThreadSafeReference(to: dog)
        #expect(!ref.isInvalidated)
        let config = realm.configuration
        let name = await Task.detached {
            let other = try? Realm(configuration: config)
            return other?.resolve(ref)?.name
        }.value
        #expect(name == "Rex")
        #expect(ref.isInvalidated)
        _ = dir
    }

    @Test func embeddedClassesAreEmbeddedInTheSchema() throws {
        let (realm, _) = try makeRealm()
        #expect(realm.schema["Address"]?.isEmbedded == true)
        #expect(realm.schema["Person"]?.isEmbedded == false)
    }

    /// Every operation that takes a property name at run time has a throwing form, named like
    /// `filter(checking:)`, so a server never stops on a user's input.
    @Test func runTimeKeyPathsHaveThrowingForms() throws {
        let (realm, _) = try makeRealm()
        try realm.write {
            for i in 0..<5 { realm.add(Person(value: ["id": i, "name": "p\(i % 2)", "age": i * 10])) }
            let owner = realm.objects(Person.self).first!
            for i in 0..<3 { owner.dogs.append(Dog(value: ["name": "d\(i)", "age": i + 1])) }
        }
        let people = realm.objects(Person.self)
        #expect(try people.sorted(checkingKeyPath: "age", ascending: false).first?.age == 40)
        #expect(
            try people.sorted(checking: [SortDescriptor(keyPath: "name"), SortDescriptor(keyPath: "age")]).map(\.age) == [
                0, 20, 40, 10, 30,
            ])
        #expect(throws: Realm.Error.self) { try people.sorted(checkingKeyPath: "nope") }
        #expect(try people.distinct(checking: ["name"]).count == 2)
        #expect(throws: Realm.Error.self) { try people.distinct(checking: ["nope"]) }
        #expect(try people.sum(checkingProperty: "age") as Int == 100)
        #expect(try people.max(checkingProperty: "age") as Int? == 40)
        #expect(try people.min(checkingProperty: "age") as Int? == 0)
        #expect(try people.average(checkingProperty: "age") as Double? == 20)
        #expect(throws: Realm.Error.self) { try people.sum(checkingProperty: "nope") as Int }
        #expect(throws: Realm.Error.self) { try people.sum(checkingProperty: "name") as Int }
        let dogs = people.first!.dogs
        #expect(try dogs.sorted(checkingKeyPath: "age", ascending: false).first?.name == "d2")
        #expect(throws: Realm.Error.self) { try dogs.sorted(checkingKeyPath: "nope") }
        #expect(try dogs.distinct(checking: ["name"]).count == 3)
        #expect(try dogs.sum(checkingProperty: "age") as Int == 6)
        #expect(throws: Realm.Error.self) { try dogs.max(checkingProperty: "nope") as Int? }
    }
}

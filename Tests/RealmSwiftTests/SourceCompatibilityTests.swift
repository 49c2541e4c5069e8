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
        // The throwing twins say why instead of stopping.
        var config = realm.configuration
        config.readOnly = true
        let readOnly = try Realm(configuration: config)
        do {
            try readOnly.checkedBeginWrite()
            Issue.record("a read-only Realm began a write")
        } catch let e as Realm.Error {
            #expect(e.code == .readOnly)
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
}

import Foundation
import Logging
import RealmStorage
import RealmSwift
import RealmTestSupport
import Testing

/// Damage met where no error can be thrown (issue 28): a property read or an iteration stops the
/// process — as RealmSwift's exception does — after logging it, with a message that names the
/// file, the byte offset and `realm-dump --verify`; the file is not written.
@Suite struct ReadFailureTests {
    /// A file of 50 people, then a dog, whose people's `name` segment has one byte flipped (its
    /// checksum no longer matches); returns the damaged segment's offset.
    static func damagedFile(_ dir: TempDir) throws -> (Realm.Configuration, UInt64) {
        var config = Realm.Configuration(fileURL: dir.url())
        config.objectTypes = [Person.self, Dog.self, Address.self, AllTypes.self]
        do {
            let realm = try Realm(configuration: config)
            try realm.write { for i in 0..<50 { realm.add(Person(value: ["id": i, "name": "person \(i)"])) } }
            // A later commit: damage to the last one, with nothing after it, is a torn write that
            // recovery discards (Spec/FORMAT.md §6.6); damage to an earlier one is found when read.
            try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
        }
        let path = dir.url().path
        let report = try Inspector().inspect(path: path, segments: true)
        let segment = try #require(report.segments.first { $0.table == "Person" && $0.column == "name" })
        let file = try #require(FileHandle(forUpdatingAtPath: path))
        let at = segment.offset + segment.storedBytes / 2
        try file.seek(toOffset: at)
        let byte = try #require(try file.read(upToCount: 1)).first!
        try file.seek(toOffset: at)
        try file.write(contentsOf: [byte ^ 0x5A])
        try file.close()
        return (config, segment.offset)
    }

    @Test func damageMetByAPropertyReadStopsWithWhereItIsAndIsLogged() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            var (config, _) = try ReadFailureTests.damagedFile(dir)
            config.logger = Logger(label: "app.realm") { StreamLogHandler.standardError(label: $0) }
            let realm = try Realm(configuration: config)
            var total = 0
            for p in realm.objects(Person.self) { total += p.name.count }
            print(total)
        }
        let stderr = ConfinementTests.stderr(result)
        #expect(stderr.contains("critical"), "\(stderr)")
        #expect(stderr.contains("damage found while reading Person.name"), "\(stderr)")
        #expect(stderr.contains("is damaged at byte "), "\(stderr)")
        #expect(stderr.contains("--verify` lists every problem"), "\(stderr)")
    }

    /// The same file, read through the engine, reports the damage as a typed error at the
    /// segment's offset, and the stopped process did not write to the file.
    @Test func theDamageIsATypedErrorBelowTheObjectLayer() throws {
        let dir = TempDir()
        let (config, offset) = try Self.damagedFile(dir)
        let path = try #require(config.fileURL).path
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let store = try Store.open(at: path, options: .init(readOnly: true))
        let s = try store.snapshot()
        let table = try #require(s.catalog.table("Person"))
        let column = try #require(table.columns.first { $0.name == "name" })
        let group = try s.rowGroup(try #require(try s.rowGroups(try s.tableState("Person")).first).block)
        #expect {
            _ = try s.columnSegment(group, column, cached: false)
        } throws: { error in
            guard let e = error as? StorageError else { return false }
            return e.code == .corrupted && e.offset == offset
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    /// A file a compaction replaced, opened through a name that still leads to it (the golden
    /// file's mark names /dev/null): Realm.Error.fileAccess, naming the database's path.
    @Test func aSupersededFileIsAFileAccessError() throws {
        let dir = TempDir()
        let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Spec/vectors/v8-superseded.realm")
        try FileManager.default.copyItem(at: vectors, to: dir.url())
        for readOnly in [false, true] {
            var config = Realm.Configuration(fileURL: dir.url(), readOnly: readOnly)
            config.objectTypes = []
            do {
                _ = try Realm(configuration: config)
                Issue.record("a superseded file opened")
            } catch let e as Realm.Error {
                #expect(e.code == .fileAccess && e.description.contains("/dev/null"), "\(e)")
            }
        }
    }
}

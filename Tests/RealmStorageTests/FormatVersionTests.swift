import Foundation
import Testing

@testable import RealmStorage

/// Format versions (Spec/FORMAT.md §3.1): new files are version 3; a version-1 or version-2 file
/// keeps its version and keeps working (a version-1 file refuses the version-2 features, neither
/// chains commits), and is upgraded by compaction.
@Suite struct FormatVersionTests {
    /// A writable copy of a golden file.
    static func copy(_ name: String, _ dir: TempDir) throws -> String {
        let path = dir.file(name)
        try FileManager.default.copyItem(atPath: GoldenFileTests.vectors + "/" + name, toPath: path)
        return path
    }

    static func headerVersion(_ path: String) -> UInt32 {
        let b = fileBytes(path)
        return (8..<12).reduce(UInt32(0)) { $0 | UInt32(b[$1]) << (8 * UInt32($1 - 8)) }
    }

    @Test func newFilesAreVersion8() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true))
        #expect(FileHeader.formatVersion == 8)
        #expect(try store.snapshot().formatVersion == 8)
        #expect(Array(fileBytes(dir.file()).prefix(64)) == FileHeader.encodeStatic(version: 8))
        #expect(try Inspector().inspect(path: dir.file()).formatVersion == 8)
        // The static headers the spec prints (§3.1), and a new file's size (§5.1, §6.1).
        #expect(Array(FileHeader.encodeStatic(version: 8).suffix(8)) == [0x52, 0x62, 0xbc, 0xb4, 0x83, 0xc2, 0x19, 0x47])
        #expect(Array(FileHeader.encodeStatic(version: 7).suffix(8)) == [0x5f, 0xce, 0xa9, 0x89, 0x93, 0x43, 0x35, 0x06])
        #expect(try store.snapshot().fileLength == 12400)
    }

    /// A version-7 file keeps its version and its record layout (no length field, bytes 4–7 zero)
    /// when it is written, and still opens; compaction upgrades it to version 8.
    @Test func aVersion7FileKeepsItsRecordLayout() throws {
        let dir = TempDir()
        let path = dir.file("v7.realm")
        try FileManager.default.copyItem(atPath: GoldenFileTests.vectors + "/v7-group-commit.realm", toPath: path)
        var options = Store.Options()
        options.compaction = .off
        let store = try Store.open(at: path, options: options)
        try store.write { tx in _ = try tx.insert("Log", ["seq": .int(100), "note": .string("written by format 8's writer")]) }
        let s = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
        #expect(try s.formatVersion == 7 && s.version == 9 && s.objectCount("Log") == 7)
        let bytes = fileBytes(path)
        let records = ByteView(copying: bytes).offsets(ofAlignedWord: BlockMagic.versionRecord, from: FileHeader.size)
        let newest = try #require(records.last)
        #expect(Array(bytes[newest + 4..<newest + 8]) == [0, 0, 0, 0])
        #expect(s.record.lag == 0)
        #expect(Verifier().verify(s).isClean)
        try store.compact()
        let compacted = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
        #expect(try compacted.formatVersion == 8 && compacted.objectCount("Log") == 7)
    }

    @Test func aVersion2FileKeepsItsVersionAndNamesEveryCommitByASlot() throws {
        let dir = TempDir()
        let path = try Self.copy("v2-collections.realm", dir)
        let header = Array(fileBytes(path).prefix(64))
        let store = try Store.open(at: path)
        for i in 0..<3 {
            try store.write { try $0.insert("Target", ["_id": .int(Int64(100 + i))]) }
            // No commit head: the newest slot names the new commit (Spec/FORMAT.md §3.4).
            let r = try Inspector().inspect(path: path)
            #expect(r.chainedCommits == 0 && r.slots.first(where: \.isCurrent)?.version == r.currentVersion)
        }
        #expect(Array(fileBytes(path).prefix(64)) == header)
        let s = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
        #expect(s.formatVersion == 2)
        #expect(try s.objectCount("Target") == 6)
        #expect(Verifier().verify(s).isClean)
    }

    @Test func aVersion1FileKeepsWorkingRefusesVersion2FeaturesAndCompactionUpgradesIt() throws {
        let dir = TempDir()
        let path = try Self.copy("v1-people.realm", dir)
        let v1Header = Array(fileBytes(path).prefix(64))
        #expect(v1Header == FileHeader.encodeStatic(version: 1))
        var store = try Store.open(at: path)
        #expect(try store.snapshot().formatVersion == 1)
        #expect(try store.snapshot().value("Person", ObjectKey(5), "name") == .string("Ada"))
        // Ordinary writes.
        try store.write { tx in
            try tx.insert("Person", ["id": .int(1000), "name": .string("new"), "age": .int(3)])
            try tx.set("Person", ObjectKey(7), "age", .int(77))
            try tx.delete("Person", ObjectKey(8))
            try tx.addColumn("Person", ColumnSchema("tags", .string, list: true))
            try tx.createTable("Pet", primaryKey: ColumnSchema("name", .string))
            try tx.insert("Pet", ["name": .string("Rex")])
        }
        // The version-2 features are refused, saying how to upgrade; the transaction stays usable.
        try store.write { tx in
            let features = [
                ColumnSchema("any", .mixed), ColumnSchema("anys", .mixed, list: true), ColumnSchema("set", .int, set: true),
                ColumnSchema("map", .string, map: true),
            ]
            for c in features {
                do {
                    try tx.addColumn("Person", c)
                    Issue.record("\(c.name) was added to a version-1 file")
                } catch let e as StorageError {
                    #expect(e.code == .unsupportedFormatVersion, "\(e)")
                    #expect(e.reason.contains("format version 1") && e.reason.contains("compact the file to upgrade it"), "\(e)")
                }
            }
            expectCode(.unsupportedFormatVersion) { try tx.createTable("Mixed", primaryKey: ColumnSchema("id", .mixed)) }
            #expect(tx.catalog.table("Person")?.column("any") == nil)
            try tx.set("Person", ObjectKey(9), "age", .int(99))
        }
        store = try Store.open(at: path)
        let s = try store.snapshot()
        #expect(s.formatVersion == 1)
        #expect(Array(fileBytes(path).prefix(64)) == v1Header)  // the static header is never rewritten
        #expect(try s.value("Person", ObjectKey(7), "age") == .int(77))
        #expect(try s.value("Person", ObjectKey(9), "age") == .int(99))
        #expect(try s.contains("Person", ObjectKey(8)) == false)
        #expect(try s.objectKey("Person", primaryKey: .int(1000)) != nil)
        #expect(try s.objectKey("Pet", primaryKey: .string("Rex")) == ObjectKey(0))
        #expect(Verifier().verify(s).isClean)
        let before = try s.objectKeys("Person").map { try s.object("Person", $0) }
        // A compacted copy and in-place compaction are of the current version and take the new columns.
        try store.compact(to: dir.file("copy.realm"))
        #expect(Self.headerVersion(dir.file("copy.realm")) == FileHeader.formatVersion)
        try store.compact()
        #expect(Self.headerVersion(path) == FileHeader.formatVersion)
        #expect(try Inspector().inspect(path: path).formatVersion == FileHeader.formatVersion)
        let compacted = try store.snapshot()
        #expect(compacted.formatVersion == FileHeader.formatVersion)
        #expect(try compacted.objectKeys("Person").map { try compacted.object("Person", $0) } == before)
        try store.write { tx in
            try tx.addColumn("Person", ColumnSchema("any", .mixed))
            try tx.addColumn("Person", ColumnSchema("map", .string, map: true))
            try tx.set("Person", ObjectKey(7), "any", .typedLink(table: 1, key: ObjectKey(0)))
            try tx.set("Person", ObjectKey(7), "map", .map(["k": .string("v")]))
        }
        let reopened = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
        #expect(reopened.formatVersion == FileHeader.formatVersion)
        #expect(try reopened.value("Person", ObjectKey(7), "any") == .typedLink(table: 1, key: ObjectKey(0)))
        #expect(try reopened.value("Person", ObjectKey(7), "map") == .map(["k": .string("v")]))
        #expect(try reopened.value("Person", ObjectKey(5), "map") == .map([:]))
        // A row group the commit did not rewrite has no segment for the new columns: their defaults.
        #expect(try reopened.value("Person", ObjectKey(50), "map") == .map([:]))
        #expect(try reopened.value("Person", ObjectKey(50), "any") == .null)
        #expect(Verifier().verify(reopened).isClean)
    }

    @Test func aVersion1HeaderOverAVersion2CatalogIsCorrupted() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true))
        try store.write { tx in
            try tx.createTable("T")
            try tx.addColumn("T", ColumnSchema("any", .mixed))
        }
        // A compacted copy has one commit, so recovery has no older version to fall back to.
        try store.compact(to: dir.file("one.realm"))
        var bytes = fileBytes(dir.file("one.realm"))
        bytes.replaceSubrange(0..<64, with: FileHeader.encodeStatic(version: 1))
        _ = FileManager.default.createFile(atPath: dir.file("v1.realm"), contents: Data(bytes))
        expectCode(.corrupted) { try Store.open(at: dir.file("v1.realm"), options: .init(readOnly: true)) }
        // Unknown versions are refused before anything else is read.
        for version: UInt32 in [0, FileHeader.formatVersion + 1, .max] {
            bytes.replaceSubrange(0..<64, with: FileHeader.encodeStatic(version: version))
            _ = FileManager.default.createFile(atPath: dir.file("v\(version).realm"), contents: Data(bytes))
            expectCode(.unsupportedFormatVersion) { try Store.open(at: dir.file("v\(version).realm"), options: .init(readOnly: true)) }
        }
    }

    @Test func everyVersion1GoldenFileReadsTheSameAfterAnUpgrade() throws {
        let dir = TempDir()
        for name in ["v1-empty.realm", "v1-people.realm", "v1-all-types.realm"] {
            let path = try Self.copy(name, dir)
            let store = try Store.open(at: path)
            let s = try store.snapshot()
            let content = try s.catalog.tables.map { t in try s.objectKeys(t.name).map { try s.object(t.name, $0) } }
            try store.compact()
            let u = try store.snapshot()
            #expect(u.formatVersion == FileHeader.formatVersion && u.version == s.version && u.catalog == s.catalog, "\(name)")
            let upgraded = try u.catalog.tables.map { t in try u.objectKeys(t.name).map { try u.object(t.name, $0) } }
            #expect(upgraded.count == content.count, "\(name)")
            for (a, b) in zip(upgraded, content) {
                #expect(a.count == b.count && zip(a, b).allSatisfy { StorageValue.map($0).bitwiseEquals(.map($1)) }, "\(name)")
            }
        }
    }
}

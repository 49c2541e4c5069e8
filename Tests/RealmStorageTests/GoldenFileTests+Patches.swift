import Foundation
import Testing

@testable import RealmStorage

/// The golden files of format 5: segment patches (Spec/FORMAT.md §4.8) and index chunk patches
/// (§5.7). Write them (only them) with `REALM_WRITE_VECTORS=1 swift test --filter 'v5Patches|v5IndexPatches'`.
extension GoldenFileTests {
    /// Object `i`'s name in `v5-patches.realm`: 48 hexadecimal digits of SplitMix64 (seed `i`), so
    /// a segment of them does not compress and a patch of one name is worth writing.
    static func patchName(_ i: Int) -> String {
        var rng = SplitMix(seed: UInt64(i))
        return (0..<3).map { _ in String(format: "%016llx", rng.next()) }.joined()
    }

    @Test func v5Patches() throws {
        if Self.writing {
            try Self.write("v5-patches.realm") { store in
                try store.write { tx in
                    try tx.createTable("Item", primaryKey: ColumnSchema("id", .int))
                    try tx.addColumn("Item", ColumnSchema("name", .string))
                    try tx.addColumn("Item", ColumnSchema("count", .int, nullable: true))
                    for i in 0..<40 {
                        _ = try tx.insert("Item", ["id": .int(Int64(i)), "name": .string(Self.patchName(i)), "count": .int(Int64(i * 3))])
                    }
                }
                try store.write { try $0.set("Item", ObjectKey(5), "name", .string("renamed five")) }
                try store.write { try $0.delete("Item", ObjectKey(6)) }
                try store.write { tx in
                    try tx.delete("Item", ObjectKey(7))
                    try tx.set("Item", ObjectKey(8), "name", .string("renamed eight"))
                }
            }
        }
        let dir = TempDir()
        let s = try Self.open("v5-patches.realm", dir)
        #expect(s.formatVersion == 5 && s.version == 5)
        #expect(try s.objectCount("Item") == 38)
        for i in 0..<40 {
            let k = ObjectKey(Int64(i))
            if i == 6 || i == 7 {
                #expect(try s.contains("Item", k) == false)
                continue
            }
            let name = i == 5 ? "renamed five" : i == 8 ? "renamed eight" : Self.patchName(i)
            #expect(try s.value("Item", k, "name") == .string(name))
            #expect(try s.value("Item", k, "count") == .int(Int64(i * 3)))
            #expect(try s.objectKey("Item", primaryKey: .int(Int64(i))) == k)
        }
        // The first row group's name segment is a patch over the segment version 2 wrote: rows 6
        // and 7 of the base deleted, rows 5 and 6 (objects 5 and 8) replaced.
        let t = try #require(s.catalog.table("Item"))
        let g = try s.rowGroup(try s.rowGroups("Item")[0].block)
        #expect(g.rowCount == 14)
        let name = try #require(t.column("name"))
        let ref = try #require(g.columns[name.id])
        let patch = try #require(try s.segmentPatch(ref))
        #expect(patch.rowCount == 14 && patch.deleted == [6, 7] && patch.replaced == [5, 6] && !patch.values.isNone)
        #expect(Verifier().verify(s).isClean)
        let kinds = Set(try Inspector().inspect(path: dir.file("v5-patches.realm"), blocks: true).blocks.filter(\.isLive).map(\.kind))
        #expect(kinds.contains("segment patch"))
    }

    @Test func v5IndexPatches() throws {
        if Self.writing {
            try Self.write("v5-index-patches.realm") { store in
                try store.write { tx in
                    try tx.createTable("Word", primaryKey: ColumnSchema("text", .string))
                    try tx.addColumn("Word", ColumnSchema("n", .int))
                    for i in 0..<40 { _ = try tx.insert("Word", ["text": .string("word-\(i)"), "n": .int(Int64(i))]) }
                }
                try store.write { _ = try $0.insert("Word", ["text": .string("extra"), "n": .int(40)]) }
                try store.write { try $0.delete("Word", ObjectKey(3)) }
            }
        }
        let dir = TempDir()
        let s = try Self.open("v5-index-patches.realm", dir)
        #expect(s.formatVersion == 5 && s.version == 4)
        #expect(try s.objectCount("Word") == 40)
        for i in 0..<40 where i != 3 {
            #expect(try s.objectKey("Word", primaryKey: .string("word-\(i)")) == ObjectKey(Int64(i)))
        }
        #expect(try s.objectKey("Word", primaryKey: .string("word-3")) == nil)
        #expect(try s.objectKey("Word", primaryKey: .string("extra")) == ObjectKey(40))
        // Both changes landed inside the index as chunk patches (Spec/FORMAT.md §5.7).
        let ref = try #require(try s.tableState("Word").indexes.values.first)
        let patches = try s.indexDirectory(ref).chunks.compactMap { try s.chunkPatch($0.block) }
        #expect(patches.reduce(0) { $0 + $1.inserted.count } == 1 && patches.reduce(0) { $0 + $1.deleted.count } == 1)
        #expect(Verifier().verify(s).isClean)
        let kinds = Set(try Inspector().inspect(path: dir.file("v5-index-patches.realm"), blocks: true).blocks.filter(\.isLive).map(\.kind))
        #expect(kinds.contains("index chunk patch"))
    }
}

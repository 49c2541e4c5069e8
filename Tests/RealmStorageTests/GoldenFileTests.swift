import Foundation
import Testing

@testable import RealmStorage

/// The golden files under Spec/vectors/ were written by each format version (`v1-*` … `v4-*`); every
/// later version of the library must still open them and read the same content. Regenerate (only
/// when adding a new format version's files, and then only those) with
/// `REALM_WRITE_VECTORS=1 swift test --filter GoldenFileTests`.
@Suite(.serialized) struct GoldenFileTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Spec/vectors").path
    static var writing: Bool { ProcessInfo.processInfo.environment["REALM_WRITE_VECTORS"] == "1" }

    /// Opens a read-only copy (so the committed file and its directory are never touched).
    static func open(_ name: String, _ dir: TempDir) throws -> Snapshot {
        let src = vectors + "/" + name
        let dst = dir.file(name)
        try FileManager.default.copyItem(atPath: src, toPath: dst)
        return try Store.open(at: dst, options: .init(readOnly: true)).snapshot()
    }

    static func write(
        _ name: String, options: Store.Options = .init(create: true, rowGroupCapacity: 16), _ build: (Store) throws -> Void
    ) throws {
        let path = vectors + "/" + name
        for p in [path, path + ".lock"] { try? FileManager.default.removeItem(atPath: p) }
        var committed = 0
        do {
            let store = try Store.open(at: path, options: options)
            try build(store)
            committed = try store.snapshot().fileLength
        }
        // A vector holds its committed bytes only, not the room commits grow the file by (Spec §6.2).
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try file.truncate(atOffset: UInt64(committed))
        try file.close()
        try? FileManager.default.removeItem(atPath: path + ".lock")
    }

    static let uuid = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!

    @Test func v1Empty() throws {
        if Self.writing { try Self.write("v1-empty.realm") { _ in } }
        let dir = TempDir()
        let s = try Self.open("v1-empty.realm", dir)
        #expect(s.version == 1)
        #expect(s.catalog.tables.isEmpty)
        #expect(Verifier().verify(s).isClean)
    }

    @Test func v1People() throws {
        if Self.writing {
            try Self.write("v1-people.realm") { store in
                let tx = try store.beginWrite()
                try tx.createTable("Person", primaryKey: ColumnSchema("id", .int))
                try tx.addColumn("Person", ColumnSchema("name", .string, indexed: true))
                try tx.addColumn("Person", ColumnSchema("age", .int))
                try tx.addColumn("Person", ColumnSchema("score", .double))
                for i in 0..<100 {
                    try tx.insert(
                        "Person", row: [.int(Int64(i)), .string("name-\(i % 10)"), .int(Int64(i * 7 % 100)), .double(Double(i) / 10)])
                }
                try tx.commit()
                let tx2 = try store.beginWrite()
                try tx2.set("Person", ObjectKey(5), "name", .string("Ada"))
                try tx2.delete("Person", ObjectKey(6))
                try tx2.commit()
            }
        }
        let dir = TempDir()
        let s = try Self.open("v1-people.realm", dir)
        #expect(s.version == 3)
        #expect(try s.objectCount("Person") == 99)
        #expect(try s.value("Person", ObjectKey(5), "name") == .string("Ada"))
        #expect(try s.value("Person", ObjectKey(42), "name") == .string("name-2"))
        #expect(try s.value("Person", ObjectKey(42), "score") == .double(4.2))
        #expect(try s.contains("Person", ObjectKey(6)) == false)
        #expect(try s.objectKey("Person", primaryKey: .int(99)) == ObjectKey(99))
        #expect(try s.objectKeys("Person", indexed: "name", equalTo: .string("name-3")).count == 10)
        #expect(try s.count("Person", whereInt: "age", .greater(50)) == 49)
        #expect(try s.changeset().tables["Person"]?.deleted == [ObjectKey(6)])
        #expect(try s.versionHistory() == [3, 2, 1])
        #expect(Verifier().verify(s).isClean)
    }

    @Test func v1AllTypes() throws {
        if Self.writing {
            try Self.write("v1-all-types.realm") { store in
                let tx = try store.beginWrite()
                try tx.createTable("Target", primaryKey: ColumnSchema("_id", .objectId))
                try tx.createTable("All", primaryKey: ColumnSchema("key", .string))
                for t in ColumnType.allCases {
                    try tx.addColumn("All", ColumnSchema("\(t)", t, nullable: true, linkTarget: t == .link ? "Target" : nil))
                    try tx.addColumn("All", ColumnSchema("\(t)s", t, list: true, linkTarget: t == .link ? "Target" : nil))
                }
                try tx.insert("Target", ["_id": .objectId(Array(1...12))])
                var row: [String: StorageValue] = ["key": .string("full")]
                for (t, v) in Self.samples { row["\(t)"] = v; row["\(t)s"] = .list([v, v]) }
                try tx.insert("All", row)
                try tx.insert("All", ["key": .string("empty")])
                try tx.commit()
            }
        }
        let dir = TempDir()
        let s = try Self.open("v1-all-types.realm", dir)
        let full = try #require(try s.objectKey("All", primaryKey: .string("full")))
        let empty = try #require(try s.objectKey("All", primaryKey: .string("empty")))
        for (t, v) in Self.samples {
            #expect(try s.value("All", full, "\(t)").bitwiseEquals(v), "\(t)")
            #expect(try s.value("All", full, "\(t)s").bitwiseEquals(.list([v, v])), "\(t)s")
            #expect(try s.value("All", empty, "\(t)") == .null)
        }
        #expect(s.catalog.table("All")?.column("link")?.linkTarget == "Target")
        #expect(try s.objectKey("Target", primaryKey: .objectId(Array(1...12))) == ObjectKey(0))
        #expect(Verifier().verify(s).isClean)
    }

    /// The mixed values of `v2-collections.realm`: every tag (the typed link names `Target`, table 1).
    static let mixedSamples: [StorageValue] = [
        .int(-1234567890123), .bool(true), .float(-0.5), .double(.nan), .string("grüße"), .binary([0xDE, 0xAD, 0xBE, 0xEF]),
        .timestamp(seconds: 1_700_000_000, nanoseconds: 5), .objectId(Array(100..<112)), .uuid(uuid),
        .decimal128(low: 12345, high: 0x3040_0000_0000_0000), .typedLink(table: 1, key: ObjectKey(1)), .null,
        .string(""), .binary([]), .int(.min), .double(-0.0), .bool(false),
    ]

    /// Row `i` of `Collections` in `v2-collections.realm` (before version 3's changes).
    static func collectionsRow(_ i: Int) -> [String: StorageValue] {
        let n = mixedSamples.count
        return [
            "key": .string("row-\(i)"),
            "any": mixedSamples[i % n],
            "anys": .list((0..<(i % 4)).map { mixedSamples[(i + $0 * 5) % n] }),
            "tags": .list(i % 3 == 0 ? [] : [.string("t\(i % 5)"), .null, .string("é"), .string("e\u{301}")]),
            "counts": .map(Dictionary(uniqueKeysWithValues: (0..<(i % 6)).map { ("c\($0)", .int(Int64($0 * i))) })),
            "labels": .map(i % 2 == 0 ? [:] : ["": .string("empty key"), "none": .null, "name": .string("label \(i)")]),
            "extras": .map(["first": mixedSamples[i % n], "second": mixedSamples[(i + 7) % n], "z": .null]),
            "friends": .map(i % 4 == 0 ? [:] : ["best": .link(ObjectKey(Int64(i % 3))), "lost": .null]),
        ]
    }

    @Test func v2Collections() throws {
        let rows = 24  // rows 22 and 23 repeat the mixed values of the changed rows 5 and 6
        if Self.writing {
            try Self.write("v2-collections.realm") { store in
                let tx = try store.beginWrite()
                try tx.createTable("Target", primaryKey: ColumnSchema("_id", .int))
                try tx.createTable("Collections", primaryKey: ColumnSchema("key", .string))
                try tx.addColumn("Collections", ColumnSchema("any", .mixed))
                try tx.addColumn("Collections", ColumnSchema("anys", .mixed, list: true))
                try tx.addColumn("Collections", ColumnSchema("tags", .string, nullable: true, set: true))
                try tx.addColumn("Collections", ColumnSchema("counts", .int, map: true))
                try tx.addColumn("Collections", ColumnSchema("labels", .string, nullable: true, map: true))
                try tx.addColumn("Collections", ColumnSchema("extras", .mixed, map: true))
                try tx.addColumn("Collections", ColumnSchema("friends", .link, map: true, linkTarget: "Target"))
                for i in 0..<3 { try tx.insert("Target", ["_id": .int(Int64(i))]) }
                for i in 0..<rows { try tx.insert("Collections", Self.collectionsRow(i)) }
                try tx.commit()
                let tx2 = try store.beginWrite()
                try tx2.set("Collections", ObjectKey(5), "counts", .map(["many": .int(1), "more": .int(2)]))
                try tx2.set("Collections", ObjectKey(5), "any", .typedLink(table: 2, key: ObjectKey(0)))
                try tx2.delete("Collections", ObjectKey(6))
                try tx2.commit()
            }
        }
        let dir = TempDir()
        let s = try Self.open("v2-collections.realm", dir)
        #expect(s.formatVersion == 2)
        #expect(s.version == 3)
        let t = try #require(s.catalog.table("Collections"))
        #expect(t.column("any")?.type == .mixed && t.column("any")?.isNullable == true)
        #expect(t.column("anys")?.isList == true && t.column("anys")?.type == .mixed)
        #expect(t.column("tags")?.isSet == true && t.column("tags")?.isList == true)
        #expect(t.columns.filter(\.isMap).map(\.name) == ["counts", "labels", "extras", "friends"])
        #expect(t.column("friends")?.linkTarget == "Target" && t.column("friends")?.isNullable == true)
        #expect(try s.objectCount("Collections") == rows - 1)
        #expect(try s.contains("Collections", ObjectKey(6)) == false)
        for i in 0..<rows where i != 6 {
            var expected = Self.collectionsRow(i)
            if i == 5 {
                expected["counts"] = .map(["many": .int(1), "more": .int(2)])
                expected["any"] = .typedLink(table: 2, key: ObjectKey(0))
            }
            let key = try #require(try s.objectKey("Collections", primaryKey: expected["key"]!))
            #expect(key == ObjectKey(Int64(i)))
            for (name, v) in expected {
                #expect(try s.value("Collections", key, name).bitwiseEquals(v), "row \(i).\(name)")
            }
        }
        // Every mixed tag is present, and null.
        let anys = try (0..<rows).filter { $0 != 6 }.map { try s.value("Collections", ObjectKey(Int64($0)), "any") }
        for v in Self.mixedSamples { #expect(anys.contains { $0.bitwiseEquals(v) }, "\(v)") }
        #expect(try s.changeset().tables["Collections"]?.deleted == [ObjectKey(6)])
        #expect(Verifier().verify(s).isClean)
    }

    /// Format 3: four small commits chained after version 1 (Spec/FORMAT.md §3.4), which the only
    /// valid slot names.
    @Test func v3Chained() throws {
        if Self.writing {
            try Self.write("v3-chained.realm") { store in
                try store.write { tx in
                    try tx.createTable("Person", primaryKey: ColumnSchema("id", .int))
                    try tx.addColumn("Person", ColumnSchema("name", .string, indexed: true))
                    try tx.addColumn("Person", ColumnSchema("age", .int))
                    for i in 0..<20 {
                        try tx.insert("Person", ["id": .int(Int64(i)), "name": .string("p\(i)"), "age": .int(Int64(20 + i))])
                    }
                }
                try store.write { try $0.set("Person", ObjectKey(5), "name", .string("Ada")) }
                try store.write { try $0.delete("Person", ObjectKey(6)) }
                try store.write { try $0.insert("Person", ["id": .int(100), "name": .string("Grace"), "age": .int(85)]) }
            }
        }
        let dir = TempDir()
        let s = try Self.open("v3-chained.realm", dir)
        #expect(s.formatVersion == 3)
        #expect(s.version == 5)
        #expect(try s.ancestorRecords(downTo: 0).map(\.version) == [5, 4, 3, 2, 1])
        #expect(try s.objectCount("Person") == 20)
        #expect(try s.value("Person", ObjectKey(5), "name") == .string("Ada"))
        #expect(try s.contains("Person", ObjectKey(6)) == false)
        #expect(try s.objectKey("Person", primaryKey: .int(100)) == ObjectKey(20))
        #expect(try s.value("Person", ObjectKey(20), "age") == .int(85))
        for i in 0..<20 where i != 5 && i != 6 {
            #expect(try s.value("Person", ObjectKey(Int64(i)), "name") == .string("p\(i)"))
        }
        #expect(Verifier().verify(s).isClean)
        let report = try Inspector().inspect(path: dir.file("v3-chained.realm"))
        #expect(report.slots.compactMap(\.version) == [1] && report.chainedCommits == 4)
    }

    /// Format 4: a table of 38 row groups (of 16), then 39, whose row-group list and primary-key index
    /// directory are paged (Spec/FORMAT.md §5.4, §5.7); the second commit deletes object 40 (its
    /// group shrinks: the first list page and the index pages it touches are rewritten), the
    /// third appends id 600 (the last page and the page tables only).
    @Test func v4Paged() throws {
        if Self.writing {
            try Self.write("v4-paged.realm") { store in
                try store.write { tx in
                    try tx.createTable("Tick", primaryKey: ColumnSchema("id", .int))
                    for i in 0..<600 { try tx.insert("Tick", ["id": .int(Int64(i))]) }
                }
                try store.write { try $0.delete("Tick", ObjectKey(40)) }
                try store.write { try $0.insert("Tick", ["id": .int(600)]) }
            }
        }
        let dir = TempDir()
        let s = try Self.open("v4-paged.realm", dir)
        #expect(s.formatVersion == 4)
        #expect(s.version == 4)
        #expect(try s.objectCount("Tick") == 600)
        let st = try s.tableState("Tick")
        let list = try s.rowGroupList(st)
        #expect(list.entries.count == 39 && list.pages.map(\.count) == [32, 7])
        let index = try s.indexMemo(try #require(st.indexes.values.first))
        #expect(index.pages.count == 2 && index.directory.chunks.reduce(0) { $0 + $1.count } == 600)
        #expect(try s.contains("Tick", ObjectKey(40)) == false)
        #expect(try s.objectKey("Tick", primaryKey: .int(40)) == nil)
        for id in [0, 39, 41, 511, 512, 599] {
            #expect(try s.objectKey("Tick", primaryKey: .int(Int64(id))) == ObjectKey(Int64(id)))
        }
        #expect(try s.objectKey("Tick", primaryKey: .int(600)) == ObjectKey(600))
        #expect(Verifier().verify(s).isClean)
        let kinds = Set(try Inspector().inspect(path: dir.file("v4-paged.realm"), blocks: true).blocks.filter(\.isLive).map(\.kind))
        #expect(kinds.isSuperset(of: ["row-group list", "row-group list page", "index directory", "index directory page"]))
    }

    static let samples: [(ColumnType, StorageValue)] = [
        (.int, .int(-1234567890123)), (.bool, .bool(true)), (.float, .float(1.5)), (.double, .double(-2.25)),
        (.string, .string("grüße")), (.binary, .binary([0xDE, 0xAD, 0xBE, 0xEF])),
        (.timestamp, .timestamp(seconds: 1_700_000_000, nanoseconds: 5)),
        (.objectId, .objectId(Array(100..<112))), (.uuid, .uuid(uuid)), (.decimal128, .decimal128(low: 12345, high: 0x3040_0000_0000_0000)),
        (.link, .link(ObjectKey(0))),
    ]
}

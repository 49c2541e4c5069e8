import Foundation
import Testing

@testable import RealmStorage

/// The golden files under Spec/vectors/ were written by format version 1; every later version of the
/// library must still open them and read the same content. Regenerate (only when adding a new
/// format version's files) with `REALM_WRITE_VECTORS=1 swift test --filter GoldenFileTests`.
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

    static func write(_ name: String, _ build: (Store) throws -> Void) throws {
        let path = vectors + "/" + name
        for p in [path, path + ".lock"] { try? FileManager.default.removeItem(atPath: p) }
        try build(try Store.open(at: path, options: .init(create: true, rowGroupCapacity: 16)))
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

    static let samples: [(ColumnType, StorageValue)] = [
        (.int, .int(-1234567890123)), (.bool, .bool(true)), (.float, .float(1.5)), (.double, .double(-2.25)),
        (.string, .string("grüße")), (.binary, .binary([0xDE, 0xAD, 0xBE, 0xEF])),
        (.timestamp, .timestamp(seconds: 1_700_000_000, nanoseconds: 5)),
        (.objectId, .objectId(Array(100..<112))), (.uuid, .uuid(uuid)), (.decimal128, .decimal128(low: 12345, high: 0x3040_0000_0000_0000)),
        (.link, .link(ObjectKey(0))),
    ]
}

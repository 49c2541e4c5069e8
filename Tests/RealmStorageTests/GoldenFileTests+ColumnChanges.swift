import Foundation
import Testing

@testable import RealmStorage

/// The golden file of format 6: changesets that say, per column, which objects had it set
/// (Spec/FORMAT.md §5.6). Write it (only it) with
/// `REALM_WRITE_VECTORS=1 swift test --filter v6ColumnChanges`.
extension GoldenFileTests {
    @Test func v6ColumnChanges() throws {
        if Self.writing {
            try Self.write("v6-column-changes.realm") { store in
                try store.write { tx in
                    try tx.createTable("Person", primaryKey: ColumnSchema("id", .int))
                    try tx.addColumn("Person", ColumnSchema("name", .string))
                    try tx.addColumn("Person", ColumnSchema("age", .int))
                    try tx.addColumn("Person", ColumnSchema("nick", .string, nullable: true))
                    for (i, name) in ["Ada", "Bob", "Cy"].enumerated() {
                        _ = try tx.insert("Person", ["id": .int(Int64(i)), "name": .string(name), "age": .int(30 + Int64(i))])
                    }
                }
                try store.write { tx in
                    try tx.set("Person", ObjectKey(0), "age", .int(30))  // the value it had
                    try tx.set("Person", ObjectKey(1), "name", .string("Bo"))
                }
                try store.write { tx in
                    try tx.set("Person", ObjectKey(2), "age", .int(40))
                    try tx.set("Person", ObjectKey(2), "nick", .string("C"))
                    try tx.set("Person", ObjectKey(1), "age", .int(41))
                    try tx.delete("Person", ObjectKey(1))
                }
            }
        }
        let dir = TempDir()
        let s = try Self.open("v6-column-changes.realm", dir)
        #expect(s.formatVersion == 6 && s.version == 4)
        let t = try #require(s.catalog.table("Person"))
        let (name, age, nick) = (t.column("name")!.id, t.column("age")!.id, t.column("nick")!.id)
        let versions = try s.history(since: 2)
        #expect(versions.map(\.version) == [3, 4])
        // Version 3: object 0's age set to the value it had, object 1's name changed.
        let v3 = try #require(try versions[0].changeset().tables["Person"])
        #expect(v3.knowsColumnsPerObject && v3.modified == [ObjectKey(0), ObjectKey(1)])
        #expect(v3.modifiedByColumn == [age: [ObjectKey(0)], name: [ObjectKey(1)]])
        #expect(v3.mayHaveSet(age, of: ObjectKey(0)) && !v3.mayHaveSet(name, of: ObjectKey(0)))
        // Version 4: object 1 had its age set, then was deleted: only the deletion remains.
        let v4 = try #require(try versions[1].changeset().tables["Person"])
        #expect(v4.modified == [ObjectKey(2)] && v4.deleted == [ObjectKey(1)])
        #expect(v4.modifiedByColumn == [age: [ObjectKey(2)], nick: [ObjectKey(2)]])
        #expect(v4.modifiedColumns == [age, nick])
        // Versions 2 to 4 merged: object 1's name change goes with its deletion.
        let merged = try #require(try s.changes(since: 2).tables["Person"])
        #expect(merged.modified == [ObjectKey(0), ObjectKey(2)] && merged.deleted == [ObjectKey(1)])
        #expect(merged.mayHaveSet(age, of: ObjectKey(0)) && merged.mayHaveSet(nick, of: ObjectKey(2)))
        #expect(!merged.mayHaveSet(name, of: ObjectKey(1)) && !merged.mayHaveSet(nick, of: ObjectKey(0)))
        #expect(try s.value("Person", ObjectKey(2), "nick") == .string("C"))
        #expect(Verifier().verify(s).isClean)
    }

    /// A file of format 5 keeps writing format-5 changesets, which do not say which object had
    /// which column set: readers assume any modified object may have had any modified column set.
    @Test func aFormat5FilesChangesetsKeepTheirLayout() throws {
        let dir = TempDir()
        let path = try FormatVersionTests.copy("v5-patches.realm", dir)
        let store = try Store.open(at: path)
        try store.write { tx in
            try tx.set("Item", ObjectKey(0), "count", .int(0))
            try tx.set("Item", ObjectKey(1), "name", .string("one"))
        }
        let s = try store.snapshot()
        #expect(s.formatVersion == 5)
        let t = try #require(try s.changeset().tables["Item"])
        let (name, count) = (s.catalog.table("Item")!.column("name")!.id, s.catalog.table("Item")!.column("count")!.id)
        #expect(!t.knowsColumnsPerObject && t.modifiedByColumn.isEmpty && t.modifiedColumns == [name, count])
        #expect(t.mayHaveSet(name, of: ObjectKey(0)) && t.mayHaveSet(count, of: ObjectKey(1)))
        #expect(!t.mayHaveSet(name, of: ObjectKey(2)))
        // Merged with a later format-5 changeset, still not known per object.
        try store.write { try $0.set("Item", ObjectKey(2), "count", .int(6)) }
        let merged = try #require(try store.snapshot().changes(since: s.version - 1).tables["Item"])
        #expect(!merged.knowsColumnsPerObject && merged.mayHaveSet(name, of: ObjectKey(2)))
        #expect(Verifier().verify(try store.snapshot()).isClean)
    }
}

import Foundation
import RealmStorage
import Testing

/// The README's tour, compiled and run (the file lives in a temporary directory, and expressions
/// whose results the README only shows are discarded).
@Suite struct ReadmeTourTests {
    @Test func theTourRunsAsWritten() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file("people.realm"), options: .init(create: true))

        let tx = try store.beginWrite()  // one writer per file, across processes
        try tx.createTable("Person", primaryKey: ColumnSchema("id", .int))
        try tx.addColumn("Person", ColumnSchema("name", .string))
        try tx.addColumn("Person", ColumnSchema("age", .int))
        try tx.addColumn("Person", ColumnSchema("tags", .string, list: true))
        let ada = try tx.insert("Person", ["id": .int(1), "name": .string("Ada"), "age": .int(36)])
        let v2 = try tx.commit()  // durable when it returns

        let frozen = v2.retained(kind: "frozen")  // pins version 2 until released
        let tx2 = try store.beginWrite()
        try tx2.set("Person", ada, "age", .int(37))
        let v3 = try tx2.commit()

        _ = try frozen.value("Person", ada, "age")  // .int(36) — the old version, still readable
        _ = try v3.value("Person", ada, "age")  // .int(37)
        _ = try v3.objectKey("Person", primaryKey: .int(1))  // through the persisted primary-key index
        _ = try v3.count("Person", whereInt: "age", .greater(30))  // typed scan over packed segments, in place
        _ = try v3.changeset().tables["Person"]?.modified  // [ada]: what notifications are computed from
        _ = try v3.changes(since: 1)  // coalesced changes over a range of versions
        _ = store.pinnedVersions()  // who pins what, in every process
        #expect(try frozen.value("Person", ada, "age") == .int(36))
        #expect(try v3.value("Person", ada, "age") == .int(37))
    }
}

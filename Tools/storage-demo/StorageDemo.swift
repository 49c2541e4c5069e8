import Foundation
import RealmStorage

/// A tour of the storage engine: create a file, define a table, commit, keep a frozen snapshot
/// while newer commits land, and print both views.
@main
struct StorageDemo {
    static func main() throws {
        let path = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory() + "realm-demo.realm"
        for p in [path, path + ".lock"] { try? FileManager.default.removeItem(atPath: p) }

        let store = try Store.open(at: path, options: .init(create: true))
        print("Created \(path) at version \(store.currentVersion)")

        // 1. Define a table and insert 100,000 people in one durable transaction.
        let started = Date()
        let tx = try store.beginWrite()
        try tx.createTable("Person", primaryKey: ColumnSchema("id", .int))
        try tx.addColumn("Person", ColumnSchema("name", .string))
        try tx.addColumn("Person", ColumnSchema("age", .int))
        try tx.addColumn("Person", ColumnSchema("score", .double))
        for i in 0..<100_000 {
            try tx.insert(
                "Person", row: [.int(Int64(i)), .string("name-\(i % 10_000)"), .int(Int64(i * 7 % 100)), .double(Double(i % 1000) / 10)])
        }
        let v1 = try tx.commit()
        print(String(format: "Inserted 100,000 objects in %.0f ms → version %llu", Date().timeIntervalSince(started) * 1000, v1.version))

        // 2. Freeze that version: this snapshot keeps seeing it, whatever commits later.
        let frozen = v1.retained(kind: "frozen")

        // 3. Newer commits: a birthday for everyone under 20, and a few deletions.
        let tx2 = try store.beginWrite()
        var birthdays = 0
        for i in 0..<100_000 where i * 7 % 100 < 20 {
            let key = try tx2.objectKey("Person", primaryKey: .int(Int64(i)))!
            if case .int(let age) = try tx2.value("Person", key, "age") {
                try tx2.set("Person", key, "age", .int(age + 1))
                birthdays += 1
            }
        }
        for i in stride(from: 0, to: 100_000, by: 1000) { try tx2.delete("Person", ObjectKey(Int64(i))) }
        let v2 = try tx2.commit()

        // 4. Both views, side by side.
        func describe(_ s: Snapshot) throws -> String {
            let count = try s.objectCount("Person")
            let young = try s.count("Person", whereInt: "age", .less(20))
            let p7 = (try? s.value("Person", ObjectKey(7), "age")).map(\.description) ?? "—"
            let p1000 = try s.contains("Person", ObjectKey(1000)) ? "present" : "deleted"
            return "v\(s.version): \(count) people, \(young) under 20, person #7 is \(p7), person #1000 \(p1000)"
        }
        print("frozen  " + (try describe(frozen)))
        print("latest  " + (try describe(v2)))
        let changes = try v2.changeset().tables["Person"]!
        print(
            "commit v\(v2.version) changed: \(changes.modified.count) modified (\(birthdays) birthdays), \(changes.deleted.count) deleted")
        print("pinned versions: " + store.pinnedVersions().map(\.description).joined(separator: "; "))
        let dead = v2.fileLength - Int(v2.liveBytes)
        print("file: \(v2.fileLength) committed bytes, \(v2.liveBytes) live, \(dead) dead (compaction reclaims them)")
    }
}

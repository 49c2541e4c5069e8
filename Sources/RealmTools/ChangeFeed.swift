import Foundation
import RealmStorage

/// `realm-dump --changes FROM[..TO]`: what each commit did, as JSON Lines in commit order.
///
/// One line per object a commit inserted, modified or deleted, in table order then key order
/// within a version (insertions, then modifications, then deletions), each with the version and
/// its commit time; insertions and modifications carry the object's values right after the commit
/// (in `--objects`' value forms), deletions only the key; a modification in a file of format
/// version 6 or later also lists the properties the commit set (`"set"`, in catalog order, a
/// write of the same value included). A commit that changed the schema gives a `"schema"` line
/// first.
///
/// ```
/// {"version":3,"committed":"2026-11-27T10:00:00.5Z","table":"Person","change":"insert","key":7,"values":{"name":"Ada","age":36}}
/// {"version":4,"committed":"2026-11-27T10:00:01Z","table":"Person","change":"modify","key":7,"set":["age"],"values":{"name":"Ada","age":37}}
/// {"version":5,"committed":"2026-11-27T10:00:02Z","table":"Person","change":"delete","key":7}
/// ```
package enum ChangeFeed {
    /// Writes the changes of `versions` (oldest first, from ``Snapshot/history(since:)``).
    package static func write(_ versions: [Snapshot], _ emit: (String) throws -> Void) throws {
        for v in versions {
            let changes = try v.changeset()
            let head: [(String, JSONValue)] = [
                ("version", .int(Int64(v.version))), ("committed", .string(ValueText.iso8601(v.commitTime))),
            ]
            if changes.schemaChanged { try emit(JSONValue.object(head + [("change", .string("schema"))]).compact + "\n") }
            let text = ValueText(catalog: v.catalog)
            for name in changes.tables.keys.sorted() {
                guard let t = changes.tables[name] else { continue }
                let table = v.catalog.table(name)
                for (change, keys) in [("insert", t.inserted), ("modify", t.modified), ("delete", t.deleted)] {
                    for key in keys.sorted(by: { $0.rawValue < $1.rawValue }) {
                        var line = head + [("table", .string(name)), ("change", .string(change)), ("key", .int(key.rawValue))]
                        if change == "modify", t.knowsColumnsPerObject, let table {
                            let set = table.columns.filter { t.mayHaveSet($0.id, of: key) }
                            line.append(("set", .array(set.map { .string($0.name) })))
                        }
                        if change != "delete", let table {
                            let values = try v.object(name, key)
                            line.append(("values", .object(table.columns.map { ($0.name, text.json(values[$0.name] ?? .null)) })))
                        }
                        try emit(JSONValue.object(line).compact + "\n")
                    }
                }
            }
        }
    }
}

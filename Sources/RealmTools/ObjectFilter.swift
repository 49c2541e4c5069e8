import Foundation
import RealmQuery
import RealmStorage

/// `realm-dump --objects CLASS --where PREDICATE`: the predicate is parsed and bound by RealmQuery
/// (``BoundPredicate/compile(_:arguments:table:catalog:linkingObjects:)``) and evaluated by its
/// `QueryEvaluator` over the snapshot being dumped (every operator of Spec/QUERY.md).
package final class ObjectFilter {
    package let predicate: BoundPredicate
    let table: String
    private var matching: (version: UInt64, keys: Set<ObjectKey>)?

    /// Compiles `text` against `table` of `catalog`.
    /// - Throws: ``ToolFailure`` (usage) with the query error and its caret.
    package init(_ text: String, table: TableSchema, catalog: Catalog) throws {
        do {
            predicate = try BoundPredicate.compile(text, table: table, catalog: catalog)
        } catch {
            throw ToolFailure(.usage, "invalid --where predicate: \(error)")
        }
        self.table = table.name
    }

    /// Whether the object `key` of the filter's table matches in snapshot `s` (the matches are
    /// evaluated once per snapshot).
    package func matches(_ s: Snapshot, _ key: ObjectKey, _ row: [String: StorageValue]) throws -> Bool {
        if matching?.version != s.version {
            matching = (s.version, Set(try QueryEvaluator(s).filter(table, predicate)))
        }
        return matching!.keys.contains(key)
    }
}

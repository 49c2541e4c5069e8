import RealmStorage

/// One key of a sort: a to-one key path and a direction (Spec/QUERY.md §9). `Sendable`.
///
/// ```swift
/// let person = catalog.table("Person")!
/// let byAge = SortKey(path: try .bind("age", table: person, catalog: catalog), ascending: false)
/// let keys = try QueryEvaluator(snapshot).sort("Person", try snapshot.objectKeys("Person"), by: [byAge], limit: 10)
/// ```
package struct SortKey: Sendable, Equatable {
    /// The values sorted by: a to-one path (through to-one links) to a column that is not a link.
    package var path: BoundKeyPath
    /// Ascending puts nil first; descending is the exact reverse (nil last).
    package var ascending: Bool

    /// Sorts by `path`, ascending or descending.
    package init(path: BoundKeyPath, ascending: Bool) {
        self.path = path
        self.ascending = ascending
    }
}

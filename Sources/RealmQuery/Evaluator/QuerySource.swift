import RealmStorage

/// Where a query reads: a ``RealmStorage/Snapshot`` (a committed version) or an open
/// ``RealmStorage/WriteTransaction`` (which sees its own changes).
///
/// Both conform already. The evaluator reads through these five members, except that it reads a
/// `Snapshot`'s segments in place for the comparisons it can scan, and uses its persisted indexes.
/// Conformers are thread-confined as they are themselves (a `Snapshot` is `Sendable`, a
/// `WriteTransaction` is not).
///
/// ```swift
/// let source: any QuerySource = try store.snapshot()
/// let adults = try QueryEvaluator(source).filter("Person", predicate)
/// ```
package protocol QuerySource: AnyObject {
    /// The schema the source reads with.
    var catalog: Catalog { get }
    /// The keys of every object of `table`, ascending.
    /// - Throws: when the table does not exist or the file is damaged.
    func objectKeys(_ table: String) throws -> [ObjectKey]
    /// The number of objects of `table` (without listing their keys).
    /// - Throws: when the table does not exist or the file is damaged.
    func objectCount(_ table: String) throws -> Int
    /// The value of `column` of object `key` of `table`.
    /// - Throws: when the table, column or object does not exist or the file is damaged.
    func value(_ table: String, _ key: ObjectKey, _ column: String) throws -> StorageValue
    /// Whether `table` holds an object with `key`.
    /// - Throws: when the table does not exist or the file is damaged.
    func contains(_ table: String, _ key: ObjectKey) throws -> Bool
}

extension Snapshot: QuerySource {}

extension WriteTransaction: QuerySource {}

import RealmStorage

/// A value given for a `%@` or `%K` placeholder of the query text, already converted from Swift
/// values by the layer above (RealmQuery knows nothing of RealmSwift's types).
///
/// Placeholders take the arguments in order, one each (Spec/QUERY.md §5):
///
/// ```swift
/// try QueryPredicate.parse(
///     "%K == %@ AND age IN %@ AND owner == %@",
///     arguments: [.keyPath("name"), .value(.string("Rex")), .values([.int(1), .int(2)]),
///                 .object(table: "Person", key: ObjectKey(7))])
/// ```
///
/// `Sendable`.
package enum QueryArgument: Sendable, Equatable {
    /// One value for `%@`. A string is also accepted by `%K`, as a key path.
    case value(StorageValue)
    /// Several values for `%@` after `IN` or `BETWEEN`.
    case values([StorageValue])
    /// A key path (`"owner.name"`) for `%K`.
    case keyPath(String)
    /// A managed object for `%@`, compared with links to its table.
    case object(table: String, key: ObjectKey)
}

import RealmQuery
import RealmStorage

extension ResultsQuery {
    /// A collection property of one object — a list, set or map of links — whose objects a query
    /// starts from instead of every object of the table: `person.dogs.filter("age > 3")` keeps
    /// the list's order, and re-reads the list whenever it resolves, so it stays live.
    struct CollectionRef: Sendable, Equatable {
        /// The owning object's table, key, and the collection's column.
        let table: String
        let key: ObjectKey
        let column: String

        /// The linked objects' keys in collection order: a list's or set's order (duplicates
        /// kept), a map's values in the order of their keys' UTF-8 bytes (nil values skipped).
        /// Empty when the owning object is gone.
        func keys(in source: any QuerySource) throws -> [ObjectKey] {
            guard source.catalog.table(table) != nil, try source.contains(table, key) else { return [] }
            switch try source.value(table, key, column) {
            case .list(let items):
                return items.compactMap { if case .link(let k) = $0 { k } else { nil } }
            case .map(let entries):
                return entries.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }.compactMap {
                    if case .link(let k) = $0.value { k } else { nil }
                }
            default:
                return []
            }
        }
    }

    /// A query over the objects of a collection property, in collection order.
    init(collection: CollectionRef) {
        self.init()
        self.collection = collection
    }

    /// The tables whose changes can change the results besides the queried table's reachable
    /// ones: the owning object's table, for results over a collection property.
    var collectionTables: Set<String> { collection.map { [$0.table] } ?? [] }
}

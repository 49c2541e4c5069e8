import Foundation
import RealmQuery
import RealmStorage

/// Map values that are objects (`Dog` or `Dog?`), which `Map`'s queries need. Public only because
/// generic constraints name it.
public protocol _RealmObjectValue {}
extension Object: _RealmObjectValue {}
extension EmbeddedObject: _RealmObjectValue {}
extension Optional: _RealmObjectValue where Wrapped: ObjectBase {}

/// Queries and aggregates over a map's values, as RealmSwift's `Map` offers them: the values are
/// taken in the order of their keys (UTF-8 bytes), nil values skipped.
///
/// ```swift
/// let goodDogs = owner.dogsByName.filter("age > 2")   // Results<Dog?>, live
/// owner.scores.max()                                   // a Map<String, Int>'s largest value
/// ```
extension Map where Value: _RealmObjectValue {
    /// The values matching a query in the NSPredicate dialect, in key order. Stops on a malformed
    /// query (`filter(checking:_:)` throws) or an unmanaged map.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Value> {
        valuesCollection.results("filter(_:_:)").filter(predicateFormat, arguments: args)
    }

    /// The throwing form of `filter(_:_:)`.
    /// - Throws: ``Realm/Error`` `.invalidQuery` or `.invalidValue`.
    public func filter(checking predicateFormat: String, _ args: [Any?] = []) throws -> Results<Value> {
        try valuesCollection.results("filter(checking:_:)").filter(checking: predicateFormat, args)
    }

    /// The values matching a type-safe query, in key order.
    public func `where`(_ isIncluded: (Query<Value>) -> Query<Bool>) -> Results<Value> {
        valuesCollection.results("where(_:)").where(isIncluded)
    }

    /// The values sorted by one property (or dotted path), stably from key order.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Value> {
        valuesCollection.results("sorted(byKeyPath:ascending:)").sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The values sorted by several properties, the first deciding first.
    public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Value> where S.Iterator.Element == SortDescriptor {
        valuesCollection.results("sorted(by:)").sorted(by: sortDescriptors)
    }

    /// One value for each distinct combination of values of `keyPaths` (the first in key order).
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Value> where S.Iterator.Element == String {
        valuesCollection.results("distinct(by:)").distinct(by: keyPaths)
    }

    /// The smallest value of a property of the values (nil when there are none).
    public func min<V: _RealmValue & _HasPersistedType>(ofProperty property: String) -> V? where V.PersistedType: MinMaxType {
        valuesCollection.aggregate(.min, property)
    }
    /// The largest value of a property of the values (nil when there are none).
    public func max<V: _RealmValue & _HasPersistedType>(ofProperty property: String) -> V? where V.PersistedType: MinMaxType {
        valuesCollection.aggregate(.max, property)
    }
    /// The sum of a property of the values (0 when there are none).
    public func sum<V: _RealmValue & _HasPersistedType>(ofProperty property: String) -> V where V.PersistedType: AddableType {
        valuesCollection.aggregate(.sum, property) ?? V._rlmDefaultValue()
    }
    /// The mean of a property of the values (nil when there are none).
    public func average<V: _RealmValue & _HasPersistedType>(ofProperty property: String) -> V? where V.PersistedType: AddableType {
        valuesCollection.aggregate(.avg, property)
    }
}

extension Map where Value: _HasPersistedType, Value.PersistedType: MinMaxType {
    /// The smallest value, or nil when there are none (nils are skipped).
    public func min() -> Value? { valuesCollection.valueAggregate(.min) }
    /// The largest value, or nil when there are none (nils are skipped).
    public func max() -> Value? { valuesCollection.valueAggregate(.max) }
}

extension Map where Value: _HasPersistedType, Value.PersistedType: AddableType {
    /// The sum of the values: 0 when there are none (nils are skipped).
    public func sum() -> Value { valuesCollection.valueSum() }
    /// The mean of the values, or nil when there are none (nils are skipped).
    public func average<T: _RealmValue & _HasPersistedType>() -> T? where T.PersistedType: AddableType {
        valuesCollection.valueAggregate(.avg)
    }
}

extension Map where Value: _HasPersistedType, Value.PersistedType: SortableType {
    /// The values sorted (stably from key order; nil first ascending), as live results.
    public func sorted(ascending: Bool = true) -> Results<Value> {
        do { return try ValueResults<Value>.results(.sort(ascending: ascending)) { .over(self, steps: $0) } } catch {
            fatalError("\(error)")
        }
    }
}

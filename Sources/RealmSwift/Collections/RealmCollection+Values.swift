import Foundation
import RealmQuery
import RealmStorage

/// Operations on collections of values (`List<Int>`, `MutableSet<Date?>`, …), with the query
/// engine's rules: nils are skipped by aggregates; the sum of nothing is 0; the minimum, maximum
/// and average of nothing are nil; strings sort by UTF-8 bytes, nil first ascending.
extension RealmCollection where Element: MinMaxType {
    /// The smallest value, or nil when there are no values. Generic code constrained on
    /// `Element: MinMaxType` reaches it: `func biggest<C: RealmCollection>(_ c: C) -> C.Element?
    /// where C.Element: MinMaxType { c.max() }`.
    public func min() -> Element? { _rlmCollection.valueAggregate(.min) }

    /// The largest value, or nil when there are no values.
    public func max() -> Element? { _rlmCollection.valueAggregate(.max) }
}

extension RealmCollection where Element: _QueryOptional, Element.Wrapped: MinMaxType {
    /// The smallest value, or nil when there are no values (nils are skipped). The result is
    /// doubly optional, as in RealmSwift.
    public func min() -> Element? { _rlmCollection.valueAggregate(.min) }

    /// The largest value, or nil when there are no values (nils are skipped).
    public func max() -> Element? { _rlmCollection.valueAggregate(.max) }
}

extension RealmCollection where Element: AddableType {
    /// The sum of the values: 0 when there are none. Stops when a sum of ints leaves `Int64`.
    public func sum() -> Element { _rlmCollection.valueSum() }

    /// The mean of the values, or nil when there are none: `let mean: Double? = scores.average()`
    /// (a `Decimal128` for decimals).
    public func average<T: _RealmValue & _HasPersistedType>() -> T? where T.PersistedType: AddableType {
        _rlmCollection.valueAggregate(.avg)
    }
}

extension RealmCollection where Element: PersistableEnum, Element.RawValue: AddableType {
    /// The sum of the enum values' raw values, as the enum's persisted type sums them.
    public func sum() -> Element { _rlmCollection.valueSum() }

    /// The mean of the raw values, or nil when there are none.
    public func average<T: _RealmValue & _HasPersistedType>() -> T? where T.PersistedType: AddableType {
        _rlmCollection.valueAggregate(.avg)
    }
}

extension RealmCollection where Element: _QueryOptional, Element.Wrapped: AddableType {
    /// The sum of the values: 0 when there are none (nils are skipped).
    public func sum() -> Element { _rlmCollection.valueSum() }

    /// The mean of the values, or nil when there are none (nils are skipped).
    public func average<T: _RealmValue & _HasPersistedType>() -> T? where T.PersistedType: AddableType {
        _rlmCollection.valueAggregate(.avg)
    }
}

extension RealmCollection where Element: _HasPersistedType, Element.PersistedType: SortableType {
    /// The values sorted (``sorted(ascending:)``) and grouped into sections by the key `block`
    /// returns for each, as in RealmSwift; live, frozen and observed like sections of objects.
    ///
    /// ```swift
    /// let byInitial = person.nicknames.sectioned(by: { String($0.prefix(1)) })
    /// for section in byInitial { print(section.key, Array(section)) }
    /// ```
    ///
    /// When the sort order of the values does not follow their keys, values with the same key
    /// still go to one section (the section of the first of them), in sorted order.
    public func sectioned<Key: _Persistable & Hashable>(by block: @escaping (Element) -> Key, ascending: Bool = true)
        -> SectionedResults<Key, Element>
    {
        SectionedResults(sorted(ascending: ascending), sectionKey: block)
    }

    /// The values sorted (stably; nil first ascending, strings by UTF-8 bytes), as live results.
    public func sorted(ascending: Bool = true) -> Results<Element> {
        do { return try valueResults(.sort(ascending: ascending)) } catch { fatalError("\(error)") }
    }

    /// The distinct values, each at its first occurrence, in collection order, as live results.
    public func distinct() -> Results<Element> {
        do { return try valueResults(.distinct) } catch { fatalError("\(error)") }
    }
}

extension CollectionElements {
    /// The column type the elements are stored as.
    static var columnType: ColumnType { Element._rlmInfo.type.columnType }

    /// An aggregate of the values as `T`; stops with the error when they cannot be aggregated so.
    func valueAggregate<T: _RealmValue>(_ function: AggregateFunction) -> T? {
        do {
            guard let v = try StoredValues.aggregate(stored(), function, type: Self.columnType) else { return nil }
            if function == .min || function == .max { return T._rlmDecode(_RLMRaw(v), realm) }
            return try T._rlmCoerce(KeyValueCoding.scalar(v) as Any, realm)
        } catch {
            fatalError("\(function) of this \(kind) of \(Element.self): \(error)")
        }
    }

    /// The sum of the values (0 of the element type when there are none).
    func valueSum() -> Element {
        if let sum: Element = valueAggregate(.sum) { return sum }
        do { return try Element._rlmCoerce(0, realm) } catch { fatalError("\(error)") }
    }
}

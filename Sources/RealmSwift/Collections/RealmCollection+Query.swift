import Foundation
import RealmQuery
import RealmStorage

/// Queries over the objects of a list, set or linking objects, returning live ``Results`` that
/// start from the collection's current objects each time they resolve (so they stay live) and
/// keep its order: `filter` keeps the list's order (a list holding an object twice keeps both),
/// `sorted` sorts stably from it, `distinct` keeps the first of each group in it.
extension RealmCollection where Element: ObjectBase {
    // MARK: Filtering

    /// The objects matching a type-safe query, in collection order: `dogs.where { $0.age > 2 }`.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        _rlmCollection.results("where(_:)").where(isIncluded)
    }

    // MARK: Sorting and distinct

    /// The objects sorted by a Swift key path (optional properties too; nil first ascending).
    public func sorted<V: _HasPersistedType>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element>
    where V.PersistedType: SortableType {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// One object for each distinct combination of values of Swift key paths.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Iterator.Element == PartialKeyPath<Element> {
        distinct(by: KeyPathNames.dotted(Array(keyPaths)))
    }

    /// The throwing form of ``sorted(byKeyPath:ascending:)``, for key paths given at run time.
    /// - Throws: ``Realm/Error`` `.invalidQuery`.
    public func sorted(checkingKeyPath keyPath: String, ascending: Bool = true) throws -> Results<Element> {
        try _rlmCollection.results("sorted(checkingKeyPath:ascending:)").sorted(checkingKeyPath: keyPath, ascending: ascending)
    }

    /// The throwing form of ``sorted(by:)``.
    /// - Throws: ``Realm/Error`` `.invalidQuery`.
    public func sorted<S: Sequence>(checking sortDescriptors: S) throws -> Results<Element> where S.Iterator.Element == SortDescriptor {
        try _rlmCollection.results("sorted(checking:)").sorted(checking: sortDescriptors)
    }

    /// The throwing form of `distinct(by:)`.
    /// - Throws: ``Realm/Error`` `.invalidQuery`.
    public func distinct<S: Sequence>(checking keyPaths: S) throws -> Results<Element> where S.Iterator.Element == String {
        try _rlmCollection.results("distinct(checking:)").distinct(checking: keyPaths)
    }

    // MARK: Finding

    /// The index of the first object matching a type-safe query, or nil.
    public func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int? {
        _rlmCollection.results("index(matching:)").index(matching: isIncluded)
    }

    // MARK: Aggregates

    /// The throwing form of ``min(ofProperty:)``, for property names given at run time.
    /// - Throws: ``Realm/Error`` `.invalidQuery` or `.invalidValue`.
    public func min<V: _RealmValue & _HasPersistedType>(checkingProperty property: String) throws -> V? where V.PersistedType: MinMaxType {
        try _rlmCollection.results("min(checkingProperty:)").min(checkingProperty: property)
    }

    /// The throwing form of ``max(ofProperty:)``.
    /// - Throws: ``Realm/Error`` `.invalidQuery` or `.invalidValue`.
    public func max<V: _RealmValue & _HasPersistedType>(checkingProperty property: String) throws -> V? where V.PersistedType: MinMaxType {
        try _rlmCollection.results("max(checkingProperty:)").max(checkingProperty: property)
    }

    /// The throwing form of ``sum(ofProperty:)``.
    /// - Throws: ``Realm/Error`` `.invalidQuery` or `.invalidValue`.
    public func sum<V: _RealmValue & _HasPersistedType>(checkingProperty property: String) throws -> V where V.PersistedType: AddableType {
        try _rlmCollection.results("sum(checkingProperty:)").sum(checkingProperty: property)
    }

    /// The throwing form of ``average(ofProperty:)``.
    /// - Throws: ``Realm/Error`` `.invalidQuery` or `.invalidValue`.
    public func average<V: _RealmValue & _HasPersistedType>(checkingProperty property: String) throws -> V?
    where V.PersistedType: AddableType {
        try _rlmCollection.results("average(checkingProperty:)").average(checkingProperty: property)
    }

    /// The smallest value of a property given as a key path.
    public func min<V: _RealmValue & _HasPersistedType>(of keyPath: KeyPath<Element, V>) -> V? where V.PersistedType: MinMaxType {
        min(ofProperty: Results<Element>.path(keyPath))
    }
    /// The largest value of a property given as a key path.
    public func max<V: _RealmValue & _HasPersistedType>(of keyPath: KeyPath<Element, V>) -> V? where V.PersistedType: MinMaxType {
        max(ofProperty: Results<Element>.path(keyPath))
    }
    /// The sum of a property given as a key path.
    public func sum<V: _RealmValue & _HasPersistedType>(of keyPath: KeyPath<Element, V>) -> V where V.PersistedType: AddableType {
        sum(ofProperty: Results<Element>.path(keyPath))
    }
    /// The mean of a property given as a key path.
    public func average<V: _RealmValue & _HasPersistedType>(of keyPath: KeyPath<Element, V>) -> V? where V.PersistedType: AddableType {
        average(ofProperty: Results<Element>.path(keyPath))
    }
}

/// What every ``RealmCollection`` answers, of objects or of values, as in RealmSwift, so code
/// generic over collections works with both:
///
/// ```swift
/// func matching<C: RealmCollection>(_ c: C, _ query: String) -> Int { c.filter(query).count }
/// matching(person.dogs, "age > 1")
/// matching(person.scores, "self > 1")  // a List<Int>
/// ```
///
/// On a collection of values the key path and property name are `self`; on an unmanaged
/// collection of objects, queries stop with a message (as in RealmSwift).
extension RealmCollection {
    // MARK: Filtering

    /// The elements matching a query in the NSPredicate dialect (Spec/QUERY.md), in collection
    /// order, as live results: properties of objects, or `self` for values. Stops with the error
    /// on a malformed query — use `filter(checking:_:)` for text from users — or on an unmanaged
    /// collection of objects.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        do { return try filter(checking: predicateFormat, args) } catch { fatalError("\(error)") }
    }

    /// The throwing form of `filter(_:_:)`.
    /// - Throws: ``Realm/Error`` `.invalidQuery` (with the position in the text) or `.invalidValue`.
    public func filter(checking predicateFormat: String, _ args: [Any?] = []) throws -> Results<Element> {
        try applying(.filter(.text(predicateFormat, arguments: try QueryArguments.convert(args))), "filter(checking:_:)")
    }

    /// The index of the first element matching a query, or nil. Stops on a malformed query.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        guard CollectionElements<Element>.holdsObjects else {
            return ValueResults<Element>.firstIndex(_rlmCollection.stored(), matching: predicateFormat, args)
        }
        let results = _rlmCollection.results("index(matching:_:)")
        guard let first = results.filter(predicateFormat, arguments: args).base.keys.first else { return nil }
        return results.base.keys.firstIndex(of: first)
    }

    // MARK: Sorting and distinct

    /// The elements sorted by one property (or dotted path through links; `self` for values),
    /// stably, as live results.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// The elements sorted by several properties, the first deciding first (stable); a collection
    /// of values takes one descriptor, for `self`.
    public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Iterator.Element == SortDescriptor {
        do { return try applying(.sort(Array(sortDescriptors)), "sorted(by:)") } catch { fatalError("\(error)") }
    }

    /// One element for each distinct combination of values of `keyPaths` (the first in order);
    /// for values, the key path `self`.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Iterator.Element == String {
        do { return try applying(.distinct(Array(keyPaths)), "distinct(by:)") } catch { fatalError("\(error)") }
    }

    /// These elements after a query step, as live results: the objects' (`name`, the operation,
    /// says what an unmanaged collection cannot do), or the values' (key paths `self`).
    func applying(_ step: ResultsQuery.Step, _ name: String) throws -> Results<Element> {
        guard CollectionElements<Element>.holdsObjects else { return try valueResults(after: step) }
        return try _rlmCollection.results(name).adding(step)
    }

    // MARK: Aggregates

    /// The smallest value of a property (`self` for values); nil when there are no values (nils
    /// are skipped).
    public func min<V: _RealmValue & _HasPersistedType>(ofProperty property: String) -> V? where V.PersistedType: MinMaxType {
        aggregate(.min, property)
    }

    /// The largest value of a property (`self` for values); nil when there are no values.
    public func max<V: _RealmValue & _HasPersistedType>(ofProperty property: String) -> V? where V.PersistedType: MinMaxType {
        aggregate(.max, property)
    }

    /// The sum of a property (`self` for values); 0 when there are no values (nils are skipped).
    public func sum<V: _RealmValue & _HasPersistedType>(ofProperty property: String) -> V where V.PersistedType: AddableType {
        aggregate(.sum, property) ?? V._rlmDefaultValue()
    }

    /// The mean of a property (`self` for values); nil when there are no values.
    public func average<V: _RealmValue & _HasPersistedType>(ofProperty property: String) -> V? where V.PersistedType: AddableType {
        aggregate(.avg, property)
    }

    /// An aggregate of `property` of the objects, or of the values (`self`).
    func aggregate<V: _RealmValue>(_ function: AggregateFunction, _ property: String) -> V? {
        guard CollectionElements<Element>.holdsObjects else {
            Self.requireSelf(property, "\(function)(ofProperty:)")
            return _rlmCollection.valueAggregate(function)
        }
        return _rlmCollection.aggregate(function, property)
    }

    // MARK: Finding

    /// The index of the first element equal to `object`, or nil.
    public func index(of object: Element) -> Int? { firstIndex { $0 == object } }

    /// The elements at `indexes` (stops when one is out of bounds).
    public func objects(at indexes: IndexSet) -> [Element] {
        indexes.map { i in
            precondition(i >= 0 && i < count, "Index \(i) is out of bounds (count \(count)).")
            return self[i]
        }
    }
}

extension CollectionElements {
    /// An aggregate of `property` over the objects: through the evaluator when managed, else over
    /// the unmanaged objects' values by key-value coding. Stops with the error for an unknown
    /// property or values that cannot be aggregated so.
    func aggregate<V: _RealmValue>(_ function: AggregateFunction, _ property: String) -> V? {
        guard Self.holdsObjects else { fatalError("\(function) of a property needs a collection of objects; this \(kind) holds values.") }
        if let results = makeResults() {
            do { return results.decodeAggregate(try results.aggregate(function, property)) } catch { fatalError("\(error)") }
        }
        do {
            let values = try elements().flatMap { try KeyValueCoding.leaves($0, property) }.map(KeyValueCoding.stored)
            let type = values.first { !$0.isNull }.map(KeyValueCoding.columnType) ?? V._rlmInfo.type.columnType
            guard let v = try StoredValues.aggregate(values, function, type: type)?.truncatedForIntegers(V._rlmInfo) else { return nil }
            return try V._rlmCoerce(KeyValueCoding.scalar(v) as Any, nil)
        } catch {
            fatalError("\(error)")
        }
    }
}

extension StorageValue {
    /// An aggregate read as an integer type: an average truncates toward zero, as RealmSwift's
    /// `average(of:)` does for an int property.
    func truncatedForIntegers(_ info: _RLMTypeInfo) -> StorageValue {
        guard info.type == .int, case .double(let d) = self, d.isFinite, abs(d) < 9.2e18 else { return self }
        return .int(Int64(d.rounded(.towardZero)))
    }
}

import Foundation
import RealmQuery
import RealmStorage

extension Results {
    /// These results with one more step, checked against the schema now (earlier steps were
    /// checked when they were added).
    func adding(_ step: ResultsQuery.Step) throws -> Results {
        if values != nil { return try valueResults(after: step) }
        try ResultsQuery(steps: [step]).validate(base.info.className, base.realm)
        return Results(realm: base.realm, info: base.info, query: base.query.adding(step))
    }

    // MARK: Filtering

    /// The objects matching a query in the NSPredicate dialect (`%@` for values, `%K` for key
    /// paths; Spec/QUERY.md). Stops with the error message on a malformed query — use
    /// ``filter(checking:_:)`` for text from users.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results {
        do { return try filter(checking: predicateFormat, args) } catch { fatalError("\(error)") }
    }

    /// The throwing form of ``filter(_:_:)``.
    /// - Throws: ``Realm/Error`` `.invalidQuery` (with the position in the text) or `.invalidValue`.
    public func filter(checking predicateFormat: String, _ args: [Any?] = []) throws -> Results {
        let arguments = try QueryArguments.convert(args)
        return try adding(.filter(.text(predicateFormat, arguments: arguments)))
    }

    /// The objects matching a type-safe query: `where { $0.age > 18 && $0.name.starts(with: "A") }`.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results {
        let predicate = (values != nil ? Query<Element>.valueRoot() : Query<Element>.root()).predicate(of: isIncluded)
        do { return try adding(.filter(.tree(predicate))) } catch { fatalError("\(error)") }
    }

    func filter(_ text: String, arguments: [Any?]) -> Results {
        do { return try filter(checking: text, arguments) } catch { fatalError("\(error)") }
    }

    // MARK: Sorting and distinct

    /// Sorted by one property (or dotted path through links).
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// Sorted by several properties, the first deciding first (stable).
    public func sorted<S: Sequence>(by keyPaths: S) -> Results where S.Iterator.Element == SortDescriptor {
        do { return try sorted(checking: keyPaths) } catch { fatalError("\(error)") }
    }

    /// Sorted by a Swift key path.
    public func sorted<V: Comparable>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results where Element: ObjectBase {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// One object for each distinct combination of values of `keyPaths` (the first, in order).
    public func distinct<S: Sequence>(by keyPaths: S) -> Results where S.Iterator.Element == String {
        do { return try distinct(checking: keyPaths) } catch { fatalError("\(error)") }
    }

    /// The throwing form of ``sorted(byKeyPath:ascending:)``, for key paths given at run time.
    /// - Throws: ``Realm/Error`` `.invalidQuery` naming an unknown property or one that cannot be
    ///   sorted on.
    public func sorted(checkingKeyPath keyPath: String, ascending: Bool = true) throws -> Results {
        try sorted(checking: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// The throwing form of ``sorted(by:)``.
    /// - Throws: ``Realm/Error`` `.invalidQuery`.
    public func sorted<S: Sequence>(checking sortDescriptors: S) throws -> Results where S.Iterator.Element == SortDescriptor {
        try adding(.sort(Array(sortDescriptors)))
    }

    /// The throwing form of ``distinct(by:)``.
    /// - Throws: ``Realm/Error`` `.invalidQuery`.
    public func distinct<S: Sequence>(checking keyPaths: S) throws -> Results where S.Iterator.Element == String {
        try adding(.distinct(Array(keyPaths)))
    }

    // MARK: Finding

    /// The index of the first object matching a query, or nil.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        if let values { return ValueResults<Element>.firstIndex(values.storedValues, matching: predicateFormat, args) }
        let matching = filter(predicateFormat, arguments: args)
        guard let first = matching.base.keys.first else { return nil }
        return base.keys.firstIndex(of: first)
    }

    /// The index of the first object matching a type-safe query, or nil.
    public func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int? {
        if let values {
            // Results of values: the query is over `self`, each value (as `where` builds it).
            return ValueResults<Element>.firstIndex(
                values.storedValues, matching: .tree(Query<Element>.valueRoot().predicate(of: isIncluded)))
        }
        let matching = Set(self.where(isIncluded).base.keys)
        return base.keys.firstIndex { matching.contains($0) }
    }

    /// The objects at `indexes`.
    public func objects(at indexes: IndexSet) -> [Element] { indexes.map { self[$0] } }

    // MARK: Aggregates

    func aggregate(_ function: AggregateFunction, _ property: String) throws -> StorageValue? {
        if let values {
            Self.requireSelf(property, "\(function)(ofProperty:)")
            do {
                return try StoredValues.aggregate(values.storedValues, function, type: Element._rlmInfo.type.columnType)
            } catch {
                throw Realm.Error.query(error)
            }
        }
        let realm = base.realm
        let catalog = realm.catalog
        guard let schema = catalog.table(base.info.className) else { return nil }
        let path = try ResultsQuery.bindPath(property, schema, catalog, toMany: false)
        let source = realm.querySource
        do {
            // Every object of the class: reduced from the column segments, no keys collected.
            if base.query.isEmpty && base.generation == realm.generation {
                return try QueryEvaluator(source).aggregate(base.info.className, function, path)
            }
            return try QueryEvaluator(source).aggregate(base.info.className, base.keys, function, path)
        } catch {
            throw Realm.Error.query(error)
        }
    }

    func decodeAggregate<V: _RealmValue>(_ v: StorageValue?) -> V? {
        do { return try checkedDecodeAggregate(v) } catch { fatalError("\(error)") }
    }

    /// The aggregate as a `V`, or `.invalidValue` when it cannot be one (a sum asked as a string).
    func checkedDecodeAggregate<V: _RealmValue>(_ v: StorageValue?) throws -> V? {
        guard let v = v?.truncatedForIntegers(V._rlmInfo), !v.isNull else { return nil }
        do {
            if values != nil { return try V._rlmCoerce(KeyValueCoding.scalar(v) as Any, realm) }
            return try V._rlmCoerce(DynamicValues.swiftValue(v, target: nil, realm: base.realm) as Any, base.realm)
        } catch {
            throw Realm.Error(.invalidValue, "The aggregate \(v) cannot be read as \(V.self): \(error)")
        }
    }

    /// The throwing form of ``min(ofProperty:)``, for property names given at run time.
    /// - Throws: ``Realm/Error`` `.invalidQuery` (unknown property, or one that has no minimum) or
    ///   `.invalidValue` (the result is not a `V`).
    public func min<V: _RealmValue & _HasPersistedType>(checkingProperty property: String) throws -> V? where V.PersistedType: MinMaxType {
        try checkedDecodeAggregate(try aggregate(.min, property))
    }

    /// The throwing form of ``max(ofProperty:)``.
    /// - Throws: ``Realm/Error`` `.invalidQuery` or `.invalidValue`.
    public func max<V: _RealmValue & _HasPersistedType>(checkingProperty property: String) throws -> V? where V.PersistedType: MinMaxType {
        try checkedDecodeAggregate(try aggregate(.max, property))
    }

    /// The throwing form of ``sum(ofProperty:)``.
    /// - Throws: ``Realm/Error`` `.invalidQuery` or `.invalidValue`.
    public func sum<V: _RealmValue & _HasPersistedType>(checkingProperty property: String) throws -> V where V.PersistedType: AddableType {
        try checkedDecodeAggregate(try aggregate(.sum, property)) ?? V._rlmDefaultValue()
    }

    /// The throwing form of ``average(ofProperty:)``.
    /// - Throws: ``Realm/Error`` `.invalidQuery` or `.invalidValue`.
    public func average<V: _RealmValue & _HasPersistedType>(checkingProperty property: String) throws -> V?
    where V.PersistedType: AddableType {
        try checkedDecodeAggregate(try aggregate(.avg, property))
    }

    /// The smallest value of a property (nil when there are no values).
    public func min<V: _RealmValue & _HasPersistedType>(ofProperty property: String) -> V? where V.PersistedType: MinMaxType {
        do { return decodeAggregate(try aggregate(.min, property)) } catch { fatalError("\(error)") }
    }

    /// The largest value of a property (nil when there are no values).
    public func max<V: _RealmValue & _HasPersistedType>(ofProperty property: String) -> V? where V.PersistedType: MinMaxType {
        do { return decodeAggregate(try aggregate(.max, property)) } catch { fatalError("\(error)") }
    }

    /// The sum of a property (0 when there are no values).
    public func sum<V: _RealmValue & _HasPersistedType>(ofProperty property: String) -> V where V.PersistedType: AddableType {
        do { return decodeAggregate(try aggregate(.sum, property)) ?? V._rlmDefaultValue() } catch { fatalError("\(error)") }
    }

    /// The mean of a property (nil when there are no values).
    public func average<V: _RealmValue & _HasPersistedType>(ofProperty property: String) -> V? where V.PersistedType: AddableType {
        do { return decodeAggregate(try aggregate(.avg, property)) } catch { fatalError("\(error)") }
    }

    /// The smallest value of a property given as a key path.
    public func min<V: _RealmValue & _HasPersistedType>(of keyPath: KeyPath<Element, V>) -> V?
    where Element: ObjectBase, V.PersistedType: MinMaxType {
        min(ofProperty: Self.path(keyPath))
    }
    /// The largest value of a property given as a key path.
    public func max<V: _RealmValue & _HasPersistedType>(of keyPath: KeyPath<Element, V>) -> V?
    where Element: ObjectBase, V.PersistedType: MinMaxType {
        max(ofProperty: Self.path(keyPath))
    }
    /// The sum of a property given as a key path.
    public func sum<V: _RealmValue & _HasPersistedType>(of keyPath: KeyPath<Element, V>) -> V
    where Element: ObjectBase, V.PersistedType: AddableType {
        sum(ofProperty: Self.path(keyPath))
    }
    /// The mean of a property given as a key path.
    public func average<V: _RealmValue & _HasPersistedType>(of keyPath: KeyPath<Element, V>) -> V?
    where Element: ObjectBase, V.PersistedType: AddableType {
        average(ofProperty: Self.path(keyPath))
    }

    static func path<V>(_ keyPath: KeyPath<Element, V>) -> String where Element: ObjectBase {
        do { return try KeyPathNames.path(keyPath) } catch { fatalError("\(error)") }
    }
}

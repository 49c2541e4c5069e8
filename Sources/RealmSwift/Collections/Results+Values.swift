import Foundation
import RealmQuery
import RealmStorage

/// The state behind results of values (`scores.filter("self > 3")`, `scores.sorted(ascending:
/// false)`, `tags.distinct()`): a source collection of primitives and the steps applied to its
/// values in order, re-evaluated when the Realm changed, like results of objects (Spec/QUERY.md:
/// `self` names the value; nils sort first; distinct keeps the first of each group).
///
/// Thread-confined like the collection it reads; the cache is locked so frozen results can be
/// read from any thread.
final class ValueResults<Element: RealmCollectionValue>: @unchecked Sendable {
    enum Step {
        case filter(String, [QueryArgument])
        case sort(ascending: Bool)
        case distinct
    }

    /// The Realm managing the source collection; nil when it is unmanaged.
    let realm: Realm?
    /// The Realm's invalidate() generation when these results were made.
    let generation: Int
    let steps: [Step]
    private let stored: () -> [StorageValue]
    private let source: () -> [Element]
    private let frozen: () -> ValueResults
    private let thawed: () -> ValueResults?
    /// Whether the source can no longer be read (its object deleted, its Realm invalidated).
    private let sourceInvalidated: () -> Bool
    private let lock = NSLock()
    private var cache: (stamp: Int, elements: [Element], stored: [StorageValue])?

    /// Results over the values `c` reads after `steps`; `frozen` and `thawed` make the same results
    /// over the frozen or live source, `invalidated` tells whether the source can still be read.
    init(
        _ c: _RLMCollection<Element>, steps: [Step], frozen: @escaping () -> ValueResults, thawed: @escaping () -> ValueResults?,
        invalidated: @escaping () -> Bool
    ) {
        realm = c.realm
        generation = c.realm?.generation ?? 0
        self.steps = steps
        stored = c.stored
        source = c.elements
        self.frozen = frozen
        self.thawed = thawed
        sourceInvalidated = invalidated
    }

    /// Results over the values of `collection` after `steps`.
    convenience init<C: RealmCollection>(_ collection: C, steps: [Step]) where C.Element == Element {
        self.init(
            collection._rlmCollection, steps: steps, frozen: { ValueResults(collection.freeze(), steps: steps) },
            thawed: { collection.thaw().map { ValueResults($0, steps: steps) } }, invalidated: { collection.isInvalidated })
    }

    /// Results over the values of `map` (in key order) after `steps`.
    convenience init<Key>(_ map: Map<Key, Element>, steps: [Step]) {
        self.init(
            map.valuesCollection, steps: steps, frozen: { ValueResults(map.freeze(), steps: steps) },
            thawed: { map.thaw().map { ValueResults($0, steps: steps) } }, invalidated: { map.isInvalidated })
    }

    /// The column type and nullability a query binds `self` to.
    static var valueType: (type: ColumnType, isNullable: Bool) {
        let info = Element._rlmInfo
        return (info.type.columnType, info.isOptional || info.type.columnType == .mixed)
    }

    /// Checks a filter's text and arguments now, as results of objects do.
    /// - Throws: ``Realm/Error`` `.invalidQuery` with the position in the text.
    static func validate(_ step: Step) throws {
        guard case .filter(let text, let arguments) = step else { return }
        let (type, nullable) = valueType
        do { _ = try StoredValues.matchingIndices([], type: type, isNullable: nullable, predicate: text, arguments: arguments) } catch {
            throw Realm.Error(.invalidQuery, "\(error)")
        }
    }

    /// Invalidated results (their Realm invalidated, or the object holding the collection deleted)
    /// read as empty.
    var isInvalidated: Bool { (realm.map { $0.generation != generation } ?? false) || sourceInvalidated() }
    var isFrozen: Bool { realm?.isFrozen ?? false }
    func freeze() -> ValueResults { isFrozen ? self : frozen() }
    func thaw() -> ValueResults? { isFrozen ? thawed() : self }

    /// The values after every step, in order.
    var elements: [Element] { resolved().elements }
    /// Their stored forms.
    var storedValues: [StorageValue] { resolved().stored }

    private func resolved() -> (elements: [Element], stored: [StorageValue]) {
        if let realm {
            realm.checkThread()
            if realm.generation != generation || sourceInvalidated() { return ([], []) }
        }
        lock.lock()
        defer { lock.unlock() }
        if let c = cache, let realm, c.stamp == realm.stamp, realm.snapshot != nil { return (c.elements, c.stored) }
        let values = stored()
        let all = source()
        var positions = Array(values.indices)
        let (type, nullable) = Self.valueType
        for step in steps {
            let current = positions.map { values[$0] }
            switch step {
            case .filter(let text, let arguments):
                do {
                    positions = try StoredValues.matchingIndices(
                        current, type: type, isNullable: nullable, predicate: text, arguments: arguments
                    )
                    .map { positions[$0] }
                } catch {
                    fatalError("\(error)")
                }
            case .sort(let ascending): positions = StoredValues.sortedIndices(current, ascending: ascending).map { positions[$0] }
            case .distinct: positions = StoredValues.distinctIndices(current).map { positions[$0] }
            }
        }
        let out = (elements: positions.map { all[$0] }, stored: positions.map { values[$0] })
        if let realm { cache = (realm.stamp, out.elements, out.stored) }
        return out
    }
}

extension RealmCollection {
    /// Live results of this collection's values after `step` (`self` is the only key path).
    func valueResults(_ step: ValueResults<Element>.Step) throws -> Results<Element> {
        try ValueResults<Element>.validate(step)
        return Results(values: ValueResults(self, steps: [step]))
    }

    /// Whether `keyPath` names the value itself, as in `sorted(byKeyPath: "self")`.
    static func namesSelf(_ keyPath: String, _ operation: String) -> Bool {
        guard keyPath == "self" else {
            fatalError("\(operation) on \(Element.self) values takes the key path \"self\", not \"\(keyPath)\".")
        }
        return true
    }
}

extension RealmCollection where Element: _HasPersistedType {
    /// The values matching a query on `self` (the NSPredicate dialect, Spec/QUERY.md), in
    /// collection order: `scores.filter("self > %@", 3)`. Live results. Stops with the error on a
    /// malformed query — use ``filter(checking:_:)`` for text from users.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        do { return try filter(checking: predicateFormat, args) } catch { fatalError("\(error)") }
    }

    /// The throwing form of ``filter(_:_:)``.
    /// - Throws: ``Realm/Error`` `.invalidQuery` (with the position in the text) or `.invalidValue`.
    public func filter(checking predicateFormat: String, _ args: [Any?] = []) throws -> Results<Element> {
        try valueResults(.filter(predicateFormat, try QueryArguments.convert(args)))
    }

    /// The values matching a type-safe query, in collection order: `scores.where { $0 > 3 }`.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        let parts = isIncluded(Query<Element>(expression: "self")).predicateParts
        do { return try filter(checking: parts.text, parts.arguments) } catch { fatalError("\(error)") }
    }

    /// The index of the first value matching a query on `self`, or nil.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        do {
            let values = _rlmCollection.stored()
            let (type, nullable) = ValueResults<Element>.valueType
            return try StoredValues.matchingIndices(
                values, type: type, isNullable: nullable, predicate: predicateFormat, arguments: try QueryArguments.convert(args)
            ).first
        } catch {
            fatalError("\(error)")
        }
    }
}

extension Map where Value: _HasPersistedType {
    /// The values matching a query on `self`, in key order: `scores.filter("self > %@", 3)`.
    /// Live results. Stops with the error on a malformed query.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Value> {
        do { return try filter(checking: predicateFormat, args) } catch { fatalError("\(error)") }
    }

    /// The throwing form of ``filter(_:_:)``.
    /// - Throws: ``Realm/Error`` `.invalidQuery` (with the position in the text) or `.invalidValue`.
    public func filter(checking predicateFormat: String, _ args: [Any?] = []) throws -> Results<Value> {
        let step = ValueResults<Value>.Step.filter(predicateFormat, try QueryArguments.convert(args))
        try ValueResults<Value>.validate(step)
        return Results(values: ValueResults(self, steps: [step]))
    }

    /// The values matching a type-safe query, in key order: `scores.where { $0 > 3 }`.
    public func `where`(_ isIncluded: (Query<Value>) -> Query<Bool>) -> Results<Value> {
        let parts = isIncluded(Query<Value>(expression: "self")).predicateParts
        do { return try filter(checking: parts.text, parts.arguments) } catch { fatalError("\(error)") }
    }
}

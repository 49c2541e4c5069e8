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
    enum Step: Sendable {
        /// Query text with its arguments, or a tree built by `where { }`.
        case filter(QueryInput)
        case sort(ascending: Bool)
        case distinct
    }

    /// The managed collection property the values come from (what observing needs).
    struct Origin {
        let property: ManagedProperty
        /// Whether the property is a map (its values are read in key order).
        let isMap: Bool
        /// The same results over the property of `parent` (the object in another Realm).
        let rebuild: (ObjectBase, [Step]) -> ValueResults
    }

    /// The Realm managing the source collection; nil when it is unmanaged.
    let realm: Realm?
    /// The Realm's invalidate() generation when these results were made.
    let generation: Int
    let steps: [Step]
    let origin: Origin?
    private let stored: () -> [StorageValue]
    private let source: () -> [Element]
    private let frozen: () -> ValueResults
    private let thawed: () -> ValueResults?
    /// Whether the source can no longer be read (its object deleted, its Realm invalidated).
    private let sourceInvalidated: () -> Bool
    private let lock = Lock()
    private var cache: (stamp: Int, elements: [Element], stored: [StorageValue])?

    /// Results over the values `c` reads after `steps`; `frozen` and `thawed` make the same results
    /// over the frozen or live source, `invalidated` tells whether the source can still be read.
    init(
        _ c: CollectionElements<Element>, steps: [Step], origin: Origin?, frozen: @escaping () -> ValueResults,
        thawed: @escaping () -> ValueResults?, invalidated: @escaping () -> Bool
    ) {
        realm = c.realm
        generation = c.realm?.generation ?? 0
        self.steps = steps
        self.origin = origin
        stored = c.stored
        source = c.elements
        self.frozen = frozen
        self.thawed = thawed
        sourceInvalidated = invalidated
    }

    /// The same source with `more` steps after these.
    func adding(_ more: [Step]) -> ValueResults {
        ValueResults(
            CollectionElements(kind: "results", realm: realm, results: { nil }, stored: stored, elements: source), steps: steps + more,
            origin: origin, frozen: { self.freeze().adding(more) }, thawed: { self.thaw()?.adding(more) }, invalidated: sourceInvalidated)
    }

    /// Results over the values of `collection` after `steps` (a chain on results of values
    /// continues their steps).
    static func over<C: RealmCollection>(_ collection: C, steps: [Step]) -> ValueResults where C.Element == Element {
        if let results = collection as? Results<Element>, let values = results.values { return values.adding(steps) }
        var origin: Origin?
        if let list = collection as? List<Element>, let p = list.property {
            let index = p.index
            origin = Origin(property: p, isMap: false) { over(List<Element>._rlmGet($0, index), steps: $1) }
        }
        if let set = collection as? MutableSet<Element>, let p = set.property {
            let index = p.index
            origin = Origin(property: p, isMap: false) { over(MutableSet<Element>._rlmGet($0, index), steps: $1) }
        }
        return ValueResults(
            collection._rlmCollection, steps: steps, origin: origin, frozen: { over(collection.freeze(), steps: steps) },
            thawed: { collection.thaw().map { over($0, steps: steps) } }, invalidated: { collection.isInvalidated })
    }

    /// Results over the values of `map` (in key order) after `steps`.
    static func over<Key>(_ map: Map<Key, Element>, steps: [Step]) -> ValueResults {
        let origin = map.property.map { p in
            let index = p.index
            return Origin(property: p, isMap: true) { over(Map<Key, Element>._rlmGet($0, index), steps: $1) }
        }
        return ValueResults(
            map.valuesCollection, steps: steps, origin: origin,
            frozen: { over(map.freeze(), steps: steps) }, thawed: { map.thaw().map { over($0, steps: steps) } },
            invalidated: { map.isInvalidated })
    }

    /// Makes these results again in another Realm (a queue's, actor's or frozen one, or for a
    /// ``ThreadSafeReference`` another thread's), over the holder with the same key there. It
    /// captures only the holder's class and key, the rebuild and the steps.
    var rebuilder: (Realm) -> ValueResults {
        guard let origin else { fatalError("Results of values of an unmanaged collection cannot move to another Realm or thread.") }
        let owner = origin.property.parent
        let (info, key, rebuild, steps) = (owner._rlmClass, owner._rlmKey, origin.rebuild, steps)
        return { realm in rebuild(realm.makeObject(info.type, key, info), steps) }
    }

    /// The positions of `values` that match `query` on `self`, bound to the elements' type
    /// (nullable when they are optional or mixed).
    static func matching(_ values: [StorageValue], _ query: QueryInput) throws -> [Int] {
        let info = Element._rlmInfo
        let type = info.type.columnType
        return try StoredValues.matchingIndices(values, type: type, isNullable: info.isOptional || type == .mixed, query: query)
    }

    /// The position of the first of `values` matching a query on `self`, or nil; stops with the
    /// error on a malformed query (`index(matching:)`).
    static func firstIndex(_ values: [StorageValue], matching text: String, _ args: [Any?]) -> Int? {
        do { return firstIndex(values, matching: .text(text, arguments: try QueryArguments.convert(args))) } catch {
            fatalError("\(error)")
        }
    }

    /// The position of the first of `values` matching `query` (text, or a tree built by `where { }`), or nil.
    static func firstIndex(_ values: [StorageValue], matching query: QueryInput) -> Int? {
        do { return try matching(values, query).first } catch { fatalError("\(error)") }
    }

    /// The positions of `values` that `steps` keep, in their order.
    static func evaluate(_ values: [StorageValue], _ steps: [Step]) throws -> [Int] {
        var positions = Array(values.indices)
        for step in steps {
            let current = positions.map { values[$0] }
            switch step {
            case .filter(let query): positions = try matching(current, query).map { positions[$0] }
            case .sort(let ascending): positions = StoredValues.sortedIndices(current, ascending: ascending).map { positions[$0] }
            case .distinct: positions = StoredValues.distinctIndices(current).map { positions[$0] }
            }
        }
        return positions
    }

    /// Live results after `step` over the source `over` makes, the step checked now as results
    /// of objects check theirs.
    /// - Throws: ``Realm/Error`` `.invalidQuery` with the position in the text.
    static func results(_ step: Step, over make: ([Step]) -> ValueResults) throws -> Results<Element> {
        if case .filter(let query) = step {
            do { _ = try matching([], query) } catch { throw Realm.Error.query(error) }
        }
        return Results(values: make([step]))
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
        return lock.withLock {
            if let c = cache, let realm, c.stamp == realm.stamp, realm.snapshot != nil { return (c.elements, c.stored) }
            let values = stored()
            let all = source()
            let positions: [Int]
            do { positions = try Self.evaluate(values, steps) } catch { fatalError("\(error)") }
            let out = (elements: positions.map { all[$0] }, stored: positions.map { values[$0] })
            if let realm { cache = (realm.stamp, out.elements, out.stored) }
            return out
        }
    }
}

extension RealmCollection {
    /// Live results of this collection's values after `step` (`self` is the only key path).
    func valueResults(_ step: ValueResults<Element>.Step) throws -> Results<Element> {
        try ValueResults<Element>.results(step) { .over(self, steps: $0) }
    }

    /// Live results of this collection's values after a query step, whose key paths must be
    /// `self`: what `filter`, `sorted(by:)` and `distinct(by:)` do to values.
    func valueResults(after step: ResultsQuery.Step) throws -> Results<Element> {
        switch step {
        case .filter(let query): return try valueResults(.filter(query))
        case .sort(let descriptors):
            guard descriptors.count == 1 else {
                fatalError("sorted(by:) on \(Element.self) values takes one sort descriptor, for \"self\".")
            }
            Self.requireSelf(descriptors[0].keyPath, "sorted(by:)")
            return try valueResults(.sort(ascending: descriptors[0].ascending))
        case .distinct(let paths):
            guard paths.count == 1 else { fatalError("distinct(by:) on \(Element.self) values takes the key path \"self\".") }
            Self.requireSelf(paths[0], "distinct(by:)")
            return try valueResults(.distinct)
        }
    }

    /// Stops unless `keyPath` names the value itself, as in `sorted(byKeyPath: "self")`.
    static func requireSelf(_ keyPath: String, _ operation: String) {
        guard keyPath == "self" else {
            fatalError("\(operation) on \(Element.self) values takes the key path \"self\", not \"\(keyPath)\".")
        }
    }
}

extension RealmCollection where Element: _HasPersistedType {
    /// The values matching a type-safe query, in collection order: `scores.where { $0 > 3 }`.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        do { return try valueResults(.filter(.tree(Query<Element>.valueRoot().predicate(of: isIncluded)))) } catch {
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

    /// The throwing form of `filter(_:_:)`.
    /// - Throws: ``Realm/Error`` `.invalidQuery` (with the position in the text) or `.invalidValue`.
    public func filter(checking predicateFormat: String, _ args: [Any?] = []) throws -> Results<Value> {
        try ValueResults<Value>.results(.filter(.text(predicateFormat, arguments: try QueryArguments.convert(args)))) {
            .over(self, steps: $0)
        }
    }

    /// The values matching a type-safe query, in key order: `scores.where { $0 > 3 }`.
    public func `where`(_ isIncluded: (Query<Value>) -> Query<Bool>) -> Results<Value> {
        do {
            return try ValueResults<Value>.results(.filter(.tree(Query<Value>.valueRoot().predicate(of: isIncluded)))) {
                .over(self, steps: $0)
            }
        } catch {
            fatalError("\(error)")
        }
    }
}

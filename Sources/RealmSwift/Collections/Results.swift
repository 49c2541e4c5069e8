import Foundation
import RealmQuery
import RealmStorage

/// The objects of one class, live: a `Results` always reflects the Realm's current version,
/// including the changes of an open write transaction, and evaluates lazily.
///
/// ```swift
/// let dogs = realm.objects(Dog.self)
/// print(dogs.count, dogs.first?.name ?? "-")
/// for dog in dogs { print(dog.name) }
/// ```
///
/// Thread-confined like its Realm. Iteration walks the objects that matched when it began.
///
/// Results of values — `scores.filter("self > 3")`, `scores.sorted(ascending: false)`,
/// `tags.distinct()` on a list or set of primitives — hold the collection's values instead of
/// objects (Results+Values.swift).
public struct Results<Element: RealmCollectionValue>: RandomAccessCollection, CustomStringConvertible {
    private let objectBase: ResultsBase?
    /// The source of results of values; nil for results of objects.
    let values: ValueResults<Element>?
    /// The name of the sync subscription these results made (`subscribe(name:)` of
    /// RealmSwiftSync), which their `unsubscribe()` removes.
    package var syncSubscriptionName: String?

    init(realm: Realm, info: ClassInfo, query: ResultsQuery = ResultsQuery(), invalidated: Bool = false, limit: Int? = nil) {
        objectBase = ResultsBase(realm: realm, info: info, query: query, invalidated: invalidated, limit: limit)
        values = nil
    }

    init(values: ValueResults<Element>) {
        objectBase = nil
        self.values = values
    }

    /// The state of results of objects.
    var base: ResultsBase {
        guard let objectBase else { fatalError("These results hold \(Element.self) values, not objects of a class.") }
        return objectBase
    }

    /// The Realm these results read.
    public var realm: Realm? { values.map(\.realm) ?? base.realm }
    /// Whether the Realm was invalidated (``Realm/invalidate()``) since these results were made;
    /// invalidated results read as empty.
    public var isInvalidated: Bool { values?.isInvalidated ?? (base.generation != base.realm.generation) }

    /// The number of objects.
    public var count: Int { values?.elements.count ?? base.count }
    public var startIndex: Int { 0 }
    public var endIndex: Int { values?.elements.count ?? base.keys.count }
    /// Whether there are no objects (counted without materializing keys where possible).
    public var isEmpty: Bool { count == 0 }

    /// The object at `position`.
    public subscript(position: Int) -> Element {
        if let values {
            let elements = values.elements
            precondition(position >= 0 && position < elements.count, "Index \(position) is out of bounds (count \(elements.count)).")
            return elements[position]
        }
        let keys = base.keys
        precondition(position >= 0 && position < keys.count, "Index \(position) is out of bounds (count \(keys.count)).")
        return Element._rlmCast(base.object(keys[position]))
    }

    /// The index of `object`, or nil when it is not in the results (for values: the first equal
    /// one).
    public func index(of object: Element) -> Int? {
        if let values { return values.elements.firstIndex(of: object) }
        guard let o = (object as? ObjectBase) ?? (object as? any ProjectionObservable)?.rootObject,
            o._rlmRealm?.store === base.realm.store, o._rlmClass === base.info
        else { return nil }
        return base.keys.firstIndex(of: o._rlmKey)
    }

    /// Iterates the objects that match when iteration begins.
    public func makeIterator() -> Iterator {
        if let values { return Iterator(values: values.elements) }
        return Iterator(base: base)
    }

    /// Iterates the objects (or, for results of values, the values) that match when iteration
    /// begins: a fixed list of keys, or — for all objects of a class in a live Realm outside a
    /// write — a walk over the table's row groups in the version read then, without listing the
    /// keys first.
    ///
    /// Each object gets its own accessor, as in RealmSwift: one kept after the loop moved on is
    /// still the same object.
    public struct Iterator: IteratorProtocol {
        private let base: ResultsBase?
        let keys: [ObjectKey]
        /// Where each key sits in the version the keys were resolved at (empty: the objects
        /// locate themselves on their first read).
        private let locations: [RowLocation]
        private let reader: BoundReader?
        /// The Realm's stamp while it still reads that version outside a write (-1: objects take
        /// the general read path).
        private let readStamp: Int
        private let elements: [Element]?
        private var i = 0
        /// The view of the row group the last object sat in.
        private var view: GroupView?
        /// The walk over row groups, when walking (a value: copies of the iterator go on
        /// independently).
        private var walk: ObjectWalk?

        init(values: [Element]) {
            base = nil
            keys = []
            locations = []
            reader = nil
            readStamp = -1
            elements = values
            walk = nil
        }

        /// Iterates `base`; `walk`: by row groups when the results allow it.
        init(base: ResultsBase, walk: Bool = true) {
            self.base = base
            elements = nil
            if walk, base.query.isEmpty, let bound = base.tableReader() {
                self.walk = ObjectWalk(base, bound)
                keys = []
                locations = []
                reader = nil
                readStamp = -1
                return
            }
            self.walk = nil
            keys = base.keys
            let located = base.locations
            locations = located?.1 ?? []
            reader = base.cachedReader
            if let located, reader?.version == located.version {
                readStamp = base.realm.directReadStamp(located.version)
            } else {
                readStamp = -1
            }
        }

        /// The next element. Inlinable so the element's type check and optional are specialized
        /// for the caller's model class; the walk itself stays behind `_nextObject()`.
        @inlinable
        public mutating func next() -> Element? {
            if let o = _nextObject() { return Element._rlmCast(o) }
            return _nextValue()
        }

        /// The next object (nil at the end, and for results of values).
        @usableFromInline
        mutating func _nextObject() -> ObjectBase? {
            if walk != nil { return walk!.next() }
            guard let base else { return nil }
            guard i < keys.count else { return nil }
            defer { i += 1 }
            let o = base.object(keys[i])
            if i < locations.count, let reader {
                let location = locations[i]
                if view?.group != Int(location.group) { view = reader.view(Int(location.group)) }
                if let view { o._rlmPlace(view, row: location.row, stamp: readStamp) }
            }
            return o
        }

        /// The next value of results of values (nil at the end, and for results of objects).
        @usableFromInline
        mutating func _nextValue() -> Element? {
            guard let elements, i < elements.count else { return nil }
            defer { i += 1 }
            return elements[i]
        }
    }

    public var description: String {
        // The first 100 elements, numbered by position: one read of the results, not a search per
        // printed element.
        let shown = Array(prefix(100)).enumerated().map { "\t[\($0.offset)] \($0.element)" }
        let name = values != nil ? "\(Element.self)" : base.info.className
        let count = self.count
        return "Results<\(name)> <count \(count)> (\n" + shown.joined(separator: ",\n") + (count > 100 ? ",\n\t..." : "") + "\n)"
    }
}

/// The state behind a ``Results``: its source and the keys resolved at the Realm's current stamp.
///
/// The caches of results over a frozen Realm are guarded by `lock` (they may be read from many
/// threads at once); live results are confined to their Realm's thread and take no lock.
final class ResultsBase {
    let realm: Realm
    let info: ClassInfo
    let query: ResultsQuery
    /// At most this many objects, the first in order (the base of ``Results/prefix(_:)``).
    let limit: Int?
    /// The Realm's invalidate() generation these results belong to.
    let generation: Int
    private let lock: Lock?
    private var cachedKeys: [ObjectKey] = []
    private var cachedLocations: (version: UInt64, [RowLocation])?
    /// The table reader the locations refer to.
    var cachedReader: BoundReader?
    private var cachedStamp = -1
    /// A count computed without keys, at a stamp.
    private var cachedCount: (stamp: Int, count: Int)?

    /// `invalidated`: results that are invalidated from the start (a frozen copy of invalidated
    /// results stays invalidated).
    init(realm: Realm, info: ClassInfo, query: ResultsQuery, invalidated: Bool = false, limit: Int? = nil) {
        self.realm = realm
        self.info = info
        self.query = query
        self.limit = limit
        // Generations only grow, so one below the Realm's never matches it again.
        self.generation = invalidated ? realm.generation &- 1 : realm.generation
        self.lock = realm.isFrozen ? Lock() : nil
    }

    private func synchronized<T>(_ body: () -> T) -> T {
        guard let lock else { return body() }
        return lock.withLock(body)
    }

    /// How many times these results were evaluated (a `package` hook for laziness tests).
    package private(set) var evaluations = 0

    /// The matching keys, re-resolved only when the Realm changed since the last call.
    var keys: [ObjectKey] {
        realm.checkThread()
        if generation != realm.generation { return [] }
        return synchronized {
            if cachedStamp != realm.stamp || realm.snapshot == nil { resolve() }
            return cachedKeys
        }
    }

    /// Where each key sits, when the Realm reads a snapshot (outside a write transaction).
    var locations: (version: UInt64, [RowLocation])? {
        _ = keys
        return synchronized { cachedLocations }
    }

    private func resolve() {
        cachedLocations = nil
        if !query.isEmpty {
            evaluations += 1
            do {
                cachedKeys = try query.evaluate(info.className, in: realm.querySource, limit: limit)
            } catch {
                fatalError("\(error)")
            }
            cachedStamp = realm.stamp
            return
        }
        if realm.isFrozen {
            cachedKeys = realm.objectKeys(info.className)
        } else if realm.transaction == nil {
            let snap = realm.currentSnapshot
            do {
                if let bound = try realm.reader(info, snap) {
                    cachedReader = bound
                    var keys: [ObjectKey] = []
                    var locs: [RowLocation] = []
                    for g in 0..<bound.reader.groupCount {
                        let lane = try bound.reader.keys(group: g)
                        for r in 0..<bound.reader.rowCount(group: g) {
                            keys.append(ObjectKey(lane[r]))
                            locs.append(RowLocation(group: g, row: r))
                        }
                    }
                    cachedKeys = keys
                    cachedLocations = (snap.version, locs)
                } else {
                    cachedKeys = []
                }
            } catch {
                realm.readFailed(error, reading: "'\(info.className)'")
            }
        } else {
            cachedKeys = realm.objectKeys(info.className)
        }
        if let limit, cachedKeys.count > limit {
            cachedKeys.removeSubrange(limit...)
            cachedLocations?.1.removeSubrange(limit...)
        }
        cachedStamp = realm.stamp
    }

    var count: Int {
        realm.checkThread()
        if generation != realm.generation { return 0 }
        return synchronized { limit.map { Swift.min($0, unsynchronizedCount) } ?? unsynchronizedCount }
    }

    private var unsynchronizedCount: Int {
        if cachedStamp == realm.stamp && realm.snapshot != nil { return cachedKeys.count }
        if !query.isEmpty {
            if let c = cachedCount, c.stamp == realm.stamp, realm.snapshot != nil { return c.count }
            do {
                if let n = try query.count(info.className, realm) {
                    evaluations += 1
                    cachedCount = (realm.stamp, n)
                    return n
                }
            } catch {
                fatalError("\(error)")
            }
            resolve()
            return cachedKeys.count
        }
        do { return try realm.objectCount(info.className) } catch { fatalError("Realm could not count '\(info.className)': \(error)") }
    }

    /// Whether the cached keys are those of the Realm's current version.
    var isCurrent: Bool { synchronized { cachedStamp == realm.stamp && realm.snapshot != nil } }

    /// Takes `keys` as the evaluation at the Realm's current stamp.
    func adopt(_ keys: [ObjectKey]) {
        synchronized {
            cachedKeys = keys
            cachedLocations = nil
            cachedStamp = realm.stamp
        }
    }

    func object(_ key: ObjectKey) -> ObjectBase { realm.makeObject(info.type, key, info) }

    /// The class's table reader in the version the live Realm reads, outside a write transaction
    /// (nil otherwise, or when the file has no such table): iteration walks it.
    func tableReader() -> BoundReader? {
        realm.checkThread()
        guard generation == realm.generation, !realm.isFrozen, realm.transaction == nil else { return nil }
        do {
            return try realm.reader(info, realm.currentSnapshot)
        } catch {
            realm.readFailed(error, reading: "'\(info.className)'")
        }
    }
}

/// A walk over a class's table, row group by row group, in the version one live Realm reads: the
/// iteration of all objects of a class without listing their keys first. Each object gets a new
/// accessor, placed at its row (see ``Results/Iterator``). A value, so a copy of an iterator walks
/// on its own, and its state is the iterator's (no shared, dynamically checked state).
struct ObjectWalk {
    private let realm: Realm
    private let info: ClassInfo
    /// The table reader walked.
    private let reader: BoundReader
    /// The Realm's stamp while the objects may read directly (-1: the general path), and its
    /// `invalidate()` generation.
    private let stamp: Int
    private let generation: Int
    private var group = -1
    private var row = 0
    private var rows = 0
    /// The keys of the group.
    private var keys: [Int64] = []
    private var view: GroupView?

    init(_ base: ResultsBase, _ reader: BoundReader) {
        self.realm = base.realm
        self.info = base.info
        self.reader = reader
        stamp = base.realm.directReadStamp(reader.version)
        generation = base.realm.generation
    }

    mutating func next() -> ObjectBase? {
        if row >= rows, !advance() { return nil }
        let r = row
        row = r + 1
        let o = info.type.init()
        o._rlmBindNew(realm, ObjectKey(keys[r]), info, generation: generation, view: view!, row: Int32(truncatingIfNeeded: r), stamp: stamp)
        return o
    }

    /// Moves to the next group that has rows; false at the end.
    private mutating func advance() -> Bool {
        while row >= rows {
            group += 1
            guard group < reader.reader.groupCount else { return false }
            do {
                let lane = try reader.reader.keys(group: group)
                keys = (0..<lane.count).map { lane[$0] }
            } catch {
                realm.readFailed(error, reading: "'\(info.className)'")
            }
            rows = min(keys.count, reader.reader.rowCount(group: group))
            row = 0
            view = reader.view(group)
            if view == nil { rows = 0 }
        }
        return true
    }
}

extension Results: Equatable {
    /// Whether both are the same results, as in RealmSwift: copies of one `Results` value (the
    /// results a notification passes are the observed ones) are equal; two queries made separately
    /// are not, even when they select the same objects — compare their elements for that.
    ///
    /// ```swift
    /// let a = realm.objects(Dog.self), b = realm.objects(Dog.self)
    /// a == a            // true
    /// a == b            // false: two results
    /// Array(a) == Array(b)  // true: the same objects
    /// ```
    public static func == (lhs: Results, rhs: Results) -> Bool {
        if let l = lhs.values, let r = rhs.values { return l === r }
        if let l = lhs.objectBase, let r = rhs.objectBase { return l === r }
        return false
    }
}

import Foundation
import RealmStorage

/// The objects of a ``Results`` grouped into sections by a key, live: like its results it reflects
/// the Realm's current version and evaluates lazily — it groups again only after the Realm changed,
/// never while it is unchanged.
///
/// ```swift
/// final class Person: Object {
///     @Persisted var name = ""
///     @Persisted var city = ""
/// }
/// let people = realm.objects(Person.self)
/// let byCity = people.sectioned(by: \.city)  // sorted by city, one section per city
/// for section in byCity {
///     print(section.key, section.count)
///     for person in section { print("  ", person.name) }
/// }
/// let first = byCity[IndexPath(item: 0, section: 0)]
/// ```
///
/// The results are sorted first (by the `sectioned(by:…)` method's key path, block or sort
/// descriptors), then grouped: sections appear in the order their first object appears, and every
/// object whose key is equal (`==`) to a section's goes to that section, keeping the sorted order
/// within it.
///
/// Thread-confined like its Realm, unless frozen (``freeze()``): a frozen copy reads one version
/// forever and can be read from any thread. Iteration walks the sections there were when it began.
public struct SectionedResults<Key: _Persistable & Hashable, SectionElement: RealmCollectionValue>: RandomAccessCollection,
    CustomStringConvertible
{
    /// A section of these results.
    public typealias Element = ResultsSection<Key, SectionElement>

    let base: SectionedResultsBase<Key, SectionElement>

    init(_ base: SectionedResultsBase<Key, SectionElement>) { self.base = base }

    /// Sections of `results` (already sorted as the sections need) by the key `sectionKey`
    /// returns for each element; `keyOrder`, when given, sorts the elements by their key first
    /// (stable, so equal keys keep the results' order).
    init(
        _ results: Results<SectionElement>, sectionKey: @escaping (SectionElement) -> Key,
        keyOrder: ((Key, Key) -> Bool)? = nil
    ) {
        base = SectionedResultsBase(results, sectionKey: sectionKey, keyOrder: keyOrder)
    }

    /// The Realm these sections read.
    public var realm: Realm? { base.results.realm }
    /// Whether the Realm was invalidated.
    public var isInvalidated: Bool { base.results.isInvalidated }

    /// Whether these sections read one fixed version (immutable, usable from any thread).
    public var isFrozen: Bool { base.results.isFrozen }

    /// A frozen copy: the same sections, read at the current version forever, from any thread.
    /// Cannot be called in a write transaction. Like all frozen values it pins its version (see
    /// ``Realm/Configuration/maximumNumberOfActiveVersions``) until it is gone.
    public func freeze() -> SectionedResults { SectionedResults(base.frozen()) }

    /// The live sections of a frozen copy, in a new live Realm on the calling thread (nil when the
    /// Realm cannot be opened). Live sections return themselves.
    public func thaw() -> SectionedResults? { base.thawed().map { SectionedResults($0) } }

    /// The key of each section, in section order.
    public var allKeys: [Key] { base.layout.keys }

    /// The number of sections.
    public var count: Int { base.layout.keys.count }
    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// The section at `position`.
    public subscript(position: Int) -> ResultsSection<Key, SectionElement> {
        let keys = base.layout.keys
        precondition(position >= 0 && position < keys.count, "Section index \(position) is out of bounds (count \(keys.count)).")
        return ResultsSection(base, key: keys[position])
    }

    /// The object at `indexPath`: row `indexPath.item` of section `indexPath.section`.
    public subscript(indexPath: IndexPath) -> SectionElement {
        precondition(indexPath.count == 2, "An IndexPath into SectionedResults has two indexes (section, item); got \(indexPath).")
        let layout = base.layout
        let (section, item) = (indexPath.section, indexPath.item)
        precondition(
            section >= 0 && section < layout.rows.count, "Section index \(section) is out of bounds (count \(layout.rows.count)).")
        let rows = layout.rows[section]
        precondition(item >= 0 && item < rows.count, "Item index \(item) is out of bounds (section \(section) has \(rows.count)).")
        return base.element(rows[item], in: layout)
    }

    /// Iterates the sections there are when iteration begins.
    public func makeIterator() -> Iterator { Iterator(base: base, keys: base.layout.keys) }

    /// Iterates a fixed list of section keys.
    public struct Iterator: IteratorProtocol {
        let base: SectionedResultsBase<Key, SectionElement>
        let keys: [Key]
        var i = 0
        public mutating func next() -> ResultsSection<Key, SectionElement>? {
            guard i < keys.count else { return nil }
            defer { i += 1 }
            return ResultsSection(base, key: keys[i])
        }
    }

    public var description: String {
        let layout = base.layout
        let shown = zip(layout.keys, layout.rows).prefix(100).enumerated().map { i, section in
            "\t[\(i)] \(ObjectBase.describe(section.0)) <count \(section.1.count)>"
        }
        return "SectionedResults<\(Key.self), \(SectionElement.self)> <count \(layout.keys.count)> (\n"
            + shown.joined(separator: ",\n") + (layout.keys.count > 100 ? ",\n\t..." : "") + "\n)"
    }
}

/// The state behind a ``SectionedResults`` and its sections: the sorted results, how to key an
/// element, and the sections resolved at the Realm's current stamp.
///
/// Over a frozen Realm the cache is guarded by `lock` (frozen sections may be read from many
/// threads at once); live ones are confined to their Realm's thread and take no lock. The lock is
/// never held while the section key block runs: two threads may both group a frozen version,
/// with the same outcome, and the last stores it.
final class SectionedResultsBase<Key: _Persistable & Hashable, Element: RealmCollectionValue> {
    /// The sections, in order: each key with the object keys of its rows (for results of values:
    /// each row's position in ``values``, as an `ObjectKey`).
    struct Layout {
        var keys: [Key] = []
        var rows: [[ObjectKey]] = []
        var sectionOfKey: [Key: Int] = [:]
        /// For results of values: the values the rows were grouped from.
        var values: [Element] = []

        /// The rows of the section keyed `key` (none when there is no such section).
        func rows(of key: Key) -> [ObjectKey] { sectionOfKey[key].map { rows[$0] } ?? [] }
    }

    /// The results, sorted as the sections need.
    let results: Results<Element>
    /// The section key of an element.
    let sectionKey: (Element) -> Key
    /// When set, elements are sorted by their section key in this order (stably) before grouping.
    let keyOrder: ((Key, Key) -> Bool)?
    private let lock: Lock?
    private var cachedLayout = Layout()
    private var cachedStamp = -1

    init(_ results: Results<Element>, sectionKey: @escaping (Element) -> Key, keyOrder: ((Key, Key) -> Bool)?) {
        self.results = results
        self.sectionKey = sectionKey
        self.keyOrder = keyOrder
        self.lock = results.isFrozen ? Lock() : nil
    }

    private func synchronized<T>(_ body: () -> T) -> T {
        guard let lock else { return body() }
        return lock.withLock(body)
    }

    /// How many times the sections were computed (a `package` hook for laziness tests).
    package private(set) var evaluations = 0

    /// The sections, computed again only when the Realm changed since the last call (none once
    /// the Realm was invalidated).
    var layout: Layout {
        // An unmanaged collection's values have no version to cache the sections at.
        guard let realm = results.realm else { return resolve() }
        realm.checkThread()
        if results.isInvalidated { return Layout() }
        let cached = synchronized { cachedStamp == realm.stamp && realm.snapshot != nil ? cachedLayout : nil }
        if let cached { return cached }
        let layout = resolve()
        // Read after evaluating: reading the results may have re-read the snapshot (a new stamp).
        let stamp = realm.stamp
        synchronized {
            evaluations += 1
            cachedLayout = layout
            cachedStamp = stamp
        }
        return layout
    }

    /// The sections as the change computation takes them (``SectionedDiff/changes(oldSections:newSections:modified:)``).
    var sectionsForDiff: [(key: AnyHashable, keys: [ObjectKey])] {
        let layout = layout
        return zip(layout.keys, layout.rows).map { (AnyHashable($0.0), $0.1) }
    }

    private func resolve() -> Layout {
        var layout = Layout()
        var keyed: [(key: Key, object: ObjectKey)] = []
        if let values = results.values {
            // Values have no keys: a row is the value's position.
            layout.values = values.elements
            keyed = layout.values.enumerated().map { (sectionKey($1), ObjectKey(Int64($0))) }
        } else {
            // One pass over the results: their iterator reads through the rows' locations.
            var iterator = Results<Element>.Iterator(base: results.base, walk: false)
            let objectKeys = iterator.keys
            keyed.reserveCapacity(objectKeys.count)
            var i = 0
            while let element = iterator.next() {
                keyed.append((sectionKey(element), objectKeys[i]))
                i += 1
            }
        }
        if let keyOrder {
            // Stable: equal keys keep the results' order.
            let order = keyed.indices.sorted { a, b in
                keyOrder(keyed[a].key, keyed[b].key) || (!keyOrder(keyed[b].key, keyed[a].key) && a < b)
            }
            keyed = order.map { keyed[$0] }
        }
        for (key, object) in keyed {
            if let s = layout.sectionOfKey[key] {
                layout.rows[s].append(object)
            } else {
                layout.sectionOfKey[key] = layout.keys.count
                layout.keys.append(key)
                layout.rows.append([object])
            }
        }
        return layout
    }

    /// The element of row `key` of `layout`: the object with that key, or for results of values
    /// the value at that position (read from the layout itself, so that a walk over an unmanaged
    /// collection's sections does not group them again for every element).
    func element(_ key: ObjectKey, in layout: Layout) -> Element {
        if results.values != nil { return layout.values[Int(key.rawValue)] }
        return Element._rlmCast(results.base.object(key))
    }

    // MARK: Freezing

    /// The same sections over frozen results. When this live cache is current it is handed over
    /// (it was computed at the version the frozen results read), so freezing does not group again.
    func frozen() -> SectionedResultsBase {
        if results.isFrozen { return self }
        let realm = results.realm
        realm?.checkThread()
        let current =
            realm.map { cachedStamp == $0.stamp && $0.snapshot != nil && $0.transaction == nil } == true && !results.isInvalidated
        let frozen = SectionedResultsBase(results.freeze(), sectionKey: sectionKey, keyOrder: keyOrder)
        if current, let stamp = frozen.results.realm?.stamp {
            frozen.cachedLayout = cachedLayout
            frozen.cachedStamp = stamp
        }
        return frozen
    }

    /// The same sections over the live results of frozen ones (nil when the Realm cannot be
    /// opened); live sections return themselves.
    func thawed() -> SectionedResultsBase? {
        guard results.isFrozen else { return self }
        return results.thaw().map { SectionedResultsBase($0, sectionKey: sectionKey, keyOrder: keyOrder) }
    }
}

import Foundation
import RealmStorage

/// One section of a ``SectionedResults``: the objects whose section key is ``key``, live.
///
/// ```swift
/// let byName = realm.objects(Person.self).sectioned(by: \.name)
/// if let section = byName.first {
///     print(section.key, section.count, section[0].age)
/// }
/// ```
///
/// A section is found by its key each time it is read, so it follows the Realm: objects that get
/// the key join it, objects that lose it leave it, and once no object has the key the section
/// reads as empty (until one has it again).
///
/// Thread-confined like its Realm, unless frozen (``freeze()``): a frozen section reads one
/// version forever and can be read from any thread. Iteration walks the objects there were when
/// it began.
public struct ResultsSection<Key: _Persistable & Hashable, Element: RealmCollectionValue>: RandomAccessCollection, Identifiable,
    CustomStringConvertible
{
    let base: SectionedResultsBase<Key, Element>
    /// The key every object of this section has.
    public let key: Key

    init(_ base: SectionedResultsBase<Key, Element>, key: Key) {
        self.base = base
        self.key = key
    }

    /// The section's key (sections are identified by their key).
    public var id: Key { key }

    /// The Realm this section reads.
    public var realm: Realm? { base.results.realm }
    /// Whether the Realm was invalidated.
    public var isInvalidated: Bool { base.results.isInvalidated }

    /// Whether this section reads one fixed version (immutable, usable from any thread).
    public var isFrozen: Bool { base.results.isFrozen }

    /// A frozen copy of this section: its objects at the current version, forever, from any
    /// thread. Cannot be called in a write transaction.
    public func freeze() -> ResultsSection { ResultsSection(base.frozen(), key: key) }

    /// The live section of a frozen copy, in a new live Realm on the calling thread (nil when the
    /// Realm cannot be opened); it reads as empty while no object has its key. Live sections
    /// return themselves.
    public func thaw() -> ResultsSection? { base.thawed().map { ResultsSection($0, key: key) } }

    /// The number of objects in the section.
    public var count: Int { base.layout.rows(of: key).count }
    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// The object at `position` in the section.
    public subscript(position: Int) -> Element {
        let layout = base.layout
        let rows = layout.rows(of: key)
        precondition(position >= 0 && position < rows.count, "Index \(position) is out of bounds (count \(rows.count)).")
        return base.element(rows[position], in: layout)
    }

    /// Iterates the objects in the section when iteration begins.
    public func makeIterator() -> Iterator {
        let layout = base.layout
        return Iterator(base: base, layout: layout, rows: layout.rows(of: key))
    }

    /// Iterates a fixed list of objects (of values: the values there were when it began).
    public struct Iterator: IteratorProtocol {
        let base: SectionedResultsBase<Key, Element>
        let layout: SectionedResultsBase<Key, Element>.Layout
        let rows: [ObjectKey]
        var i = 0
        public mutating func next() -> Element? {
            guard i < rows.count else { return nil }
            defer { i += 1 }
            return base.element(rows[i], in: layout)
        }
    }

    public var description: String {
        let layout = base.layout
        let rows = layout.rows(of: key)
        let shown = rows.prefix(100).enumerated().map { "\t[\($0)] \(base.element($1, in: layout))" }
        return "ResultsSection<\(ObjectBase.describe(key))> <count \(rows.count)> (\n" + shown.joined(separator: ",\n")
            + (rows.count > 100 ? ",\n\t..." : "") + "\n)"
    }

}

import Foundation
import RealmStorage

/// Declares a property of a ``Projection``: the value a key path of the projected object reads.
///
/// ```swift
/// class PersonProjection: Projection<Person> {
///     @Projected(\Person.firstName) var firstName                 // passed through
///     @Projected(\Person.lastName) var surname                    // renamed
///     @Projected(\Person.address?.city) var homeCity              // through a link
///     @Projected(\Person.lastName.localizedUppercase) var caps    // any key path
///     @Projected(\Person.friends.projectTo.firstName) var friendsFirstNames: ProjectedCollection<String>
/// }
/// ```
///
/// Setting a projected property (inside a write transaction for a managed object) sets the
/// projected object's property; the key path must be writable.
@propertyWrapper
public struct Projected<T: ObjectBase, Value> {
    let keyPath: KeyPath<T, Value>

    /// A property reading `projectedKeyPath` of the projection's root object.
    public init(_ projectedKeyPath: KeyPath<T, Value>) {
        keyPath = projectedKeyPath
    }

    @available(*, unavailable, message: "@Projected can only be used as a property of a Projection")
    /// Unavailable: the value is read through the enclosing projection.
    public var wrappedValue: Value {
        get { fatalError("@Projected can only be used as a property of a Projection") }
        // swift-format-ignore
        set { fatalError("@Projected can only be used as a property of a Projection") }
    }

    /// Reads (and, for a writable key path, writes) the projected value of `projection`'s root object.
    public static subscript<EnclosingSelf: Projection<T>>(
        _enclosingInstance projection: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Projected>
    ) -> Value {
        get { projection.rootObject[keyPath: projection[keyPath: storageKeyPath].keyPath] }
        set {
            guard let writable = projection[keyPath: storageKeyPath].keyPath as? ReferenceWritableKeyPath<T, Value> else {
                preconditionFailure("The key path of this projected property is not writable.")
            }
            projection.rootObject[keyPath: writable] = newValue
        }
    }
}

/// What a projection's properties read, found with `Mirror`.
protocol ProjectedProperty {
    var anyKeyPath: AnyKeyPath { get }
}

extension Projected: ProjectedProperty {
    var anyKeyPath: AnyKeyPath { keyPath }
}

/// The labels (without the wrapper's underscore) and key paths of `projection`'s `@Projected`
/// properties, base classes first.
func projectedProperties(of projection: AnyObject) -> [(String, AnyKeyPath)] {
    var levels: [[(String, AnyKeyPath)]] = []
    var mirror: Mirror? = Mirror(reflecting: projection)
    while let m = mirror {
        levels.append(
            m.children.compactMap { c in
                guard let label = c.label, let p = c.value as? any ProjectedProperty else { return nil }
                return (label.hasPrefix("_") ? String(label.dropFirst()) : label, p.anyKeyPath)
            })
        mirror = m.superclassMirror
    }
    return levels.reversed().flatMap { $0 }
}

/// A projection without its root type: the object it projects.
public protocol ProjectionObservable: AnyObject, SendableMetatype {
    /// The projected object's type.
    associatedtype Root: ObjectBase
    /// The projected object.
    var rootObject: Root { get }
    /// A projection of `object`.
    init(projecting object: Root)
}

/// A light model of an ``Object`` or ``EmbeddedObject``: a view model that shows some of its
/// properties, renamed, flattened through links, or collections mapped to one property of their
/// elements, as RealmSwift's projections do.
///
/// ```swift
/// class PersonProjection: Projection<Person> {
///     @Projected(\Person.firstName) var firstName
///     @Projected(\Person.address?.city) var homeCity
///     @Projected(\Person.friends.projectTo.firstName) var friendsFirstNames: ProjectedCollection<String>
/// }
/// let people: Results<PersonProjection> = realm.objects(PersonProjection.self)
/// let ada = PersonProjection(projecting: person)
/// let token = ada.observe(keyPaths: ["firstName"]) { change in … }
/// ```
///
/// Results of projections are queried, sorted and sectioned by the root class's properties
/// (`filter("firstName BEGINSWITH 'A'")`); they are live, and frozen and thawed like the results of
/// their root class. A projection's notifications report changes of its projected properties only,
/// under the projection's names.
open class Projection<Root: ObjectBase & RealmCollectionValue>: RealmCollectionValue, ProjectionObservable, CustomStringConvertible {
    /// The projected object.
    public let rootObject: Root

    /// A projection of `object`.
    public required init(projecting object: Root) {
        rootObject = object
    }

    /// Whether both project the same object (the same managed object, or the same unmanaged one).
    public static func == (lhs: Projection, rhs: Projection) -> Bool { lhs.rootObject == rhs.rootObject }

    public func hash(into hasher: inout Hasher) { hasher.combine(rootObject) }

    /// The projected properties with their values.
    open var description: String {
        let lines = projectedProperties(of: self).map { label, keyPath in
            "\t\(label) = \(ObjectBase.describe(rootObject[keyPath: keyPath] as Any));"
        }
        return "\(type(of: self))<\(Root.self)> {\n" + lines.joined(separator: "\n") + "\n}"
    }

    // MARK: _RealmValue: a projection is stored as its root object.

    public static var _rlmInfo: _RLMTypeInfo { Root._rlmInfo }
    public static func _rlmDefaultValue() -> Self { Self(projecting: Root._rlmDefaultValue()) }
    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> Self { Self(projecting: Root._rlmDecode(raw, realm)) }
    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw { try rootObject._rlmEncode(realm) }
    public static func _rlmCoerce(_ value: Any, _ realm: Realm?) throws -> Self {
        if let p = value as? Self { return p }
        return Self(projecting: try Root._rlmCoerce(value, realm))
    }
    public static func _rlmCast(_ object: consuming ObjectBase) -> Self { Self(projecting: Root._rlmCast(object)) }
}

extension Projection {
    /// The Realm of the projected object, or nil while it is unmanaged.
    public var realm: Realm? { rootObject.realm }
    /// Whether the projected object was deleted, or its Realm invalidated.
    public var isInvalidated: Bool { rootObject.isInvalidated }
    /// Whether the projected object is frozen.
    public var isFrozen: Bool { rootObject.isFrozen }

    /// A projection of the frozen projected object.
    public func freeze() -> Self {
        if isFrozen { return self }
        return Self(projecting: rootObject.freeze())
    }

    /// A projection of the live projected object, or nil when it was deleted since.
    public func thaw() -> Self? {
        if !isFrozen { return self }
        return rootObject.thaw().map { Self(projecting: $0) }
    }

}

/// A projected property: its name in the projection, its key path from the root, and the root
/// key path it reads (`"address.city"`).
struct ProjectedPath {
    let label: String
    let keyPath: AnyKeyPath
    let path: String
}

extension ProjectionObservable {
    /// The projected properties whose key paths read persisted properties, with the root path each
    /// reads (recorded once per call: observing records them once, not per change).
    private func projectedPaths() -> [ProjectedPath] {
        projectedProperties(of: self).compactMap { label, keyPath in
            (try? KeyPathNames.projectedPath(keyPath, root: Root.self)).map { ProjectedPath(label: label, keyPath: keyPath, path: $0) }
        }
    }

    /// The root key paths of the projected properties named `names`, and the projected properties
    /// by root property (the first name of each root key path).
    private func rootPaths(_ names: [String]?) -> (paths: [String]?, byRoot: [String: [ProjectedPath]]) {
        var byRoot: [String: [ProjectedPath]] = [:]
        var byName: [String: String] = [:]
        for p in projectedPaths() {
            byName[p.label] = p.path
            byRoot[String(p.path.split(separator: ".").first ?? ""), default: []].append(p)
        }
        guard let names else { return (byName.isEmpty ? nil : Array(Set(byName.values)).sorted(), byRoot) }
        // Observing some properties reports only those.
        let observed = Set(names)
        byRoot = byRoot.mapValues { $0.filter { observed.contains($0.label) } }
        return (
            names.map { name in
                guard let path = byName[name] else {
                    fatalError("'\(name)' is not a projected property of \(type(of: self)); observe one of \(byName.keys.sorted()).")
                }
                return path
            }, byRoot
        )
    }

    /// Registers a block called when the projected object changes: `.change` with the changed
    /// projected properties (under the projection's names, new values read through their key
    /// paths), `.deleted` once when it is deleted. Changes of properties it does not project are
    /// not reported.
    ///
    /// - Parameters:
    ///   - keyPaths: projected property names to observe (`["firstName"]`); nil: every projected
    ///     property.
    ///   - queue: a serial queue to deliver on; nil: this Realm's thread.
    ///   - block: called with each change.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (ObjectChange<Self>) -> Void
    ) -> NotificationToken {
        let (paths, byRoot) = rootPaths(keyPaths)
        return rootObject.observe(keyPaths: paths, on: queue) { change in block(Self.mapped(change, byRoot)) }
    }

    /// ``observe(keyPaths:on:_:)`` with key paths of the projection: `observe(keyPaths: [\PersonProjection.firstName])`.
    public func observe(
        keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue? = nil, _ block: @escaping (ObjectChange<Self>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: keyPaths.map { projectionName(of: $0) }, on: queue, block)
    }

    /// Registers a block called on `actor` when the projected object changes; see
    /// ``observe(keyPaths:on:_:)``.
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, ObjectChange<Self>) -> Void
    ) async -> NotificationToken {
        let (paths, byRoot) = rootPaths(keyPaths)
        // The mapping travels to the actor as one value (it reads the root object there).
        let map = Unchecked({ (change: ObjectChange<Root>) in Self.mapped(change, byRoot) })
        return await rootObject.observe(keyPaths: paths, on: actor) { actor, change in
            block(actor, map.value(change))
        }
    }

    /// The change of the root object as a change of this projection.
    private static func mapped(_ change: ObjectChange<Root>, _ byRoot: [String: [ProjectedPath]]) -> ObjectChange<Self> {
        switch change {
        case .error(let e): return .error(e)
        case .deleted: return .deleted
        case .change(let root, let properties):
            var out: [PropertyChange] = []
            for p in properties {
                for q in byRoot[p.name] ?? [] {
                    // A property read straight from the root keeps the old value; a value read
                    // further along has none to give.
                    out.append(
                        PropertyChange(name: q.label, oldValue: q.path == p.name ? p.oldValue : nil, newValue: root[keyPath: q.keyPath]))
                }
            }
            return .change(Self(projecting: root), out)
        }
    }

    /// The name of the projected property `keyPath` reads.
    private func projectionName(of keyPath: PartialKeyPath<Self>) -> String {
        // The projection's property is found by running the key path on a projection of a
        // recording prototype and matching the root path it reads.
        guard let path = try? KeyPathNames.projectionPath(keyPath), let match = projectedPaths().first(where: { $0.path == path }) else {
            fatalError("\(keyPath) does not read a projected property of \(Self.self).")
        }
        return match.label
    }
}

extension KeyPathNames {
    /// The dotted root key path (`"address.city"`) a projected property's key path reads.
    static func projectedPath<Root: ObjectBase>(_ keyPath: AnyKeyPath, root: Root.Type) throws -> String {
        try recorded(Root.self, "\(keyPath)") { _ = $0[keyPath: keyPath] }.joined(separator: ".")
    }

    /// The dotted root key path a key path of a projection class reads (`\PersonProjection.homeCity`
    /// gives `"address.city"`).
    static func projectionPath<P: ProjectionObservable>(_ keyPath: PartialKeyPath<P>) throws -> String {
        try recorded(P.Root.self, "\(keyPath)") { _ = P(projecting: $0)[keyPath: keyPath] }.joined(separator: ".")
    }
}

extension Realm {
    /// The projections of every object of the projection's root class, live.
    ///
    /// ```swift
    /// let people: Results<PersonProjection> = realm.objects(PersonProjection.self)
    /// ```
    public func objects<Root: Object, P: Projection<Root>>(_ type: P.Type) -> Results<P> {
        checkThread()
        let info = ClassInfo.of(Root.self)
        verifyOrTrap(info)
        return Results(realm: self, info: info)
    }
}

extension Results {
    /// The projections sectioned by a key path of the projection (its root property decides the
    /// order and the sections), ascending or descending; see ``sectioned(by:ascending:)``.
    public func sectioned<Key: _Persistable & Hashable, O: ObjectBase>(
        by keyPath: KeyPath<Element, Key>, ascending: Bool = true
    ) -> SectionedResults<Key, Element> where Element: Projection<O> {
        let path: String
        do { path = try KeyPathNames.projectionPath(keyPath) } catch { fatalError("\(error)") }
        return sectioned(by: keyPath, sortDescriptors: [SortDescriptor(keyPath: path, ascending: ascending)])
    }

    /// The projections sorted by `sortDescriptors` (root properties) and sectioned by a key path
    /// of the projection.
    public func sectioned<Key: _Persistable & Hashable, O: ObjectBase>(
        by keyPath: KeyPath<Element, Key>, sortDescriptors: [SortDescriptor]
    ) -> SectionedResults<Key, Element> where Element: Projection<O> {
        SectionedResults(sortedIfAsked(sortDescriptors), sectionKey: { $0[keyPath: keyPath] })
    }

    /// The projections sorted by `sortDescriptors` (root properties) and grouped into sections by
    /// the key `block` returns for each, as RealmSwift's: the first descriptor should decide the
    /// key, so that each key's projections are together.
    ///
    /// ```swift
    /// let byInitial = realm.objects(PersonCard.self).sectioned(by: { String($0.displayName.prefix(1)) },
    ///                                                          sortDescriptors: [SortDescriptor(keyPath: "name")])
    /// ```
    public func sectioned<Key: _Persistable & Hashable, O: ObjectBase>(
        by block: @escaping (Element) -> Key, sortDescriptors: [SortDescriptor]
    ) -> SectionedResults<Key, Element> where Element: Projection<O> {
        SectionedResults(sortedIfAsked(sortDescriptors), sectionKey: block)
    }

    /// `sectioned(by:sortDescriptors:)` with a block, the block last, for a trailing closure.
    public func sectioned<Key: _Persistable & Hashable, O: ObjectBase>(
        sortDescriptors: [SortDescriptor], _ block: @escaping (Element) -> Key
    ) -> SectionedResults<Key, Element> where Element: Projection<O> {
        SectionedResults(sortedIfAsked(sortDescriptors), sectionKey: block)
    }
}

/// A collection property of a projection: a `List` or `MutableSet` of objects mapped to one
/// property of each element (`\Person.friends.projectTo.firstName`), live like the collection,
/// frozen, thawed and observed with it, as RealmSwift's.
///
/// ```swift
/// let names = personCard.dogNames              // ProjectedCollection<String>
/// let token = names.observe { change in … }     // the list's changes, and its dogs' names
/// try realm.write { names[0] = "Rex" }          // sets the first dog's name
/// ```
public struct ProjectedCollection<Element>: RandomAccessCollection, CustomStringConvertible {
    private let source: Source

    /// What the projected collection reads through: closures over the mapped collection.
    private struct Source {
        let count: () -> Int
        let element: (Int) -> Element
        let elements: () -> [Element]
        let realm: () -> Realm?
        let isFrozen: () -> Bool
        let isInvalidated: () -> Bool
        let freeze: () -> ProjectedCollection
        let thaw: () -> ProjectedCollection?
        let observe: ([String]?, DispatchQueue?, @escaping (RealmCollectionChange<ProjectedCollection>) -> Void) -> NotificationToken
        let set: (Int, Element) -> Void
    }

    init<C: RealmCollection>(_ collection: C, _ keyPath: KeyPath<C.Element, Element>) where C.Element: ObjectBase {
        // Observed without key paths: the collection and the projected property of its elements.
        let elementPath = try? KeyPathNames.path(keyPath)
        source = Source(
            count: { collection.count },
            element: { collection[$0][keyPath: keyPath] },
            elements: { collection.map { $0[keyPath: keyPath] } },
            realm: { collection.realm },
            isFrozen: { collection.isFrozen },
            isInvalidated: { collection.isInvalidated },
            freeze: { ProjectedCollection(collection.freeze(), keyPath) },
            thaw: { collection.thaw().map { ProjectedCollection($0, keyPath) } },
            observe: { keyPaths, queue, block in
                collection.observe(keyPaths: keyPaths ?? elementPath.map { [$0] }, on: queue) { change in
                    switch change {
                    case .initial(let c): block(.initial(ProjectedCollection(c, keyPath)))
                    case .update(let c, let d, let i, let m):
                        block(.update(ProjectedCollection(c, keyPath), deletions: d, insertions: i, modifications: m))
                    case .error(let e): block(.error(e))
                    }
                }
            },
            set: { index, value in
                guard let writable = keyPath as? ReferenceWritableKeyPath<C.Element, Element> else {
                    preconditionFailure("The key path of this projected collection is not writable.")
                }
                collection[index][keyPath: writable] = value
            })
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { source.count() }
    /// The projected value of the element at `position`; setting it sets the element's property
    /// (inside a write transaction for a managed collection).
    public subscript(position: Int) -> Element {
        get { source.element(position) }
        nonmutating set { source.set(position, newValue) }
    }

    /// The Realm of the mapped collection, or nil when it is unmanaged.
    public var realm: Realm? { source.realm() }
    /// Whether the mapped collection's object was deleted or its Realm invalidated.
    public var isInvalidated: Bool { source.isInvalidated() }
    /// Whether the mapped collection is frozen.
    public var isFrozen: Bool { source.isFrozen() }
    /// The projection of the frozen collection.
    public func freeze() -> ProjectedCollection { isFrozen ? self : source.freeze() }
    /// The projection of the live collection, or nil when its object was deleted since.
    public func thaw() -> ProjectedCollection? { isFrozen ? source.thaw() : self }

    /// Registers a block called with the changes of the mapped collection: insertions, deletions,
    /// and modifications of the projected property of its elements (or of `keyPaths` of them).
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
        _ block: @escaping (RealmCollectionChange<ProjectedCollection>) -> Void
    ) -> NotificationToken {
        source.observe(keyPaths, queue, block)
    }

    public var description: String {
        "ProjectedCollection<\(Element.self)> [" + source.elements().map { ObjectBase.describe($0 as Any) }.joined(separator: ", ") + "]"
    }
}

extension ProjectedCollection where Element: Equatable {
    /// The index of the first element equal to `value`, or nil.
    public func index(of value: Element) -> Int? { firstIndex(of: value) }
}

/// The elements of a collection of objects, mapped through a key path of the element class:
/// `list.projectTo.name` is a ``ProjectedCollection`` of the names.
@dynamicMemberLookup
public struct CollectionElementMapper<Element: ObjectBase & RealmCollectionValue> {
    let list: List<Element>?
    let set: MutableSet<Element>?

    /// The elements' values of `member`, as a live projected collection.
    public subscript<V>(dynamicMember member: KeyPath<Element, V>) -> ProjectedCollection<V> {
        // While a key path is recorded, its element reads `member`, so that the recorded path
        // names the elements' property (`dogs.name`), as observing it needs.
        if let element = list?.storage.first ?? set?.storage.first, element._rlmRecorder != nil { _ = element[keyPath: member] }
        if let list { return ProjectedCollection(list, member) }
        return ProjectedCollection(set!, member)
    }
}

/// A collection that can hold the recording element of a key-path recording (see
/// `Persisted.recorded`).
protocol RecordingPrototypeHolder {
    func holdRecordingPrototype(_ element: ObjectBase)
}

extension List: RecordingPrototypeHolder where Element: ObjectBase {
    func holdRecordingPrototype(_ element: ObjectBase) { storage.append(element as! Element) }
}

extension MutableSet: RecordingPrototypeHolder where Element: ObjectBase {
    func holdRecordingPrototype(_ element: ObjectBase) { storage.append(element as! Element) }
}

extension List where Element: ObjectBase {
    /// This list's elements mapped through a key path: `\Person.friends.projectTo.firstName`.
    public var projectTo: CollectionElementMapper<Element> { CollectionElementMapper(list: self, set: nil) }
}

extension MutableSet where Element: ObjectBase {
    /// This set's elements mapped through a key path: `\Person.tags.projectTo.name`.
    public var projectTo: CollectionElementMapper<Element> { CollectionElementMapper(list: nil, set: self) }
}

/// A stable identity for objects and projections, as RealmSwift gives them (SwiftUI lists use
/// it): declaring a model class `ObjectKeyIdentifiable` gives it an `id`.
///
/// ```swift
/// final class Task: Object, ObjectKeyIdentifiable { @Persisted var title = "" }
/// ```
///
/// Managed objects that are the same object (every accessor of it, frozen or live) have the same
/// `id`, made from the class name and the object's key; an unmanaged object's is its identity.
public protocol ObjectKeyIdentifiable: Identifiable {
    /// The stable identity of the object.
    var id: UInt64 { get }
}

extension ObjectKeyIdentifiable where Self: ObjectBase {
    /// The object's stable identity (see ``ObjectKeyIdentifiable``).
    public var id: UInt64 { objectKeyIdentity(self) }
}

extension ObjectKeyIdentifiable where Self: ProjectionObservable {
    /// The projected object's stable identity.
    public var id: UInt64 { objectKeyIdentity(rootObject) }
}

/// The class name (FNV-1a) mixed with the object key for a managed object; the object's identity
/// for an unmanaged one.
func objectKeyIdentity(_ object: ObjectBase) -> UInt64 {
    guard object.realm != nil else { return UInt64(UInt(bitPattern: ObjectIdentifier(object).hashValue)) }
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for b in object._rlmClass.className.utf8 {
        h = (h ^ UInt64(b)) &* 0x100_0000_01b3
    }
    return h ^ UInt64(bitPattern: object._rlmKey.rawValue) &* 0x9e37_79b9_7f4a_7c15
}

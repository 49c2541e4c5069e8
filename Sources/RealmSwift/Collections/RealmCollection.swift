import Foundation
import RealmQuery
import RealmStorage

/// The surface ``Results``, ``List``, ``MutableSet`` and ``LinkingObjects`` share, as in
/// RealmSwift: queries that return live ``Results`` in the collection's order, aggregates, value
/// operations, key-value coding and `Encodable`.
///
/// ```swift
/// let puppies = person.dogs.filter("age < %@", 2)              // Results<Dog>, in list order
/// let oldest = person.dogs.sorted(byKeyPath: "age", ascending: false).first
/// let total: Int = person.dogs.sum(ofProperty: "age")
/// let names = person.dogs.value(forKey: "name") as! [String]
/// item.scores.max()                                          // a List<Int>'s largest value
/// func describe<C: RealmCollection>(_ c: C) -> String where C.Element: Object { "\(c.count) objects" }
/// ```
///
/// Queries, sorting and `distinct` need a managed collection of objects (RealmSwift has the same
/// rule); aggregates, value operations and key-value coding work on unmanaged collections too.
/// Conformers are thread-confined like their Realm.
public protocol RealmCollection: RandomAccessCollection, CustomStringConvertible, Equatable, SendableMetatype
where Element: RealmCollectionValue, Index == Int {
    /// The Realm managing the collection, or nil when it is unmanaged.
    var realm: Realm? { get }
    /// Whether the collection can no longer be read (its object was deleted or its Realm
    /// invalidated).
    var isInvalidated: Bool { get }
    /// Whether the collection belongs to a frozen Realm.
    var isFrozen: Bool { get }
    /// A frozen copy, readable from any thread (Collections+Freezing.swift).
    func freeze() -> Self
    /// The live collection of a frozen copy, or nil when its object was deleted since.
    func thaw() -> Self?
    /// Registers a block called with the collection's changes: `.initial`, then `.update` with
    /// deletions, insertions and modifications (modifications filtered by `keyPaths`), on `queue`
    /// or (nil) on the Realm's thread. Generic code can observe any collection:
    ///
    /// ```swift
    /// func watch<C: RealmCollection>(_ c: C) -> NotificationToken {
    ///     c.observe(keyPaths: nil, on: nil) { change in print(change) }
    /// }
    /// ```
    func observe(
        keyPaths: [String]?, on queue: DispatchQueue?, _ block: @escaping (RealmCollectionChange<Self>) -> Void
    ) -> NotificationToken
    /// Registers a block called on `actor` with the collection's changes (in a Realm isolated to
    /// the actor); generic code can observe any collection from an actor.
    func observe<A: Actor>(
        keyPaths: [String]?, on actor: A, _isolation: isolated (any Actor)?,
        _ block: @escaping @Sendable (isolated A, RealmCollectionChange<Self>) -> Void
    ) async -> NotificationToken
}

/// How the collections of this library give the shared operations of ``RealmCollection`` their
/// elements: not a requirement of the public protocol (it would have to be public), but asked of
/// a collection when an operation needs it (a cast, only on the shared operations' paths).
protocol ElementAccess {
    /// The collection's ``CollectionElements``, typed by its element (``RealmCollection/_rlmCollection``
    /// casts it back).
    var elementAccess: Any { get }
}

extension RealmCollection {
    /// How the shared operations reach the elements of this collection.
    var _rlmCollection: CollectionElements<Element> {
        guard let access = self as? ElementAccess, let elements = access.elementAccess as? CollectionElements<Element> else {
            fatalError(
                "\(Self.self) is not a collection of this library; RealmCollection is implemented by Results, List, MutableSet, LinkingObjects and AnyRealmCollection."
            )
        }
        return elements
    }
}

/// How the shared operations of a ``RealmCollection`` (or a ``Map``'s values) reach its elements;
/// thread-confined like the collection it reads.
struct CollectionElements<Element: RealmCollectionValue> {
    /// What the collection is, for messages ("list", "set", "map", "linking objects", "results").
    let kind: String
    /// The Realm managing the collection; nil when unmanaged.
    let realm: Realm?
    /// Live results over the collection's objects in collection order (managed collections of
    /// objects only).
    let makeResults: () -> Results<Element>?
    /// The elements' stored values in collection order (read from the Realm when managed).
    let stored: () -> [StorageValue]
    /// The elements in collection order.
    let elements: () -> [Element]

    /// Whether the elements are objects.
    static var holdsObjects: Bool { Element._rlmInfo.objectType != nil && Element._rlmInfo.type == .object }

    /// The collection property of a managed object (`property`), or unmanaged `elements`.
    init(kind: String, property: ManagedProperty?, elements: @escaping () -> [Element]) {
        self.kind = kind
        self.realm = property?.realm
        self.elements = elements
        guard let property, let realm = property.realm else {
            makeResults = { nil }
            stored = { elements().map { (try? $0._rlmEncode(nil).value) ?? .null } }
            return
        }
        let owner = property.parent
        makeResults = {
            guard Self.holdsObjects, let type = Element._rlmInfo.objectType else { return nil }
            let ref = ResultsQuery.CollectionRef(
                table: owner._rlmClass.className, key: owner._rlmKey, column: owner._rlmClass.properties[property.index].name)
            return Results(realm: realm, info: ClassInfo.of(type), query: ResultsQuery(collection: ref))
        }
        stored = { storedElements(property.read()) }
    }

    init(
        kind: String, realm: Realm?, results: @escaping () -> Results<Element>?, stored: @escaping () -> [StorageValue],
        elements: @escaping () -> [Element]
    ) {
        self.kind = kind
        self.realm = realm
        self.makeResults = results
        self.stored = stored
        self.elements = elements
    }

    /// The live results an operation (`name`) runs on; stops with a message naming the fix when
    /// the collection is unmanaged or holds values.
    func results(_ name: String) -> Results<Element> {
        guard Self.holdsObjects else {
            fatalError("\(name) queries collections of objects; this \(kind) holds \(Element.self) values.")
        }
        guard let results = makeResults() else {
            fatalError(
                "\(name) needs a managed \(kind) (as in RealmSwift): add its object to a Realm first, or use Swift's "
                    + "filter/sorted on the elements.")
        }
        return results
    }
}

/// The elements of a stored list or set in order, or a map's values in key order (UTF-8 bytes);
/// none for anything else (a deleted holder's nil).
func storedElements(_ value: StorageValue?) -> [StorageValue] {
    switch value {
    case .list(let items)?: items
    case .map(let entries)?: entries.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }.map(\.value)
    default: []
    }
}

// MARK: - Conformances

extension Results: RealmCollection, ElementAccess {
    var elementAccess: Any {
        if let values {
            return CollectionElements(
                kind: "results", realm: realm, results: { nil }, stored: { values.storedValues }, elements: { values.elements })
        }
        return CollectionElements(
            kind: "results", realm: realm, results: { self }, stored: { self.base.keys.map { .link($0) } }, elements: { Array(self) })
    }
}

extension List: RealmCollection, ElementAccess {
    var elementAccess: Any {
        CollectionElements(kind: "list", property: property) { self.property == nil ? self.storage : Array(self) }
    }
}

extension MutableSet: RealmCollection, ElementAccess {
    var elementAccess: Any {
        CollectionElements(kind: "set", property: property) { self.property == nil ? self.storage : Array(self) }
    }
}

extension LinkingObjects: RealmCollection, ElementAccess where Element: RealmCollectionValue {
    var elementAccess: Any {
        CollectionElements(
            kind: "linking objects", realm: realm, results: { self.results }, stored: { self.keys.map { .link($0) } },
            elements: { Array(self) })
    }

    /// The linking objects as live results: the objects of `Element` whose property links here,
    /// in key order (nil when unmanaged).
    var results: Results<Element>? {
        guard let parent, let realm = parent._rlmRealm else { return nil }
        let origin = ClassInfo.of(Element.self)
        guard let i = origin.indexByName[propertyName] else {
            fatalError("Class '\(origin.className)' has no property '\(propertyName)' (named by LinkingObjects).")
        }
        let toMany = origin.properties[i].property.isCollection
        let parentValue = QueryExpression.constant(.object(table: parent._rlmClass.className, key: parent._rlmKey))
        let link = QueryExpression(.keyPath(PropertyPath([propertyName])))
        let step = ResultsQuery.Step.filter(
            .tree(.comparison(toMany ? QueryComparison(parentValue, .in, link) : QueryComparison(link, .equal, parentValue))))
        return Results(realm: realm, info: origin, query: ResultsQuery(steps: [step]))
    }
}

extension Map {
    /// The values as a collection (in key order), for the shared operations.
    var valuesCollection: CollectionElements<Value> {
        CollectionElements(kind: "map", property: property) { self.values }
    }
}

extension PropertyType {
    /// The engine column type values of this type are stored in.
    var columnType: ColumnType {
        switch self {
        case .int: .int
        case .bool: .bool
        case .string: .string
        case .data: .binary
        case .date: .timestamp
        case .float: .float
        case .double: .double
        case .object, .linkingObjects: .link
        case .any: .mixed
        case .objectId: .objectId
        case .decimal128: .decimal128
        case .UUID: .uuid
        }
    }
}

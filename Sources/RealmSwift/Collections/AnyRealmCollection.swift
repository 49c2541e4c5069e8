import Foundation

/// Any ``RealmCollection`` of `Element` — ``Results``, ``List``, ``MutableSet``,
/// ``LinkingObjects`` — behind one type, as in RealmSwift: live, queryable, observable and
/// freezable exactly as the collection it wraps.
///
/// ```swift
/// let dogs: AnyRealmCollection<Dog> = useList ? AnyRealmCollection(person.dogs) : AnyRealmCollection(realm.objects(Dog.self))
/// let old = dogs.filter("age > 10")
/// let token = dogs.observe { change in print(change) }
/// ```
public struct AnyRealmCollection<Element: RealmCollectionValue>: RealmCollection, ElementAccess {
    let box: AnyRealmCollectionBox<Element>

    /// Wraps `base` (an ``AnyRealmCollection`` is not wrapped twice).
    public init<C: RealmCollection>(_ base: C) where C.Element == Element {
        if let any = base as? AnyRealmCollection<Element> {
            box = any.box
        } else {
            box = WrappedCollection(base)
        }
    }

    // MARK: Collection

    /// The first index, 0.
    public var startIndex: Int { 0 }
    /// One past the last index: the wrapped collection's count.
    public var endIndex: Int { box.count }
    /// The element at `position` of the wrapped collection.
    public subscript(position: Int) -> Element { box.element(at: position) }
    /// The number of elements of the wrapped collection.
    public var count: Int { box.count }

    // MARK: RealmCollection

    /// The Realm managing the wrapped collection, or nil when it is unmanaged.
    public var realm: Realm? { box.realm }
    /// Whether the wrapped collection can no longer be read.
    public var isInvalidated: Bool { box.isInvalidated }
    /// Whether the wrapped collection belongs to a frozen Realm.
    public var isFrozen: Bool { box.isFrozen }
    /// A frozen copy of the wrapped collection, wrapped.
    public func freeze() -> AnyRealmCollection { AnyRealmCollection(box: box.freeze()) }
    /// The live collection of a frozen copy, wrapped; nil when its object was deleted since.
    public func thaw() -> AnyRealmCollection? { box.thaw().map { AnyRealmCollection(box: $0) } }

    /// The wrapped collection's description.
    public var description: String { box.description }

    /// Registers a block called with the wrapped collection's changes (see
    /// ``Results/observe(keyPaths:on:_:)``), each delivered as an ``AnyRealmCollection``.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
        _ block: @escaping (RealmCollectionChange<AnyRealmCollection>) -> Void
    ) -> NotificationToken {
        box.observe(keyPaths: keyPaths, on: queue, block)
    }

    /// Registers a block called on `actor` with the wrapped collection's changes.
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, RealmCollectionChange<AnyRealmCollection>) -> Void
    ) async -> NotificationToken {
        await box.observe(keyPaths: keyPaths, on: actor, _isolation: _isolation, block)
    }

    var elementAccess: Any { box.rlmCollection }

    /// Whether both wrap equal collections (by the wrapped type's `==`).
    public static func == (lhs: AnyRealmCollection, rhs: AnyRealmCollection) -> Bool { lhs.box.isEqual(to: rhs.box) }

    init(box: AnyRealmCollectionBox<Element>) { self.box = box }
}

extension RealmCollectionChange {
    /// The same change about `transform` of the collection.
    func map<T>(_ transform: (CollectionType) -> T) -> RealmCollectionChange<T> {
        switch self {
        case .initial(let c): .initial(transform(c))
        case .update(let c, let deletions, let insertions, let modifications):
            .update(transform(c), deletions: deletions, insertions: insertions, modifications: modifications)
        case .error(let e): .error(e)
        }
    }
}

/// The wrapped collection of an ``AnyRealmCollection``, behind its element type alone.
class AnyRealmCollectionBox<Element: RealmCollectionValue> {
    var count: Int { fatalError("abstract") }
    func element(at position: Int) -> Element { fatalError("abstract") }
    var realm: Realm? { fatalError("abstract") }
    var isInvalidated: Bool { fatalError("abstract") }
    var isFrozen: Bool { fatalError("abstract") }
    var description: String { fatalError("abstract") }
    var rlmCollection: CollectionElements<Element> { fatalError("abstract") }
    func freeze() -> AnyRealmCollectionBox { fatalError("abstract") }
    func thaw() -> AnyRealmCollectionBox? { fatalError("abstract") }
    func isEqual(to other: AnyRealmCollectionBox) -> Bool { fatalError("abstract") }
    func observe(
        keyPaths: [String]?, on queue: DispatchQueue?, _ block: @escaping (RealmCollectionChange<AnyRealmCollection<Element>>) -> Void
    ) -> NotificationToken { fatalError("abstract") }
    func observe<A: Actor>(
        keyPaths: [String]?, on actor: A, _isolation: isolated (any Actor)?,
        _ block: @escaping @Sendable (isolated A, RealmCollectionChange<AnyRealmCollection<Element>>) -> Void
    ) async -> NotificationToken { fatalError("abstract") }
}

/// One concrete collection type, wrapped.
final class WrappedCollection<C: RealmCollection>: AnyRealmCollectionBox<C.Element> {
    let base: C

    init(_ base: C) { self.base = base }

    override var count: Int { base.count }
    override func element(at position: Int) -> C.Element { base[position] }
    override var realm: Realm? { base.realm }
    override var isInvalidated: Bool { base.isInvalidated }
    override var isFrozen: Bool { base.isFrozen }
    override var description: String { base.description }
    override var rlmCollection: CollectionElements<C.Element> { base._rlmCollection }
    override func freeze() -> AnyRealmCollectionBox<C.Element> { WrappedCollection(base.freeze()) }
    override func thaw() -> AnyRealmCollectionBox<C.Element>? { base.thaw().map { WrappedCollection($0) } }
    override func isEqual(to other: AnyRealmCollectionBox<C.Element>) -> Bool {
        guard let other = other as? WrappedCollection<C> else { return false }
        return base == other.base
    }

    /// A change of the wrapped collection as a change of its wrapper.
    static func wrap(_ change: RealmCollectionChange<C>) -> RealmCollectionChange<AnyRealmCollection<C.Element>> {
        change.map { AnyRealmCollection($0) }
    }

    override func observe(
        keyPaths: [String]?, on queue: DispatchQueue?, _ block: @escaping (RealmCollectionChange<AnyRealmCollection<C.Element>>) -> Void
    ) -> NotificationToken {
        base.observe(keyPaths: keyPaths, on: queue) { change in block(Self.wrap(change)) }
    }

    override func observe<A: Actor>(
        keyPaths: [String]?, on actor: A, _isolation: isolated (any Actor)?,
        _ block: @escaping @Sendable (isolated A, RealmCollectionChange<AnyRealmCollection<C.Element>>) -> Void
    ) async -> NotificationToken {
        await base.observe(keyPaths: keyPaths, on: actor, _isolation: _isolation) { actor, change in block(actor, Self.wrap(change)) }
    }
}

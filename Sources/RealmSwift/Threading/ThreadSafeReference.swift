import RealmStorage
import Synchronization

/// Something a ``ThreadSafeReference`` can carry to another thread or actor.
public protocol ThreadConfined {
    /// The Realm managing the value, or nil.
    var realm: Realm? { get }
}

extension ObjectBase: ThreadConfined {}
extension Results: ThreadConfined {}
extension Realm: ThreadConfined {
    /// The Realm itself.
    public var realm: Realm? { self }
}

/// Carries a live object, `Results` or `Realm` to another thread or actor, where
/// ``Realm/resolve(_:)`` turns it back into a live value of that Realm.
///
/// ```swift
/// let ref = ThreadSafeReference(to: dog)
/// Thread.detachNewThread {
///     let realm = try! Realm()
///     guard let dog = realm.resolve(ref) else { return }  // nil if it was deleted
/// }
/// ```
///
/// `Sendable`; resolve it once.
public struct ThreadSafeReference<Confined: ThreadConfined>: Sendable {
    /// Whether the reference was resolved: it resolves once (RealmSwift's rule), its copies share it.
    let resolution = Resolution()
    /// Whether ``Realm/resolve(_:)`` was already called with this reference (or a copy of it): a
    /// reference can be resolved only once, as in RealmSwift.
    public var isInvalidated: Bool { resolution.done.load(ordering: .acquiring) }
    let path: String
    let className: String?
    let key: ObjectKey?
    let version: UInt64
    /// The filters, sorts and collection a `Results` carries.
    let query: ResultsQuery?
    /// Makes results of values again in the resolving Realm (it captures only the holder's class,
    /// key and property index and the steps, all immutable).
    let values: Unchecked<(Realm) -> Any?>?

    /// A reference to `value`, which must be managed by a Realm and not in a write transaction.
    public init(to value: Confined) {
        guard let realm = value.realm else { fatalError("Cannot create a ThreadSafeReference to an unmanaged object.") }
        realm.checkThread()
        if realm.isInWriteTransaction {
            fatalError("Cannot create a ThreadSafeReference while the Realm is in a write transaction; commit first.")
        }
        path = realm.store.path
        version = realm.currentSnapshot.version
        values = (value as? any ResultsType)?.valueResolver
        switch value {
        case let o as ObjectBase:
            className = o._rlmClass.className
            key = o._rlmKey
            query = nil
        case let r as any ResultsType where values == nil:
            className = r.className
            key = nil
            query = r.query
        default:
            className = nil
            key = nil
            query = nil
        }
    }
}

/// What a thread-safe reference carries of a `Results`: the class name and query of results of
/// objects, or the way to make results of values again (nil for results of objects).
protocol ResultsType {
    var className: String { get }
    var query: ResultsQuery { get }
    var valueResolver: Unchecked<(Realm) -> Any?>? { get }
}

extension Results: ResultsType {
    var className: String { base.info.className }
    var query: ResultsQuery { base.query }
    var valueResolver: Unchecked<(Realm) -> Any?>? {
        guard let values else { return nil }
        let make = values.rebuilder
        // Gone there (the holder deleted): nil, as for an object.
        return Unchecked({ realm in
            let v = make(realm)
            return v.isInvalidated ? nil : Results(values: v)
        })
    }
}

extension Realm {
    /// The live value a ``ThreadSafeReference`` carries, in this Realm (advanced to at least the
    /// reference's version), or nil when the object was deleted.
    public func resolve<Confined: ThreadConfined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
        checkThread()
        if reference.resolution.done.exchange(true, ordering: .acquiringAndReleasing) {
            fatalError("A ThreadSafeReference can be resolved only once; make a new one for each resolution.")
        }
        guard reference.path == store.path else { fatalError("The ThreadSafeReference belongs to another Realm file.") }
        if !isInWriteTransaction, currentSnapshot.version < reference.version { refresh() }
        if Confined.self is Realm.Type { return self as? Confined }
        if let values = reference.values { return values.value(self) as? Confined }
        guard let className = reference.className else { return nil }
        if let key = reference.key {
            guard let type = Confined.self as? ObjectBase.Type else { return nil }
            let info = ClassInfo.of(type)
            guard info.className == className else { return nil }
            let o = makeObject(type, key, info)
            return containsObject(o) ? o as? Confined : nil
        }
        guard let results = Confined.self as? any ResultsFactory.Type else { return nil }
        return results.make(self, className, reference.query ?? ResultsQuery()) as? Confined
    }
}

/// Makes `Results` of a static element type for ``Realm/resolve(_:)``.
protocol ResultsFactory {
    static func make(_ realm: Realm, _ className: String, _ query: ResultsQuery) -> Any?
}

extension Results: ResultsFactory {
    /// The same query (filters, sorts, collection) over `realm`.
    static func make(_ realm: Realm, _ className: String, _ query: ResultsQuery) -> Any? {
        guard let type = Element.self as? ObjectBase.Type else { fatalError("Results of \(Element.self) cannot be resolved.") }
        let info: ClassInfo
        if type is DynamicObject.Type {
            guard let dynamic = try? realm.dynamicInfo(className) else { return nil }
            info = dynamic
        } else {
            info = ClassInfo.of(type)
        }
        return Results(realm: realm, info: info, query: query)
    }
}

/// Whether a ``ThreadSafeReference`` was resolved, shared by its copies. `Sendable`: an atomic flag.
final class Resolution: Sendable {
    let done = Atomic<Bool>(false)
}

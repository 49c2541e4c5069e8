import Foundation
import RealmStorage

/// What a collection property observer needs to know, captured on the observing thread.
struct PropertyTarget: Sendable {
    let info: ClassInfo
    let table: String
    let key: ObjectKey
    let index: Int
    let column: String
    /// The class of the linked objects (collections of objects), else nil.
    let target: String?
    let paths: ObservedPaths
    let tables: Set<String>

    init(_ p: ManagedProperty, keyPaths: [String]?, what: String) {
        guard let realm = p.realm else { fatalError("Only managed \(what)s can be observed; add the object to a Realm first.") }
        realm.checkThread()
        if realm.isFrozen { fatalError("Frozen \(what)s do not change and cannot be observed; observe the live \(what) (thaw()).") }
        info = p.parent._rlmClass
        table = info.className
        key = p.parent._rlmKey
        index = p.index
        column = info.properties[p.index].name
        let catalog = realm.catalog
        target = catalog.table(table)?.column(column)?.linkTarget
        paths = target.map { ChangeContext.resolve(keyPaths, table: $0, catalog: catalog) } ?? nil
        tables = Set([table]).union(target.map { ChangeContext.reachableTables(from: $0, catalog: catalog) } ?? [])
    }

    /// The property's stored value at `snap` (nil when the object is gone).
    func value(_ snap: Snapshot) throws -> StorageValue? {
        guard try snap.contains(table, key) else { return nil }
        return try snap.value(table, key, column)
    }

    func isDeleted(_ changes: Changeset) -> Bool { changes.tables[table]?.deleted.contains(key) == true }

    /// Whether a stored element counts as modified (a linked object that changed).
    func isModified(_ v: StorageValue, _ context: ChangeContext) -> Bool {
        guard let target, case .link(let k) = v else { return false }
        return context.isModified(target, k, paths)
    }

    /// The logic of an ordered collection property (a list or a set): elements diffed by stored
    /// value, linked objects reported as modified when they changed.
    func orderedLogic() -> NotifierLogic<[StorageValue], CollectionDiff> {
        let me = self
        return NotifierLogic(
            tables: tables,
            initial: { snap in storedElements(try me.value(snap)) },
            compute: { old, oldItems, new, changes in
                if me.isDeleted(changes) {
                    var d = CollectionDiff()
                    d.deletions = Array(oldItems.indices)
                    return NotifierOutcome(state: [], change: d, isFinal: true)
                }
                let newItems = storedElements(try me.value(new))
                let context = ChangeContext(old: old, new: new, changes: changes)
                let d = CollectionDiff.compute(old: oldItems, new: newItems) { me.isModified($0, context) }
                return NotifierOutcome(state: newItems, change: d.isEmpty ? nil : d)
            })
    }

    /// The parent object in `realm` (a queue's, actor's or frozen Realm).
    func parent(in realm: Realm) -> ObjectBase { realm.makeObject(info.type, key, info) }
}

/// Turns a collection diff event into RealmSwift's change for `value`.
func collectionReport<C>(_ event: NotifierEvent<some Any, CollectionDiff>, _ value: () -> C) -> RealmCollectionChange<C> {
    switch event {
    case .initial: .initial(value())
    case .update(_, _, let d): .update(value(), deletions: d.deletions, insertions: d.insertions, modifications: d.modifications)
    case .error(let e): .error(e)
    }
}

extension List {
    /// Registers a block called with this list's changes (`.initial`, then `.update` with
    /// deletions, insertions and modifications; a modification is an element object that
    /// changed, filtered by `keyPaths`). When the list's object is deleted, every element is
    /// reported deleted once. `queue` nil: this Realm's thread.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (RealmCollectionChange<List>) -> Void
    ) -> NotificationToken {
        return observation(keyPaths).observe(realm!, on: queue, value: self, block)
    }

    /// Registers a block called on `actor` with this list's changes.
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, RealmCollectionChange<List>) -> Void
    ) async -> NotificationToken {
        observation(keyPaths).onActor(realm!, actor, block)
    }

    /// This list's changes as an async sequence of frozen lists.
    public func changes(keyPaths: [String]? = nil) -> AsyncStream<RealmCollectionChange<List>> {
        observation(keyPaths).stream(realm!)
    }

    func observation(_ keyPaths: [String]?) -> Observation<[StorageValue], CollectionDiff, List, RealmCollectionChange<List>> {
        guard let property else { fatalError("Only managed lists can be observed; add the object to a Realm first.") }
        let t = PropertyTarget(property, keyPaths: keyPaths, what: "list")
        return Observation(
            logic: t.orderedLogic(), make: { realm, _ in List._rlmGet(t.parent(in: realm), t.index) }, report: collectionReport)
    }
}

extension MutableSet {
    /// Registers a block called with this set's changes (indices in the set's order); see
    /// ``List/observe(keyPaths:on:_:)``.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (RealmCollectionChange<MutableSet>) -> Void
    ) -> NotificationToken {
        return observation(keyPaths).observe(realm!, on: queue, value: self, block)
    }

    /// Registers a block called on `actor` with this set's changes.
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, RealmCollectionChange<MutableSet>) -> Void
    ) async -> NotificationToken {
        observation(keyPaths).onActor(realm!, actor, block)
    }

    /// This set's changes as an async sequence of frozen sets.
    public func changes(keyPaths: [String]? = nil) -> AsyncStream<RealmCollectionChange<MutableSet>> {
        observation(keyPaths).stream(realm!)
    }

    func observation(_ keyPaths: [String]?) -> Observation<[StorageValue], CollectionDiff, MutableSet, RealmCollectionChange<MutableSet>> {
        guard let property else { fatalError("Only managed sets can be observed; add the object to a Realm first.") }
        let t = PropertyTarget(property, keyPaths: keyPaths, what: "set")
        return Observation(
            logic: t.orderedLogic(), make: { realm, _ in MutableSet._rlmGet(t.parent(in: realm), t.index) }, report: collectionReport)
    }
}

/// The change of a map between two versions, by key.
struct MapDelta: Sendable {
    var deletions: [String] = []
    var insertions: [String] = []
    var modifications: [String] = []
}

extension Map {
    /// Registers a block called with this map's changes by key: removed keys, added keys, and
    /// keys whose value changed (or whose linked object changed, filtered by `keyPaths`). `queue`
    /// nil: this Realm's thread.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (RealmMapChange<Map>) -> Void
    ) -> NotificationToken {
        return observation(keyPaths).observe(realm!, on: queue, value: self, block)
    }

    /// Registers a block called on `actor` with this map's changes.
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, RealmMapChange<Map>) -> Void
    ) async -> NotificationToken {
        observation(keyPaths).onActor(realm!, actor, block)
    }

    /// This map's changes as an async sequence of frozen maps.
    public func changes(keyPaths: [String]? = nil) -> AsyncStream<RealmMapChange<Map>> {
        observation(keyPaths).stream(realm!)
    }

    func observation(_ keyPaths: [String]?) -> Observation<[String: StorageValue], MapDelta, Map, RealmMapChange<Map>> {
        guard let property else { fatalError("Only managed maps can be observed; add the object to a Realm first.") }
        let t = PropertyTarget(property, keyPaths: keyPaths, what: "map")
        func entries(_ v: StorageValue?) -> [String: StorageValue] {
            if case .map(let m) = v { return m }
            return [:]
        }
        let logic = NotifierLogic<[String: StorageValue], MapDelta>(
            tables: t.tables,
            initial: { snap in entries(try t.value(snap)) },
            compute: { old, oldMap, new, changes in
                if t.isDeleted(changes) {
                    return NotifierOutcome(state: [:], change: MapDelta(deletions: oldMap.keys.sorted()), isFinal: true)
                }
                let newMap = entries(try t.value(new))
                let context = ChangeContext(old: old, new: new, changes: changes)
                var d = MapDelta()
                d.deletions = oldMap.keys.filter { newMap[$0] == nil }.sorted()
                d.insertions = newMap.keys.filter { oldMap[$0] == nil }.sorted()
                d.modifications = newMap.compactMap { k, v in
                    guard let o = oldMap[k] else { return nil }
                    return o != v || t.isModified(v, context) ? k : nil
                }.sorted()
                let empty = d.deletions.isEmpty && d.insertions.isEmpty && d.modifications.isEmpty
                return NotifierOutcome(state: newMap, change: empty ? nil : d)
            })
        return Observation(
            logic: logic, make: { realm, _ in Map._rlmGet(t.parent(in: realm), t.index) },
            report: { event, map in
                switch event {
                case .initial: .initial(map())
                case .update(_, _, let d): .update(map(), deletions: d.deletions, insertions: d.insertions, modifications: d.modifications)
                case .error(let e): .error(e)
                }
            })
    }
}

extension LinkingObjects {
    /// Registers a block called with the changes of the objects linking here; see
    /// `Results/observe(keyPaths:on:_:)`.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (RealmCollectionChange<LinkingObjects>) -> Void
    ) -> NotificationToken {
        return observation(keyPaths).observe(realm!, on: queue, value: self, block)
    }

    /// Registers a block called on `actor` with these linking objects' changes.
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, RealmCollectionChange<LinkingObjects>) -> Void
    ) async -> NotificationToken {
        observation(keyPaths).onActor(realm!, actor, block)
    }

    /// These linking objects' changes as an async sequence of frozen collections.
    public func changes(keyPaths: [String]? = nil) -> AsyncStream<RealmCollectionChange<LinkingObjects>> {
        observation(keyPaths).stream(realm!)
    }

    func observation(_ keyPaths: [String]?) -> Observation<
        [ObjectKey], CollectionDiff, LinkingObjects, RealmCollectionChange<LinkingObjects>
    > {
        guard let parent, let realm = parent._rlmRealm else { fatalError("Only managed linking objects can be observed.") }
        realm.checkThread()
        if realm.isFrozen { fatalError("Frozen linking objects do not change and cannot be observed; observe the live ones (thaw()).") }
        let origin = ClassInfo.of(Element.self).className
        let property = propertyName
        let target = parent._rlmKey
        let parentInfo = parent._rlmClass
        let catalog = realm.catalog
        let paths = ChangeContext.resolve(keyPaths, table: origin, catalog: catalog)
        func keys(_ snap: Snapshot) throws -> [ObjectKey] {
            guard snap.catalog.table(origin) != nil else { return [] }
            return try snap.objectKeys(origin).filter { k in Realm.linkKeys(try snap.value(origin, k, property)).contains(target) }
        }
        let logic = NotifierLogic<[ObjectKey], CollectionDiff>(
            tables: ChangeContext.reachableTables(from: origin, catalog: catalog).union([parentInfo.className]),
            initial: keys,
            compute: { old, oldKeys, new, changes in
                let newKeys = try keys(new)
                let context = ChangeContext(old: old, new: new, changes: changes)
                let modified = context.modifiedKeys(origin, among: newKeys, paths)
                let t = changes.tables[origin]
                var changed = modified
                for set in [t?.inserted, t?.deleted, t?.modified] { changed.formUnion(set ?? []) }
                let d =
                    CollectionDiff.compute(old: oldKeys, new: newKeys, changed: changed, modified: modified.contains)
                    ?? CollectionDiff.compute(old: oldKeys, new: newKeys, modified: modified.contains)
                return NotifierOutcome(state: newKeys, change: d.isEmpty ? nil : d)
            })
        return Observation(
            logic: logic,
            make: { realm, _ in LinkingObjects(parent: realm.makeObject(parentInfo.type, target, parentInfo), property: property) },
            report: collectionReport)
    }
}

extension RealmCollection where Element: ObjectBase {
    /// ``RealmCollection/observe(keyPaths:on:_:)`` with Swift key paths, for every collection of
    /// objects (``Results``, ``List``, ``MutableSet``, ``LinkingObjects``, ``AnyRealmCollection``):
    /// `person.dogs.observe(keyPaths: [\Dog.name]) { change in … }`.
    public func observe(
        keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil, _ block: @escaping (RealmCollectionChange<Self>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: KeyPathNames.dotted(keyPaths), on: queue, block)
    }

    /// The actor form of ``observe(keyPaths:on:_:)`` with Swift key paths.
    public func observe<A: Actor>(
        keyPaths: [PartialKeyPath<Element>], on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, RealmCollectionChange<Self>) -> Void
    ) async -> NotificationToken {
        await observe(keyPaths: KeyPathNames.dotted(keyPaths), on: actor, _isolation: _isolation, block)
    }
}

import Foundation
import RealmStorage

/// What happened to an observed object between two versions (computed off the delivering thread).
enum ObjectDelta: Sendable {
    case deleted
    /// Changed properties: name, old and new stored value (old nil when only a linked object
    /// changed).
    case changed([(name: String, old: StorageValue?, new: StorageValue?)])
}

/// Observing a single object. Every managed object has these methods (`Self` is the observed
/// object's static type).
public protocol ObjectObservable: AnyObject {}

extension ObjectBase: ObjectObservable {}

extension ObjectObservable where Self: ObjectBase {
    /// Registers a block called when this object changes: `.change(object, properties)` with the
    /// old and new value of each changed property, `.deleted` once when it is deleted (then no
    /// more calls). There is no initial call.
    ///
    /// - Parameters:
    ///   - keyPaths: only these properties count (`"name"`, `"dog.name"`); nil: every property.
    ///   - queue: a serial queue to deliver on (the object is then read in a Realm confined to
    ///     that queue); nil: this Realm's thread (run loop, `refresh()`, before a write).
    ///   - block: called with each change.
    ///
    /// ```swift
    /// let token = dog.observe(keyPaths: ["name"]) { change in
    ///     if case .change(_, let properties) = change { print(properties.map(\.name)) }
    /// }
    /// ```
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (ObjectChange<Self>) -> Void
    ) -> NotificationToken {
        return objectObservation(keyPaths).observe(_rlmRealm!, on: queue, value: self, block)
    }

    /// ``observe(keyPaths:on:_:)`` with Swift key paths: `dog.observe(keyPaths: [\Dog.name])`.
    public func observe(
        keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue? = nil, _ block: @escaping (ObjectChange<Self>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: KeyPathNames.dotted(keyPaths), on: queue, block)
    }

    /// Registers a block called on `actor` when this object changes (read in a Realm isolated to
    /// the actor); see ``observe(keyPaths:on:_:)``.
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, ObjectChange<Self>) -> Void
    ) async -> NotificationToken {
        objectObservation(keyPaths).onActor(_rlmRealm!, actor, block)
    }

    /// This object's changes as an async sequence; objects in it are frozen at the version of
    /// each change. The sequence ends after `.deleted`.
    public func changes(keyPaths: [String]? = nil) -> AsyncStream<ObjectChange<Self>> {
        let inner = objectObservation(keyPaths).stream(_rlmRealm!)
        let (stream, continuation) = AsyncStream<ObjectChange<Self>>.makeStream()
        let source = Unchecked(inner)
        let task = Task {
            for await change in source.value {
                nonisolated(unsafe) let c = change
                continuation.yield(c)
                if case .deleted = c { break }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    func objectObservation(_ keyPaths: [String]?) -> Observation<Bool, ObjectDelta, Self, ObjectChange<Self>> {
        guard let realm = _rlmRealm else { fatalError("Only managed objects can be observed; add the object to a Realm first.") }
        realm.checkThread()
        if realm.isFrozen { fatalError("Frozen objects do not change and cannot be observed; observe the live object (thaw()).") }
        let info = _rlmClass
        let key = _rlmKey
        let table = info.className
        let catalog = realm.catalog
        let paths = ChangeContext.resolve(keyPaths, table: table, catalog: catalog)
        let properties = info.properties.filter(\.isStored).map(\.name)
        let logic = NotifierLogic<Bool, ObjectDelta>(
            tables: ChangeContext.reachableTables(from: table, catalog: catalog),
            initial: { snap in try snap.contains(table, key) },
            compute: { old, _, new, changes in
                if changes.tables[table]?.deleted.contains(key) == true {
                    return NotifierOutcome(state: false, change: .deleted, isFinal: true)
                }
                let context = ChangeContext(old: old, new: new, changes: changes)
                let itself = changes.tables[table]?.modified.contains(key) == true
                var changed: [(name: String, old: StorageValue?, new: StorageValue?)] = []
                let observed = paths.map { Array(Set($0.map { $0[0] })) } ?? properties
                for name in properties where observed.contains(name) {
                    if itself, context.wasSet(table, key, name) {
                        changed.append((name, try? old.value(table, key, name), try? new.value(table, key, name)))
                    } else if let paths, paths.contains(where: { $0.count > 1 && $0[0] == name }),
                        context.isModified(table, key, paths.filter { $0[0] == name })
                    {
                        changed.append((name, nil, try? new.value(table, key, name)))
                    }
                }
                return NotifierOutcome(state: true, change: changed.isEmpty ? nil : .changed(changed))
            })
        return Observation(
            logic: logic,
            make: { realm, _ in realm.makeObject(Self.self, key, info) },
            report: { event, value in
                switch event {
                case .initial: return .deleted  // not delivered
                case .error(let e): return .error(e)
                case .update(_, _, .deleted): return .deleted
                case .update(_, _, .changed(let list)):
                    let object = value()
                    let realm = object._rlmRealm!
                    return .change(
                        object,
                        list.map { c in
                            let column = realm.catalog.table(table)?.column(c.name)
                            let isScalar = column.map { $0.linkTarget == nil && !$0.isList && !$0.isSet && !$0.isMap } ?? false
                            return PropertyChange(
                                name: c.name,
                                oldValue: isScalar ? c.old.flatMap { DynamicValues.swiftValue($0, target: nil, realm: realm) } : nil,
                                newValue: object[c.name])
                        })
                }
            },
            delivers: { if case .initial = $0 { false } else { true } })
    }
}

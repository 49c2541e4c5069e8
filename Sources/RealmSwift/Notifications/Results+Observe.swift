import Foundation
import RealmQuery
import RealmStorage

extension Results {
    /// Registers a block called with these results' changes: first `.initial`, then `.update`
    /// after each write that changed them (several commits between deliveries coalesce into one).
    ///
    /// - Parameters:
    ///   - keyPaths: only changes to these properties count as modifications (`"name"`,
    ///     `"toys"`, `"toys.brand"`); nil: any property of the objects or of objects they link to.
    ///     Insertions and deletions are always reported.
    ///   - queue: a serial queue to deliver on (the block gets results in a Realm confined to that
    ///     queue); nil: this Realm's thread, delivered on its run loop, on `refresh()`, and before
    ///     each write begins.
    ///   - block: called with `.initial`, then each `.update` (or `.error`).
    ///
    /// ```swift
    /// let token = realm.objects(Dog.self).observe(keyPaths: ["name"], on: queue) { change in
    ///     if case .update(let dogs, let deletions, let insertions, let modifications) = change { … }
    /// }
    /// ```
    /// Observing inside a write transaction, or observing frozen results, stops with a message.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (RealmCollectionChange<Results>) -> Void
    ) -> NotificationToken {
        if let values { return valueObservation(values).observe(values.realm!, on: queue, value: self, block) }
        return observation(keyPaths).observe(base.realm, on: queue, value: self, block)
    }

    /// Registers a block called on `actor` with these results' changes (in a Realm isolated to the
    /// actor); see ``observe(keyPaths:on:_:)``.
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, RealmCollectionChange<Results>) -> Void
    ) async -> NotificationToken {
        if let values { return valueObservation(values).onActor(values.realm!, actor, block) }
        return observation(keyPaths).onActor(base.realm, actor, block)
    }

    /// These results' changes as an async sequence of frozen results (each frozen at the version
    /// it describes), starting with `.initial`. Ending the iteration stops the observation.
    ///
    /// ```swift
    /// for await change in realm.objects(Dog.self).changes() { … }
    /// ```
    public func changes(keyPaths: [String]? = nil) -> AsyncStream<RealmCollectionChange<Results>> {
        if let values { return valueObservation(values).stream(values.realm!) }
        return observation(keyPaths).stream(base.realm)
    }

    /// Results of values change when the collection's values do: the values after the steps are
    /// diffed (equal values are the same element; nothing is a modification), and when the object
    /// holding the collection is deleted every value is reported deleted once.
    func valueObservation(_ values: ValueResults<Element>) -> Observation<
        [StorageValue], CollectionDiff, Results, RealmCollectionChange<Results>
    > {
        guard let origin = values.origin else {
            fatalError("Only results of values of a managed collection can be observed; add its object to a Realm first.")
        }
        let t = PropertyTarget(origin.property, keyPaths: nil, what: "results")
        let steps = values.steps
        let state: (Snapshot) throws -> [StorageValue] = { snap in
            let all = storedElements(try t.value(snap))
            return try ValueResults<Element>.evaluate(all, steps).map { all[$0] }
        }
        let logic = NotifierLogic<[StorageValue], CollectionDiff>(
            tables: [t.table], initial: state,
            compute: { _, old, new, changes in
                if t.isDeleted(changes) {
                    var d = CollectionDiff()
                    d.deletions = Array(old.indices)
                    return NotifierOutcome(state: [], change: d, isFinal: true)
                }
                let now = try state(new)
                let d = CollectionDiff.compute(old: old, new: now) { _ in false }
                return NotifierOutcome(state: now, change: d.isEmpty ? nil : d)
            })
        let rebuild = values.rebuilder
        return Observation(logic: logic, make: { realm, _ in Results(values: rebuild(realm)) }, report: collectionReport)
    }

    func observation(_ keyPaths: [String]?) -> Observation<[ObjectKey], CollectionDiff, Results, RealmCollectionChange<Results>> {
        let realm = base.realm
        realm.checkThread()
        if realm.isFrozen { fatalError("Frozen results do not change and cannot be observed; observe the live results (thaw()).") }
        let info = base.info
        let query = base.query
        let table = info.className
        let catalog = realm.catalog
        let paths = ChangeContext.resolve(keyPaths, table: table, catalog: catalog)
        let logic = NotifierLogic<[ObjectKey], CollectionDiff>(
            tables: ChangeContext.reachableTables(from: table, catalog: catalog).union(query.collectionTables),
            initial: { try query.evaluate(table, in: $0) },
            compute: { old, oldKeys, new, changes in
                let context = ChangeContext(old: old, new: new, changes: changes)
                let plan = try query.incrementalPlan(table, previousCount: oldKeys.count, changes: changes, in: new)
                if let plan, plan.sortKeys.isEmpty {
                    // Ascending keys: binary searches for the few changed objects, no full pass.
                    let changed = plan.changed.sorted()
                    let matching = Set(try QueryEvaluator(new).matching(table, changed, plan.predicate))
                    let modified = context.modifiedKeys(table, among: [], paths)
                    let (newKeys, diff) = CollectionDiff.ascendingUpdate(
                        old: oldKeys, changed: changed, matching: matching, modified: modified)
                    return NotifierOutcome(state: newKeys, change: diff.isEmpty ? nil : diff)
                }
                let newKeys =
                    try plan.map { plan in
                        let filter = KeyFilter(plan.changed)
                        return try QueryEvaluator(new).update(
                            table, previous: oldKeys, changed: plan.changed.sorted(), isChanged: filter.contains, predicate: plan.predicate,
                            sortKeys: plan.sortKeys)
                    } ?? query.evaluate(table, in: new)
                let modified = context.modifiedKeys(table, among: newKeys, paths)
                let t = changes.tables[table]
                var changed = modified
                for set in [t?.inserted, t?.deleted, t?.modified] { changed.formUnion(set ?? []) }
                let diff =
                    CollectionDiff.compute(old: oldKeys, new: newKeys, changed: changed, modified: modified.contains)
                    ?? CollectionDiff.compute(old: oldKeys, new: newKeys, modified: modified.contains)
                return NotifierOutcome(state: newKeys, change: diff.isEmpty ? nil : diff)
            })
        return Observation(
            logic: logic,
            make: { realm, _ in Results(realm: realm, info: info, query: query) },
            seed: { results, keys, snap in results.base.seed(keys, version: snap.version) },
            report: { event, results in
                switch event {
                case .initial: .initial(results())
                case .update(_, _, let d):
                    .update(results(), deletions: d.deletions, insertions: d.insertions, modifications: d.modifications)
                case .error(let e): .error(e)
                }
            })
    }
}

extension ResultsBase {
    /// Adopts keys a notifier computed for `version`, when the Realm reads exactly that version
    /// (so delivering a change does not evaluate the query again).
    func seed(_ keys: [ObjectKey], version: UInt64) {
        guard realm.transaction == nil, realm.snapshot?.version == version, generation == realm.generation else { return }
        adopt(keys)
    }
}

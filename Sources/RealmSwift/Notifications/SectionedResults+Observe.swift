import Foundation
import RealmStorage

/// Sections as the notifier keeps them: each key with the object keys of its rows.
typealias SectionList = [(key: AnyHashable, keys: [ObjectKey])]

/// The change between two section lists.
struct SectionsDelta: @unchecked Sendable {
    // `@unchecked Sendable`: value arrays only (IndexPath, IndexSet).
    var deletions: [IndexPath]
    var insertions: [IndexPath]
    var modifications: [IndexPath]
    var sectionsToInsert: IndexSet
    var sectionsToDelete: IndexSet

    var isEmpty: Bool {
        deletions.isEmpty && insertions.isEmpty && modifications.isEmpty && sectionsToInsert.isEmpty && sectionsToDelete.isEmpty
    }
}

extension SectionedResultsBase {
    /// The notifier logic of these sections: the results evaluated and grouped at each version
    /// (in a frozen Realm, off the delivering thread), then diffed by section and row.
    /// `only`: restrict the change to the section with this key (``ResultsSection``).
    func notifierLogic(_ keyPaths: [String]?, only: AnyHashable? = nil) -> NotifierLogic<SectionList, SectionsDelta> {
        if let values = results.values { return valueNotifierLogic(values, only: only) }
        let realm = results.base.realm
        realm.checkThread()
        if realm.isFrozen { fatalError("Frozen sections do not change and cannot be observed; observe the live ones (thaw()).") }
        let template = realm.template
        let info = results.base.info
        let query = results.base.query
        let table = info.className
        let catalog = realm.catalog
        let paths = ChangeContext.resolve(keyPaths, table: table, catalog: catalog)
        let grouping = Unchecked((sectionKey, keyOrder))
        func sections(_ snap: Snapshot) -> SectionList {
            let frozen = Realm(frozen: snap.retained(kind: "notifier"), template: template)
            let r = Results<Element>(realm: frozen, info: info, query: query)
            return SectionedResultsBase(r, sectionKey: grouping.value.0, keyOrder: grouping.value.1).sectionsForDiff
        }
        return NotifierLogic(
            tables: ChangeContext.reachableTables(from: table, catalog: catalog).union(query.collectionTables),
            initial: sections,
            compute: { old, oldSections, new, changes in
                let newSections = sections(new)
                let context = ChangeContext(old: old, new: new, changes: changes)
                let modified = context.modifiedKeys(table, among: newSections.flatMap(\.keys), paths)
                let d = Self.delta(oldSections, newSections, modified: modified.contains, only: only)
                return NotifierOutcome(state: newSections, change: d.isEmpty ? nil : d)
            })
    }

    /// Sections of a managed collection's values change when its values do: the sections are
    /// grouped again at each version and diffed with equal values as the same element (the k-th
    /// occurrence of a value is the same element in both versions; nothing is a modification).
    /// When the object holding the collection is deleted, every row is reported deleted once.
    private func valueNotifierLogic(_ values: ValueResults<Element>, only: AnyHashable?) -> NotifierLogic<SectionList, SectionsDelta> {
        guard let origin = values.origin else { fatalError(Self.unmanagedValues) }
        let realm = observedRealm
        realm.checkThread()
        if realm.isFrozen { fatalError("Frozen sections do not change and cannot be observed; observe the live ones (thaw()).") }
        let template = realm.template
        let target = PropertyTarget(origin.property, keyPaths: nil, what: "sections")
        let rebuild = Unchecked(values.rebuilder)
        let grouping = Unchecked((sectionKey, keyOrder))
        // Identities of the (value, occurrence) pairs of the newest version grouped (the next diff
        // compares with it), that version, and the next identity to give. A version grouped late
        // (an older one, when notifications are computed off the calling thread under load) reads
        // the table but does not replace it: the values of the newer version keep their identities.
        let identities = Locked<(known: [Occurrence: Int64], version: UInt64, next: Int64)>(([:], 0, 0))
        func sections(_ snap: Snapshot) -> SectionList {
            let frozen = Realm(frozen: snap.retained(kind: "notifier"), template: template)
            let base = SectionedResultsBase(
                Results(values: rebuild.value(frozen)), sectionKey: grouping.value.0, keyOrder: grouping.value.1)
            let layout = base.layout
            let ids: [ObjectKey] = identities.withLock { state in
                var seen: [Element: Int] = [:]
                var current: [Occurrence: Int64] = [:]
                let ids = layout.values.map { v in
                    let k = seen[v, default: 0]
                    seen[v] = k + 1
                    let occurrence = Occurrence(value: AnyHashable(v), index: k)
                    let id = state.known[occurrence] ?? state.next
                    if id == state.next { state.next += 1 }
                    current[occurrence] = id
                    return ObjectKey(id)
                }
                // Only this version's values are kept: the table does not grow with the values
                // the collection had once.
                if snap.version >= state.version {
                    state.known = current
                    state.version = snap.version
                }
                return ids
            }
            return zip(layout.keys, layout.rows).map { (AnyHashable($0.0), $0.1.map { ids[Int($0.rawValue)] }) }
        }
        return NotifierLogic(
            tables: [target.table], initial: sections,
            compute: { _, oldSections, new, changes in
                if target.isDeleted(changes) {
                    let d = Self.delta(oldSections, [], modified: { _ in false }, only: only)
                    return NotifierOutcome(state: [], change: d.isEmpty ? nil : d, isFinal: true)
                }
                let newSections = sections(new)
                let d = Self.delta(oldSections, newSections, modified: { _ in false }, only: only)
                return NotifierOutcome(state: newSections, change: d.isEmpty ? nil : d)
            })
    }

    /// The change between two section lists, narrowed to the section keyed `only` when given.
    static func delta(_ oldSections: SectionList, _ newSections: SectionList, modified: (ObjectKey) -> Bool, only: AnyHashable?)
        -> SectionsDelta
    {
        let c = SectionedDiff.changes(oldSections: oldSections, newSections: newSections, modified: modified)
        var d = SectionsDelta(
            deletions: c.deletions, insertions: c.insertions, modifications: c.modifications, sectionsToInsert: c.sectionsToInsert,
            sectionsToDelete: c.sectionsToDelete)
        if let only {
            let before = oldSections.firstIndex { $0.key == only }
            let after = newSections.firstIndex { $0.key == only }
            d.deletions = d.deletions.filter { $0.section == before }
            d.modifications = d.modifications.filter { $0.section == before }
            d.insertions = d.insertions.filter { $0.section == after }
            d.sectionsToInsert = d.sectionsToInsert.filteredIndexSet { $0 == after }
            d.sectionsToDelete = d.sectionsToDelete.filteredIndexSet { $0 == before }
        }
        return d
    }

    /// The make step of an observation: these sections, at the version of `realm`.
    func remade(in realm: Realm) -> SectionedResultsBase {
        if let values = results.values {
            return SectionedResultsBase(Results(values: values.rebuilder(realm)), sectionKey: sectionKey, keyOrder: keyOrder)
        }
        return SectionedResultsBase(
            Results(realm: realm, info: results.base.info, query: results.base.query), sectionKey: sectionKey, keyOrder: keyOrder)
    }

    /// The Realm whose thread observations of these sections are delivered on.
    var observedRealm: Realm {
        guard let realm = results.realm else { fatalError(Self.unmanagedValues) }
        return realm
    }

    static var unmanagedValues: String {
        "Only sections of a managed collection's values can be observed; add its object to a Realm first."
    }
}

/// The k-th occurrence of a value among a collection's values: what a value is, for the diff.
struct Occurrence: Hashable, @unchecked Sendable {
    // `@unchecked Sendable`: persistable values, only read under the observation's lock.
    let value: AnyHashable
    let index: Int
}

/// Turns a sections event into RealmSwift's change for `value` (errors are not reported:
/// `SectionedResultsChange` has no error case).
func sectionsReport<C>(_ event: NotifierEvent<SectionList, SectionsDelta>, _ value: () -> C) -> SectionedResultsChange<C> {
    switch event {
    case .initial, .error: .initial(value())
    case .update(_, _, let d):
        .update(
            value(), deletions: d.deletions, insertions: d.insertions, modifications: d.modifications, sectionsToInsert: d.sectionsToInsert,
            sectionsToDelete: d.sectionsToDelete)
    }
}

/// Sectioned changes have no error case: errors end the observation silently.
func sectionsDelivers(_ event: NotifierEvent<SectionList, SectionsDelta>) -> Bool {
    if case .error = event { return false }
    return true
}

extension SectionedResults {
    /// Registers a block called with these sections' changes: `.initial`, then `.update` with rows
    /// deleted and modified (previous index paths), rows inserted (new index paths), and sections
    /// inserted and deleted. `keyPaths` filter modifications as for ``Results``; `queue` nil:
    /// this Realm's thread.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (SectionedResultsChange<SectionedResults>) -> Void
    ) -> NotificationToken {
        return observation(keyPaths).observe(base.observedRealm, on: queue, value: self, block)
    }

    /// Registers a block called on `actor` with these sections' changes.
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, SectionedResultsChange<SectionedResults>) -> Void
    ) async -> NotificationToken {
        observation(keyPaths).onActor(base.observedRealm, actor, block)
    }

    /// These sections' changes as an async sequence of frozen sections.
    public func changes(keyPaths: [String]? = nil) -> AsyncStream<SectionedResultsChange<SectionedResults>> {
        observation(keyPaths).stream(base.observedRealm)
    }

    func observation(_ keyPaths: [String]?) -> Observation<
        SectionList, SectionsDelta, SectionedResults, SectionedResultsChange<SectionedResults>
    > {
        let b = Unchecked(base)
        return Observation(
            logic: base.notifierLogic(keyPaths),
            make: { realm, _ in SectionedResults(b.value.remade(in: realm)) },
            report: sectionsReport, delivers: sectionsDelivers)
    }
}

extension ResultsSection {
    /// Registers a block called with this section's changes (index paths use the section's
    /// index among all sections; `sectionsToInsert`/`sectionsToDelete` name this section when
    /// it appears or disappears). `queue` nil: this Realm's thread.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (SectionedResultsChange<ResultsSection>) -> Void
    ) -> NotificationToken {
        return observation(keyPaths).observe(base.observedRealm, on: queue, value: self, block)
    }

    /// Registers a block called on `actor` with this section's changes.
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, SectionedResultsChange<ResultsSection>) -> Void
    ) async -> NotificationToken {
        observation(keyPaths).onActor(base.observedRealm, actor, block)
    }

    /// This section's changes as an async sequence of frozen sections.
    public func changes(keyPaths: [String]? = nil) -> AsyncStream<SectionedResultsChange<ResultsSection>> {
        observation(keyPaths).stream(base.observedRealm)
    }

    func observation(_ keyPaths: [String]?) -> Observation<
        SectionList, SectionsDelta, ResultsSection, SectionedResultsChange<ResultsSection>
    > {
        let b = Unchecked(base)
        let key = Unchecked(key)
        return Observation(
            logic: base.notifierLogic(keyPaths, only: AnyHashable(key.value)),
            make: { realm, _ in ResultsSection(b.value.remade(in: realm), key: key.value) },
            report: sectionsReport, delivers: sectionsDelivers)
    }
}

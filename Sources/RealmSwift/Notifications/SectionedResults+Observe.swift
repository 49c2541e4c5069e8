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
                let c = SectionedDiff.changes(oldSections: oldSections, newSections: newSections, modified: modified.contains)
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
                return NotifierOutcome(state: newSections, change: d.isEmpty ? nil : d)
            })
    }
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
        return observation(keyPaths).observe(base.results.base.realm, on: queue, value: self, block)
    }

    /// Registers a block called on `actor` with these sections' changes.
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, SectionedResultsChange<SectionedResults>) -> Void
    ) async -> NotificationToken {
        observation(keyPaths).onActor(base.results.base.realm, actor, block)
    }

    /// These sections' changes as an async sequence of frozen sections.
    public func changes(keyPaths: [String]? = nil) -> AsyncStream<SectionedResultsChange<SectionedResults>> {
        observation(keyPaths).stream(base.results.base.realm)
    }

    func observation(_ keyPaths: [String]?) -> Observation<
        SectionList, SectionsDelta, SectionedResults, SectionedResultsChange<SectionedResults>
    > {
        let b = Unchecked(base)
        let info = base.results.base.info
        let query = base.results.base.query
        return Observation(
            logic: base.notifierLogic(keyPaths),
            make: { realm, _ in
                SectionedResults(
                    Results(realm: realm, info: info, query: query), sectionKey: b.value.sectionKey, keyOrder: b.value.keyOrder)
            },
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
        return observation(keyPaths).observe(base.results.base.realm, on: queue, value: self, block)
    }

    /// Registers a block called on `actor` with this section's changes.
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, SectionedResultsChange<ResultsSection>) -> Void
    ) async -> NotificationToken {
        observation(keyPaths).onActor(base.results.base.realm, actor, block)
    }

    /// This section's changes as an async sequence of frozen sections.
    public func changes(keyPaths: [String]? = nil) -> AsyncStream<SectionedResultsChange<ResultsSection>> {
        observation(keyPaths).stream(base.results.base.realm)
    }

    func observation(_ keyPaths: [String]?) -> Observation<
        SectionList, SectionsDelta, ResultsSection, SectionedResultsChange<ResultsSection>
    > {
        let b = Unchecked(base)
        let info = base.results.base.info
        let query = base.results.base.query
        let key = Unchecked(key)
        return Observation(
            logic: base.notifierLogic(keyPaths, only: AnyHashable(key.value)),
            make: { realm, _ in
                let sections = SectionedResultsBase(
                    Results(realm: realm, info: info, query: query), sectionKey: b.value.sectionKey, keyOrder: b.value.keyOrder)
                return ResultsSection(sections, key: key.value)
            },
            report: sectionsReport, delivers: sectionsDelivers)
    }
}

import Foundation
import RealmStorage

/// A change to a ``SectionedResults`` or a ``ResultsSection``, as its observers receive it.
///
/// `.update` lists what a batch update of a sectioned view needs, in the order it applies them:
/// delete the rows at `deletions` (index paths in the previous version), delete the sections at
/// `sectionsToDelete` (previous indices), insert the sections at `sectionsToInsert` (new indices,
/// with all their rows), then insert the rows at `insertions` (index paths in the new version).
/// As in RealmSwift, `insertions` also lists the rows of every inserted section (skip those when
/// a view inserts a section with its rows); the rows of a deleted section are not listed.
/// `modifications` are the index paths, in the previous version, of objects that stayed in their
/// section and changed.
///
/// ```swift
/// switch change {
/// case .initial(let sections):
///     show(sections)
/// case .update(let sections, let deletions, let insertions, let modifications, let sectionsToInsert, let sectionsToDelete):
///     table.performBatchUpdates {
///         table.deleteRows(at: deletions)
///         table.deleteSections(sectionsToDelete)
///         table.insertSections(sectionsToInsert)
///         table.insertRows(at: insertions.filter { !sectionsToInsert.contains($0.section) })
///         table.reloadRows(at: modifications)
///     }
/// }
/// ```
///
/// Sendable when the collection it carries is (frozen collections are read from any thread).
public enum SectionedResultsChange<Collection> {
    /// The collection as it was when the observation began.
    case initial(Collection)
    /// The collection after a change: the rows deleted and modified (previous index paths), the
    /// rows inserted (new index paths), and the sections inserted (new indices) and deleted
    /// (previous indices).
    case update(
        Collection, deletions: [IndexPath], insertions: [IndexPath], modifications: [IndexPath], sectionsToInsert: IndexSet,
        sectionsToDelete: IndexSet)
}

extension SectionedResultsChange: Sendable where Collection: Sendable {}

/// The difference between two versions of a sectioned collection, in the shape of
/// ``SectionedResultsChange/update(_:deletions:insertions:modifications:sectionsToInsert:sectionsToDelete:)``.
enum SectionedDiff {
    /// The change from `oldSections` to `newSections`, each a list of sections with distinct keys
    /// and the objects of each section in order (an object in at most one section).
    ///
    /// Sections are matched by key. Matched sections keep their place when their order is
    /// unchanged; of matched sections whose relative order changed, those outside a longest run
    /// kept in order are deleted and inserted again (there are no section moves). Within a kept
    /// section the rows are compared with ``CollectionDiff/compute(old:new:modified:)``: an object
    /// that moved (within its section or to another) is a deletion and an insertion. `modified`
    /// is asked only about objects that stayed in a kept section.
    ///
    /// Every list is ascending: index paths by section, then row.
    static func changes(
        oldSections: [(key: AnyHashable, keys: [ObjectKey])], newSections: [(key: AnyHashable, keys: [ObjectKey])],
        modified: (ObjectKey) -> Bool
    ) -> (
        deletions: [IndexPath], insertions: [IndexPath], modifications: [IndexPath], sectionsToInsert: IndexSet, sectionsToDelete: IndexSet
    ) {
        var newIndex: [AnyHashable: Int] = [:]
        newIndex.reserveCapacity(newSections.count)
        for (j, section) in newSections.enumerated() {
            let previous = newIndex.updateValue(j, forKey: section.key)
            assert(previous == nil, "Section key \(section.key) appears twice in the new sections.")
        }
        // Sections in both versions, in old order, with their new index.
        var matched: [(old: Int, new: Int)] = []
        var sectionsToDelete = IndexSet()
        for (i, section) in oldSections.enumerated() {
            if let j = newIndex[section.key] { matched.append((i, j)) } else { sectionsToDelete.insert(i) }
        }
        var sectionsToInsert = IndexSet(newSections.indices)
        let staying = CollectionDiff.longestIncreasing(matched.map(\.new))
        var deletions: [IndexPath] = []
        var insertions: [IndexPath] = []
        var modifications: [IndexPath] = []
        for (p, pair) in matched.enumerated() {
            guard staying.contains(p) else {
                sectionsToDelete.insert(pair.old)
                continue
            }
            sectionsToInsert.remove(pair.new)
            let rows = CollectionDiff.compute(old: oldSections[pair.old].keys, new: newSections[pair.new].keys, modified: modified)
            deletions += rows.deletions.map { IndexPath(item: $0, section: pair.old) }
            insertions += rows.insertions.map { IndexPath(item: $0, section: pair.new) }
            modifications += rows.modifications.sorted().map { IndexPath(item: $0, section: pair.old) }
        }
        // As in RealmSwift, the rows of an inserted section are insertions too.
        for j in sectionsToInsert {
            insertions += newSections[j].keys.indices.map { IndexPath(item: $0, section: j) }
        }
        insertions.sort { ($0.section, $0.item) < ($1.section, $1.item) }
        return (deletions, insertions, modifications, sectionsToInsert, sectionsToDelete)
    }
}

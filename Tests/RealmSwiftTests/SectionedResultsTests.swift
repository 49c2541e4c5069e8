import Foundation
import RealmStorage
import RealmTestSupport
import Testing

@testable import RealmSwift

@Suite struct SectionedResultsTests {
    /// 20 people: names `name-0` … `name-6` (id % 7), ages (id * 7) % 30.
    func seeded() throws -> (Realm, TempDir) {
        let (realm, dir) = try makeRealm()
        try realm.write {
            for i in 0..<20 { realm.add(Person(value: ["id": i, "name": "name-\(i % 7)", "age": (i * 7) % 30])) }
        }
        return (realm, dir)
    }

    /// The sections as (key, ids) pairs.
    func ids<K: _Persistable & Hashable>(_ sections: SectionedResults<K, Person>) -> [(K, [Int])] {
        sections.map { ($0.key, $0.map(\.id)) }
    }

    @Test func keyPathSectionsGroupSortedObjects() throws {
        let (realm, _) = try seeded()
        let byName = realm.objects(Person.self).sectioned(by: \.name)
        #expect(byName.base.keyOrder == nil)  // the key path form sorts in the engine
        #expect(byName.allKeys == (0..<7).map { "name-\($0)" })
        #expect(byName.count == 7 && byName.map(\.key) == byName.allKeys)
        for (n, section) in byName.enumerated() {
            #expect(section.key == "name-\(n)" && section.id == section.key)
            #expect(section.map(\.id) == (0..<20).filter { $0 % 7 == n })  // the sort is stable
            #expect(section.count == section.map(\.id).count)
        }
        let descending = realm.objects(Person.self).sectioned(by: \.name, ascending: false)
        #expect(descending.allKeys == byName.allKeys.reversed())
        #expect(descending[0].map(\.id) == [6, 13])

        let byAge = realm.objects(Person.self).filter("age < 20").sectioned(by: \.age, ascending: false)
        let ages = Set((0..<20).map { ($0 * 7) % 30 }.filter { $0 < 20 }).sorted(by: >)
        #expect(byAge.allKeys == ages)
        #expect(byAge.allSatisfy { section in section.allSatisfy { $0.age == section.key } })
    }

    @Test func sortDescriptorsDecideTheOrderAndEqualKeysShareASection() throws {
        let (realm, _) = try seeded()
        let people = realm.objects(Person.self)
        let nameThenAge = people.sectioned(by: \.name, sortDescriptors: ["name", SortDescriptor(keyPath: "age", ascending: false)])
        #expect(nameThenAge.allKeys == (0..<7).map { "name-\($0)" })
        for section in nameThenAge { #expect(section.map(\.age) == section.map(\.age).sorted(by: >)) }

        // Sorted by age, sectioned by name: sections in order of their first object; each holds
        // every object with its name, in age order.
        let byAgeThenName = people.sectioned(by: \.name, sortDescriptors: ["age"])
        let sorted = people.map { ($0.age, $0.id, $0.name) }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        var keys: [String] = []
        for (_, _, name) in sorted where !keys.contains(name) { keys.append(name) }
        #expect(byAgeThenName.allKeys == keys)
        for section in byAgeThenName { #expect(section.map(\.id) == sorted.filter { $0.2 == section.key }.map(\.1)) }

        // No sort descriptors: the results' own order.
        let unsorted = people.sorted(byKeyPath: "id", ascending: false).sectioned(by: \.name, sortDescriptors: [])
        #expect(unsorted.allKeys == (0..<7).map { "name-\((19 - $0) % 7)" })
        #expect(unsorted[0].map(\.id) == [19, 12, 5])
    }

    @Test func blockSectionsSortByTheComputedKeyOrByDescriptors() throws {
        let (realm, _) = try seeded()
        let people = realm.objects(Person.self)
        let byRemainder = people.sectioned(by: { $0.age % 3 })
        #expect(byRemainder.base.keyOrder != nil)
        #expect(byRemainder.allKeys == [0, 1, 2])
        for section in byRemainder { #expect(section.map(\.id) == (0..<20).filter { ($0 * 7) % 30 % 3 == section.key }) }
        #expect(people.sectioned(by: { $0.age % 3 }, ascending: false).allKeys == [2, 1, 0])

        let byDecade = people.sectioned(by: { $0.age / 10 }, sortDescriptors: [SortDescriptor(keyPath: "age", ascending: false)])
        #expect(byDecade.allKeys == [2, 1, 0])
        #expect(byDecade[0].map(\.age) == byDecade[0].map(\.age).sorted(by: >))
        let trailing = people.sectioned(sortDescriptors: ["name"]) { String($0.name.suffix(1)) }
        #expect(trailing.allKeys == (0..<7).map(String.init))
        #expect(ids(trailing).map(\.1) == ids(people.sectioned(by: \.name)).map(\.1))
    }

    @Test func optionalKeysPutNilFirstAscending() throws {
        let (realm, _) = try makeRealm()
        try realm.write {
            for (i, s) in ["b", nil, "a", "b", nil].enumerated() {
                let o = AllTypes()
                o.id = i
                o.optString = s
                realm.add(o)
            }
        }
        let sections = realm.objects(AllTypes.self).sectioned(by: \.optString)
        #expect(sections.allKeys == [nil, "a", "b"])
        #expect(sections.map { $0.map(\.id) } == [[1, 4], [2], [0, 3]])
        #expect(realm.objects(AllTypes.self).sectioned(by: \.optString, ascending: false).allKeys == ["b", "a", nil])
    }

    @Test func indexPathsSubscriptsAndIteration() throws {
        let (realm, _) = try seeded()
        let sections = realm.objects(Person.self).sectioned(by: \.name)
        #expect(sections[IndexPath(item: 1, section: 2)].id == 9)
        #expect(sections[IndexPath(indexes: [6, 0])].id == sections[6][0].id)
        for (s, section) in sections.enumerated() {
            for (i, person) in section.enumerated() { #expect(sections[IndexPath(item: i, section: s)].id == person.id) }
        }
        #expect(sections.flatMap { $0.map(\.id) }.sorted() == Array(0..<20))
        #expect(sections.reversed().first?.key == "name-6")
        #expect(sections[3].realm === realm && sections.realm === realm && !sections.isInvalidated)
        var path = IndexPath(row: 4, section: 1)
        path.item += 1
        #expect(path.row == 5 && path.section == 1 && path == [1, 5])
        #expect(sections.description.hasPrefix("SectionedResults<String, Person> <count 7> (\n\t[0] \"name-0\" <count 3>"))
        #expect(sections[0].description.hasPrefix("ResultsSection<\"name-0\"> <count 3> (\n\t[0] "))

        let none = realm.objects(Person.self).filter("age > 100").sectioned(by: \.name)
        #expect(none.isEmpty && none.allKeys.isEmpty && Array(none).isEmpty)
    }

    @Test func sectionsEvaluateLazilyOncePerChange() throws {
        let (realm, _) = try seeded()
        let sections = realm.objects(Person.self).sectioned(by: { $0.age / 10 })
        #expect(sections.base.evaluations == 0)  // nothing evaluated yet
        _ = sections.count
        _ = sections.allKeys
        _ = sections[IndexPath(item: 0, section: 0)]
        let first = sections[0]
        _ = first.count
        _ = Array(first)
        _ = sections.map(\.count)
        _ = sections.description
        #expect(sections.base.evaluations == 1)
        #expect(!realm.refresh())  // no new version: nothing to evaluate again
        _ = sections.count
        #expect(sections.base.evaluations == 1)
        try realm.write { realm.add(Person(value: ["id": 100, "age": 5])) }
        #expect(sections.base.evaluations == 1)  // still lazy after the change
        #expect(first.count == 8 && sections.allKeys == [0, 1, 2])
        #expect(sections.base.evaluations == 2)
    }

    @Test func sectionsAreLive() throws {
        let (realm, _) = try seeded()
        let sections = realm.objects(Person.self).sectioned(by: \.name)
        let name0 = sections[0]
        #expect(name0.map(\.id) == [0, 7, 14])
        try realm.write {
            realm.add(Person(value: ["id": 100, "name": "zed"]))
            realm.add(Person(value: ["id": 101, "name": "name-0"]))
            // The open transaction's changes are visible.
            #expect(sections.allKeys.last == "zed" && name0.count == 4)
        }
        #expect(sections.count == 8 && sections[7].map(\.id) == [100])
        #expect(name0.map(\.id) == [0, 7, 14, 101])
        try realm.write {
            realm.delete(realm.objects(Person.self).filter("name == 'name-0'"))
            realm.objects(Person.self).filter("id == 1").first!.name = "name-2"
        }
        #expect(!sections.allKeys.contains("name-0") && name0.isEmpty && Array(name0).isEmpty)
        #expect(sections[0].key == "name-1" && sections[0].map(\.id) == [8, 15])
        #expect(sections[1].map(\.id) == [1, 2, 9, 16])
    }

    @Test func frozenSectionsKeepTheirVersionAndThaw() throws {
        let (realm, dir) = try seeded()
        defer { withExtendedLifetime(dir) {} }
        let sections = realm.objects(Person.self).sectioned(by: \.name)
        let keys = sections.allKeys
        #expect(!sections.isFrozen && !sections[0].isFrozen && sections.thaw()?.base === sections.base)
        let frozen = sections.freeze()
        #expect(frozen.isFrozen && frozen.realm?.isFrozen == true && frozen.freeze().base === frozen.base)
        #expect(frozen.allKeys == keys && frozen.base.evaluations == 0)  // the live grouping is handed over
        let frozenSection = sections[0].freeze()
        #expect(frozenSection.isFrozen && frozenSection.first?.isFrozen == true)
        try realm.write {
            realm.add(Person(value: ["id": 100, "name": "zed"]))
            realm.add(Person(value: ["id": 101, "name": "name-0"]))
        }
        #expect(sections.count == 8 && sections[0].count == 4)
        #expect(frozen.count == 7 && frozen[0].map(\.id) == [0, 7, 14] && frozenSection.count == 3)
        #expect(frozen[IndexPath(item: 2, section: 0)].isFrozen && frozen.base.evaluations == 0)

        let thawed = try #require(frozen.thaw())
        #expect(!thawed.isFrozen && thawed.allKeys.last == "zed" && thawed[0].map(\.id) == [0, 7, 14, 101])
        let thawedSection = try #require(frozenSection.thaw())
        #expect(!thawedSection.isFrozen && thawedSection.key == "name-0" && thawedSection.count == 4)

        // Frozen before it was read: grouped once, at the frozen version.
        let lazy = realm.objects(Person.self).sectioned(by: { $0.age / 10 }).freeze()
        try realm.write { realm.add(Person(value: ["id": 102, "age": 55])) }
        #expect(lazy.allKeys == [0, 1, 2] && lazy.base.evaluations == 1)
        _ = lazy.map(\.count)
        #expect(lazy.base.evaluations == 1)
    }

    /// Frozen sections read concurrently from many tasks (the first read groups under contention)
    /// while the live Realm keeps writing.
    @Test func frozenSectionsAreReadableFromManyTasks() async throws {
        let (realm, dir) = try seeded()
        let frozen = realm.objects(Person.self).sectioned(by: { $0.age % 4 }).freeze()
        let box = UncheckedBox(frozen)
        let config = realm.configuration
        let writer = Task.detached {
            let r = try Realm(configuration: config)
            for i in 200..<240 { try r.write { r.add(Person(value: ["id": i, "age": i])) } }
        }
        let seen = try await withThrowingTaskGroup(of: [[Int]].self) { group in
            for _ in 0..<8 { group.addTask { box.value.map { $0.map(\.id) } } }
            return try await group.reduce(into: [[[Int]]]()) { $0.append($1) }
        }
        try await writer.value
        let expected = [0, 1, 2, 3].map { r in (0..<20).filter { ($0 * 7) % 30 % 4 == r } }
        #expect(seen == [[[Int]]](repeating: expected, count: 8))
        #expect(frozen.base.evaluations >= 1 && frozen.base.evaluations <= 8)
        withExtendedLifetime(dir) {}
    }

    @Test func invalidatedSectionsReadAsEmpty() throws {
        let (realm, _) = try seeded()
        let sections = realm.objects(Person.self).sectioned(by: \.name)
        let section = sections[0]
        #expect(sections.count == 7 && !sections.isInvalidated)
        realm.invalidate()
        #expect(sections.isInvalidated && section.isInvalidated)
        #expect(sections.isEmpty && sections.allKeys.isEmpty && section.isEmpty)
        #expect(realm.objects(Person.self).sectioned(by: \.name).count == 7)
    }

    @Test func changesBetweenTwoVersionsOfARealmApply() throws {
        let (realm, _) = try seeded()
        let sections = realm.objects(Person.self).sectioned(by: { $0.age / 10 })
        let old = sections.base.sectionsForDiff
        var changed = Set<ObjectKey>()
        try realm.write {
            let people = realm.objects(Person.self)
            for p in people.filter("id IN {3, 4, 11}") {
                p.age += 12  // 3: 21 → 33 (new section 3); 4: 28 → 40; 11: 17 → 29
                changed.insert(p._rlmKey)
            }
            let renamed = people.filter("id == 5").first!
            renamed.name = "renamed"  // stays in its section, modified
            changed.insert(renamed._rlmKey)
            realm.delete(people.filter("id == 0").first!)
            realm.add(Person(value: ["id": 50, "age": 1]))
        }
        let new = sections.base.sectionsForDiff
        let change = SectionedDiff.changes(oldSections: old, newSections: new, modified: changed.contains)
        #expect(apply(change, to: old, new: new) == Layout(new))
        #expect(change.sectionsToInsert == [3, 4] && change.sectionsToDelete.isEmpty)
        let renamedPath = old.indices.lazy.compactMap { s in
            old[s].keys.firstIndex(of: realm.objects(Person.self).filter("id == 5").first!._rlmKey).map { IndexPath(item: $0, section: s) }
        }.first!
        #expect(change.modifications == [renamedPath])
    }

    // MARK: The change computation

    @Test func sectionedDiffOfAHandWrittenExample() {
        func sections(_ s: [(String, [Int64])]) -> [(key: AnyHashable, keys: [ObjectKey])] {
            s.map { (AnyHashable($0.0), $0.1.map { ObjectKey($0) }) }
        }
        let old = sections([("A", [1, 2, 3]), ("B", [4, 5]), ("C", [6])])
        let new = sections([("A", [1, 3, 7]), ("C", [6, 5]), ("D", [8])])
        let c = SectionedDiff.changes(oldSections: old, newSections: new) { [3, 6, 5].contains($0.rawValue) }
        #expect(c.sectionsToDelete == [1] && c.sectionsToInsert == [2])
        #expect(c.deletions == [IndexPath(item: 1, section: 0)])
        // The rows of the inserted section D are insertions too, as RealmSwift lists them.
        #expect(c.insertions == [IndexPath(item: 2, section: 0), IndexPath(item: 1, section: 1), IndexPath(item: 0, section: 2)])
        // 5 moved from B to C: a deletion (with its section) and an insertion, not a modification.
        #expect(c.modifications == [IndexPath(item: 2, section: 0), IndexPath(item: 0, section: 2)])

        let same = SectionedDiff.changes(oldSections: old, newSections: old) { _ in false }
        #expect(same.deletions.isEmpty && same.insertions.isEmpty && same.modifications.isEmpty)
        #expect(same.sectionsToInsert.isEmpty && same.sectionsToDelete.isEmpty)

        // Swapped sections: one of them is deleted and inserted again.
        let swapped = SectionedDiff.changes(oldSections: old, newSections: [old[1], old[0], old[2]]) { _ in true }
        #expect(swapped.sectionsToDelete.count == 1 && swapped.sectionsToInsert.count == 1)
        #expect(apply(swapped, to: old, new: [old[1], old[0], old[2]]) == Layout([old[1], old[0], old[2]]))
    }

    @Test func sectionedDiffAppliedToTheOldSectionsGivesTheNew() {
        var rng = SplitMix(seed: 0x5EC7_1045)
        var seen = (deletions: 0, insertions: 0, modifications: 0, sectionsToInsert: 0, sectionsToDelete: 0)
        for round in 0..<2_000 {
            var nextObject: Int64 = 0
            let old = Self.randomSections(&rng, nextObject: &nextObject)
            let new =
                round % 10 == 0 ? Self.randomSections(&rng, nextObject: &nextObject) : Self.mutated(old, &rng, nextObject: &nextObject)
            var modified = Set<ObjectKey>()
            for k in 0..<nextObject where rng.below(4) == 0 { modified.insert(ObjectKey(k)) }
            let c = SectionedDiff.changes(oldSections: old, newSections: new, modified: modified.contains)
            seen.deletions += c.deletions.count
            seen.insertions += c.insertions.count
            seen.modifications += c.modifications.count
            seen.sectionsToInsert += c.sectionsToInsert.count
            seen.sectionsToDelete += c.sectionsToDelete.count

            #expect(apply(c, to: old, new: new) == Layout(new), "round \(round)")
            #expect(c.deletions == c.deletions.sorted { ($0.section, $0.item) < ($1.section, $1.item) })
            #expect(c.insertions == c.insertions.sorted { ($0.section, $0.item) < ($1.section, $1.item) })
            #expect(c.deletions.allSatisfy { !c.sectionsToDelete.contains($0.section) })
            for s in c.sectionsToInsert {
                #expect(c.insertions.filter { $0.section == s }.map(\.item) == Array(new[s].keys.indices), "round \(round)")
            }
            // Sections are deleted only when their key is gone or their order changed.
            let newKeys = Set(new.map(\.key))
            let kept = old.map(\.key).filter(newKeys.contains)
            if kept == new.map(\.key).filter(Set(old.map(\.key)).contains) {
                #expect(c.sectionsToDelete == IndexSet(old.indices.filter { !newKeys.contains(old[$0].key) }))
            }
            // Exactly the modified objects that survive (not deleted, section kept) are reported.
            let deleted = Set(c.deletions)
            var expected: [IndexPath] = []
            for (s, section) in old.enumerated() where !c.sectionsToDelete.contains(s) {
                for (i, k) in section.keys.enumerated() where modified.contains(k) && !deleted.contains(IndexPath(item: i, section: s)) {
                    expected.append(IndexPath(item: i, section: s))
                }
            }
            #expect(c.modifications == expected, "round \(round)")
        }
        // Every kind of change was exercised, many times.
        #expect(
            [seen.deletions, seen.insertions, seen.modifications, seen.sectionsToInsert, seen.sectionsToDelete].allSatisfy { $0 > 500 })
    }

    /// Up to 6 sections with distinct keys out of 9, each of 1–5 new objects.
    static func randomSections(_ rng: inout SplitMix, nextObject: inout Int64) -> [(key: AnyHashable, keys: [ObjectKey])] {
        var pool = (0..<9).map { "k\($0)" }
        var sections: [(key: AnyHashable, keys: [ObjectKey])] = []
        for _ in 0..<rng.below(7) {
            let key = pool.remove(at: rng.below(pool.count))
            var keys: [ObjectKey] = []
            for _ in 0..<(1 + rng.below(5)) {
                keys.append(ObjectKey(nextObject))
                nextObject += 1
            }
            sections.append((AnyHashable(key), keys))
        }
        return sections
    }

    /// `old` after random edits: objects deleted, moved within and between sections (new ones
    /// included), inserted; sections dropped, added and swapped; empty sections removed.
    static func mutated(
        _ old: [(key: AnyHashable, keys: [ObjectKey])], _ rng: inout SplitMix, nextObject: inout Int64
    ) -> [(key: AnyHashable, keys: [ObjectKey])] {
        var sections = old
        if !sections.isEmpty && rng.below(5) == 0 { sections.remove(at: rng.below(sections.count)) }
        let used = Set(sections.map(\.key))
        for k in (0..<9).map({ AnyHashable("k\($0)") }) where !used.contains(k) && rng.below(6) == 0 {
            sections.insert((k, []), at: rng.below(sections.count + 1))
        }
        if sections.count > 1 && rng.below(4) == 0 { sections.swapAt(rng.below(sections.count), rng.below(sections.count)) }
        guard !sections.isEmpty else { return [] }
        var moving: [ObjectKey] = []
        for s in sections.indices {
            sections[s].keys = sections[s].keys.filter { k in
                switch rng.below(8) {
                case 0: return false  // deleted
                case 1:
                    moving.append(k)
                    return false
                default: return true
                }
            }
            if sections[s].keys.count > 1 && rng.below(5) == 0 {
                sections[s].keys.swapAt(rng.below(sections[s].keys.count), rng.below(sections[s].keys.count))
            }
        }
        for _ in 0..<rng.below(4) {
            moving.append(ObjectKey(nextObject))
            nextObject += 1
        }
        for k in moving {
            let s = rng.below(sections.count)
            sections[s].keys.insert(k, at: rng.below(sections[s].keys.count + 1))
        }
        return sections.filter { !$0.keys.isEmpty }
    }

    /// Comparable sections: keys and rows.
    struct Layout: Equatable {
        var keys: [AnyHashable]
        var rows: [[ObjectKey]]
        init(_ sections: [(key: AnyHashable, keys: [ObjectKey])]) {
            keys = sections.map(\.key)
            rows = sections.map(\.keys)
        }
    }

    /// `old` with `change` applied the way a sectioned view applies a batch update: delete rows,
    /// delete sections, insert sections (empty), insert rows (from `new`; an inserted section's
    /// rows are among them).
    func apply(
        _ change: (
            deletions: [IndexPath], insertions: [IndexPath], modifications: [IndexPath], sectionsToInsert: IndexSet,
            sectionsToDelete: IndexSet
        ),
        to old: [(key: AnyHashable, keys: [ObjectKey])], new: [(key: AnyHashable, keys: [ObjectKey])]
    ) -> Layout {
        var sections = old
        for p in change.deletions.reversed() { sections[p.section].keys.remove(at: p.item) }
        for s in change.sectionsToDelete.reversed() { sections.remove(at: s) }
        for s in change.sectionsToInsert { sections.insert((new[s].key, []), at: s) }
        for p in change.insertions { sections[p.section].keys.insert(new[p.section].keys[p.item], at: p.item) }
        return Layout(sections)
    }
}

/// Sections of values (issue 29): RealmSwift's `sectioned(by:ascending:)` on any collection of
/// values — sorted by the values, grouped by the block's key, live, frozen and observed.
@Suite struct SectionedValuesTests {
    static func kennel() throws -> (Realm, Kennel, TempDir) {
        let dir = TempDir()
        var config = Realm.Configuration(fileURL: dir.url())
        config.objectTypes = [Kennel.self, Dog.self]
        let realm = try Realm(configuration: config)
        let k = Kennel(value: ["id": 1])
        k.strings.append(objectsIn: ["banana", "apple", "cherry", "avocado", "blueberry", "apple"])
        k.ints.append(objectsIn: [5, 2, 8, 3, 2])
        try realm.write { realm.add(k) }
        return (realm, k, dir)
    }

    @Test func valuesAreSortedAndGroupedLiveAndFrozen() throws {
        let (realm, k, _) = try Self.kennel()
        let byInitial = k.strings.sectioned(by: { String($0.prefix(1)) })
        #expect(byInitial.allKeys == ["a", "b", "c"])
        #expect(byInitial.map { Array($0) } == [["apple", "apple", "avocado"], ["banana", "blueberry"], ["cherry"]])
        #expect(byInitial[IndexPath(item: 1, section: 1)] == "blueberry")
        #expect(k.strings.sectioned(by: { String($0.prefix(1)) }, ascending: false).allKeys == ["c", "b", "a"])
        // Results of values too, and a key of another type.
        let parity = k.ints.where { $0 > 2 }.sectioned(by: { $0 % 2 == 0 })
        #expect(parity.allKeys == [false, true] && parity.map { Array($0) } == [[3, 5], [8]])
        // Live, and a frozen copy keeps its version.
        let frozen = byInitial.freeze()
        try realm.write { k.strings.append(objectsIn: ["date", "apricot"]) }
        #expect(byInitial.allKeys == ["a", "b", "c", "d"] && byInitial[0].count == 4)
        #expect(frozen.allKeys == ["a", "b", "c"] && frozen[0].count == 3 && frozen.isFrozen)
        #expect(frozen.thaw()?[0].count == 4)
        // An unmanaged list's values section too (grouped on each read).
        let loose = List<String>()
        loose.append(objectsIn: ["b", "a"])
        #expect(loose.sectioned(by: { $0 }).allKeys == ["a", "b"])
    }

    @Test func observingSectionsOfValuesReportsRowsAndSections() throws {
        let (realm, k, _) = try Self.kennel()
        let byInitial = k.strings.sectioned(by: { String($0.prefix(1)) })
        var updates: [(deletions: [IndexPath], insertions: [IndexPath], toInsert: IndexSet, toDelete: IndexSet)] = []
        var initial = 0
        let token = byInitial.observe { change in
            switch change {
            case .initial: initial += 1
            case .update(_, let deletions, let insertions, let modifications, let toInsert, let toDelete):
                #expect(modifications.isEmpty)
                updates.append((deletions, insertions, toInsert, toDelete))
            }
        }
        realm.refresh()
        #expect(initial == 1)
        // A new value joins its section; a new key makes a section.
        try realm.write { k.strings.append(objectsIn: ["apricot", "date"]) }
        realm.refresh()
        #expect(updates.count == 1)
        #expect(updates.last?.insertions == [IndexPath(item: 2, section: 0), IndexPath(item: 0, section: 3)])
        #expect(updates.last?.toInsert == [3])
        // Removing every value of a section deletes the section (as sections of objects report it).
        try realm.write { k.strings.remove(at: k.strings.firstIndex(of: "cherry")!) }
        realm.refresh()
        #expect(updates.count == 2)
        #expect(updates.last?.toDelete == [2] && updates.last?.deletions == [], "\(updates.last!)")
        // Deleting the object that holds the list deletes every section, once.
        try realm.write { realm.delete(k) }
        realm.refresh()
        #expect(updates.count == 3 && updates.last?.toDelete == [0, 1, 2], "\(updates.last!)")
        token.invalidate()
    }
}

import Foundation
import Testing

@testable import RealmStorage

/// A write transaction's view of a table's row groups (`GroupList`): the base version's list,
/// shared, with loaded groups in front and a working tail. Checked against a plain array of
/// work groups, and through the engine with changes spread over many row groups.
@Suite struct GroupListTests {
    static func entry(_ i: Int) -> RowGroupEntry {
        RowGroupEntry(
            firstKey: Int64(i * 10), lastKey: Int64(i * 10 + 9), rowCount: 10, block: BlockRef(offset: UInt64(4096 + i * 64), length: 64))
    }

    /// Whether two work groups are the same stored entry or the same loaded group.
    static func same(_ a: WorkGroup, _ b: WorkGroup) -> Bool {
        switch (a, b) {
        case (.stored(let x), .stored(let y)): x == y
        case (.loaded(let x), .loaded(let y)): x === y
        default: false
        }
    }

    static func loaded(_ key: Int64) -> LoadedGroup {
        LoadedGroup(original: nil, originalBlock: nil, keys: [key], columns: [:], rowsChanged: true)
    }

    /// Random reads, loads in place, appends, removals (last and anywhere) and stored writes,
    /// against an array; after every step the two agree element by element, the unchanged prefix
    /// holds the base's own entries, and the loaded groups come in list order.
    @Test(arguments: [1, 2, 3, 4, 5])
    func matchesAnArray(seed: UInt64) {
        var rng = SplitMix(seed: seed)
        let base = (0..<Int(20 + rng.next() % 40)).map(Self.entry)
        let list = GroupList(base)
        var model = base.map { WorkGroup.stored($0) }
        var nextKey: Int64 = 1_000_000
        for step in 0..<600 {
            let r = rng.next() % 100
            if r < 45, !model.isEmpty {
                let i = Int(rng.next() % UInt64(model.count))
                let g = WorkGroup.loaded(Self.loaded(nextKey))
                nextKey += 1
                list[i] = g
                model[i] = g
            } else if r < 60 {
                let g = WorkGroup.loaded(Self.loaded(nextKey))
                nextKey += 1
                list.append(g)
                model.append(g)
            } else if r < 72, !model.isEmpty {
                list.removeLast()
                model.removeLast()
            } else if r < 84, !model.isEmpty {
                let i = Int(rng.next() % UInt64(model.count))
                list.remove(at: i)
                model.remove(at: i)
            } else if r < 90, !model.isEmpty {
                let i = Int(rng.next() % UInt64(model.count))
                let e = Self.entry(500 + Int(rng.next() % 100))
                list[i] = .stored(e)
                model[i] = .stored(e)
            }
            #expect(list.count == model.count, "step \(step)")
            for i in model.indices { #expect(Self.same(list[i], model[i]), "step \(step), position \(i)") }
            let prefix = list.unchangedPrefix
            #expect(prefix <= model.count)
            #expect(list.baseEntries(prefix, capacity: model.count) == Array(base.prefix(prefix)), "step \(step)")
            for i in 0..<prefix { #expect(Self.same(model[i], .stored(base[i])), "step \(step), position \(i)") }
            let expectedLoaded = model.compactMap { g -> LoadedGroup? in
                if case .loaded(let l) = g { return l }
                return nil
            }
            #expect(list.loadedGroups.map(ObjectIdentifier.init) == expectedLoaded.map(ObjectIdentifier.init), "step \(step)")
        }
    }

    /// `position(of:)` and `LoadedGroup.row(of:)` try the answer they found last first: a guess,
    /// which removals, appends and replaced groups make wrong. Against a linear search of a sorted
    /// model after every change, with a lookup of the last key found before each change.
    @Test(arguments: [1, 2, 3])
    func lastFoundPositionsAreOnlyGuesses(seed: UInt64) {
        var rng = SplitMix(seed: seed)
        let base = (0..<40).map(Self.entry)
        let list = GroupList(base)
        var model = base.map { WorkGroup.stored($0) }
        var nextKey: Int64 = 400
        func expected(_ key: Int64) -> Int? {
            guard let i = model.firstIndex(where: { $0.lastKey >= key }), model[i].firstKey <= key else { return nil }
            return i
        }
        for step in 0..<400 {
            let probe = Int64(rng.next() % UInt64(nextKey + 20))
            #expect(list.position(of: probe) == expected(probe), "step \(step), key \(probe)")
            switch rng.next() % 5 {
            case 0 where !model.isEmpty:
                let i = Int(rng.next() % UInt64(model.count))
                list.remove(at: i)
                model.remove(at: i)
            case 1:
                // New keys, after every group's.
                let g = LoadedGroup(original: nil, originalBlock: nil, keys: [nextKey, nextKey + 3], columns: [:], rowsChanged: true)
                nextKey += 10
                list.append(.loaded(g))
                model.append(.loaded(g))
            case 2 where !model.isEmpty:
                // A group loaded in place, holding some of its keys, then losing one.
                let i = Int(rng.next() % UInt64(model.count))
                let keys = (model[i].firstKey...model[i].lastKey).filter { _ in rng.next() % 2 == 0 }
                guard keys.count > 1 else { continue }
                let g = LoadedGroup(original: nil, originalBlock: nil, keys: keys, columns: [:], rowsChanged: true)
                let k = keys[Int(rng.next() % UInt64(keys.count))]
                #expect(g.row(of: k) == keys.firstIndex(of: k))
                let r = Int(rng.next() % UInt64(keys.count))
                g.keys.remove(at: r)
                #expect(g.row(of: k) == g.keys.firstIndex(of: k), "step \(step)")
                list[i] = .loaded(g)
                model[i] = .loaded(g)
            case 3 where !model.isEmpty:
                list.removeLast()
                model.removeLast()
            default:
                break
            }
            #expect(list.position(of: probe) == expected(probe), "step \(step), key \(probe) after a change")
        }
    }

    /// One transaction changes objects in many row groups (more than the list keeps apart in
    /// front), deletes every object of some early groups and inserts: the committed table, read
    /// back from this store and from a fresh one, holds exactly the expected objects and values.
    @Test func changesAcrossManyGroups() throws {
        let dir = TempDir()
        let store = try PagedListTests.idTable(dir, objects: 400, rowGroupCapacity: 4)
        var expected = Dictionary(uniqueKeysWithValues: (0..<400).map { (Int64($0), Int64(0)) })
        try store.write { tx in
            try tx.addColumn("T", ColumnSchema("v", .int))
            for id in stride(from: 3, to: 400, by: 13) {
                let k = try tx.objectKey("T", primaryKey: .int(Int64(id)))!
                try tx.set("T", k, "v", .int(Int64(id) * 7))
                expected[Int64(id)] = Int64(id) * 7
            }
            // Row groups 2 and 5 (keys 8-11 and 20-23) empty out; one is set first.
            for id in [8, 9, 10, 11, 20, 21, 22, 23] {
                try tx.delete("T", try tx.objectKey("T", primaryKey: .int(Int64(id)))!)
                expected[Int64(id)] = nil
            }
            for id in 400..<410 {
                try tx.insert("T", row: [.int(Int64(id)), .int(-1)])
                expected[Int64(id)] = -1
            }
        }
        for s in [store, try Store.open(at: dir.file(), options: .init(readOnly: true))] {
            let snap = try s.snapshot()
            #expect(try snap.objectCount("T") == expected.count)
            for (id, v) in expected {
                let k = try #require(try snap.objectKey("T", primaryKey: .int(id)))
                #expect(try snap.value("T", k, "v") == .int(v), "id \(id)")
            }
            #expect(try Verifier().verify(path: dir.file()).isClean)
        }
    }

    /// One-object commits keep merging a table's trailing row groups: the groups they rewrite,
    /// merge away or delete whole leave the store's cache of decoded groups, so what it holds is
    /// groups of the current version (the tail the next commits merge into), not dead ones.
    @Test func cachedGroupsStayLive() throws {
        let dir = TempDir()
        let store = try PagedListTests.idTable(dir, objects: 0, rowGroupCapacity: 64)
        for i in 0..<100 { try store.write { try $0.insert("T", row: [.int(Int64(i))]) } }
        // The last group (100 = 64 + 32 + 4: ids 96-99) is deleted whole: its decoded form goes too.
        try store.write { tx in
            for id in 96..<100 { try tx.delete("T", try #require(try tx.objectKey("T", primaryKey: .int(Int64(id))))) }
        }
        let snap = try store.snapshot()
        let live = Set(try snap.rowGroups("T").compactMap { snap.cacheKey($0.block) })
        let cached = store.cache.inner.withLock { Set($0.groups.keys) }
        #expect(!cached.isEmpty)
        #expect(cached.isSubset(of: live))
        #expect(try snap.objectCount("T") == 96)
    }
}

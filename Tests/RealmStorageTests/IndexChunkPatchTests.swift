import Foundation
import Testing

@testable import RealmStorage

/// Index chunk patches (Spec/FORMAT.md §5.7, format 5): a few index changes inside a stored chunk
/// are written as a patch over the chunk, lookups see exactly the patched entries, patches fold
/// when they grow, and compaction folds them all.
@Suite struct IndexChunkPatchTests {
    /// A store with `Tag` (string primary key `name`, indexed int `rank`) holding `count` objects
    /// inserted in random key order.
    static func makeTags(_ path: String, count: Int, rng: inout SplitMix) throws -> (Store, [String: Int64]) {
        var options = Store.Options(create: true, rowGroupCapacity: 2048)
        options.compaction = .off
        let store = try Store.open(at: path, options: options)
        var model: [String: Int64] = [:]
        try store.write { tx in
            try tx.createTable("Tag", primaryKey: ColumnSchema("name", .string))
            try tx.addColumn("Tag", ColumnSchema("rank", .int, indexed: true))
            for _ in 0..<count {
                let name = "tag-\(rng.next() % 1_000_000_000)"
                guard model[name] == nil else { continue }
                let rank = Int64(rng.next() % 50)
                _ = try tx.insert("Tag", ["name": .string(name), "rank": .int(rank)])
                model[name] = rank
            }
        }
        return (store, model)
    }

    /// Every name and rank of the model found through the indexes, and nothing else.
    static func check(_ s: Snapshot, _ model: [String: Int64], sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try s.objectCount("Tag") == model.count, sourceLocation: sourceLocation)
        var byRank: [Int64: Int] = [:]
        for (name, rank) in model {
            let k = try s.objectKey("Tag", primaryKey: .string(name))
            #expect(k != nil, "\(name) not found", sourceLocation: sourceLocation)
            if let k { #expect(try s.value("Tag", k, "rank") == .int(rank), sourceLocation: sourceLocation) }
            byRank[rank, default: 0] += 1
        }
        for rank in Int64(0)..<50 {
            #expect(
                try s.objectKeys("Tag", indexed: "rank", equalTo: .int(rank)).count == byRank[rank] ?? 0, sourceLocation: sourceLocation)
        }
        #expect(try s.objectKey("Tag", primaryKey: .string("missing")) == nil, sourceLocation: sourceLocation)
    }

    /// One random change made in `tx` and mirrored in `model`, by `step % 3`: an insert, a delete,
    /// or a new rank (an indexed update).
    static func randomChange(_ tx: WriteTransaction, step: Int, _ model: inout [String: Int64], _ rng: inout SplitMix) throws {
        switch step % 3 {
        case 0:
            let name = "new-\(rng.next() % 1_000_000_000)"
            guard model[name] == nil else { return }
            let rank = Int64(rng.next() % 50)
            _ = try tx.insert("Tag", ["name": .string(name), "rank": .int(rank)])
            model[name] = rank
        case 1:
            let name = model.keys.sorted()[Int(rng.next() % UInt64(model.count))]
            try tx.delete("Tag", try #require(try tx.objectKey("Tag", primaryKey: .string(name))))
            model[name] = nil
        default:
            let name = model.keys.sorted()[Int(rng.next() % UInt64(model.count))]
            let rank = Int64(rng.next() % 50)
            try tx.set("Tag", try #require(try tx.objectKey("Tag", primaryKey: .string(name))), "rank", .int(rank))
            model[name] = rank
        }
    }

    @Test func randomInsertsDeletesAndIndexedUpdatesWritePatchesAndLookUpExactly() throws {
        let dir = TempDir()
        var rng = SplitMix(seed: 31)
        let (store, built) = try Self.makeTags(dir.file(), count: 6000, rng: &rng)
        var model = built
        for step in 0..<400 {
            try store.write { tx in try Self.randomChange(tx, step: step, &model, &rng) }
            if step % 100 == 99 { try Self.check(try store.snapshot(), model) }
        }
        try expectPatchedFileHolds(store, dir, patchKind: "index chunk patch") { try Self.check($0, model) }
    }

    /// A cursor searches a chunk patch over its base without applying it: for every hash, the keys
    /// it lists and the first key it finds are those of the applied chunk, at the chunk's ends and
    /// beyond them, with deleted base entries, inserted ones, and many entries per hash.
    @Test func cursorsSearchPatchesAsApplied() throws {
        let dir = TempDir()
        var rng = SplitMix(seed: 77)
        let (store, built) = try Self.makeTags(dir.file(), count: 4000, rng: &rng)
        var model = built
        for step in 0..<150 {
            try store.write { tx in try Self.randomChange(tx, step: step, &model, &rng) }
        }
        let s = try store.snapshot()
        let (t, st) = try s.table("Tag")
        var patched = 0
        for (column, ref) in st.indexes {
            let dir = try s.indexDirectory(ref)
            var applied: [(UInt64, Int64)] = []
            for chunk in dir.chunks {
                let entries = try s.uncachedIndexChunk(chunk).entries
                if let patch = try s.chunkPatch(chunk.block) {
                    patched += 1
                    // The ends a commit records without applying the patch.
                    let ends = PatchedEntries.ends(base: try s.plainIndexChunk(patch.base), patch)
                    #expect(ends.first == entries.first! && ends.last == entries.last!)
                }
                #expect(chunk.firstHash == entries.first?.0 && chunk.count == entries.count)
                applied += entries
            }
            // Every hash present, one between two of them, and hashes before and after them all.
            var probes = Set(applied.map(\.0))
            for (a, b) in zip(applied, applied.dropFirst()) where b.0 > a.0 + 1 { probes.insert(a.0 + 1) }
            probes.formUnion([0, 1, UInt64.max])
            var cursor = try IndexCursor(ref, in: s)
            for h in probes.sorted() {
                let expected = applied.filter { $0.0 == h }.map(\.1)
                #expect(try cursor.keys(hash: h, in: s) == expected, "column \(column), hash \(h)")
                #expect(try cursor.firstKey(hash: h, in: s) == expected.first, "column \(column), hash \(h)")
            }
        }
        #expect(patched > 0, "no chunk patch written")
        #expect(t.columns.count == 2)
        try Self.check(s, model)
    }

    /// Random patches over random chunks: walking a patch without applying it lists the applied
    /// entries from any hash on, and its ends are the applied chunk's first and last entries
    /// (including deletes at both ends and inserts before and after every base entry).
    @Test func patchedEntriesWalkAsApplied() throws {
        var rng = SplitMix(seed: 5)
        for round in 0..<300 {
            var all = Set<Int64>()
            while all.count < 1 + Int(rng.next() % 40) { all.insert(Int64(rng.next() % 60)) }
            // Few distinct hashes, so several entries share one.
            let entries = all.map { (UInt64($0 / 4), $0) }.sorted { $0 < $1 }
            var base: [(UInt64, Int64)] = []
            var inserted: [(UInt64, Int64)] = []
            for e in entries { if rng.next() % 3 == 0 { inserted.append(e) } else { base.append(e) } }
            guard !base.isEmpty else { continue }
            let deleted = base.indices.filter { _ in rng.next() % 4 == 0 }
            let count = base.count - deleted.count + inserted.count
            guard count > 0 else { continue }
            let chunk = try IndexDirectory.chunkEntries(ByteView(copying: IndexDirectory.encodeChunk(base)), expected: base.count)
            let patch = IndexChunkPatch(base: BlockRef(offset: 64, length: 64), count: count, deleted: deleted, inserted: inserted)
            let applied = try patch.apply(base: chunk, origin: 0)
            let ends = PatchedEntries.ends(base: chunk, patch)
            #expect(ends.first == applied.first! && ends.last == applied.last!, "round \(round)")
            for h in UInt64(0)...16 {
                var walk = PatchedEntries(base: chunk, patch)
                walk.seek(h)
                var listed: [(UInt64, Int64)] = []
                while let e = walk.next() { listed.append(e) }
                #expect(listed.elementsEqual(applied.filter { $0.0 >= h }, by: ==), "round \(round), hash \(h)")
            }
        }
    }

    @Test func aChunkPatchFoldsOnceItGrows() throws {
        let dir = TempDir()
        var rng = SplitMix(seed: 8)
        let (store, built) = try Self.makeTags(dir.file(), count: 3000, rng: &rng)
        var model = built
        var largest = 0
        var plain = 0
        for i in 0..<300 {
            let name = "more-\(i)"
            try store.write { _ = try $0.insert("Tag", ["name": .string(name), "rank": .int(7)]) }
            model[name] = 7
            let s = try store.snapshot()
            for ref in try s.tableState("Tag").indexes.values {
                for chunk in try s.indexDirectory(ref).chunks {
                    if let p = try s.chunkPatch(chunk.block) {
                        largest = max(largest, p.inserted.count + p.deleted.count)
                    } else {
                        plain += 1
                    }
                }
            }
        }
        #expect(largest > 0 && largest < 200, "largest patch \(largest) entries")
        try Self.check(try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot(), model)
    }

    @Test func aDamagedOrInconsistentChunkPatchIsReported() throws {
        func encoded(_ p: IndexChunkPatch) -> ByteView { ByteView(copying: p.encode()) }
        let base = BlockRef(offset: 12288, length: 80)
        let good = IndexChunkPatch(base: base, count: 3, deleted: [0], inserted: [(5, 1), (5, 2)])
        #expect(try IndexChunkPatch.decode(encoded(good)) == good)
        for bad in [
            IndexChunkPatch(base: base, count: 3, deleted: [1, 0], inserted: []),
            IndexChunkPatch(base: base, count: 3, deleted: [], inserted: [(5, 2), (5, 1)]),
            IndexChunkPatch(base: base, count: 0, deleted: [], inserted: []),
            IndexChunkPatch(base: .none, count: 1, deleted: [], inserted: [(1, 1)]),
        ] {
            expectCode(.corrupted) { try IndexChunkPatch.decode(encoded(bad)) }
        }
        let chunk = try IndexDirectory.chunkEntries(ByteView(copying: IndexDirectory.encodeChunk([(1, 10), (5, 3), (9, 4)])), expected: 3)
        #expect(
            try IndexChunkPatch(base: base, count: 4, deleted: [0], inserted: [(5, 1), (5, 2)]).apply(base: chunk, origin: 0)
                .elementsEqual([(5, 1), (5, 2), (5, 3), (9, 4)], by: ==))
        // A count that does not fit, a position past the base, an inserted entry equal to a kept one.
        for bad in [
            IndexChunkPatch(base: base, count: 3, deleted: [0], inserted: [(5, 1), (5, 2)]),
            IndexChunkPatch(base: base, count: 2, deleted: [3], inserted: []),
            IndexChunkPatch(base: base, count: 4, deleted: [], inserted: [(5, 3)]),
        ] {
            expectCode(.corrupted) { try bad.apply(base: chunk, origin: 0) }
        }
        // What a lookup checks before searching a patch without applying it: the count and the
        // deleted positions against the base.
        for bad in [
            IndexChunkPatch(base: base, count: 3, deleted: [0], inserted: [(5, 1), (5, 2)]),
            IndexChunkPatch(base: base, count: 2, deleted: [3], inserted: []),
        ] {
            expectCode(.corrupted) { try bad.checkFits(chunk, origin: 0) }
        }
        try IndexChunkPatch(base: base, count: 4, deleted: [0], inserted: [(5, 1), (5, 2)]).checkFits(chunk, origin: 0)
    }
}

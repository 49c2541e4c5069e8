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

    @Test func randomInsertsDeletesAndIndexedUpdatesWritePatchesAndLookUpExactly() throws {
        let dir = TempDir()
        var rng = SplitMix(seed: 31)
        let (store, built) = try Self.makeTags(dir.file(), count: 6000, rng: &rng)
        var model = built
        for step in 0..<400 {
            try store.write { tx in
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
            if step % 100 == 99 { try Self.check(try store.snapshot(), model) }
        }
        try expectPatchedFileHolds(store, dir, patchKind: "index chunk patch") { try Self.check($0, model) }
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
    }
}

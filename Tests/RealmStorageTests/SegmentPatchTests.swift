import Foundation
import Testing

@testable import RealmStorage

/// Segment patches (Spec/FORMAT.md §4.8, format 5): one-object updates and deletes in the middle
/// of a table write a patch over the stored segment instead of the whole segment, readers see
/// exactly the patched values, patches fold when they grow, and compaction folds them all.
@Suite struct SegmentPatchTests {
    static let columns: [ColumnSchema] = [
        ColumnSchema("name", .string), ColumnSchema("note", .string, nullable: true), ColumnSchema("count", .int, nullable: true),
        ColumnSchema("score", .double), ColumnSchema("tags", .string, list: true), ColumnSchema("attrs", .int, map: true),
        ColumnSchema("any", .mixed, nullable: true), ColumnSchema("flag", .bool),
    ]

    /// A random value for column `c`.
    static func value(_ c: ColumnSchema, _ rng: inout SplitMix) -> StorageValue {
        let n = Int(rng.next() % 1000)
        if c.isNullable && n % 7 == 0 { return .null }
        if c.isList { return .list((0..<(n % 4)).map { .string("t\($0 * n)") }) }
        if c.isMap { return .map(Dictionary(uniqueKeysWithValues: (0..<(n % 3)).map { ("k\($0)", StorageValue.int(Int64(n + $0))) })) }
        switch c.type {
        case .string: return .string("value \(n) of a string long enough to matter \(String(repeating: "x", count: n % 40))")
        case .int: return .int(Int64(n) - 500)
        case .double: return .double(Double(n) / 8)
        case .bool: return .bool(n % 2 == 0)
        case .mixed: return n % 2 == 0 ? .int(Int64(n)) : .string("mixed \(n)")
        default: return .null
        }
    }

    /// A store with `Item` (int primary key and every kind of column) holding `count` objects.
    static func makeItems(_ path: String, count: Int, capacity: Int, rng: inout SplitMix) throws -> (Store, [Int64: [String: StorageValue]])
    {
        var options = Store.Options(create: true, rowGroupCapacity: capacity)
        options.compaction = .off
        let store = try Store.open(at: path, options: options)
        var model: [Int64: [String: StorageValue]] = [:]
        try store.write { tx in
            try tx.createTable("Item", primaryKey: ColumnSchema("id", .int))
            for c in columns { try tx.addColumn("Item", c) }
            for i in 0..<count {
                var row: [String: StorageValue] = ["id": .int(Int64(i))]
                for c in columns { row[c.name] = value(c, &rng) }
                let k = try tx.insert("Item", row)
                model[k.rawValue] = row
            }
        }
        return (store, model)
    }

    /// Checks every object of `s` against the model, and the model's keys against the table's.
    static func check(_ s: Snapshot, _ model: [Int64: [String: StorageValue]], sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try s.objectCount("Item") == model.count, sourceLocation: sourceLocation)
        #expect(try s.objectKeys("Item").map(\.rawValue) == model.keys.sorted(), sourceLocation: sourceLocation)
        for (k, row) in model {
            for (name, v) in row {
                let got = try s.value("Item", ObjectKey(k), name)
                #expect(got == v, "object \(k) column \(name)", sourceLocation: sourceLocation)
            }
        }
    }

    /// The reference of `Item`'s `name` segment (a segment or a patch) in row group `group` of `s`.
    static func nameRef(_ s: Snapshot, group: Int) throws -> BlockRef {
        let name = try #require(s.catalog.table("Item")?.column("name"))
        return try #require(try s.rowGroup(try s.rowGroups("Item")[group].block).columns[name.id])
    }

    /// The live segment patches of `path`'s newest version.
    static func livePatches(_ path: String) throws -> Int {
        try Inspector().inspect(path: path, blocks: true).blocks.filter { $0.isLive && $0.kind == "segment patch" }.count
    }

    @Test func oneObjectUpdatesAndDeletesWritePatchesAndReadBackExactly() throws {
        let dir = TempDir()
        var rng = SplitMix(seed: 27)
        let (store, built) = try Self.makeItems(dir.file(), count: 2000, capacity: 512, rng: &rng)
        var model = built
        var segmentBytes = 0
        for ref in try store.snapshot().rowGroup(try store.snapshot().rowGroups("Item")[1].block).columns.values {
            segmentBytes = max(segmentBytes, Int(ref.length))
        }
        var appended = 0
        for step in 0..<300 {
            let before = try store.snapshot().fileLength
            let keys = model.keys.sorted()
            let k = keys[Int(rng.next() % UInt64(keys.count))]
            try store.write { tx in
                if step % 5 == 4 {
                    try tx.delete("Item", ObjectKey(k))
                    model[k] = nil
                } else {
                    // One to three columns of one object, sometimes the same column twice.
                    for _ in 0..<(1 + step % 3) {
                        let c = Self.columns[Int(rng.next() % UInt64(Self.columns.count))]
                        let v = Self.value(c, &rng)
                        try tx.set("Item", ObjectKey(k), c.name, v)
                        model[k]![c.name] = v
                    }
                }
            }
            appended += try store.snapshot().fileLength - before
            if step % 50 == 49 { try Self.check(try store.snapshot(), model) }
        }
        // A commit writes far less than the segments it changes (a whole segment per column was
        // the old cost): the largest segment here is several kilobytes.
        #expect(appended / 300 < segmentBytes, "\(appended / 300) bytes per commit, segments of up to \(segmentBytes)")
        // Another process's view (patches applied from the file), live bytes, compaction.
        try expectPatchedFileHolds(store, dir, patchKind: "segment patch") { s in
            try Self.check(s, model)
            // Scans read patched segments like plain ones.
            let scanned = try s.count("Item", whereInt: "count", .greater(0))
            #expect(scanned == model.values.filter { if case .int(let v) = $0["count"]! { v > 0 } else { false } }.count)
        }
    }

    @Test func aPatchFoldsIntoASegmentOnceItGrows() throws {
        let dir = TempDir()
        var rng = SplitMix(seed: 5)
        let (store, built) = try Self.makeItems(dir.file(), count: 512, capacity: 512, rng: &rng)
        var model = built
        var largest = 0
        var folds = 0
        var previousBase: BlockRef?
        for i in 0..<400 {
            let k = Int64((i * 37) % 512)
            let v = StorageValue.string("renamed \(i)")
            try store.write { try $0.set("Item", ObjectKey(k), "name", v) }
            model[k]!["name"] = v
            let s = try store.snapshot()
            let ref = try Self.nameRef(s, group: 0)
            if let patch = try s.segmentPatch(ref) {
                largest = max(largest, patch.replaced.count)
                if let previousBase, previousBase != patch.base { folds += 1 }
                previousBase = patch.base
            } else {
                folds += 1
                previousBase = nil
            }
        }
        // Folded again and again, never grown to the whole group.
        #expect(folds >= 5 && largest < 100, "folds \(folds), largest patch \(largest) rows")
        try Self.check(try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot(), model)
    }

    @Test func deletesPatchTheKeySegmentAndEveryColumn() throws {
        let dir = TempDir()
        var rng = SplitMix(seed: 9)
        let (store, built) = try Self.makeItems(dir.file(), count: 1024, capacity: 512, rng: &rng)
        var model = built
        for k in [Int64(700), 3, 701, 1000, 4] {
            try store.write { try $0.delete("Item", ObjectKey(k)) }
            model[k] = nil
        }
        let s = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        let g = try s.rowGroup(try s.rowGroups("Item")[1].block)
        #expect(g.rowCount == 509)
        let namePatch = try #require(try s.segmentPatch(try Self.nameRef(s, group: 1)))
        #expect(namePatch.deleted == [188, 189, 488] && namePatch.replaced.isEmpty && namePatch.values.isNone)
        #expect(try s.keySegment(g).integers!.array == (512..<1024).filter { ![700, 701, 1000].contains($0) }.map(Int64.init))
        try Self.check(s, model)
        // Deleting more in the same group keeps one patch over the same base.
        try store.write { try $0.delete("Item", ObjectKey(512)) }
        model[512] = nil
        let s2 = try store.snapshot()
        let again = try #require(try s2.segmentPatch(try Self.nameRef(s2, group: 1)))
        #expect(again.base == namePatch.base && again.deleted == [0, 188, 189, 488])
        try Self.check(try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot(), model)
    }

    @Test func manyChangesToOneGroupAreWrittenWholeAndMixedOnesRead() throws {
        let dir = TempDir()
        var rng = SplitMix(seed: 13)
        let (store, built) = try Self.makeItems(dir.file(), count: 1024, capacity: 512, rng: &rng)
        var model = built
        func nameRef() throws -> BlockRef { try Self.nameRef(store.snapshot(), group: 1) }
        // A bulk change of one group (more values than a patch takes): the segment is written whole.
        try store.write { tx in
            for k in Int64(512)..<612 {
                try tx.set("Item", ObjectKey(k), "name", .string("bulk \(k)"))
                model[k]!["name"] = .string("bulk \(k)")
            }
        }
        #expect(try store.snapshot().segmentPatch(try nameRef()) == nil)
        // A few changes mixed in one transaction: set twice, set then deleted, deleted, set.
        try store.write { tx in
            try tx.set("Item", ObjectKey(700), "name", .string("first"))
            try tx.set("Item", ObjectKey(700), "name", .string("second"))
            try tx.set("Item", ObjectKey(701), "name", .string("gone"))
            try tx.delete("Item", ObjectKey(701))
            try tx.delete("Item", ObjectKey(650))
            try tx.set("Item", ObjectKey(1023), "name", .string("last"))
        }
        model[700]!["name"] = .string("second")
        model[701] = nil
        model[650] = nil
        model[1023]!["name"] = .string("last")
        let patch = try #require(try store.snapshot().segmentPatch(try nameRef()))
        #expect(patch.deleted == [138, 189] && patch.replaced == [187, 509])
        try Self.check(try store.snapshot(), model)
        try Self.check(try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot(), model)
    }

    @Test func aDamagedOrInconsistentPatchIsReportedNotRead() throws {
        // Decoding rejects rows out of order, out of range and counts that do not fit.
        func encoded(_ p: SegmentPatch) -> ByteView { ByteView(copying: p.encode()) }
        let good = SegmentPatch(base: BlockRef(offset: 12288, length: 64), values: .none, rowCount: 3, deleted: [1], replaced: [])
        #expect(try SegmentPatch.decode(encoded(good)) == good)
        for bad in [
            SegmentPatch(base: good.base, values: .none, rowCount: 3, deleted: [2, 1], replaced: []),
            SegmentPatch(base: good.base, values: BlockRef(offset: 12352, length: 64), rowCount: 3, deleted: [], replaced: [3]),
            SegmentPatch(base: good.base, values: .none, rowCount: 3, deleted: [], replaced: [1]),
            SegmentPatch(base: .none, values: .none, rowCount: 3, deleted: [1], replaced: []),
        ] {
            expectCode(.corrupted) { try SegmentPatch.decode(encoded(bad)) }
        }
        // A patch that deletes a row its base does not have, or whose values do not match its base.
        let base = try SegmentReader(block: ByteView(copying: SegmentEncoder.encode(ColumnBuffer(ints: [1, 2, 3]))))
        let strings = try SegmentReader(
            block: ByteView(copying: SegmentEncoder.encode(ColumnBuffer(type: .string, nullable: false, isList: false))))
        expectCode(.corrupted) {
            try SegmentPatch(base: good.base, values: .none, rowCount: 2, deleted: [3], replaced: []).apply(
                base: base, values: nil, origin: 0)
        }
        expectCode(.corrupted) {
            try SegmentPatch(base: good.base, values: good.base, rowCount: 3, deleted: [], replaced: []).apply(
                base: base, values: strings, origin: 0)
        }
        #expect(
            try SegmentPatch(base: good.base, values: .none, rowCount: 2, deleted: [1], replaced: []).apply(
                base: base, values: nil, origin: 0
            )
            .value(1) == .int(3))

        // In a file: a flipped byte in a patch is `corrupted` when the segment is read, never an
        // older value.
        let dir = TempDir()
        var rng = SplitMix(seed: 3)
        let (store, _) = try Self.makeItems(dir.file(), count: 1024, capacity: 512, rng: &rng)
        try store.write { try $0.set("Item", ObjectKey(600), "name", .string("patched")) }
        let s = try store.snapshot()
        // A later commit: damage in the newest commit's region reads as a torn tail (§6.6).
        try store.write { try $0.set("Item", ObjectKey(5), "flag", .bool(true)) }
        let ref = try Self.nameRef(s, group: 1)
        #expect(try s.segmentPatch(ref) != nil)
        let copy = dir.file("flipped.realm")
        var bytes = fileBytes(dir.file())
        bytes[Int(ref.offset) + 44] ^= 0x01
        _ = FileManager.default.createFile(atPath: copy, contents: Data(bytes))
        let damaged = try Store.open(at: copy, options: .init(readOnly: true)).snapshot()
        expectCode(.corrupted) { try damaged.value("Item", ObjectKey(600), "name") }
        #expect(!Verifier().verify(damaged).isClean)
    }

    @Test func aFormat4FileWritesNoPatchesUntilCompactionUpgradesIt() throws {
        let dir = TempDir()
        let path = try FormatVersionTests.copy("v4-paged.realm", dir)
        let store = try Store.open(at: path)
        try store.write { try $0.delete("Tick", ObjectKey(300)) }
        #expect(try store.snapshot().formatVersion == 4)
        #expect(try Self.livePatches(path) == 0)
        _ = try store.compact()
        #expect(try store.snapshot().formatVersion == FileHeader.formatVersion)
        try store.write { try $0.delete("Tick", ObjectKey(301)) }
        #expect(try store.snapshot().objectCount("Tick") == 598)
        #expect(try store.snapshot().objectKey("Tick", primaryKey: .int(302)) == ObjectKey(302))
    }
}

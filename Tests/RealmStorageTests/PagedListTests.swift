import Foundation
import Testing

@testable import RealmStorage

/// Paged row-group lists and index directories (format 4, Spec/FORMAT.md §5.4 and §5.7): a table
/// of more than `Pages.size` row groups keeps its list, and each index its directory, in pages, and
/// a commit rewrites only the pages it changes.
@Suite struct PagedListTests {
    /// A store whose table `T` (int primary key `id`) holds ids 0 … `objects` − 1 as objects of
    /// the same keys, in row groups of `rowGroupCapacity`.
    static func idTable(_ dir: TempDir, objects: Int, rowGroupCapacity: Int) throws -> Store {
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: rowGroupCapacity))
        try store.write { tx in
            try tx.createTable("T", primaryKey: ColumnSchema("id", .int))
            for i in 0..<objects { try tx.insert("T", row: [.int(Int64(i))]) }
        }
        return store
    }

    /// The live bytes the inspector's block map counts: header, record and every reachable block.
    static func mappedLiveBytes(_ path: String) throws -> UInt64 {
        try Inspector().inspect(path: path, blocks: true).blocks.filter(\.isLive).reduce(0) { $0 + $1.length }
    }

    static func kinds(_ path: String) throws -> [String: Int] {
        var out: [String: Int] = [:]
        for b in try Inspector().inspect(path: path, blocks: true).blocks where b.isLive { out[b.kind, default: 0] += 1 }
        return out
    }

    /// Random inserts, deletes and sets over a table of many small row groups (and an index of as
    /// many chunks), checked after every commit against a dictionary, from this store and from a
    /// fresh one that decodes the pages from the file; live-byte accounting stays exact.
    @Test(arguments: [3, 11])
    func pagedTablesMatchAModel(seed: UInt64) throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 2))
        var tx = try store.beginWrite()
        try tx.createTable("T", primaryKey: ColumnSchema("id", .int))
        try tx.addColumn("T", ColumnSchema("s", .string, indexed: true))
        try tx.commit()
        var model: [Int64: (key: ObjectKey, s: String)] = [:]
        var rng = SplitMix(seed: seed)
        var nextId: Int64 = 0
        for step in 0..<60 {
            tx = try store.beginWrite()
            for _ in 0..<Int(rng.next() % 12) {
                let r = rng.next() % 10
                if r < 6 || model.isEmpty {
                    let s = "v\(rng.next() % 50)"
                    model[nextId] = (try tx.insert("T", row: [.int(nextId), .string(s)]), s)
                    nextId += 1
                } else if r < 8 {
                    let id = model.keys.sorted()[Int(rng.next() % UInt64(model.count))]
                    try tx.delete("T", model[id]!.key)
                    model[id] = nil
                } else {
                    let id = model.keys.sorted()[Int(rng.next() % UInt64(model.count))]
                    let s = "w\(rng.next() % 50)"
                    try tx.set("T", model[id]!.key, "s", .string(s))
                    model[id]!.s = s
                }
            }
            let snap = try tx.commit()
            guard step % 6 == 5 else { continue }
            let fresh = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
            for s in [snap, fresh] {
                #expect(try s.objectCount("T") == model.count)
                for (id, v) in model {
                    #expect(try s.objectKey("T", primaryKey: .int(id)) == v.key)
                    #expect(try s.value("T", v.key, "s") == .string(v.s))
                }
                let byS = Dictionary(grouping: model.values, by: \.s)
                for (text, objects) in byS.prefix(5) {
                    #expect(try Set(s.objectKeys("T", indexed: "s", equalTo: .string(text))) == Set(objects.map(\.key)))
                }
            }
            #expect(Verifier().verify(fresh).isClean)
            #expect(try Self.mappedLiveBytes(dir.file()) == fresh.liveBytes)
        }
        let kinds = try Self.kinds(dir.file())
        #expect(kinds["row-group list page", default: 0] >= 2)
        #expect(kinds["index directory page", default: 0] >= 4)
        // Compaction writes pages too, and keeps every object.
        try store.compact()
        let compacted = try store.snapshot()
        #expect(try compacted.objectCount("T") == model.count)
        #expect(Verifier().verify(compacted).isClean)
        #expect(try Self.kinds(dir.file())["row-group list page", default: 0] >= 2)
        #expect(try Self.mappedLiveBytes(dir.file()) == compacted.liveBytes)
    }

    /// A one-object commit to a table of thousands of row groups writes its last list page and
    /// directory page and two small page tables, not the whole list and directory.
    @Test func aSmallCommitToALargeTableWritesFewBytes() throws {
        let dir = TempDir()
        let store = try Self.idTable(dir, objects: 8_000, rowGroupCapacity: 4)
        let before = try store.snapshot()
        #expect(try before.rowGroupList(try before.tableState("T")).pages.count == Self.layout(2_000).count)
        let flatList = UInt64(16 + 40 * 2_000)
        for i in 8_000..<8_010 {
            let tx = try store.beginWrite()
            try tx.insert("T", row: [.int(Int64(i))])
            try tx.commit()
        }
        let after = try store.snapshot()
        let perCommit = UInt64(after.fileLength - before.fileLength) / 10
        #expect(perCommit < flatList / 8, "\(perCommit) bytes per one-object commit")
        #expect(try after.objectCount("T") == 8_010)
        #expect(Verifier().verify(after).isClean)
        let fresh = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        #expect(try fresh.objectKey("T", primaryKey: .int(8_009)) != nil)
        #expect(try fresh.objectKey("T", primaryKey: .int(3)) != nil)
        #expect(try Self.mappedLiveBytes(dir.file()) == fresh.liveBytes)
    }

    /// The page sizes the reference writer cuts `count` items into (Spec/FORMAT.md §5.4).
    static func layout(_ count: Int) -> [Int] {
        var sizes: [Int] = []
        var start = 0
        while start < count {
            let end = Pages.pageEnd(start: start, count: count)
            sizes.append(end - start)
            start = end
        }
        return sizes
    }

    /// Full pages of 16, then the rest in pages of its binary digits, largest first.
    @Test func theRestIsPagedByItsBinaryDigits() {
        #expect(Pages.size == 16)
        #expect(Self.layout(1) == [1])
        #expect(Self.layout(15) == [8, 4, 2, 1])
        #expect(Self.layout(16) == [16])
        #expect(Self.layout(17) == [16, 1])
        #expect(Self.layout(100) == [16, 16, 16, 16, 16, 16, 4])
        #expect(Self.layout(127) == [16, 16, 16, 16, 16, 16, 16, 8, 4, 2, 1])
        for n in 1...300 {
            let sizes = Self.layout(n)
            #expect(sizes.reduce(0, +) == n && sizes.count == n / 16 + (n % 16).nonzeroBitCount, "\(n)")
        }
    }

    /// A one-object commit at the end of a large table writes the list and directory pages holding
    /// its changed entries, a page of the rest's lowest set bit (a few entries on average), and
    /// keeps every other page.
    @Test func aOneObjectCommitRewritesOnlyASmallLastPage() throws {
        let dir = TempDir()
        // 100 full groups (and index chunks), then a tail of at most 6 groups merging like a
        // binary counter, as in the 1M-object benchmark table.
        let store = try Self.idTable(dir, objects: 6_400, rowGroupCapacity: 64)
        var before = try store.snapshot()
        var (listEntries, directoryEntries) = (0, 0)
        /// The entries of the pages of `new` that `old` does not have, after checking the layout.
        func written(_ old: [Page], _ new: [Page], of count: Int) -> Int {
            #expect(new.map(\.count) == Self.layout(count))
            let oldBlocks = Set(old.map(\.block.offset))
            let pages = new.filter { !oldBlocks.contains($0.block.offset) }
            #expect(pages.count <= 3 && pages.allSatisfy { $0.count < Pages.size }, "\(pages.map(\.count))")
            return pages.reduce(0) { $0 + $1.count }
        }
        for i in 6_400..<6_464 {
            let tx = try store.beginWrite()
            try tx.insert("T", row: [.int(Int64(i))])
            let after = try tx.commit()
            let (old, new) = (try before.rowGroupList(try before.tableState("T")), try after.rowGroupList(try after.tableState("T")))
            listEntries += written(old.pages, new.pages, of: new.entries.count)
            let oldIndex = try before.indexMemo(try #require(try before.tableState("T").indexes.values.first))
            let newIndex = try after.indexMemo(try #require(try after.tableState("T").indexes.values.first))
            directoryEntries += written(oldIndex.pages, newIndex.pages, of: newIndex.directory.chunks.count)
            before = after
        }
        // Whole last pages would be 64 × 8 … 16 entries each.
        #expect(listEntries <= 64 * 4 && directoryEntries <= 64 * 4, "\(listEntries) list, \(directoryEntries) directory entries")
        #expect(try before.objectCount("T") == 6_464)
        #expect(Verifier().verify(before).isClean)
    }

    /// Removing a row group from an early page moves every later entry: those pages are written
    /// again, not kept from the previous version.
    @Test func removingAGroupRewritesTheShiftedPages() throws {
        let dir = TempDir()
        let store = try Self.idTable(dir, objects: 100, rowGroupCapacity: 1)
        let before = try store.snapshot()
        let key3 = try #require(try before.objectKey("T", primaryKey: .int(3)))
        try store.write { tx in try tx.delete("T", key3) }
        let fresh = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        #expect(try fresh.objectCount("T") == 99)
        #expect(try fresh.rowGroups("T").count == 99)
        #expect(try fresh.objectKey("T", primaryKey: .int(3)) == nil)
        for id in [0, 2, 4, 31, 32, 33, 64, 99] { #expect(try fresh.objectKey("T", primaryKey: .int(Int64(id))) != nil, "\(id)") }
        #expect(Verifier().verify(fresh).isClean)
        #expect(try Self.mappedLiveBytes(dir.file()) == fresh.liveBytes)
    }

    /// A version-3 file keeps writing its lists and directories in one block, however large.
    @Test func aVersion3FileKeepsUnpagedLists() throws {
        let dir = TempDir()
        let path = dir.file("v3.realm")
        try FileManager.default.copyItem(atPath: GoldenFileTests.vectors + "/v3-chained.realm", toPath: path)
        let store = try Store.open(at: path, options: .init(rowGroupCapacity: 1))
        let table = try #require(try store.snapshot().catalog.tables.first { $0.primaryKey != nil })
        let pk = try #require(table.columns.first { $0.name == table.primaryKey })
        #expect(pk.type == .int)
        try store.write { tx in
            let row = table.columns.map(\.defaultValue)
            for i in 0..<100 {
                var r = row
                r[table.columns.firstIndex(of: pk)!] = .int(Int64(1_000_000 + i))
                try tx.insert(table.name, row: r)
            }
        }
        let s = try store.snapshot()
        #expect(s.formatVersion == 3)
        #expect(try s.rowGroupList(try s.tableState(table.name)).pages.isEmpty)
        #expect(try s.rowGroups(table.name).count > Pages.size)
        #expect(try Self.kinds(path)["row-group list page"] == nil)
        #expect(Verifier().verify(try Store.open(at: path, options: .init(readOnly: true)).snapshot()).isClean)
    }

    /// Page tables are read with their bounds checked: no pages, a count that does not fit the
    /// block, and a page of no entries are corrupted.
    @Test func pageTablesAreBoundsChecked() throws {
        func view(_ bytes: [UInt8]) throws -> ByteView { try ByteView(copying: bytes, origin: 0).slice(0, bytes.count) }
        let page = Page(count: 3, block: BlockRef(offset: 12288, length: 136))
        let next = Page(count: 2, block: BlockRef(offset: 12288 + 136, length: 96))
        #expect(try RowGroupEntry.decodeListPages(try view(RowGroupEntry.encodeListPages([page, next]))) == [page, next])
        let (column, pages) = try IndexDirectory.decodePages(try view(IndexDirectory.encodePages(columnId: 7, [page])))
        #expect(column == 7 && pages == [page])
        expectCode(.corrupted) { try RowGroupEntry.decodeListPages(try view(RowGroupEntry.encodeListPages([]))) }
        expectCode(.corrupted) { try IndexDirectory.decodePages(try view(IndexDirectory.encodePages(columnId: 1, []))) }
        var tooMany = RowGroupEntry.encodeListPages([page])
        tooMany[4] = 2  // two pages claimed, one present
        expectCode(.corrupted) { try RowGroupEntry.decodeListPages(try view(tooMany)) }
        expectCode(.corrupted) {
            try RowGroupEntry.decodeListPages(try view(RowGroupEntry.encodeListPages([Page(count: 0, block: page.block)])))
        }
        // Pages are disjoint blocks: one named twice, or overlapping another, would let a small
        // file decode to a huge list or directory.
        let overlapping = Page(count: 3, block: BlockRef(offset: 12288 + 128, length: 136))
        // In any order (a commit rewrites a middle page at a higher offset than later ones).
        #expect(try RowGroupEntry.decodeListPages(try view(RowGroupEntry.encodeListPages([next, page]))) == [next, page])
        expectCode(.corrupted) { try IndexDirectory.decodePages(try view(IndexDirectory.encodePages(columnId: 1, [page, page]))) }
        expectCode(.corrupted) { try RowGroupEntry.decodeListPages(try view(RowGroupEntry.encodeListPages([page, overlapping]))) }
    }
}

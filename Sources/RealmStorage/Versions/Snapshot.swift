import Foundation

/// An immutable read view of one committed version.
///
/// A snapshot pins its version for as long as it lives (see ``Store/pinnedVersions()``) and can be
/// used from any thread: it is `Sendable`, its caches are behind a `Locked`, and the bytes it reads
/// are never overwritten (the file is append-only).
public final class Snapshot: Sendable {
    /// The store this snapshot was read from.
    public let store: Store
    /// The committed version this snapshot shows.
    public let version: UInt64
    /// The schema at this version.
    public let catalog: Catalog
    /// What pins this version (for ``Store/pinnedVersions()``).
    public let pinKind: String
    /// The format version of the file (Spec/FORMAT.md §3.1): version-1 files cannot hold mixed, set
    /// or map columns until compaction rewrites them in the current version.
    package let formatVersion: UInt32
    let record: VersionRecord
    let view: ByteView
    /// The store cache's generation when this snapshot was taken: the cache serves it only while
    /// the store is on the same file (``BlockCache/removeAll()``).
    let cacheGeneration: Int
    /// The store's cache while it still describes this snapshot's file.
    var cache: BlockCache? {
        store.cache.generation.load(ordering: .relaxed) == cacheGeneration ? store.cache : nil
    }
    /// What this snapshot resolved once, so that reading its version again costs no decoding: one
    /// lock for all four (a snapshot is made per commit and per read transaction, and each lock is
    /// three allocations and a pthread mutex to set up and tear down).
    private struct Memo {
        var lists: [UInt32: RowGroupList] = [:]
        var groups: [BlockRef: RowGroupBlock] = [:]
        var indexDirs: [BlockRef: BlockCache.IndexMemo] = [:]
        var columnSegments: [ColumnKey: [(rows: Int, segment: SegmentReader?)]] = [:]
    }
    private let memo = Locked(Memo())

    struct ColumnKey: Hashable {
        let table: UInt32
        let column: UInt32
    }

    /// Every row group's segment of one column (nil where a group predates it), resolved once per
    /// snapshot so repeated scans of an unchanged version touch no locks or caches.
    package func columnSegments(_ t: TableSchema, _ st: TableState, _ c: ColumnSchema) throws -> [(rows: Int, segment: SegmentReader?)] {
        let key = ColumnKey(table: t.id, column: c.id)
        if let cached = memo.withLock({ $0.columnSegments[key] }) { return cached }
        let entries = try rowGroups(st)
        // Room for every group's block at once (a first scan adds one per group).
        memo.withLock { $0.groups.reserveCapacity($0.groups.count + entries.count) }
        var out: [(rows: Int, segment: SegmentReader?)] = []
        out.reserveCapacity(entries.count)
        for e in entries {
            out.append((e.rowCount, try columnSegment(try rowGroup(e.block), c)))
        }
        memo.withLock { $0.columnSegments[key] = out }
        return out
    }

    init(store: Store, view: ByteView, formatVersion: UInt32, record: VersionRecord, kind: String, cacheGeneration: Int) {
        self.store = store
        self.cacheGeneration = cacheGeneration
        self.view = view
        self.formatVersion = formatVersion
        self.record = record
        self.version = record.version
        self.catalog = record.catalog
        self.pinKind = kind
    }

    deinit { store.unpin(version, pinKind) }

    /// When this version was committed.
    public var commitTime: Date { Date(timeIntervalSince1970: Double(record.commitTime) / 1e9) }
    /// The version this one was committed on top of (0 for the first).
    public var parentVersion: UInt64 { record.parentVersion }
    /// The bytes of the file this version uses (the committed length).
    public var fileLength: Int { view.count }
    /// Bytes reachable from this version; the rest of ``fileLength`` is dead until compaction.
    public var liveBytes: UInt64 { record.liveBytes }
    /// What this version's commit changed (decoded from the file on each call).
    /// - Throws: `.corrupted` if the stored changeset is damaged.
    public func changeset() throws -> Changeset { try record.decodeChangeset() }

    /// Lets the kernel drop the file pages this snapshot has read from this process's resident
    /// memory (they are read again when touched): long passes over a large file (compaction,
    /// verification) call it now and then to keep their memory bounded.
    package func releaseResidentPages() { view.releaseResidentPages() }

    /// Another pin of the same version (for example a frozen result derived from this one).
    public func retained(kind: String) -> Snapshot {
        store.state.withLock { s in store.pinLocked(&s, version, kind) }
        return Snapshot(
            store: store, view: view, formatVersion: formatVersion, record: record, kind: kind, cacheGeneration: cacheGeneration)
    }

    // MARK: Tables

    func table(_ name: String) throws -> (TableSchema, TableState) {
        guard let t = catalog.table(name) else { throw StorageError(.notFound, "no table named '\(name)'") }
        let st = record.tables[t.id] ?? TableState(tableId: t.id, nextObjectKey: 0, objectCount: 0, rowGroups: .none, indexes: [:])
        return (t, st)
    }

    package func tableState(_ name: String) throws -> TableState { try table(name).1 }

    /// The number of objects in `table`.
    public func objectCount(_ table: String) throws -> Int { Int(try self.table(table).1.objectCount) }

    package func block(_ ref: BlockRef, _ magic: UInt32) throws -> ByteView {
        try Store.readBlock(view, ref, magic, cache: cache)
    }

    /// The row groups of a table, in key order.
    package func rowGroups(_ table: String) throws -> [RowGroupEntry] {
        let st = try self.table(table).1
        return try rowGroups(st)
    }

    package func rowGroups(_ st: TableState) throws -> [RowGroupEntry] {
        try rowGroupList(st).entries
    }

    /// A table's row-group list with its pages (none when it is one block).
    package func rowGroupList(_ st: TableState) throws -> RowGroupList {
        if st.rowGroups.isNone { return RowGroupList(entries: [], pages: []) }
        if let l = memo.withLock({ $0.lists[st.tableId] }) { return l }
        let l = try listBlock(st.rowGroups, paged: true)
        memo.withLock { $0.lists[st.tableId] = l }
        return l
    }

    /// The list at `ref`: a row-group list block, or (format 4, when `paged`) a page table whose
    /// pages are row-group list blocks. A list the last commit wrote, or another snapshot decoded,
    /// is in the store's cache (the pages a snapshot decodes too, so a later page table decodes
    /// only its new pages; a commit caches its page table's whole list, not its pages).
    private func listBlock(_ ref: BlockRef, paged: Bool) throws -> RowGroupList {
        let key = cacheKey(ref)
        if let key, let cached = cache?.list(key) {
            // A page is a list block, never a page table (however the cache holds it).
            guard paged || cached.pages.isEmpty else {
                throw StorageError.corrupted("a row-group list page names a page table", at: Int(ref.offset))
            }
            return cached
        }
        let l: RowGroupList
        if paged, try blockMagic(ref) == BlockMagic.rowGroupListPages {
            try checkPagedFormat(ref)
            let pages = try RowGroupEntry.decodeListPages(try block(ref, BlockMagic.rowGroupListPages))
            let entries = try Pages.join(
                pages, what: "row-group list", load: { try listBlock($0.block, paged: false).entries },
                continues: { $1.firstKey > $0.lastKey })
            l = RowGroupList(entries: entries, pages: pages)
        } else {
            l = RowGroupList(entries: try RowGroupEntry.decodeList(try block(ref, BlockMagic.rowGroupList)), pages: [])
        }
        if let key { cache?.store(key, l) }
        return l
    }

    /// The magic of the block at `ref` (bounds-checked like every read; the block itself is
    /// checked when it is read).
    private func blockMagic(_ ref: BlockRef) throws -> UInt32 {
        guard isCommitted(ref) else {
            throw StorageError.corrupted(
                "block reference \(ref) lies outside the committed \(view.count) bytes", at: Int(clamping: ref.offset))
        }
        return try view.u32(Int(ref.offset))
    }

    /// Whether a block of at least 16 bytes at `ref` lies inside this version's committed bytes.
    private func isCommitted(_ ref: BlockRef) -> Bool {
        ref.length >= 16 && ref.length <= UInt64(view.count) && ref.offset <= UInt64(view.count) - ref.length
    }

    /// Page tables exist from format 4 on (Spec/FORMAT.md §3.1).
    private func checkPagedFormat(_ ref: BlockRef) throws {
        guard formatVersion >= FileHeader.pagedListsVersion else {
            throw StorageError.corrupted("a page table in a version-\(formatVersion) file", at: Int(ref.offset))
        }
    }

    package func rowGroup(_ ref: BlockRef) throws -> RowGroupBlock {
        if let g = memo.withLock({ $0.groups[ref] }) { return g }
        if let key = cacheKey(ref), let cached = cache?.group(key) { return cached.block }
        let g = try RowGroupBlock.decode(try block(ref, BlockMagic.rowGroup))
        memo.withLock { $0.groups[ref] = g }
        return g
    }

    /// The decoded segment at `ref` (cached per process): a segment block, or a segment patch
    /// (format 5) applied to its base, read like a plain segment.
    package func segment(_ ref: BlockRef) throws -> SegmentReader {
        // A decoded segment cached under (offset, stored checksum) was verified when it was cached.
        if let key = cacheKey(ref), let r = cache?.segment(key) { return r }
        let (r, checksum) = try readSegment(ref)
        cache?.store(BlockCache.Key(ref, checksum: checksum), r)
        return r
    }

    /// Reads the segment or segment patch at `ref`; returns it with the block's stored checksum.
    private func readSegment(_ ref: BlockRef) throws -> (SegmentReader, UInt64) {
        if let b = try patchBlock(ref, SegmentPatch.magic) {
            let patch = try SegmentPatch.decode(b)
            let base = try SegmentReader(block: try block(patch.base, BlockMagic.segment))
            let values = patch.values.isNone ? nil : try SegmentReader(block: try block(patch.values, BlockMagic.segment))
            let patched = try patch.apply(base: base, values: values, origin: Int(ref.offset))
            return (try SegmentReader(block: ByteView(copying: SegmentEncoder.encode(patched, compressing: false))), b.lastWord)
        }
        let b = try block(ref, BlockMagic.segment)
        return (try SegmentReader(block: b), b.lastWord)
    }

    /// The segment patch at `ref`, or nil when `ref` names a segment block (or anything else, which
    /// the segment read then rejects). Patches exist from format 5 on (Spec/FORMAT.md §4.8).
    package func segmentPatch(_ ref: BlockRef) throws -> SegmentPatch? {
        try patchBlock(ref, SegmentPatch.magic).map(SegmentPatch.decode)
    }

    /// The checked block at `ref` when it has the patch magic `magic` in a file that may hold
    /// patches; nil otherwise (what reads `ref` as a segment or chunk then checks it).
    private func patchBlock(_ ref: BlockRef, _ magic: UInt32) throws -> ByteView? {
        guard formatVersion >= FileHeader.segmentPatchesVersion, isCommitted(ref), try view.u32(Int(ref.offset)) == magic else {
            return nil
        }
        return try block(ref, magic)
    }

    /// Every block a row group's segment reference reaches: the segment, or a patch with its base
    /// and its values segment.
    package func segmentBlocks(_ ref: BlockRef) throws -> [BlockRef] {
        [ref] + (try segmentPatch(ref)?.parts ?? [])
    }

    /// The bytes a row group's segment reference keeps live (``segmentBlocks(_:)``).
    package func segmentBytes(_ ref: BlockRef) throws -> UInt64 {
        try segmentBlocks(ref).reduce(0) { $0 + $1.length }
    }

    /// The cache key of a block: its offset and the checksum stored in its last 8 bytes, or nil
    /// when the reference does not lie inside this version (then the full check reports it).
    func cacheKey(_ ref: BlockRef) -> BlockCache.Key? {
        guard isCommitted(ref) else { return nil }
        let end = Int(ref.offset + ref.length)
        // Near the end of the file, this store's own blocks are keyed without touching the mapping.
        if end > view.count - Int(BlockCache.recentWindow), let sum = cache?.recentChecksum(ref) {
            return BlockCache.Key(ref, checksum: sum)
        }
        guard let sum = try? view.u64(end - 8) else { return nil }
        return BlockCache.Key(ref, checksum: sum)
    }

    /// The parsed entries of an index chunk (cached per process like segments): a chunk block, or
    /// a chunk patch (format 5) applied to its base.
    func indexChunk(_ chunk: IndexDirectory.Chunk) throws -> IndexChunk {
        if let c = cachedIndexChunk(chunk) { return c }
        return caching(chunk, try readChunk(chunk))
    }

    /// The chunk `chunk` names, if the store's cache holds it.
    private func cachedIndexChunk(_ chunk: IndexDirectory.Chunk) -> IndexChunk? {
        guard let key = cacheKey(chunk.block), let c = cache?.chunk(key), c.count == chunk.count else { return nil }
        return c
    }

    /// Keeps a chunk just read (with its block's stored checksum) in the store's cache.
    private func caching(_ chunk: IndexDirectory.Chunk, _ read: (IndexChunk, UInt64)) -> IndexChunk {
        cache?.store(BlockCache.Key(chunk.block, checksum: read.1), read.0)
        return read.0
    }

    /// A chunk as lookups read it: decoded (from the cache, or read and cached), or, for a chunk
    /// patch not decoded yet, the patch over its base chunk, which ``IndexCursor`` searches without
    /// applying it. Applying a patch is a pass over every entry of its base, and a commit that
    /// changes the chunk again writes a new patch, so the next lookup would find nothing cached.
    func lookupChunk(_ chunk: IndexDirectory.Chunk) throws -> LookupChunk {
        if let c = cachedIndexChunk(chunk) { return .plain(c) }
        guard let b = try patchBlock(chunk.block, IndexChunkPatch.magic) else { return .plain(caching(chunk, try readPlainChunk(chunk))) }
        let patch = try IndexChunkPatch.decode(b)
        let baseChunk = try cachedPlainIndexChunk(patch.base)
        let origin = Int(chunk.block.offset)
        try patch.checkFits(baseChunk, origin: origin)
        guard patch.count == chunk.count else {
            throw StorageError.corrupted("index chunk patch of \(patch.count) entries where its directory says \(chunk.count)", at: origin)
        }
        return .patched(base: baseChunk, patch)
    }

    /// ``plainIndexChunk(_:)`` through the store's cache: the base of a chunk patch, read again by
    /// every lookup and every commit that changes the chunk.
    func cachedPlainIndexChunk(_ ref: BlockRef) throws -> IndexChunk {
        let key = cacheKey(ref)
        if let key, let c = cache?.chunk(key) { return c }
        let c = try plainIndexChunk(ref)
        if let key { cache?.store(key, c) }
        return c
    }

    /// Reads the chunk or chunk patch `chunk` names; returns it with the block's stored checksum.
    private func readChunk(_ chunk: IndexDirectory.Chunk) throws -> (IndexChunk, UInt64) {
        if let b = try patchBlock(chunk.block, IndexChunkPatch.magic) {
            let patch = try IndexChunkPatch.decode(b)
            let entries = try patch.apply(base: try plainIndexChunk(patch.base), origin: Int(chunk.block.offset))
            let c = try IndexDirectory.chunkEntries(ByteView(copying: IndexDirectory.encodeChunk(entries)), expected: chunk.count)
            return (c, b.lastWord)
        }
        return try readPlainChunk(chunk)
    }

    /// Reads the chunk block `chunk` names; returns it with the block's stored checksum.
    private func readPlainChunk(_ chunk: IndexDirectory.Chunk) throws -> (IndexChunk, UInt64) {
        let b = try block(chunk.block, BlockMagic.indexChunk)
        return (try IndexDirectory.chunkEntries(b, expected: chunk.count), b.lastWord)
    }

    /// The chunk `chunk` names, read for this call only (a pass over a whole index, or a writer
    /// that rebuilds the chunk, need not keep them).
    func uncachedIndexChunk(_ chunk: IndexDirectory.Chunk) throws -> IndexChunk {
        if let c = cachedIndexChunk(chunk) { return c }
        return try readChunk(chunk).0
    }

    /// The chunk block at `ref` with the entry count it states (a patch's base, which no directory
    /// entry counts), read for this call only.
    func plainIndexChunk(_ ref: BlockRef) throws -> IndexChunk {
        let b = try block(ref, BlockMagic.indexChunk)
        return try IndexDirectory.chunkEntries(b, expected: Int(try b.u32(4)))
    }

    /// The index chunk patch at `ref`, or nil when `ref` names a chunk block (or anything else,
    /// which the chunk read then rejects). Patches exist from format 5 on (Spec/FORMAT.md §5.7).
    package func chunkPatch(_ ref: BlockRef) throws -> IndexChunkPatch? {
        try patchBlock(ref, IndexChunkPatch.magic).map(IndexChunkPatch.decode)
    }

    /// Every block a directory's chunk reference reaches: the chunk, or a patch and its base.
    package func chunkBlocks(_ ref: BlockRef) throws -> [BlockRef] {
        [ref] + (try chunkPatch(ref)?.parts ?? [])
    }

    /// The last (largest) entry of an index chunk.
    func lastEntry(of chunk: IndexDirectory.Chunk) throws -> (hash: UInt64, key: Int64) {
        let c = try indexChunk(chunk)
        return (c.hash(c.count - 1), c.key(c.count - 1))
    }

    /// The largest hash of the index at `ref` (0 when it is empty).
    func largestIndexHash(_ ref: BlockRef) throws -> UInt64 {
        let memo = try indexMemo(ref)
        if let last = memo.lastEntry { return last.hash }
        guard let chunk = memo.directory.chunks.last else { return 0 }
        return try lastEntry(of: chunk).hash
    }

    /// The segment at `ref`, decoded for this call only: one pass over a whole file (verification,
    /// inspection) reads each segment once and should not fill the process's cache with them.
    package func uncachedSegment(_ ref: BlockRef) throws -> SegmentReader {
        if let key = cacheKey(ref), let r = cache?.segment(key) { return r }
        return try readSegment(ref).0
    }

    /// The reader of `column` in a row group, or nil when the group predates the column (its values
    /// are then the column's default). With `cached: false`, see ``uncachedSegment(_:)``.
    package func columnSegment(_ group: RowGroupBlock, _ column: ColumnSchema, cached: Bool = true) throws -> SegmentReader? {
        guard let ref = group.columns[column.id] else { return nil }
        let r = cached ? try segment(ref) : try uncachedSegment(ref)
        guard r.type == column.type, r.isList == column.isList, r.isMap == column.isMap, r.nullable == column.isNullable,
            r.rowCount == group.rowCount
        else {
            throw StorageError.corrupted(
                "segment of column '\(column.name)' does not match the catalog or the row group", at: Int(ref.offset))
        }
        return r
    }

    package func keySegment(_ group: RowGroupBlock) throws -> SegmentReader {
        let r = try segment(group.keys)
        guard r.type == .int, !r.isList, !r.isMap, !r.nullable, r.rowCount == group.rowCount, r.integers != nil else {
            throw StorageError.corrupted("key segment does not hold \(group.rowCount) integers", at: Int(group.keys.offset))
        }
        return r
    }

    /// Locates `key`: the row group entry index, its block and the row within it.
    package func locate(_ st: TableState, _ key: ObjectKey) throws -> (Int, RowGroupBlock, Int)? {
        let list = try rowGroups(st)
        let lo = list.partitionPoint { $0.lastKey < key.rawValue }
        guard lo < list.count, list[lo].firstKey <= key.rawValue else { return nil }
        let g = try rowGroup(list[lo].block)
        guard g.rowCount == list[lo].rowCount else {
            throw StorageError.corrupted(
                "row group holds \(g.rowCount) rows; its list entry says \(list[lo].rowCount)", at: Int(list[lo].block.offset))
        }
        return try keySegment(g).integers!.sortedIndex(of: key.rawValue).map { (lo, g, $0) }
    }

    @inline(__always)
    func keyAt(_ keys: SegmentReader, _ i: Int) throws -> Int64 { keys.integers![i] }

    /// Whether `table` holds an object with `key`.
    public func contains(_ table: String, _ key: ObjectKey) throws -> Bool {
        try locate(try self.table(table).1, key) != nil
    }

    /// The value of `column` of object `key`.
    /// - Throws: `.notFound` for an unknown table, column or object; `.corrupted` for bad bytes.
    public func value(_ table: String, _ key: ObjectKey, _ column: String) throws -> StorageValue {
        let (t, st) = try self.table(table)
        guard let c = t.column(column) else { throw StorageError(.notFound, "table '\(table)' has no column '\(column)'") }
        guard let (_, g, row) = try locate(st, key) else { throw StorageError(.notFound, "no object \(key) in '\(table)'") }
        guard let seg = try columnSegment(g, c) else {
            return c.defaultValue
        }
        return try seg.value(row)
    }

    /// All values of object `key`, by column name.
    public func object(_ table: String, _ key: ObjectKey) throws -> [String: StorageValue] {
        let (t, st) = try self.table(table)
        guard let (_, g, row) = try locate(st, key) else { throw StorageError(.notFound, "no object \(key) in '\(table)'") }
        var out: [String: StorageValue] = [:]
        for c in t.columns {
            out[c.name] =
                try columnSegment(g, c)?.value(row) ?? c.defaultValue
        }
        return out
    }

    /// The keys of every object in `table`, ascending.
    public func objectKeys(_ table: String) throws -> [ObjectKey] {
        let st = try self.table(table).1
        var out: [ObjectKey] = []
        // The stored count is checked against the row groups only by the Verifier: reserve no more
        // than one row group's worth up front (a damaged count asked for petabytes; FileOpen fuzzer).
        out.reserveCapacity(Int(min(st.objectCount, UInt64(SegmentReader.maximumRows))))
        for e in try rowGroups(st) {
            let keys = try keySegment(try rowGroup(e.block))
            let lane = keys.integers!
            for i in 0..<lane.count { out.append(ObjectKey(lane[i])) }
        }
        return out
    }

    /// Counts objects whose integer (or bool, or link) `column` satisfies `comparison`, scanning the
    /// segments in place with loops specialized per encoding. Null values never match.
    /// - Throws: `.notFound`, `.typeMismatch` (not an integer column), `.corrupted`.
    public func count(_ table: String, whereInt column: String, _ comparison: IntComparison) throws -> Int {
        let (t, st) = try self.table(table)
        guard let c = t.column(column), c.type.lane == .integer, !c.isList, !c.isMap else {
            throw StorageError(.typeMismatch, "column '\(column)' of '\(table)' is not a single integer column")
        }
        var n = 0
        for (rows, seg) in try columnSegments(t, st, c) {
            guard let seg else {
                if !c.isNullable && comparison.matches(0) { n += rows }
                continue
            }
            guard let k = try seg.count(comparison) else {
                throw StorageError(.typeMismatch, "column '\(column)' is not an integer column")
            }
            n += k
        }
        return n
    }

    // MARK: Primary keys and indexes

    /// The object whose primary key equals `value`, found through the persisted index.
    /// - Throws: `.notFound` when the table has no primary key.
    public func objectKey(_ table: String, primaryKey value: StorageValue) throws -> ObjectKey? {
        let (t, st) = try self.table(table)
        guard let pk = t.primaryKeyColumn else { throw StorageError(.notFound, "table '\(table)' has no primary key") }
        return try indexLookup(t, st, pk, value).first
    }

    /// Objects whose indexed `column` equals `value`.
    public func objectKeys(_ table: String, indexed column: String, equalTo value: StorageValue) throws -> [ObjectKey] {
        let (t, st) = try self.table(table)
        guard let c = t.column(column), st.indexes[c.id] != nil || st.objectCount == 0 else {
            throw StorageError(.notFound, "column '\(column)' of '\(table)' has no index")
        }
        return try indexLookup(t, st, c, value)
    }

    package func indexDirectory(_ ref: BlockRef) throws -> IndexDirectory {
        try indexMemo(ref).directory
    }

    /// The index directory at `ref`, with its last entry when a commit of this store wrote it.
    func indexMemo(_ ref: BlockRef) throws -> BlockCache.IndexMemo {
        if let d = memo.withLock({ $0.indexDirs[ref] }) { return d }
        let d = try directoryBlock(ref, paged: true)
        memo.withLock { $0.indexDirs[ref] = d }
        return d
    }

    /// The directory at `ref`, read like ``listBlock(_:paged:)`` reads a list: an index directory
    /// block, or (format 4, when `paged`) a page table whose pages are directory blocks of the same
    /// column.
    private func directoryBlock(_ ref: BlockRef, paged: Bool) throws -> BlockCache.IndexMemo {
        let key = cacheKey(ref)
        if let key, let cached = cache?.index(key) {
            guard paged || cached.pages.isEmpty else {
                throw StorageError.corrupted("an index directory page names a page table", at: Int(ref.offset))
            }
            return cached
        }
        let d: BlockCache.IndexMemo
        if paged, try blockMagic(ref) == BlockMagic.indexDirectoryPages {
            try checkPagedFormat(ref)
            let (column, pages) = try IndexDirectory.decodePages(try block(ref, BlockMagic.indexDirectoryPages))
            let chunks = try Pages.join(
                pages, what: "index directory",
                load: { p in
                    let part = try directoryBlock(p.block, paged: false).directory
                    guard part.columnId == column else {
                        throw StorageError.corrupted(
                            "index directory page of column \(part.columnId) under column \(column)", at: Int(p.block.offset))
                    }
                    return part.chunks
                }, continues: { $0.firstHash <= $1.firstHash })
            d = .init(directory: IndexDirectory(columnId: column, chunks: chunks), lastEntry: nil, pages: pages)
        } else {
            d = .init(directory: try IndexDirectory.decode(try block(ref, BlockMagic.indexDirectory)), lastEntry: nil, pages: [])
        }
        if let key { cache?.store(key, d) }
        return d
    }

    /// Keys whose index entries carry `hash` (not yet confirmed against the column).
    package func indexCandidates(_ ref: BlockRef, _ hash: UInt64) throws -> [Int64] {
        try IndexCursor.keys(hash: hash, directory: try indexDirectory(ref), in: self)
    }

    func indexLookup(_ t: TableSchema, _ st: TableState, _ c: ColumnSchema, _ value: StorageValue) throws -> [ObjectKey] {
        guard let ref = st.indexes[c.id] else { return [] }
        let h = IndexHash.hash(value)
        let cands = try indexCandidates(ref, h)
        if IndexHash.isExact(c.type) && h != IndexHash.nullHash { return cands.map { ObjectKey($0) } }
        return try cands.map { ObjectKey($0) }.filter { k in
            guard let (_, g, row) = try locate(st, k) else { return false }
            let v = try columnSegment(g, c)?.value(row) ?? c.defaultValue
            return v.bitwiseEquals(value)
        }
    }

    // MARK: History

    /// The record of an older version still in the file, walking parent links.
    package func ancestorRecords(downTo oldest: UInt64) throws -> [VersionRecord] {
        var out: [VersionRecord] = [record]
        var r = record
        var steps = 0
        while r.version > oldest && !r.parentRecord.isNone {
            r = try VersionRecord.decode(try block(r.parentRecord, BlockMagic.versionRecord), formatVersion: formatVersion)
            out.append(r)
            steps += 1
            guard steps < 100_000_000, out[out.count - 2].parentVersion == r.version else {
                throw StorageError.corrupted("version chain is broken", at: Int(r.parentRecord.offset))
            }
        }
        return out
    }

    /// What changed between version `since` (exclusive) and this snapshot, coalescing every commit
    /// in between. Throws `.notFound` when `since` is no longer in the file (after compaction).
    public func changes(since: UInt64) throws -> Changeset {
        guard since <= version else { throw StorageError(.notFound, "version \(since) is newer than \(version)") }
        if since == version { return Changeset() }
        let chain = try ancestorRecords(downTo: since)
        var out = Changeset()
        var from = since
        if let root = chain.last, root.version > since {
            // The history starts above `since`: this file is a compacted copy. The store kept the
            // changes from `since` in the file it left, if a snapshot pinned `since` when it switched.
            guard root.parentRecord.isNone, let bridged = store.bridge(from: since, to: root.version) else {
                throw StorageError(.notFound, "version \(since) is no longer in the file")
            }
            out = bridged
            from = root.version
        }
        for r in chain.reversed() where r.version > from { out.merge(later: try r.decodeChangeset()) }
        return out
    }

    /// Version numbers still reachable through parent links (newest first).
    public func versionHistory() throws -> [UInt64] { try ancestorRecords(downTo: 0).map(\.version) }

    /// The versions after `since` up to this one, oldest first, each readable as a snapshot of its
    /// own: a change feed. A version's ``changeset()`` says what its commit inserted, modified and
    /// deleted, and its values are the objects right after that commit.
    ///
    /// ```swift
    /// for v in try store.snapshot().history(since: 10) {
    ///     let changes = try v.changeset()
    ///     for key in changes.tables["Person"]?.modified ?? [] { print(v.version, try v.object("Person", key)) }
    /// }
    /// ```
    ///
    /// Each snapshot pins its version (as any snapshot does) until it is released. `last` ends the
    /// feed at that version (this one when nil).
    /// - Throws: `.notFound` when `since` is newer than this version, or no longer in the file
    ///   (compaction keeps only the newest version; the error names the oldest one left).
    public func history(since: UInt64, through last: UInt64? = nil) throws -> [Snapshot] {
        guard since <= version else { throw StorageError(.notFound, "version \(since) is newer than \(version)") }
        if since == version { return [] }
        let chain = try ancestorRecords(downTo: since)
        guard let oldest = chain.last else { return [] }
        let reaches = oldest.version == since || (oldest.parentRecord.isNone && oldest.parentVersion == since && since == 0)
        guard reaches else {
            throw StorageError(
                .notFound,
                "version \(since) is no longer in the file: the oldest version in it is \(oldest.version) "
                    + "(compaction keeps only the newest version)")
        }
        let records = chain.reversed().filter { $0.version > since && $0.version <= last ?? version }
        store.state.withLock { s in store.pinLocked(&s, records.lazy.map(\.version), "history") }
        return records.map { r in
            Snapshot(store: store, view: view, formatVersion: formatVersion, record: r, kind: "history", cacheGeneration: cacheGeneration)
        }
    }
}

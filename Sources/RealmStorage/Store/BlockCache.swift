import Synchronization

/// Caches verified block checksums and decoded segments, bounded in bytes.
///
/// Sendable: all state is inside a `Locked`.
final class BlockCache: Sendable {
    /// A block by place, length and stored checksum (the checksum covers the block's own bytes).
    struct Key: Hashable {
        let offset: UInt64
        let length: UInt64
        let checksum: UInt64
        init(_ ref: BlockRef, checksum: UInt64) {
            offset = ref.offset
            length = ref.length
            self.checksum = checksum
        }
        /// One word hashed (offset and checksum mixed; the length rarely tells keys apart):
        /// lookups hash a key several times per read.
        func hash(into hasher: inout Hasher) { hasher.combine(checksum ^ (offset &* 0x9E37_79B9_7F4A_7C15)) }
    }
    struct Inner {
        var verified: Set<Key> = []
        var segments: [Key: SegmentReader] = [:]
        var segmentBytes = 0
        var chunks: [Key: IndexChunk] = [:]
        var groups: [Key: DecodedGroup] = [:]
        /// `groups`' keys, oldest first (the oldest leaves first when it is full).
        var groupOrder: [Key] = []
        var lists: [Key: RowGroupList] = [:]
        var indexes: [Key: IndexMemo] = [:]
        var chunkEntries: [Key: [(UInt64, Int64)]] = [:]
        /// `chunkEntries`' keys, oldest first.
        var chunkOrder: [Key] = []
        /// The blocks this store's commits wrote within ``recentWindow`` bytes of the end of its
        /// newest commit, with their trailers, in file order.
        var recent: [(offset: UInt64, length: UInt64, checksum: UInt64)] = []
        /// The first entry of `recent` still within the window: the older ones leave in bulk, once
        /// they are half the array (removing them at every commit shifted the whole array each time).
        var recentStart = 0
    }

    /// A row group's block, keys and column buffers as the commit that wrote the group held them.
    struct DecodedGroup {
        let block: RowGroupBlock
        let keys: [Int64]
        let columns: ColumnSet
    }

    /// An index directory, with its last entry when known (the largest hash and its key).
    struct IndexMemo {
        let directory: IndexDirectory
        let lastEntry: (hash: UInt64, key: Int64)?
        /// The pages of a paged directory (format 4); empty for a directory in one block.
        var pages: [Page] = []
    }

    /// What a commit built, decoded, keyed by the block it wrote.
    enum Product {
        case group(DecodedGroup)
        case list(RowGroupList)
        case index(IndexMemo)
        /// The entries of a small index chunk (see ``chunkEntries(_:)``).
        case chunk([(UInt64, Int64)])
    }
    let inner = Locked(Inner())
    static let maxSegmentBytes = 64 << 20
    static let maxVerified = 1 << 20

    /// Forgets everything (the store moved to another file) and starts a new generation: the
    /// snapshots of the old file no longer read from the cache or add to it (a page table's
    /// decoded entries depend on blocks its own checksum does not cover).
    func removeAll() {
        inner.withLock { $0 = Inner() }
        generation.add(1, ordering: .sequentiallyConsistent)
    }
    /// Moves on with every ``removeAll()``; a snapshot uses the cache only while it matches the
    /// generation the snapshot was taken in.
    let generation = Atomic<Int>(0)

    func isVerified(_ ref: BlockRef, _ sum: UInt64) -> Bool {
        inner.withLock { $0.verified.contains(Key(ref, checksum: sum)) }
    }
    func markVerified(_ ref: BlockRef, _ sum: UInt64) {
        inner.withLock {
            if $0.verified.count > Self.maxVerified { $0.verified.removeAll(keepingCapacity: true) }
            $0.verified.insert(Key(ref, checksum: sum))
        }
    }
    func segment(_ key: Key) -> SegmentReader? { inner.withLock { $0.segments[key] } }
    /// Row groups a commit of this store wrote, decoded: the next transaction that loads one (the
    /// tail that small commits keep merging into) starts from the buffers instead of decoding the
    /// segments again. At most ``maxGroups`` are kept.
    func group(_ key: Key) -> DecodedGroup? { inner.withLock { $0.groups[key] } }
    static let maxGroups = 16
    /// Row-group lists and index directories: those of the last commits (each transaction starts
    /// from its base version's, so small commits would otherwise decode them every time) and those
    /// readers decoded. At most ``maxStructures`` of each are kept.
    func list(_ key: Key) -> RowGroupList? { inner.withLock { $0.lists[key] } }
    func index(_ key: Key) -> IndexMemo? { inner.withLock { $0.indexes[key] } }
    func store(_ key: Key, _ l: RowGroupList) { store([(key, .list(l))]) }
    func store(_ key: Key, _ m: IndexMemo) { store([(key, .index(m))]) }
    static let maxStructures = 256
    /// Keeps a commit's products (one lock for all of them) and forgets the decoded row groups it
    /// `superseded` (rewritten or merged away: no later version holds them, and the groups a
    /// table's tail keeps merging into then stay cached).
    /// `written` are the blocks the commit wrote with their trailers, in file order (see
    /// ``recentChecksum(_:)``).
    func store(_ products: [(Key, Product)], superseded: [Key] = [], written: [(BlockRef, UInt64)] = []) {
        inner.withLock {
            if let last = written.last {
                let end = last.0.offset + last.0.length
                let floor = end - min(end, Self.recentWindow)
                // Commits append, so offsets only grow (kept in order whatever happens).
                if let newest = $0.recent.last, newest.offset >= written[0].0.offset {
                    $0.recent.removeAll(keepingCapacity: true)
                    $0.recentStart = 0
                }
                $0.recentStart = $0.recent[$0.recentStart...].partitionPoint { $0.offset < floor }
                if $0.recentStart * 2 >= $0.recent.count {
                    $0.recent.removeFirst($0.recentStart)
                    $0.recentStart = 0
                }
                for (ref, sum) in written where ref.offset >= floor { $0.recent.append((ref.offset, ref.length, sum)) }
            }
            for key in superseded where $0.groups.removeValue(forKey: key) != nil {
                if let i = $0.groupOrder.firstIndex(of: key) { $0.groupOrder.remove(at: i) }
            }
            for (key, p) in products {
                switch p {
                case .group(let g): Self.put(&$0.groups, &$0.groupOrder, key, g, max: Self.maxGroups)
                case .list(let l): Self.put(&$0.lists, key, l, max: Self.maxStructures)
                case .index(let m): Self.put(&$0.indexes, key, m, max: Self.maxStructures)
                case .chunk(let e): Self.put(&$0.chunkEntries, &$0.chunkOrder, key, e, max: Self.maxChunkEntries)
                }
            }
        }
    }
    /// How near the end of the newest commit a block must lie for ``recentChecksum(_:)`` to know it.
    static let recentWindow: UInt64 = 64 << 10

    /// The trailer of the block at `ref` if one of this store's commits wrote it within
    /// ``recentWindow`` bytes of the end of its newest commit. A snapshot forms the cache key of
    /// such a block from here rather than read the trailer through the mapping: that read would map
    /// the page the next commit writes into (and, by the kernel's fault-around, the pages after it)
    /// into this process, and the kernel must then write-protect every mapped page again each time
    /// it writes the page back — a cost each durable commit paid in its `fdatasync`.
    func recentChecksum(_ ref: BlockRef) -> UInt64? {
        inner.withLock { i in
            let at = i.recent[i.recentStart...].partitionPoint { $0.offset < ref.offset }
            guard at < i.recent.count, i.recent[at].offset == ref.offset, i.recent[at].length == ref.length else { return nil }
            return i.recent[at].checksum
        }
    }
    func chunk(_ key: Key) -> IndexChunk? { inner.withLock { $0.chunks[key] } }
    /// The entries of small index chunks this store's commits wrote: the trailing chunks of an
    /// index with ascending keys merge like a binary counter, so the next commits read them back.
    /// At most ``maxChunkEntries`` chunks are kept.
    func chunkEntries(_ key: Key) -> [(UInt64, Int64)]? { inner.withLock { $0.chunkEntries[key] } }
    static let maxChunkEntries = 64
    /// Chunks of at most this many entries are kept by ``chunkEntries(_:)``.
    static let maxCachedChunkCount = 1024
    func store(_ key: Key, _ c: IndexChunk) {
        inner.withLock { Self.put(&$0.chunks, key, c, max: 1 << 16) }
    }

    /// Adds an entry to a bounded map, emptying it first when it is full.
    private static func put<V>(_ map: inout [Key: V], _ key: Key, _ value: V, max: Int) {
        if map.count >= max { map.removeAll(keepingCapacity: true) }
        map[key] = value
    }

    /// Adds an entry to a bounded map whose keys `order` holds oldest first: when it is full, the
    /// oldest entry leaves.
    private static func put<V>(_ map: inout [Key: V], _ order: inout [Key], _ key: Key, _ value: V, max: Int) {
        if map.count >= max, !order.isEmpty { map[order.removeFirst()] = nil }
        if map.updateValue(value, forKey: key) == nil { order.append(key) }
    }
    func store(_ key: Key, _ r: SegmentReader) {
        inner.withLock {
            if $0.segmentBytes + r.decodedSize > Self.maxSegmentBytes {
                $0.segments.removeAll(keepingCapacity: true)
                $0.segmentBytes = 0
            }
            $0.segments[key] = r
            $0.segmentBytes += r.decodedSize
        }
    }
}

/// A persisted hash index on one column (Spec/FORMAT.md §5.7): a directory of chunks, each a sorted
/// run of (hash, object key) entries read by binary search straight from the mapping.
package struct IndexDirectory: Sendable, Equatable {
    package struct Chunk: Sendable, Equatable, BitwiseCopyable {
        package var firstHash: UInt64
        package var count: Int
        package var block: BlockRef
    }
    package var columnId: UInt32
    package var chunks: [Chunk]

    /// The most entries a reader accepts in one chunk.
    static let maximumChunkEntries = 1 << 20

    func encode() -> [UInt8] {
        var w = ByteWriter(capacity: 32 + chunks.count * 32)
        Self.encode(columnId: columnId, chunks[...], into: &w)
        return w.bytes
    }

    /// Appends a directory block of `chunks` (a whole directory or one page) to `w`, which has
    /// begun it.
    static func encode(columnId: UInt32, _ chunks: ArraySlice<Chunk>, into w: inout ByteWriter) {
        w.u32(BlockMagic.indexDirectory)
        w.u32(columnId)
        w.u32(UInt32(chunks.count))
        w.u32(0)
        // Four little-endian words per chunk, copied at once (rewritten on every commit).
        var words: [UInt64] = []
        words.reserveCapacity(chunks.count * 4)
        for c in chunks {
            words.append(c.firstHash)
            words.append(UInt64(UInt32(c.count)))
            words.append(c.block.offset)
            words.append(c.block.length)
        }
        w.u64s(words)
        w.sealBlock()
    }

    /// A paged directory's top block (`RIDP`, format 4): the column, then each page's chunk count
    /// and `RIDX` block (each page a directory of the same column).
    static func encodePages(columnId: UInt32, _ pages: [Page]) -> [UInt8] {
        var w = ByteWriter(capacity: 40 + pages.count * 24)
        encodePages(columnId: columnId, pages, into: &w)
        return w.bytes
    }

    /// Appends a paged directory's top block to `w`, which has begun it.
    static func encodePages(columnId: UInt32, _ pages: [Page], into w: inout ByteWriter) {
        w.u32(BlockMagic.indexDirectoryPages)
        w.u32(columnId)
        w.u32(UInt32(pages.count))
        w.u32(0)
        Pages.encode(pages, into: &w)
        w.sealBlock()
    }

    static func decodePages(_ v: ByteView) throws -> (columnId: UInt32, pages: [Page]) {
        var r = BlockReader(v, at: 4)
        let col = try r.u32()
        let n = Int(try r.u32())
        _ = try r.u32()
        guard n >= 1, n <= (v.count - 24) / 24 else { throw r.corrupted("index directory page count \(n) does not fit") }
        return (col, try Pages.decode(&r, count: n, what: "index directory"))
    }

    static func decode(_ v: ByteView) throws -> IndexDirectory {
        var r = BlockReader(v, at: 4)
        let col = try r.u32()
        let n = Int(try r.u32())
        _ = try r.u32()
        guard n <= (v.count - 24) / 32 else { throw r.corrupted("index chunk count \(n) does not fit") }
        var d = IndexDirectory(columnId: col, chunks: [])
        var prev: UInt64 = 0
        for i in 0..<n {
            let h = try r.u64()
            let c = Int(try r.u32())
            _ = try r.u32()
            guard c >= 1, c <= maximumChunkEntries, i == 0 || h >= prev else {
                throw r.corrupted("index chunk \(i) is out of order or empty")
            }
            prev = h
            d.chunks.append(Chunk(firstHash: h, count: c, block: try r.ref()))
        }
        return d
    }

    /// A chunk block: magic, count, then the hashes and the keys as two integer arrays (each plain
    /// or bit-packed, as segments encode integers), so ascending ids cost a few bytes per entry.
    /// The chunk an entry with hash `h` belongs in: the last one starting at or before `h`.
    func chunkIndex(for h: UInt64) -> Int { max(0, chunks.partitionPoint { $0.firstHash <= h } - 1) }

    /// The chunks that may hold entries with hash `h` (equal hashes can span chunk boundaries).
    func chunks(possiblyHolding h: UInt64) -> Range<Int> {
        guard !chunks.isEmpty else { return 0..<0 }
        let end = chunks.partitionPoint { $0.firstHash <= h }
        var first = max(0, end - 1)
        while first > 0 && chunks[first].firstHash == h { first -= 1 }
        return first..<end
    }

    static func encodeChunk(_ entries: [(UInt64, Int64)]) -> [UInt8] {
        var w = ByteWriter(capacity: 112 + entries.count * 16)
        encodeChunk(entries, into: &w)
        return w.bytes
    }

    /// Appends an index chunk block to `w`, which has begun it.
    static func encodeChunk<C: Collection>(_ entries: C, into w: inout ByteWriter) where C.Element == (UInt64, Int64) {
        w.u32(BlockMagic.indexChunk)
        w.u32(UInt32(entries.count))
        SegmentEncoder.appendIntArray(&w, entries.map { Int64(bitPattern: $0.0) })
        SegmentEncoder.appendIntArray(&w, entries.map(\.1))
        w.sealBlock()
    }

    /// The entries of a chunk, read in place.
    static func chunkEntries(_ v: ByteView, expected: Int) throws -> IndexChunk {
        let n = Int(try v.u32(4))
        guard n >= 1, n <= maximumChunkEntries, expected == n else {
            throw StorageError.corrupted("index chunk holds \(n) entries; its directory says \(expected)", at: v.origin + 4)
        }
        let body = try v.slice(8, v.count - 16, "index chunk arrays")
        let (h, used) = try SegmentReader.ArrayCursor.parse(body, at: 0)
        let (k, _) = try SegmentReader.ArrayCursor.parse(body, at: used)
        return IndexChunk(hashes: try SegmentReader.intValues(h, expected: n), keys: try SegmentReader.intValues(k, expected: n), count: n)
    }
}

/// The entries of one index chunk: zero-copy integer arrays of hashes and keys, read through their
/// owner-free cursors (the lanes keep the memory alive).
struct IndexChunk {
    let hashes: IntegerLane
    let keys: IntegerLane
    let count: Int
    let hashCursor: LaneCursor
    let keyCursor: LaneCursor

    init(hashes: IntegerLane, keys: IntegerLane, count: Int) {
        self.hashes = hashes
        self.keys = keys
        self.count = count
        hashCursor = hashes.cursor
        keyCursor = keys.cursor
    }

    @inline(__always) func hash(_ i: Int) -> UInt64 { UInt64(bitPattern: hashCursor[i]) }
    @inline(__always) func key(_ i: Int) -> Int64 { keyCursor[i] }
    var entries: [(UInt64, Int64)] { (0..<count).map { (hash($0), key($0)) } }
}

/// The 64-bit index hash of a value (Spec/FORMAT.md §5.7): order-preserving for integers, XXH64
/// (seeded by type) for everything else.
package enum IndexHash {
    /// The hash of null, shared with `Int64.min` (so lookups of either confirm against the column).
    package static let nullHash: UInt64 = 0

    package static func hash(_ v: StorageValue) -> UInt64 {
        switch v {
        case .null: return 0
        case .int(let i): return UInt64(bitPattern: i) ^ (1 << 63)
        case .bool(let b): return b ? (1 << 63) + 1 : 1 << 63
        case .link(let k): return UInt64(bitPattern: k.rawValue) ^ (1 << 63)
        case .string(let s): return XXH64.hash(Array(s.utf8), seed: 5)
        case .binary(let b): return XXH64.hash(b, seed: 6)
        case .objectId(let b): return XXH64.hash(b, seed: 8)
        case .timestamp, .uuid, .decimal128:
            return XXH64.hash(ColumnBuffer.fixedBytes(v, width: 16), seed: 7)
        case .float, .double, .typedLink, .list, .map: return 0  // never indexed (addColumn refuses)
        }
    }

    /// Whether hash equality implies value equality (integers), so no row needs to be read to confirm.
    package static func isExact(_ type: ColumnType) -> Bool { type == .int || type == .bool || type == .link }
}

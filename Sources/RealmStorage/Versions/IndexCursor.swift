/// An index directory with its chunks decoded as lookups need them, kept by one reader or
/// transaction (confined to one thread, so no lock) so repeated lookups search one chunk each.
struct IndexCursor {
    let directory: IndexDirectory
    private var chunks: [IndexChunk?]
    /// Whether chunk i is loaded (checked without copying the chunk out of `chunks`).
    private var loaded: [Bool]
    /// Each chunk's first hash, contiguous for the binary search of ``firstKey(hash:in:)``.
    private let firstHashes: [UInt64]
    /// Each loaded chunk's hash and key cursors (valid while `chunks` keeps the chunk): read
    /// without copying the chunk, whose lanes a copy would retain.
    private var cursors: [(hashes: LaneCursor, keys: LaneCursor)]

    init(_ ref: BlockRef, in snapshot: Snapshot) throws {
        directory = try snapshot.indexDirectory(ref)
        chunks = [IndexChunk?](repeating: nil, count: directory.chunks.count)
        loaded = [Bool](repeating: false, count: directory.chunks.count)
        firstHashes = directory.chunks.map(\.firstHash)
        cursors = [(LaneCursor, LaneCursor)](repeating: (.empty, .empty), count: directory.chunks.count)
    }

    /// The key of the first entry (in index order) carrying hash `h`, or nil: what
    /// ``forEachKey(hash:in:_:)`` finds first, without a closure.
    mutating func firstKey(hash h: UInt64, in snapshot: Snapshot) throws -> Int64? {
        // The chunks that may hold `h`: from the last one starting below `h` (an equal hash may
        // also end it) through the last one starting at or before `h`.
        var lo = 0
        var hi = firstHashes.count
        while lo < hi {
            let mid = (lo &+ hi) >> 1
            if firstHashes[mid] < h { lo = mid &+ 1 } else { hi = mid }
        }
        var ci = max(0, lo - 1)
        while ci < firstHashes.count && firstHashes[ci] <= h {
            if !loaded[ci] { try load(ci, in: snapshot) }
            let (hashes, keys) = cursors[ci]
            let a = hashes.unsignedLowerBound(h)
            if a < hashes.valueCount {
                return UInt64(bitPattern: hashes[a]) == h ? keys[a] : nil
            }
            ci += 1
        }
        return nil
    }

    /// Calls `body` with each key whose entry carries hash `h`, in index order, until it returns
    /// true; returns whether it did.
    mutating func forEachKey(hash h: UInt64, in snapshot: Snapshot, _ body: (Int64) throws -> Bool) throws -> Bool {
        for ci in directory.chunks(possiblyHolding: h) {
            if !loaded[ci] { try load(ci, in: snapshot) }
            // Searched where it is stored: copying a chunk out retains each of its buffers.
            if try Self.scan(&chunks[ci]!, h, body) { return true }
        }
        return false
    }

    /// Every key whose entry carries hash `h`, in index order.
    mutating func keys(hash h: UInt64, in snapshot: Snapshot) throws -> [Int64] {
        var out: [Int64] = []
        _ = try forEachKey(hash: h, in: snapshot) { key in
            out.append(key)
            return false
        }
        return out
    }

    /// Every key whose entry carries hash `h` in the index `directory`, decoding only the chunks
    /// that may hold it and keeping none (one-shot lookups: a cursor's per-chunk arrays cost more
    /// than the search when made for one lookup).
    static func keys(hash h: UInt64, directory: IndexDirectory, in snapshot: Snapshot) throws -> [Int64] {
        var out: [Int64] = []
        for ci in directory.chunks(possiblyHolding: h) {
            var chunk = try snapshot.indexChunk(directory.chunks[ci])
            _ = try scan(&chunk, h) { key in
                out.append(key)
                return false
            }
        }
        return out
    }

    private static func scan(_ chunk: inout IndexChunk, _ h: UInt64, _ body: (Int64) throws -> Bool) throws -> Bool {
        var a = chunk.lowerBound(h)
        while a < chunk.count, chunk.hash(a) == h {
            if try body(chunk.key(a)) { return true }
            a += 1
        }
        return false
    }

    /// Decodes chunk `ci` on first use.
    private mutating func load(_ ci: Int, in snapshot: Snapshot) throws {
        if loaded[ci] { return }
        let chunk = try snapshot.indexChunk(directory.chunks[ci])
        chunks[ci] = chunk
        cursors[ci] = (chunk.hashCursor, chunk.keyCursor)
        loaded[ci] = true
    }
}

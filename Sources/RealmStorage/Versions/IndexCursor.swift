/// An index directory with its chunks decoded as lookups need them, kept by one reader or
/// transaction (confined to one thread, so no lock) so repeated lookups search one chunk each.
struct IndexCursor {
    let directory: IndexDirectory
    /// The chunks decoded so far (they keep the memory their cursors read).
    private var chunks: [IndexChunk?]
    /// Each decoded chunk's hash and key cursors (nil: not decoded yet): read without copying the
    /// chunk, whose lanes a copy would retain.
    private var cursors: [(hashes: LaneCursor, keys: LaneCursor)?]

    init(_ ref: BlockRef, in snapshot: Snapshot) throws {
        directory = try snapshot.indexDirectory(ref)
        chunks = [IndexChunk?](repeating: nil, count: directory.chunks.count)
        cursors = [(hashes: LaneCursor, keys: LaneCursor)?](repeating: nil, count: directory.chunks.count)
    }

    /// The key of the first entry (in index order) carrying hash `h`, or nil: what
    /// ``forEachKey(hash:in:_:)`` finds first, without a closure.
    mutating func firstKey(hash h: UInt64, in snapshot: Snapshot) throws -> Int64? {
        for ci in directory.chunks(possiblyHolding: h) {
            let (hashes, keys) = try cursors(ci, in: snapshot)
            let a = hashes.unsignedLowerBound(h)
            // Past this chunk's entries: the next chunk may start with `h`.
            if a < hashes.valueCount { return UInt64(bitPattern: hashes[a]) == h ? keys[a] : nil }
        }
        return nil
    }

    /// Calls `body` with each key whose entry carries hash `h`, in index order, until it returns
    /// true; returns whether it did.
    mutating func forEachKey(hash h: UInt64, in snapshot: Snapshot, _ body: (Int64) throws -> Bool) throws -> Bool {
        for ci in directory.chunks(possiblyHolding: h) {
            let (hashes, keys) = try cursors(ci, in: snapshot)
            if try Self.scan(hashes, keys, h, body) { return true }
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
            let chunk = try snapshot.indexChunk(directory.chunks[ci])
            _ = try withExtendedLifetime(chunk) {
                try scan(chunk.hashCursor, chunk.keyCursor, h) { key in
                    out.append(key)
                    return false
                }
            }
        }
        return out
    }

    private static func scan(_ hashes: LaneCursor, _ keys: LaneCursor, _ h: UInt64, _ body: (Int64) throws -> Bool) throws -> Bool {
        var a = hashes.unsignedLowerBound(h)
        while a < hashes.valueCount, UInt64(bitPattern: hashes[a]) == h {
            if try body(keys[a]) { return true }
            a += 1
        }
        return false
    }

    /// Chunk `ci`'s cursors, decoding it on first use.
    private mutating func cursors(_ ci: Int, in snapshot: Snapshot) throws -> (hashes: LaneCursor, keys: LaneCursor) {
        if let c = cursors[ci] { return c }
        let chunk = try snapshot.indexChunk(directory.chunks[ci])
        chunks[ci] = chunk
        let c = (hashes: chunk.hashCursor, keys: chunk.keyCursor)
        cursors[ci] = c
        return c
    }
}

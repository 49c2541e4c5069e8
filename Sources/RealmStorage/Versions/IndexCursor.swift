/// An index directory with its chunks decoded as lookups need them, kept by one reader or
/// transaction (confined to one thread, so no lock) so repeated lookups search one chunk each.
struct IndexCursor {
    let directory: IndexDirectory
    /// The chunks read so far (they keep the memory their cursors read); for a chunk patch, its base.
    private var chunks: [IndexChunk?]
    /// Each decoded chunk's hash and key cursors (nil: not read yet, or a chunk patch): read
    /// without copying the chunk, whose lanes a copy would retain.
    private var cursors: [(hashes: LaneCursor, keys: LaneCursor)?]
    /// The chunks read as patches (format 5), searched with their bases without applying them
    /// (``Snapshot/lookupChunk(_:)``); empty until the first one.
    private var patches: [PatchedEntries?] = []

    init(_ ref: BlockRef, in snapshot: Snapshot) throws {
        directory = try snapshot.indexDirectory(ref)
        chunks = [IndexChunk?](repeating: nil, count: directory.chunks.count)
        cursors = [(hashes: LaneCursor, keys: LaneCursor)?](repeating: nil, count: directory.chunks.count)
    }

    /// The key of the first entry (in index order) carrying hash `h`, or nil: what
    /// ``forEachKey(hash:in:_:)`` finds first, without a closure.
    mutating func firstKey(hash h: UInt64, in snapshot: Snapshot) throws -> Int64? {
        for ci in directory.chunks(possiblyHolding: h) {
            if let (hashes, keys) = try cursors(ci, in: snapshot) {
                let a = hashes.unsignedLowerBound(h)
                // Past this chunk's entries: the next chunk may start with `h`.
                if a < hashes.valueCount { return UInt64(bitPattern: hashes[a]) == h ? keys[a] : nil }
            } else if var entries = patches[ci] {
                entries.seek(h)
                if let (hash, key) = entries.next() { return hash == h ? key : nil }
            }
        }
        return nil
    }

    /// Calls `body` with each key whose entry carries hash `h`, in index order, until it returns
    /// true; returns whether it did.
    mutating func forEachKey(hash h: UInt64, in snapshot: Snapshot, _ body: (Int64) throws -> Bool) throws -> Bool {
        for ci in directory.chunks(possiblyHolding: h) {
            if let (hashes, keys) = try cursors(ci, in: snapshot) {
                if try Self.scan(hashes, keys, h, body) { return true }
            } else if var entries = patches[ci] {
                if try entries.forEachKey(hash: h, body) { return true }
            }
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
    /// than the search when made for one lookup); a chunk patch is searched without applying it.
    static func keys(hash h: UInt64, directory: IndexDirectory, in snapshot: Snapshot) throws -> [Int64] {
        var out: [Int64] = []
        func collect(_ key: Int64) -> Bool {
            out.append(key)
            return false
        }
        for ci in directory.chunks(possiblyHolding: h) {
            switch try snapshot.lookupChunk(directory.chunks[ci]) {
            case .plain(let chunk):
                _ = withExtendedLifetime(chunk) { scan(chunk.hashCursor, chunk.keyCursor, h, collect) }
            case .patched(let base, let patch):
                var entries = PatchedEntries(base: base, patch)
                _ = withExtendedLifetime(base) { entries.forEachKey(hash: h, collect) }
            }
        }
        return out
    }

    private static func scan(_ hashes: LaneCursor, _ keys: LaneCursor, _ h: UInt64, _ body: (Int64) throws -> Bool) rethrows -> Bool {
        var a = hashes.unsignedLowerBound(h)
        while a < hashes.valueCount, UInt64(bitPattern: hashes[a]) == h {
            if try body(keys[a]) { return true }
            a += 1
        }
        return false
    }

    /// Chunk `ci`'s cursors, reading the chunk on first use; nil when it is a chunk patch, whose
    /// entries are then in `patches[ci]`.
    private mutating func cursors(_ ci: Int, in snapshot: Snapshot) throws -> (hashes: LaneCursor, keys: LaneCursor)? {
        if let c = cursors[ci] { return c }
        if !patches.isEmpty, patches[ci] != nil { return nil }
        switch try snapshot.lookupChunk(directory.chunks[ci]) {
        case .plain(let chunk):
            chunks[ci] = chunk
            let c = (hashes: chunk.hashCursor, keys: chunk.keyCursor)
            cursors[ci] = c
            return c
        case .patched(let base, let patch):
            chunks[ci] = base
            if patches.isEmpty { patches = [PatchedEntries?](repeating: nil, count: directory.chunks.count) }
            patches[ci] = PatchedEntries(base: base, patch)
            return nil
        }
    }
}

/// An index chunk as ``IndexCursor`` searches it (``Snapshot/lookupChunk(_:)``).
enum LookupChunk {
    case plain(IndexChunk)
    /// A chunk patch over its base chunk (checked to fit it).
    case patched(base: IndexChunk, IndexChunkPatch)
}

/// A chunk patch's entries in index order from a position on: its base chunk's entries without the
/// deleted positions, merged with the inserted entries — what ``IndexChunkPatch/apply(base:origin:)``
/// would list, found by binary searches instead of a pass over the base.
struct PatchedEntries {
    private let hashes: LaneCursor
    private let keys: LaneCursor
    private let deleted: [Int]
    private let inserted: [(UInt64, Int64)]
    /// The next base position, the first deleted position not before it, the next inserted entry.
    private var a = 0
    private var d = 0
    private var n = 0

    /// The entries of `patch` over `base`, which must outlive this value (its cursors read it).
    init(base: IndexChunk, _ patch: IndexChunkPatch) {
        hashes = base.hashCursor
        keys = base.keyCursor
        deleted = patch.deleted
        inserted = patch.inserted
    }

    /// The first and last entries of `patch` over `base` (a patch leaves at least one entry).
    static func ends(base: IndexChunk, _ patch: IndexChunkPatch) -> (first: (UInt64, Int64), last: (UInt64, Int64)) {
        var entries = PatchedEntries(base: base, patch)
        let first = entries.next() ?? (0, 0)
        // The last base position not deleted, against the last inserted entry.
        var p = base.count - 1
        var d = patch.deleted.count - 1
        while p >= 0, d >= 0, patch.deleted[d] == p {
            p -= 1
            d -= 1
        }
        let fromBase = p >= 0 ? (base.hash(p), base.key(p)) : nil
        guard let inserted = patch.inserted.last else { return (first, fromBase ?? first) }
        guard let fromBase else { return (first, inserted) }
        return (first, fromBase < inserted ? inserted : fromBase)
    }

    /// Moves to the first entry whose hash is not below `h`.
    mutating func seek(_ h: UInt64) {
        a = hashes.unsignedLowerBound(h)
        let from = a
        d = deleted.partitionPoint { $0 < from }
        n = inserted.partitionPoint { $0.0 < h }
    }

    /// Calls `body` with the key of each entry carrying hash `h`, in index order, until it returns
    /// true; returns whether it did.
    mutating func forEachKey(hash h: UInt64, _ body: (Int64) throws -> Bool) rethrows -> Bool {
        seek(h)
        while let (hash, key) = next(), hash == h {
            if try body(key) { return true }
        }
        return false
    }

    /// The next entry, in (hash, key) order, or nil past the last.
    mutating func next() -> (UInt64, Int64)? {
        while d < deleted.count, deleted[d] == a {
            a += 1
            d += 1
        }
        let fromBase = a < hashes.valueCount ? (UInt64(bitPattern: hashes[a]), keys[a]) : nil
        if let b = fromBase, n >= inserted.count || b < inserted[n] {
            a += 1
            return b
        }
        guard n < inserted.count else { return nil }
        n += 1
        return inserted[n - 1]
    }
}

/// An index directory with its chunks decoded as lookups need them, kept by one reader or
/// transaction (confined to one thread, so no lock) so repeated lookups search one chunk each.
struct IndexCursor {
    let directory: IndexDirectory
    private var chunks: [IndexChunk?]

    init(_ ref: BlockRef, in snapshot: Snapshot) throws {
        directory = try snapshot.indexDirectory(ref)
        chunks = [IndexChunk?](repeating: nil, count: directory.chunks.count)
    }

    /// Calls `body` with each key whose entry carries hash `h`, in index order, until it returns
    /// true; returns whether it did.
    mutating func forEachKey(hash h: UInt64, in snapshot: Snapshot, _ body: (Int64) throws -> Bool) throws -> Bool {
        for ci in directory.chunks(possiblyHolding: h) {
            let chunk: IndexChunk
            if let c = chunks[ci] {
                chunk = c
            } else {
                chunk = try snapshot.indexChunk(directory.chunks[ci])
                chunks[ci] = chunk
            }
            var a = chunk.lowerBound(h)
            while a < chunk.count, chunk.hash(a) == h {
                if try body(chunk.key(a)) { return true }
                a += 1
            }
        }
        return false
    }
}

/// A segment patch (Spec/FORMAT.md §4.8, format 5): a column's segment in a row group given as a
/// base segment with some of its rows deleted and some of the remaining rows replaced. A commit
/// that changes a few objects in the middle of a large table writes a patch (tens of bytes per
/// changed value) instead of rewriting the whole segment; the next commit that changes the same
/// segment writes a new patch over the same base, and a patch that has grown past its worth is
/// folded into a new segment (``WriteTransaction``'s `patchOrRewrite`). Readers apply the patch
/// once per process and cache the result as a plain segment, so scans read patched segments at
/// the speed of plain ones.
///
/// ```
/// offset  size  field
/// 0       4     magic "RPAT"
/// 4       4     reserved 0
/// 8       16    ref to the base segment (RSEG)
/// 24      16    ref to the values segment (RSEG of `s` rows), none when s = 0
/// 40      4     row count r          rows of the patched segment = base rows − d
/// 44      4     deleted count d
/// 48      4     set count s
/// 52      4     reserved 0
/// 56      4·d   deleted base rows, u32, strictly ascending
/// …       4·s   replaced rows of the patched segment, u32, strictly ascending, < r
/// …       0–7   padding
/// n − 8   8     checksum
/// ```
package struct SegmentPatch: Sendable, Equatable {
    static let magic: UInt32 = 0x5441_5052  // "RPAT"

    /// The base segment (never another patch).
    package var base: BlockRef
    /// The replacement values, one row per entry of `replaced`; none when nothing is replaced.
    package var values: BlockRef
    /// Rows of the patched segment.
    package var rowCount: Int
    /// Rows of the base that the patched segment leaves out, ascending.
    package var deleted: [Int]
    /// Rows of the patched segment whose value is the values segment's (row `i` of the values
    /// segment replaces row `replaced[i]`), ascending.
    package var replaced: [Int]

    /// The segment blocks the patch reads besides itself: its base, and its values when it has any.
    package var parts: [BlockRef] { values.isNone ? [base] : [base, values] }

    /// Whether a patch of `bytes` bytes and `entries` entries over a base of `baseBytes` bytes is
    /// the better write than the whole segment or chunk (Spec/FORMAT.md §4.8). A patch's entries
    /// are rewritten by every later commit that patches the same base, so a patch of `e` entries
    /// of `s` bytes each costs about `s·e` per commit; folding it costs the base's `B` bytes once.
    /// Folding when `s·e² > 2B` keeps the bytes per commit near their least, about `2·sqrt(2·B·s)`;
    /// and a patch is never more than half its base.
    static func pays(bytes: Int, entries: Int, baseBytes: Int) -> Bool {
        bytes * entries <= 2 * baseBytes && 2 * bytes <= baseBytes
    }

    /// The encoded block, checksum trailer included.
    func encode() -> [UInt8] {
        var w = ByteWriter(capacity: 64 + 4 * (deleted.count + replaced.count))
        encode(into: &w)
        return w.bytes
    }

    /// Appends the block to `w`, which has begun it (``ByteWriter/beginBlock()``).
    func encode(into w: inout ByteWriter) {
        w.u32(Self.magic)
        w.u32(0)
        w.ref(base)
        w.ref(values)
        w.u32(UInt32(rowCount))
        w.u32(UInt32(deleted.count))
        w.u32(UInt32(replaced.count))
        w.u32(0)
        for r in deleted { w.u32(UInt32(r)) }
        for r in replaced { w.u32(UInt32(r)) }
        w.sealBlock()
    }

    /// Decodes and checks the block's own fields (§4.8); the base and values segments are checked
    /// when they are read.
    static func decode(_ v: ByteView) throws -> SegmentPatch {
        var r = BlockReader(v, at: 4)
        _ = try r.u32()
        let base = try r.ref()
        let values = try r.ref()
        let rows = Int(try r.u32())
        let d = Int(try r.u32())
        let s = Int(try r.u32())
        _ = try r.u32()
        guard rows <= SegmentReader.maximumRows, d <= SegmentReader.maximumRows, s <= rows else {
            throw r.corrupted("segment patch of \(rows) rows, \(d) deleted and \(s) replaced is implausible")
        }
        guard 56 + 4 * (d + s) + 8 <= v.count else { throw r.corrupted("segment patch entries do not fit the block") }
        guard !base.isNone, (s == 0) == values.isNone else { throw r.corrupted("segment patch names no base or mismatched values") }
        func ascending(_ n: Int, below limit: Int?) throws -> [Int] {
            var out: [Int] = []
            out.reserveCapacity(n)
            for _ in 0..<n {
                let x = Int(try r.u32())
                if let last = out.last, x <= last { throw r.corrupted("segment patch rows do not strictly ascend") }
                if let limit, x >= limit { throw r.corrupted("segment patch row \(x) is outside the \(limit) rows") }
                out.append(x)
            }
            return out
        }
        let deleted = try ascending(d, below: nil)
        let replaced = try ascending(s, below: rows)
        return SegmentPatch(base: base, values: values, rowCount: rows, deleted: deleted, replaced: replaced)
    }

    /// The patched column: `base` without the deleted rows, with the replaced rows taken from
    /// `values`. Throws `corrupted` (at `origin`, the patch's offset) when the patch does not fit
    /// its base or its values segment.
    func apply(base: SegmentReader, values: SegmentReader?, origin: Int) throws -> ColumnBuffer {
        guard base.rowCount - deleted.count == rowCount, deleted.last.map({ $0 < base.rowCount }) ?? true else {
            throw StorageError.corrupted(
                "segment patch of \(rowCount) rows deletes \(deleted.count) of its base's \(base.rowCount)", at: origin)
        }
        if let values {
            guard values.rowCount == replaced.count, values.type == base.type, values.nullable == base.nullable,
                values.isList == base.isList, values.isMap == base.isMap
            else { throw StorageError.corrupted("segment patch values do not match its base", at: origin) }
        }
        var out = try base.decodeAll()
        if !deleted.isEmpty { out.remove(sortedIndices: deleted) }
        if let values {
            for (i, row) in replaced.enumerated() { out.set(row, try values.value(i)) }
        }
        return out
    }
}

/// An index chunk patch (Spec/FORMAT.md §5.7, format 5): a base chunk with some entries deleted and
/// some inserted, the way a segment patch changes a segment. A one-object commit that changes an
/// index in its middle (a delete, an update of an indexed value, an insert whose key does not sort
/// last, as a string primary key's) writes a patch of a few entries instead of rebuilding a chunk.
///
/// ```
/// offset  size  field
/// 0       4     magic "RIXP"
/// 4       4     entry count c        entries of the patched chunk = base entries − d + i
/// 8       16    ref to the base chunk (RIXC)
/// 24      4     deleted count d
/// 28      4     inserted count i
/// 32      4·d   deleted positions in the base chunk, u32, strictly ascending
/// …       0–4   padding to a multiple of 8
/// …       16·i  inserted entries: u64 hash, i64 key, strictly ascending by (hash, key)
/// n − 8   8     checksum
/// ```
package struct IndexChunkPatch: Sendable, Equatable {
    static let magic: UInt32 = 0x5058_4952  // "RIXP"

    package var base: BlockRef
    package var count: Int
    package var deleted: [Int]
    package var inserted: [(UInt64, Int64)]

    /// The chunk blocks the patch reads besides itself: its base.
    package var parts: [BlockRef] { [base] }

    package static func == (a: IndexChunkPatch, b: IndexChunkPatch) -> Bool {
        a.base == b.base && a.count == b.count && a.deleted == b.deleted && a.inserted.elementsEqual(b.inserted, by: ==)
    }

    func encode() -> [UInt8] {
        var w = ByteWriter(capacity: 48 + 4 * deleted.count + 16 * inserted.count)
        encode(into: &w)
        return w.bytes
    }

    /// Appends the block to `w`, which has begun it (``ByteWriter/beginBlock()``).
    func encode(into w: inout ByteWriter) {
        w.u32(Self.magic)
        w.u32(UInt32(count))
        w.ref(base)
        w.u32(UInt32(deleted.count))
        w.u32(UInt32(inserted.count))
        for p in deleted { w.u32(UInt32(p)) }
        w.pad()
        for (h, k) in inserted {
            w.u64(h)
            w.i64(k)
        }
        w.sealBlock()
    }

    /// Decodes and checks the block's own fields; the base chunk is checked when it is read.
    static func decode(_ v: ByteView) throws -> IndexChunkPatch {
        var r = BlockReader(v, at: 4)
        let count = Int(try r.u32())
        let base = try r.ref()
        let d = Int(try r.u32())
        let i = Int(try r.u32())
        let maximum = IndexDirectory.maximumChunkEntries
        guard count >= 1, count <= maximum, d <= maximum, i <= maximum, !base.isNone else {
            throw r.corrupted("index chunk patch of \(count) entries, \(d) deleted and \(i) inserted is implausible")
        }
        let insertedAt = (32 + 4 * d + 7) / 8 * 8
        guard insertedAt + 16 * i + 8 <= v.count else { throw r.corrupted("index chunk patch entries do not fit the block") }
        var deleted: [Int] = []
        deleted.reserveCapacity(d)
        for _ in 0..<d {
            let p = Int(try r.u32())
            if let last = deleted.last, p <= last { throw r.corrupted("index chunk patch positions do not strictly ascend") }
            deleted.append(p)
        }
        r.offset = insertedAt
        var inserted: [(UInt64, Int64)] = []
        inserted.reserveCapacity(i)
        for _ in 0..<i {
            let e = (try r.u64(), try r.i64())
            if let last = inserted.last, !(last < e) { throw r.corrupted("index chunk patch entries do not strictly ascend") }
            inserted.append(e)
        }
        return IndexChunkPatch(base: base, count: count, deleted: deleted, inserted: inserted)
    }

    /// Throws `corrupted` (at `origin`) unless the patch's entry count and deleted positions fit
    /// `base`.
    func checkFits(_ base: IndexChunk, origin: Int) throws {
        guard base.count - deleted.count + inserted.count == count, deleted.last.map({ $0 < base.count }) ?? true else {
            throw StorageError.corrupted("index chunk patch of \(count) entries does not fit its base of \(base.count)", at: origin)
        }
    }

    /// The patched chunk's entries: the base's without the deleted positions, merged with the
    /// inserted ones. Throws `corrupted` (at `origin`) when the patch does not fit its base or the
    /// result does not strictly ascend.
    func apply(base: IndexChunk, origin: Int) throws -> [(UInt64, Int64)] {
        try checkFits(base, origin: origin)
        var out: [(UInt64, Int64)] = []
        out.reserveCapacity(count)
        var d = 0
        var n = 0
        for p in 0..<base.count {
            if d < deleted.count && deleted[d] == p {
                d += 1
                continue
            }
            let e = (base.hash(p), base.key(p))
            while n < inserted.count && inserted[n] < e {
                out.append(inserted[n])
                n += 1
            }
            out.append(e)
        }
        out += inserted[n...]
        for j in out.indices.dropFirst() where !(out[j - 1] < out[j]) {
            throw StorageError.corrupted("index chunk patch gives entries out of order", at: origin)
        }
        return out
    }
}

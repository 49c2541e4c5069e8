/// Block magics (Spec/FORMAT.md §2.2).
enum BlockMagic {
    static let versionRecord: UInt32 = 0x5245_5652  // "RVER"
    static let rowGroupList: UInt32 = 0x534C_4752  // "RGLS"
    static let rowGroupListPages: UInt32 = 0x504C_4752  // "RGLP" (format 4)
    static let rowGroup: UInt32 = 0x5052_4752  // "RGRP"
    static let indexDirectory: UInt32 = 0x5844_4952  // "RIDX"
    static let indexDirectoryPages: UInt32 = 0x5044_4952  // "RIDP" (format 4)
    static let indexChunk: UInt32 = 0x4358_4952  // "RIXC"
    static let segment: UInt32 = SegmentEncoder.magic
}

/// The state of one table in one version (Spec/FORMAT.md §5.3).
package struct TableState: Sendable, Equatable {
    package var tableId: UInt32
    package var nextObjectKey: Int64
    package var objectCount: UInt64
    /// The row-group list block; none when the table is empty.
    package var rowGroups: BlockRef
    /// Index directories by column id (the primary key's among them).
    package var indexes: [UInt32: BlockRef]

    func encode(into w: inout ByteWriter) {
        w.u32(tableId)
        w.u32(UInt32(indexes.count))
        w.i64(nextObjectKey)
        w.u64(objectCount)
        w.ref(rowGroups)
        for (col, ref) in indexes.sorted(by: { $0.key < $1.key }) {
            w.u32(col)
            w.u32(0)
            w.ref(ref)
        }
    }

    static func decode(_ r: inout BlockReader) throws -> TableState {
        let id = try r.u32()
        let ni = try r.count(max: 1 << 16, "index count")
        var s = TableState(tableId: id, nextObjectKey: try r.i64(), objectCount: try r.u64(), rowGroups: try r.ref(), indexes: [:])
        // Counts are used as Int (a larger one trapped; found by the FileOpen fuzzer), Spec/FORMAT.md §5.3.
        guard s.objectCount <= UInt64(Int64.max) else { throw r.corrupted("object count \(s.objectCount) is implausible") }
        for _ in 0..<ni {
            let col = try r.u32()
            _ = try r.u32()
            s.indexes[col] = try r.ref()
        }
        return s
    }
}

/// A table's row-group list as read or written: its entries and, when it is paged (format 4),
/// its pages (empty for a list in one block).
package struct RowGroupList: Sendable {
    package var entries: [RowGroupEntry]
    package var pages: [Page]
}

/// An entry of a row-group list: which keys a row group holds and where it is (Spec/FORMAT.md §5.4).
package struct RowGroupEntry: Sendable, Equatable, BitwiseCopyable {
    package var firstKey: Int64
    package var lastKey: Int64
    package var rowCount: Int
    package var block: BlockRef

    static let size = 40

    static func encodeList(_ entries: [RowGroupEntry]) -> [UInt8] {
        var w = ByteWriter(capacity: 32 + entries.count * size)
        encodeList(entries[...], into: &w)
        return w.bytes
    }

    /// Appends a list block of `entries` (a whole list or one page) to `w`, which has begun it.
    static func encodeList(_ entries: ArraySlice<RowGroupEntry>, into w: inout ByteWriter) {
        w.u32(BlockMagic.rowGroupList)
        w.u32(UInt32(entries.count))
        // Five little-endian words per entry, copied at once (a large table rewrites its list on
        // every commit).
        var words: [UInt64] = []
        words.reserveCapacity(entries.count * 5)
        for e in entries {
            words.append(UInt64(bitPattern: e.firstKey))
            words.append(UInt64(bitPattern: e.lastKey))
            words.append(UInt64(UInt32(e.rowCount)))
            words.append(e.block.offset)
            words.append(e.block.length)
        }
        w.u64s(words)
        w.sealBlock()
    }

    /// A paged list's top block (`RGLP`, format 4): each page's entry count and `RGLS` block.
    static func encodeListPages(_ pages: [Page]) -> [UInt8] {
        var w = ByteWriter(capacity: 32 + pages.count * 24)
        encodeListPages(pages, into: &w)
        return w.bytes
    }

    /// Appends a paged list's top block to `w`, which has begun it.
    static func encodeListPages(_ pages: [Page], into w: inout ByteWriter) {
        w.u32(BlockMagic.rowGroupListPages)
        w.u32(UInt32(pages.count))
        Pages.encode(pages, into: &w)
        w.sealBlock()
    }

    static func decodeListPages(_ v: ByteView) throws -> [Page] {
        var r = BlockReader(v, at: 4)
        let n = Int(try r.u32())
        guard n >= 1, n <= (v.count - 16) / 24 else { throw r.corrupted("row-group list page count \(n) does not fit the block") }
        return try Pages.decode(&r, count: n, what: "row-group list")
    }

    static func decodeList(_ v: ByteView) throws -> [RowGroupEntry] {
        var r = BlockReader(v, at: 4)
        let n = Int(try r.u32())
        guard n <= (v.count - 16) / size else { throw r.corrupted("row-group count \(n) does not fit the block") }
        var out: [RowGroupEntry] = []
        out.reserveCapacity(n)
        var previousLast = Int64.min
        for i in 0..<n {
            let first = try r.i64()
            let last = try r.i64()
            let count = Int(try r.u32())
            _ = try r.u32()
            let ref = try r.ref()
            // `last &- first` wraps for keys far apart; as a bit pattern it is the exact span (first ≤ last).
            // (UInt64(_:) of the wrapped value trapped: found by the FileOpen fuzzer.)
            guard first <= last, i == 0 || first > previousLast, count >= 1, UInt64(count - 1) <= UInt64(bitPattern: last &- first)
            else {
                throw r.corrupted("row group \(i) has inconsistent keys \(first)...\(last) for \(count) rows")
            }
            previousLast = last
            out.append(RowGroupEntry(firstKey: first, lastKey: last, rowCount: count, block: ref))
        }
        return out
    }
}

/// A row group: the key segment and one segment per column (Spec/FORMAT.md §5.5).
package struct RowGroupBlock: Sendable, Equatable {
    package var rowCount: Int
    package var keys: BlockRef
    package var columns: [UInt32: BlockRef]

    func encode() -> [UInt8] {
        var w = ByteWriter(capacity: 48 + columns.count * 24)
        encode(into: &w)
        return w.bytes
    }

    /// Appends the block to `w`, which has begun it (``ByteWriter/beginBlock()``).
    func encode(into w: inout ByteWriter) {
        w.u32(BlockMagic.rowGroup)
        w.u32(UInt32(rowCount))
        w.u32(UInt32(columns.count))
        w.u32(0)
        w.ref(keys)
        for (id, ref) in columns.sorted(by: { $0.key < $1.key }) {
            w.u32(id)
            w.u32(0)
            w.ref(ref)
        }
        w.sealBlock()
    }

    static func decode(_ v: ByteView) throws -> RowGroupBlock {
        var r = BlockReader(v, at: 4)
        let rows = Int(try r.u32())
        let n = Int(try r.u32())
        _ = try r.u32()
        guard n <= (v.count - 40) / 24 else { throw r.corrupted("column count \(n) does not fit the row group") }
        guard rows >= 1, rows <= SegmentReader.maximumRows else { throw r.corrupted("row group of \(rows) rows") }
        let keys = try r.ref()
        // Sized once: growing from empty rehashed every entry two or three times, for every row
        // group a first scan of a version decodes.
        var columns = [UInt32: BlockRef](minimumCapacity: n)
        for _ in 0..<n {
            let id = try r.u32()
            _ = try r.u32()
            columns[id] = try r.ref()
        }
        return RowGroupBlock(rowCount: rows, keys: keys, columns: columns)
    }
}

/// The version record: the root of one committed version (Spec/FORMAT.md §5.1).
package struct VersionRecord: Sendable {
    package var version: UInt64
    package var parentVersion: UInt64
    package var parentRecord: BlockRef
    /// Where this commit's bytes begin: every block it wrote lies in `commitStart ..< record offset`.
    package var commitStart: UInt64
    /// XXH64 of the bytes `commitStart ..< record offset` (recovery checks the newest commit with it).
    package var commitChecksum: UInt64
    package var commitTime: Int64
    /// Bytes reachable from this version (header included).
    package var liveBytes: UInt64
    package var catalog: Catalog
    package var tables: [UInt32: TableState]
    /// The changeset to write (writer side).
    package var changeset: Changeset
    /// The format version of the file the record belongs to: it decides how the changeset is
    /// encoded (§5.6).
    package var formatVersion: UInt32
    /// The encoded changeset (reader side), decoded on demand.
    package var changesetView: ByteView?
    /// The catalog as encoded in this record (in place, for a record read from the file): the next
    /// commit that leaves the schema alone copies it instead of encoding the catalog again.
    package var catalogBytes: ByteView? = nil
    /// How far back the commit acknowledged when this one was written lies (format 8, bytes 4–7;
    /// the same value as the commit head's, Spec/FORMAT.md §3.4, §5.1): 0 in a record without a
    /// parent and in every record before format 8.
    package var lag: UInt32 = 0

    /// The commit that was acknowledged (durable) when this one was written: `version − lag`, or
    /// the parent when `lag` is 0 (Spec/FORMAT.md §5.1).
    package var acknowledgedVersion: UInt64 { CommitHead.acknowledged(version: version, parent: parentVersion, lag: lag) ?? 0 }

    /// Offset of the length field of a format-8 record (Spec/FORMAT.md §5.1).
    static let lengthOffset = 72

    /// The changeset, decoded from the file when this record was read.
    package func decodeChangeset() throws -> Changeset {
        guard let v = changesetView else { return changeset }
        var r = BlockReader(v)
        return try Changeset.decode(&r, formatVersion: formatVersion)
    }

    /// Per table, how many objects the changeset inserts, deletes and modifies, and whether the
    /// schema changed, without building key sets (see ``Changeset/counts(_:)``).
    package func changeCounts() throws -> (schemaChanged: Bool, tables: [String: (inserted: Int, deleted: Int, modified: Int)]) {
        guard let v = changesetView else {
            return (changeset.schemaChanged, changeset.tables.mapValues { ($0.inserted.count, $0.deleted.count, $0.modified.count) })
        }
        var r = BlockReader(v)
        return try Changeset.counts(&r, formatVersion: formatVersion)
    }

    /// Offset of the live-bytes field in an encoded record.
    static let liveBytesOffset = 64

    /// Sets the live-bytes field of an encoded record and re-seals its checksum.
    static func patchLiveBytes(_ bytes: inout [UInt8], _ live: UInt64) {
        // In place: the trailer comes off, the field changes, the new checksum goes back on.
        bytes.removeLast(8)
        for i in 0..<8 { bytes[liveBytesOffset + i] = UInt8(truncatingIfNeeded: live >> UInt64(8 * i)) }
        let sum = XXH64.hash(bytes, seed: 0)
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: sum >> UInt64(8 * i))) }
    }

    func encode() -> [UInt8] { encodeWithChangesetRange().bytes }

    /// The encoded record and where its changeset lies in it; the catalog's bytes are copied from
    /// `previous` when it has the same catalog.
    func encodeWithChangesetRange(reusing previous: VersionRecord? = nil) -> (bytes: [UInt8], changeset: Range<Int>, catalog: Range<Int>) {
        var w = ByteWriter(capacity: 256 + (previous?.catalogBytes?.count ?? 1024) + tables.count * 128)
        let ownLength = formatVersion >= FileHeader.recordLagVersion
        w.u32(BlockMagic.versionRecord)
        w.u32(ownLength ? lag : 0)
        w.u64(version)
        w.u64(parentVersion)
        w.ref(parentRecord)
        w.u64(commitStart)
        w.u64(commitChecksum)
        w.i64(commitTime)
        w.u64(liveBytes)
        // Format 8: the record's own length, filled in below once it is known.
        if ownLength { w.u64(0) }
        let catalogStart = w.count
        if let previous, let view = previous.catalogBytes, previous.catalog == catalog, let bytes = try? view.bytes(0, view.count) {
            w.append(bytes)
        } else {
            catalog.encode(into: &w)
        }
        let catalogEnd = w.count
        w.u32(UInt32(tables.count))
        for (_, t) in tables.sorted(by: { $0.key < $1.key }) { t.encode(into: &w) }
        let changesetStart = w.count
        changeset.encode(into: &w, formatVersion: formatVersion)
        let changesetEnd = w.count
        if ownLength {
            let length = UInt64((changesetEnd + 7) / 8 * 8 + 8)
            w.overwrite((0..<8).map { UInt8(truncatingIfNeeded: length >> UInt64(8 * $0)) }, at: Self.lengthOffset)
        }
        w.sealBlock()
        return (w.bytes, changesetStart..<changesetEnd, catalogStart..<catalogEnd)
    }

    /// Decodes a record of a file whose static header says `formatVersion`.
    static func decode(_ v: ByteView, formatVersion: UInt32) throws -> VersionRecord {
        var r = BlockReader(v, at: 8)
        let version = try r.u64()
        let parentVersion = try r.u64()
        let parentRecord = try r.ref()
        let commitStart = try r.u64()
        let commitChecksum = try r.u64()
        let time = try r.i64()
        let live = try r.u64()
        var lag: UInt32 = 0
        if formatVersion >= FileHeader.recordLagVersion {
            lag = try v.u32(4)
            guard try r.u64() == UInt64(v.count) else { throw r.corrupted("the record's length field is not its length") }
            guard CommitHead.acknowledged(version: version, parent: parentVersion, lag: lag) != nil else {
                throw r.corrupted("the record's lag \(lag) names no commit at or before its parent")
            }
        }
        let catalogStart = r.offset
        let catalog = try Catalog.decode(&r, formatVersion: formatVersion)
        let catalogBytes = try v.slice(catalogStart, r.offset - catalogStart, "catalog")
        let n = try r.count(max: 1 << 16, "table state count")
        var tables: [UInt32: TableState] = [:]
        for _ in 0..<n {
            let t = try TableState.decode(&r)
            guard catalog.table(id: t.tableId) != nil, tables[t.tableId] == nil else {
                throw r.corrupted("state for unknown or repeated table \(t.tableId)")
            }
            tables[t.tableId] = t
        }
        let changesetStart = r.offset
        let changesetView: ByteView
        if formatVersion >= FileHeader.columnChangesVersion {
            // Format 6: the changeset runs to the block's checksum trailer (padding included) and
            // its structure is checked when it is read (§5.6): opening a file after a commit that
            // changed a million objects does not walk a million runs.
            guard v.count - 8 >= changesetStart else { throw r.corrupted("no room for the changeset") }
            changesetView = try v.slice(changesetStart, v.count - 8 - changesetStart)
        } else {
            var skip = r
            try Changeset.skipFormat5(&skip)
            changesetView = try v.slice(changesetStart, skip.offset - changesetStart)
        }
        // Versions ascend along the chain; a number is skipped after a commit that failed late.
        guard version >= 1, (parentVersion < version && !parentRecord.isNone) || (parentVersion == 0 && parentRecord.isNone) else {
            throw r.corrupted("version \(version) names parent \(parentVersion)")
        }
        guard parentRecord.isNone || parentRecord.offset < commitStart, commitStart >= UInt64(FileHeader.size) else {
            throw r.corrupted("commit start \(commitStart) is inconsistent with its parent record")
        }
        return VersionRecord(
            version: version, parentVersion: parentVersion, parentRecord: parentRecord, commitStart: commitStart,
            commitChecksum: commitChecksum, commitTime: time, liveBytes: live, catalog: catalog, tables: tables,
            changeset: Changeset(), formatVersion: formatVersion, changesetView: changesetView, catalogBytes: catalogBytes, lag: lag)
    }
}

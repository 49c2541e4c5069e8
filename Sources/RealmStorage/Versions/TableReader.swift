/// Where an object sits in one snapshot: its row group and row.
package struct RowLocation: Equatable, Sendable {
    package var group: Int32
    package var row: Int32
    @inlinable package init(group: Int, row: Int) {
        self.group = Int32(group)
        self.row = Int32(row)
    }
}

/// Random access to one table of a snapshot by row location, with every lookup (row groups, key
/// segments, column segments) resolved once: the fast path behind object accessors and iteration.
///
/// Not thread-safe (it fills its caches lazily): keep one per thread-confined reader.
package final class TableReader {
    package let snapshot: Snapshot
    package let schema: TableSchema
    let state: TableState
    let entries: [RowGroupEntry]
    // Exempt from dynamic exclusivity checks (they dominated a property read): a reader is
    // confined to one thread and each access is a plain load or a store of one element.
    private var keySegments: [SegmentReader?]
    /// Each group's key cursor once its key segment is read (the segment, kept in `keySegments`,
    /// keeps its memory): ``locate(_:)`` reads it without retaining the segment.
    private var keyCursors: [LaneCursor?]
    /// Per catalog column position: each group's segment (nil: the group predates the column).
    private var columns: [ColumnSegments?]
    /// The primary-key index, resolved on the first ``objectKey(primaryKey:)``.
    private var primaryIndex: PrimaryIndex?

    /// The primary-key index, the key column's position and whether its hash decides equality.
    private struct PrimaryIndex {
        var cursor: IndexCursor
        let column: Int
        let exactType: Bool
    }

    /// One column's segments, held by reference so reads borrow them instead of copying.
    final class ColumnSegments {
        let segments: [SegmentReader?]
        init(_ s: [SegmentReader?]) { segments = s }
    }

    package init(_ snapshot: Snapshot, _ table: String) throws {
        self.snapshot = snapshot
        (schema, state) = try snapshot.table(table)
        entries = try snapshot.rowGroups(state)
        keySegments = [SegmentReader?](repeating: nil, count: entries.count)
        keyCursors = [LaneCursor?](repeating: nil, count: entries.count)
        columns = [ColumnSegments?](repeating: nil, count: schema.columns.count)
    }

    /// The number of row groups.
    package var groupCount: Int { entries.count }
    /// The number of rows of group `g`.
    package func rowCount(group g: Int) -> Int { entries[g].rowCount }

    /// The keys of group `g`, in order.
    package func keys(group g: Int) throws -> IntegerLane { try keySegment(g).integers! }

    /// The last key of group `g`, from the table's row-group list (no segment read).
    package func lastKey(group g: Int) -> Int64 { entries[g].lastKey }

    /// The keys of group `g` through their owner-free cursor (the reader keeps the segment; a
    /// key segment is checked to be a lane of integers, so its cursor has one).
    package func keyCursor(group g: Int) throws -> LaneCursor {
        if let c = keyCursors[g] { return c }
        let c = try keySegment(g).cursor.ints!
        // Copied out, changed and put back: every access to the caches is instantaneous, so the
        // optimizer needs no dynamic exclusivity check for them (see ``ObjectBase``'s state).
        var cursors = keyCursors
        keyCursors = []
        cursors[g] = c
        keyCursors = cursors
        return c
    }

    /// Group `g`'s key segment (checked to hold its rows' keys as integers), read once.
    private func keySegment(_ g: Int) throws -> SegmentReader {
        if let s = keySegments[g] { return s }
        let group = try snapshot.rowGroup(entries[g].block)
        guard group.rowCount == entries[g].rowCount else {
            throw StorageError.corrupted(
                "row group holds \(group.rowCount) rows; its list entry says \(entries[g].rowCount)", at: Int(entries[g].block.offset))
        }
        let s = try snapshot.keySegment(group)
        var segments = keySegments
        keySegments = []
        segments[g] = s
        keySegments = segments
        return s
    }

    /// The location of `key`, or nil when the table has no such object.
    package func locate(_ key: ObjectKey) throws -> RowLocation? {
        let g = entries.partitionPoint { $0.lastKey < key.rawValue }
        guard g < entries.count, entries[g].firstKey <= key.rawValue else { return nil }
        return try keyCursor(group: g).sortedIndex(of: key.rawValue).map { RowLocation(group: g, row: $0) }
    }

    /// The object whose primary key is `value`, through the persisted index. The index directory
    /// and its chunks are resolved once per reader, so a lookup is a binary search in one chunk
    /// (plus, for non-integer keys, reading the candidate's key to confirm it).
    /// - Throws: `.notFound` when the table has no primary key.
    package func objectKey(primaryKey value: StorageValue) throws -> ObjectKey? {
        try object(primaryKey: value)?.key
    }

    /// The key and the location of the object whose primary key is `value`, through the persisted
    /// index (see ``objectKey(primaryKey:)``); nil when there is none. The location is nil only
    /// when the index names an object of an integer key that the table does not hold.
    /// - Throws: `.notFound` when the table has no primary key.
    package func object(primaryKey value: StorageValue) throws -> (key: ObjectKey, location: RowLocation?)? {
        var index: PrimaryIndex
        if let known = primaryIndex {
            index = known
        } else {
            guard let pk = schema.primaryKeyColumn else { throw StorageError(.notFound, "table '\(schema.name)' has no primary key") }
            guard let ref = state.indexes[pk.id] else { return nil }
            index = PrimaryIndex(
                cursor: try IndexCursor(ref, in: snapshot), column: schema.columns.firstIndex { $0.id == pk.id } ?? -1,
                exactType: IndexHash.isExact(pk.type))
        }
        // The index is taken out while it is searched (its cursor caches the chunks it decodes)
        // and put back after: no access to `primaryIndex` spans a call (see ``keyCursor(group:)``).
        primaryIndex = nil
        defer { primaryIndex = index }
        let h = IndexHash.hash(value)
        // Integer keys (but Int64.min, which shares null's hash) are decided by the hash alone:
        // the first entry with the hash is the object (no closure, no confirming read).
        if index.exactType && h != IndexHash.nullHash {
            guard let raw = try index.cursor.firstKey(hash: h, in: snapshot) else { return nil }
            let key = ObjectKey(raw)
            return (key, try locate(key))
        }
        let column = index.column
        var found: (key: ObjectKey, location: RowLocation?)?
        _ = try index.cursor.forEachKey(hash: h, in: snapshot) { raw in
            let key = ObjectKey(raw)
            guard let location = try locate(key), try self.value(location, column: column).bitwiseEquals(value) else { return false }
            found = (key, location)
            return true
        }
        return found
    }

    /// The catalog position of the column named `name`.
    package func columnIndex(_ name: String) -> Int? { schema.columns.firstIndex { $0.name == name } }

    /// The segment holding the column at catalog position `column` for the row group of
    /// `location`; nil when that group predates the column (its rows hold the column's default).
    package func segment(_ location: RowLocation, column: Int) throws -> SegmentReader? {
        let g = Int(location.group)
        guard g >= 0, g < entries.count else { throw StorageError(.notFound, "row group \(g) out of \(entries.count)") }
        guard column >= 0, column < columns.count else { throw StorageError(.notFound, "column \(column) out of \(columns.count)") }
        if let s = columns[column] { return s.segments[g] }
        let segments = ColumnSegments(try snapshot.columnSegments(schema, state, schema.columns[column]).map(\.segment))
        var all = columns
        columns = []
        all[column] = segments
        columns = all
        return segments.segments[g]
    }

    /// The value at `location` of the column at catalog position `column`.
    package func value(_ location: RowLocation, column: Int) throws -> StorageValue {
        if let reader = try segment(location, column: column) { return try reader.value(Int(location.row)) }
        return schema.columns[column].defaultValue
    }
}

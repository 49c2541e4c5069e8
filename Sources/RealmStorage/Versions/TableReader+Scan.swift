/// One column of one row group, read in place for query scans: the typed lanes behind
/// ``TableReader/value(_:column:)`` without building a ``StorageValue`` per row.
///
/// A group written before the column existed has no segment: every row then holds
/// ``defaultValue``. Not thread-safe beyond its ``SegmentReader`` (which is immutable).
package struct ColumnScan {
    /// The rows of the group.
    package let rowCount: Int
    let segment: SegmentReader?
    let column: ColumnSchema

    /// The value of every row when the group predates the column; nil when the rows are stored.
    package var defaultValue: StorageValue? { segment == nil ? column.defaultValue : nil }

    /// The number of null rows (single-value columns).
    package var nullCount: Int { segment?.nullCount ?? 0 }

    /// Whether row `row` is null.
    package func isNull(_ row: Int) throws -> Bool { try segment?.isNull(row) ?? column.defaultValue.isNull }

    /// The value of row `row`.
    package func value(_ row: Int) throws -> StorageValue { try segment?.value(row) ?? column.defaultValue }

    /// The raw integers of an int, bool or link column (bools as 0 and 1, links as keys; null rows
    /// hold an unspecified value), or nil for other lanes and collections.
    package var integers: IntegerLane? { segment?.integers }

    /// Whether ``double(_:)`` and ``timestamp(_:)`` can read the rows: a single-value column stored
    /// in a fixed-width lane.
    package var isFixedWidth: Bool {
        guard let segment, !segment.isList, !segment.isMap, case .fixed = segment.values else { return false }
        return true
    }

    /// Row `row` of a float or double column, as a double (floats widen exactly). Null rows hold 0.
    package func double(_ row: Int) throws -> Double {
        guard let segment, case .fixed(let view, let width, _) = segment.values else {
            throw StorageError(.typeMismatch, "column '\(column.name)' is not a stored float or double column")
        }
        if width == 4 { return Double(Float(bitPattern: try view.u32(row &* 4))) }
        return Double(bitPattern: try view.u64(row &* 8))
    }

    /// Row `row` of a timestamp column. Null rows hold zero.
    package func timestamp(_ row: Int) throws -> (seconds: Int64, nanoseconds: Int32) {
        guard let segment, case .fixed(let view, 12, _) = segment.values else {
            throw StorageError(.typeMismatch, "column '\(column.name)' is not a stored timestamp column")
        }
        return (try view.i64(row &* 12), try view.i32(row &* 12 + 8))
    }

    /// Whether ``bytes(_:)`` can read the rows: a single-value string or binary column that is stored.
    package var isBytesLane: Bool {
        guard let segment, !segment.isList, !segment.isMap, segment.type == .string || segment.type == .binary else { return false }
        return true
    }

    /// The stored bytes of row `row` of a string (UTF-8) or binary column, in place; empty for null rows.
    package func bytes(_ row: Int) throws -> ByteView {
        guard let segment, !segment.isList, !segment.isMap else {
            throw StorageError(.typeMismatch, "column '\(column.name)' is not a stored single-value column")
        }
        let (blob, start, length) = try SegmentReader.item(segment.values, row)
        return try blob.slice(start, length, "item")
    }

    /// For a dictionary-encoded single-value bytes column: the number of distinct entries and each
    /// row's entry index, so that a predicate can be decided once per entry.
    package var dictionary: (count: Int, indices: IntegerLane)? {
        guard let segment, !segment.isList, !segment.isMap, case .dictionary(let entries, let indices) = segment.values else { return nil }
        return (entries.count, indices)
    }

    /// Entry `i` of the dictionary (see ``dictionary``), decoded as the column's type.
    package func dictionaryValue(_ i: Int) throws -> StorageValue {
        guard let segment, case .dictionary(let entries, _) = segment.values else {
            throw StorageError(.typeMismatch, "column '\(column.name)' is not dictionary-encoded")
        }
        let (start, length) = try entries.item(i)
        switch segment.type {
        case .string: return .string(try entries.blob.string(start, length))
        case .mixed: return try MixedValue.decode(entries.blob, start, length)
        default: return .binary(try entries.blob.bytes(start, length))
        }
    }
}

extension TableReader {
    /// The column at catalog position `column` in row group `g`, for scanning.
    package func scan(group g: Int, column: Int) throws -> ColumnScan {
        guard g >= 0, g < entries.count else { throw StorageError(.notFound, "row group \(g) out of \(entries.count)") }
        let c = schema.columns[column]
        let segment = try snapshot.columnSegments(schema, state, c)[g].segment
        return ColumnScan(rowCount: entries[g].rowCount, segment: segment, column: c)
    }
}

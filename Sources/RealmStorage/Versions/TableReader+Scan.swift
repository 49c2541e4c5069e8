/// One column of one row group, read in place for query scans: the typed lanes behind
/// ``TableReader/value(_:column:)`` without building a ``StorageValue`` per row.
///
/// A group written before the column existed has no segment: every row then holds
/// ``defaultValue``. Not thread-safe beyond its ``SegmentReader`` (which is immutable).
package struct ColumnScan {
    /// The rows of the group.
    package let rowCount: Int
    let segment: SegmentReader?
    /// The column scanned.
    package let column: ColumnSchema

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

    /// Whether ``doubles()`` and ``timestamp(_:)`` can read the rows: a single-value column stored
    /// in a fixed-width lane.
    package var isFixedWidth: Bool {
        guard let segment, !segment.isList, !segment.isMap, case .fixed = segment.values else { return false }
        return true
    }

    /// Row `row` of a timestamp column. Null rows hold zero.
    package func timestamp(_ row: Int) throws -> (seconds: Int64, nanoseconds: Int32) {
        guard let segment, case .fixed(let view, 12, _) = segment.values else {
            throw StorageError(.typeMismatch, "column '\(column.name)' is not a stored timestamp column")
        }
        return (try view.i64(row &* 12), try view.i32(row &* 12 + 8))
    }

    /// Row `row` of a float or double column as a double (null rows hold 0), read in place.
    package func double(_ row: Int) throws -> Double {
        guard let segment, case .fixed(let view, let width, let count) = segment.values, width == 4 || width == 8, row >= 0,
            row < count
        else { throw StorageError(.typeMismatch, "column '\(column.name)' is not a stored float or double column holding row \(row)") }
        if width == 8 { return Double(bitPattern: UInt64(bitPattern: try view.i64(row &* 8))) }
        return Double(Float(bitPattern: try view.u32(row &* 4)))
    }

    /// Every row of a float or double column as doubles (null rows hold 0), copied in one loop so
    /// that callers in other modules scan a plain array.
    package func doubles() throws -> [Double] {
        var out: [Double] = []
        out.reserveCapacity(rowCount)
        try forEachDouble { out.append($0) }
        return out
    }

    /// `start` plus every row of a float or double column (floats widened), added in row order;
    /// read in place. Null rows hold 0: callers use it when ``nullCount`` is 0.
    package func sumDoubles(startingAt start: Double) throws -> Double {
        var sum = start
        try forEachDouble { sum += $0 }
        return sum
    }

    /// The smallest (or largest) row of a float or double column, ignoring NaN (floats widened);
    /// NaN when every row is NaN. Read in place; for groups without null rows.
    package func extremeDouble(smallest: Bool) throws -> Double {
        var best = Double.nan
        try forEachDouble { x in
            if !x.isNaN && (best.isNaN || (smallest ? x < best : x > best)) { best = x }
        }
        return best
    }

    /// Calls `body` with every row of a float or double column, widened to double, in row order,
    /// reading the lane in place.
    @inline(__always)
    private func forEachDouble(_ body: (Double) -> Void) throws {
        guard let segment, case .fixed(let view, let width, let count) = segment.values, width == 4 || width == 8 else {
            throw StorageError(.typeMismatch, "column '\(column.name)' is not a stored float or double column")
        }
        if width == 8 {
            let words = try view.int64Array(0, count: count)
            for i in 0..<count { body(Double(bitPattern: UInt64(bitPattern: words[i]))) }
        } else {
            for i in 0..<count { body(Double(Float(bitPattern: try view.u32(i &* 4)))) }
        }
    }

    /// Appends `(key, row)` for every row whose order key is not above `bound`, in row order,
    /// numbering the group's rows from `firstRow`. A row's order key is a 64-bit key whose unsigned
    /// order is the order of the rows' values: ints and bools numerically, floats and doubles
    /// numerically with every NaN first and `-0.0` equal to `0.0`; `descending` complements the
    /// keys (the exact reverse). For top-k selection over typed lanes: the caller passes the
    /// largest key it keeps, and the lane is read in place in one loop that keeps only the rows
    /// that may enter (a key made per row and offered to the heap cost ~54 instructions a row;
    /// callgrind, W5 at 1M). Returns false (appending nothing) unless the group is a single-value
    /// int, bool, float or double column without null rows whose lane holds `rowCount` values (a
    /// group predating the column uses its default).
    package func appendOrderKeys(
        descending: Bool, notAbove bound: UInt64, firstRow: Int, to out: inout [(key: UInt64, row: Int)]
    ) throws -> Bool {
        let flip: UInt64 = descending ? ~0 : 0
        @inline(__always) func intKey(_ v: Int64) -> UInt64 { (UInt64(bitPattern: v) ^ (1 << 63)) ^ flip }
        @inline(__always) func doubleKey(_ d: Double) -> UInt64 {
            if d.isNaN { return flip }
            // IEEE order as unsigned integers: negative numbers reversed; +1 leaves 0 to NaN.
            let bits = (d == 0 ? 0.0 : d).bitPattern
            return ((bits >> 63 == 1 ? ~bits : bits | (1 << 63)) &+ 1) ^ flip
        }
        guard let segment else {
            let key: UInt64
            switch column.defaultValue {
            case .int(let v): key = intKey(v)
            case .bool(let v): key = intKey(v ? 1 : 0)
            case .double(let v): key = doubleKey(v)
            case .float(let v): key = doubleKey(Double(v))
            default: return false
            }
            if key <= bound { out.append(contentsOf: (firstRow..<firstRow + rowCount).lazy.map { (key, $0) }) }
            return true
        }
        guard !segment.isList, !segment.isMap, segment.nullCount == 0 else { return false }
        switch (segment.type, segment.values) {
        case (.int, .integers(let lane)), (.bool, .integers(let lane)):
            guard lane.count == rowCount else { return false }
            for i in 0..<lane.count {
                let key = intKey(lane[i])
                if key <= bound { out.append((key, firstRow &+ i)) }
            }
        case (.double, .fixed(let view, 8, let count)):
            guard count == rowCount else { return false }
            let words = try view.int64Array(0, count: count)
            for i in 0..<count {
                let key = doubleKey(Double(bitPattern: UInt64(bitPattern: words[i])))
                if key <= bound { out.append((key, firstRow &+ i)) }
            }
        case (.float, .fixed(_, 4, let count)):
            guard count == rowCount else { return false }
            var row = firstRow
            try forEachDouble {
                let key = doubleKey($0)
                if key <= bound { out.append((key, row)) }
                row += 1
            }
        default: return false
        }
        return true
    }

    /// Where ``bytesMask(_:at:candidates:)`` looks for its bytes.
    package enum ItemPosition {
        /// The whole item equals the bytes.
        case whole
        /// The item starts with them.
        case prefix
        /// The item ends with them.
        case suffix
    }

    /// The rows of `candidates` (bit `r % 64` of word `r / 64` is row `r`) whose stored bytes
    /// are, start with or end with `needle`, decided in one loop over the segment's offsets (or
    /// dictionary). The bits of null rows are unspecified.
    package func bytesMask(_ needle: [UInt8], at position: ItemPosition, candidates: [UInt64]) throws -> [UInt64] {
        guard let segment, !segment.isList, !segment.isMap else {
            throw StorageError(.typeMismatch, "column '\(column.name)' is not a stored single-value column")
        }
        // The items through their owner-free cursor (the scan's segment keeps their memory).
        let items: ItemsCursor
        let origin: Int
        var indices: LaneCursor?
        switch segment.values {
        case .offsets(let o):
            items = try o.offsets.itemsCursor(count: o.count, blob: o.blob)
            origin = o.offsets.origin
        case .dictionary(let d, let lane):
            items = try d.offsets.itemsCursor(count: d.count, blob: d.blob)
            origin = d.offsets.origin
            indices = lane.cursor
        default: throw StorageError(.typeMismatch, "column '\(column.name)' is not a stored string or binary column")
        }
        let pattern = ItemPattern(needle)
        let (whole, atEnd) = (position == .whole, position == .suffix)
        var out = [UInt64](repeating: 0, count: candidates.count)
        for (w, word) in candidates.enumerated() {
            var bits = word
            while bits != 0 {
                let b = bits.trailingZeroBitCount
                let row = w << 6 | b
                let item = indices.map { Int(truncatingIfNeeded: $0[row]) } ?? row
                guard let hit = items.matches(item, pattern, whole: whole, atEnd: atEnd) else {
                    throw StorageError.corrupted(
                        "item \(item) of column '\(column.name)' is out of range or its offsets leave the blob", at: origin + item * 4)
                }
                if hit { out[w] |= UInt64(1) << UInt64(b) }
                bits &= bits &- 1
            }
        }
        return out
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

extension IntegerLane {
    /// Every value, decoded in one pass (a segment decoded into a column buffer).
    package var array: [Int64] { withExtendedLifetime(self) { cursor.decodedValues() } }
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

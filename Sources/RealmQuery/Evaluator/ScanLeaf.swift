import RealmStorage

/// A comparison of one single-value column of the scanned table with a constant (or the list of
/// `IN`/`BETWEEN`), decided per row group from the column's segment (see ``SegmentScan``).
struct ScanLeaf {
    let column: ColumnSchema
    /// The column's catalog position.
    let index: Int
    let test: ValueTest
    /// What a null row gives (`nil == nil`, `nil != 5`, …): the test applied to nil.
    let nullResult: Bool

    /// The leaf for `c`, or nil when `c` is not a one-column comparison with a constant.
    init?(_ c: CompiledComparison) {
        guard c.right == nil, c.bound.modifier == nil, case .path(let path) = c.left, path.steps.count == 1,
            case .column(let column, let index, _) = path.steps[0], !column.isList, !column.isMap
        else { return nil }
        self.column = column
        self.index = index
        self.test = c.test
        self.nullResult = c.test.test(.null)
    }

    /// The rows of `candidates` that match, reading `scan` (the column in this row group).
    func mask(_ scan: ColumnScan, _ candidates: RowMask) throws -> RowMask {
        if let value = scan.defaultValue {
            return test.test(value) ? candidates : RowMask(count: candidates.count, filled: false)
        }
        var rows: RowMask
        switch column.type {
        case .int, .bool, .link:
            guard let lane = scan.integers, let range = IntRange(test) else { return try generic(scan, candidates) }
            rows = range.mask(lane)
            rows.formIntersection(candidates)
        case .float, .double:
            guard scan.isFixedWidth, let matches = Self.comparator(test, Self.double) else { return try generic(scan, candidates) }
            let values = try scan.doubles()
            rows = RowMask.build(count: values.count) { matches(values[$0]) }
            rows.formIntersection(candidates)
        case .timestamp:
            guard scan.isFixedWidth, let matches = Self.comparator(test, Self.instant) else { return try generic(scan, candidates) }
            rows = try RowMask.select(candidates) { row in
                let (s, n) = try scan.timestamp(row)
                return matches(ValueOrder.instant(s, n))
            }
        case .string, .binary:
            return try bytes(scan, candidates)
        default:
            return try generic(scan, candidates)
        }
        if scan.nullCount > 0 {
            try candidates.forEach { row in if try scan.isNull(row) { rows[row] = nullResult } }
        }
        return rows
    }

    /// Row by row through the decoded value.
    private func generic(_ scan: ColumnScan, _ candidates: RowMask) throws -> RowMask {
        try RowMask.select(candidates) { test.test(try scan.value($0)) }
    }

    /// Strings and binary data: once per distinct value of a dictionary segment, else by the
    /// stored bytes for the operators without options, else row by row.
    private func bytes(_ scan: ColumnScan, _ candidates: RowMask) throws -> RowMask {
        if let (count, indices) = scan.dictionary {
            var decided = [UInt8](repeating: 0, count: count)  // 0: not yet, 1: no, 2: yes
            return try RowMask.select(candidates) { row in
                if try scan.nullCount > 0 && scan.isNull(row) { return nullResult }
                let i = Int(indices[row])
                if decided[i] == 0 { decided[i] = test.test(try scan.dictionaryValue(i)) ? 2 : 1 }
                return decided[i] == 2
            }
        }
        let op = test.op
        guard scan.isBytesLane, test.options.isEmpty, let pattern = test.pattern,
            [.equal, .notEqual, .beginsWith, .endsWith, .contains].contains(op)
        else { return try generic(scan, candidates) }
        let needle = pattern.bytes
        // Substring operators with an empty pattern match nothing (nil rows included).
        if needle.isEmpty && op != .equal && op != .notEqual { return RowMask(count: candidates.count, filled: false) }
        if op == .contains {
            return try RowMask.select(candidates) { row in
                if try scan.nullCount > 0 && scan.isNull(row) { return nullResult }
                let item = try scan.bytes(row)
                return try TextPattern.contains(item.bytes(0, item.count), needle)
            }
        }
        let position: ColumnScan.ItemPosition = op == .beginsWith ? .prefix : op == .endsWith ? .suffix : .whole
        var rows = RowMask(count: candidates.count, words: try scan.bytesMask(needle, at: position, candidates: candidates.words))
        if op == .notEqual {
            var all = candidates
            all.subtract(rows)
            rows = all
        }
        if scan.nullCount > 0 {
            try candidates.forEach { row in if try scan.isNull(row) { rows[row] = nullResult } }
        }
        return rows
    }

    // MARK: Comparators on unboxed values

    private static func double(_ v: StorageValue) -> Double? {
        switch v {
        case .float(let f): Double(f)
        case .double(let d): d
        default: nil
        }
    }

    private static func instant(_ v: StorageValue) -> Int128? {
        if case .timestamp(let s, let n) = v { return ValueOrder.instant(s, n) }
        return nil
    }

    /// The test on unboxed non-null values of a column whose constants `unbox` reads; nil when a
    /// constant does not unbox (the caller falls back to the generic path).
    private static func comparator<T: Comparable>(_ test: ValueTest, _ unbox: (StorageValue) -> T?) -> ((T) -> Bool)? {
        if test.op == .in {
            let values = test.list.compactMap(unbox)
            return { x in values.contains(x) }
        }
        if test.op == .between {
            guard test.list.count == 2, let lo = unbox(test.list[0]), let hi = unbox(test.list[1]) else { return nil }
            return { lo <= $0 && $0 <= hi }
        }
        guard let constant = test.constant else { return nil }
        guard let c = unbox(constant) else {
            // Against nil: non-nil values are unequal and unordered.
            return constant.isNull ? { _ in test.op == .notEqual } : nil
        }
        switch test.op {
        case .equal: return { $0 == c }
        case .notEqual: return { $0 != c }
        case .less: return { $0 < c }
        case .lessOrEqual: return { $0 <= c }
        case .greater: return { $0 > c }
        case .greaterOrEqual: return { $0 >= c }
        default: return nil
        }
    }
}

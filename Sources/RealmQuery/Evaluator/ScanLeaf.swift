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

/// A test on the non-null raw values of an int, bool or link column as one inclusive range (or
/// its complement, or a small set for `IN`), scanned over a segment's integer lane without
/// decoding values.
struct IntRange {
    /// Matching values are `lo...lo + span` (unsigned arithmetic), unless ``isEmpty``.
    let lo: Int64
    let span: UInt64
    let isEmpty: Bool
    /// Whether the match is the complement.
    let negated: Bool
    /// For `IN`: the matching values (the range is unused).
    let set: Set<Int64>?

    /// The range of `test`, or nil when its constants are not raw integers.
    init?(_ test: ValueTest) {
        func raw(_ v: StorageValue) -> Int64?? {
            switch v {
            case .int(let i): .some(i)
            case .bool(let b): .some(b ? 1 : 0)
            case .link(let k): .some(k.rawValue)
            case .null: .some(nil)
            default: nil
            }
        }
        var (lo, hi, negated): (Int64, Int64, Bool) = (1, 0, false)
        var set: Set<Int64>?
        switch test.op {
        case .in:
            var values = Set<Int64>()
            for v in test.list {
                guard let r = raw(v) else { return nil }
                if let r { values.insert(r) }
            }
            set = values
        case .between:
            guard test.list.count == 2, let a = raw(test.list[0]) ?? nil, let b = raw(test.list[1]) ?? nil else { return nil }
            (lo, hi) = (a, b)
        default:
            guard let constant = test.constant, let r = raw(constant) else { return nil }
            // Against nil, non-nil values are unequal and unordered: an empty range (negated for !=).
            guard let c = r else {
                negated = test.op == .notEqual
                break
            }
            switch test.op {
            case .equal: (lo, hi) = (c, c)
            case .notEqual: (lo, hi, negated) = (c, c, true)
            case .less: if c != .min { (lo, hi) = (.min, c - 1) }
            case .lessOrEqual: (lo, hi) = (.min, c)
            case .greater: if c != .max { (lo, hi) = (c + 1, .max) }
            case .greaterOrEqual: (lo, hi) = (c, .max)
            default: return nil
            }
        }
        self.lo = lo
        self.span = UInt64(bitPattern: hi &- lo)
        self.isEmpty = lo > hi
        self.negated = negated
        self.set = set
    }

    /// Whether the raw value `x` matches.
    @inline(__always)
    func matches(_ x: Int64) -> Bool {
        if let set { return set.contains(x) }
        return !isEmpty && UInt64(bitPattern: x &- lo) <= span ? !negated : negated
    }

    /// The rows of `lane` whose values match (null rows unspecified: the caller fixes them).
    func mask(_ lane: IntegerLane) -> RowMask {
        let n = lane.count
        if set == nil {
            // Whole groups from the bounds of a packed lane: all values match or none does.
            if isEmpty { return RowMask(count: n, filled: negated) }
            if case .packed(let p) = lane, p.slope == 0 {
                let low = Int128(p.reference)
                let high = low + (p.width >= 64 ? Int128(UInt64.max) : Int128((UInt64(1) << UInt64(p.width)) - 1))
                let (a, b) = (Int128(lo), Int128(lo) + Int128(span))
                if a <= low && high <= b { return RowMask(count: n, filled: !negated) }
                if high < a || b < low { return RowMask(count: n, filled: negated) }
            }
        }
        var words = [UInt64](repeating: 0, count: (n + 63) / 64)
        if set == nil {
            // Read in place; a negated range is the complement (bits past the count stay clear).
            lane.rangeMask(lo: lo, span: span, into: &words)
            if negated {
                for w in words.indices { words[w] = ~words[w] }
                if n % 64 != 0 { words[words.count - 1] &= (UInt64(1) << UInt64(n % 64)) - 1 }
            }
        } else {
            fill(lane.array, &words)
        }
        return RowMask(count: n, words: words)
    }

    /// Sets the bits of the rows whose value is in ``set``.
    private func fill(_ values: [Int64], _ words: inout [UInt64]) {
        guard let set else { return }
        for i in 0..<values.count where set.contains(values[i]) { words[i >> 6] |= UInt64(1) << UInt64(i & 63) }
    }
}

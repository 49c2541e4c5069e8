import RealmStorage

/// Filters a snapshot's table row group by row group: each group gets a ``RowMask`` per
/// predicate, AND/OR/NOT combine masks word by word, and the keys of the rows left are the result.
///
/// A comparison of one column of the table with a constant (a *leaf*) reads that column's segment
/// in place: ints, bools and links in one range test per row over the integer lane (whole groups
/// decided from a packed lane's bounds), floats, doubles and timestamps from their fixed-width
/// lanes, strings and binary data by their bytes (a dictionary-encoded segment decides once per
/// distinct value). Every other comparison is evaluated object by object, only for the rows its
/// AND still leaves open; ANDs run their leaves first.
struct SegmentScan {
    let evaluation: Evaluation
    let slot: Int
    let reader: TableReader

    init(_ evaluation: Evaluation, slot: Int) throws {
        self.evaluation = evaluation
        self.slot = slot
        guard let reader = try evaluation.reader(slot) else { preconditionFailure("a segment scan needs a snapshot") }
        self.reader = reader
    }

    /// The keys of the rows matching `predicate`, ascending.
    func filter(_ predicate: CompiledPredicate) throws -> [ObjectKey] {
        let plan = Self.plan(predicate)
        var out: [ObjectKey] = []
        for g in 0..<reader.groupCount {
            let keys = try reader.keys(group: g)
            let rows = try mask(plan, g, RowMask(count: keys.count, filled: true), keys)
            rows.forEach { out.append(ObjectKey(keys[$0])) }
        }
        return out
    }

    /// How many rows match, without collecting their keys.
    func count(_ predicate: CompiledPredicate) throws -> Int {
        let plan = Self.plan(predicate)
        var n = 0
        for g in 0..<reader.groupCount {
            // The keys stay in their lane (read in place): a count of leaves never reads them.
            let keys = try reader.keys(group: g)
            n += try mask(plan, g, RowMask(count: keys.count, filled: true), keys).selected
        }
        return n
    }

    /// `predicate` with every AND's operands ordered cheapest first (leaves before the rest).
    static func plan(_ predicate: CompiledPredicate) -> CompiledPredicate {
        switch predicate {
        case .and(let ps):
            let planned = ps.map(plan).enumerated().sorted { a, b in
                let (ca, cb) = (cost(a.element), cost(b.element))
                return ca != cb ? ca < cb : a.offset < b.offset
            }
            return .and(planned.map(\.element))
        case .or(let ps): return .or(ps.map(plan))
        case .not(let p): return .not(plan(p))
        default: return predicate
        }
    }

    private static func cost(_ p: CompiledPredicate) -> Int {
        guard case .comparison(let c) = p, let leaf = ScanLeaf(c) else { return 3 }
        switch leaf.column.type {
        case .int, .bool, .link, .float, .double, .timestamp: return 0
        case .string, .binary: return 1
        default: return 2
        }
    }

    /// The rows of `candidates` (of group `g`) for which `predicate` holds.
    private func mask(_ predicate: CompiledPredicate, _ g: Int, _ candidates: RowMask, _ keys: IntegerLane) throws -> RowMask {
        if candidates.isEmpty { return candidates }
        switch predicate {
        case .constant(let b): return b ? candidates : RowMask(count: candidates.count, filled: false)
        case .and(let ps):
            var rows = candidates
            for p in ps {
                rows = try mask(p, g, rows, keys)
                if rows.isEmpty { break }
            }
            return rows
        case .or(let ps):
            var rows = RowMask(count: candidates.count, filled: false)
            var open = candidates
            for p in ps {
                let hit = try mask(p, g, open, keys)
                rows.formUnion(hit)
                open.subtract(hit)
                if open.isEmpty { break }
            }
            return rows
        case .not(let p):
            var rows = candidates
            rows.subtract(try mask(p, g, candidates, keys))
            return rows
        case .comparison(let c):
            if let leaf = ScanLeaf(c) {
                return try leaf.mask(try reader.scan(group: g, column: leaf.index), candidates)
            }
            return try RowMask.select(candidates) { row in
                let object = ObjectRef(table: slot, key: ObjectKey(keys[row]), location: RowLocation(group: g, row: row))
                return try evaluation.matches(c, .object(object))
            }
        }
    }
}

/// A set of rows of one row group, one bit per row: what a scan decides for a group, combined
/// word by word for AND, OR and NOT.
struct RowMask: Equatable {
    /// Bit `r % 64` of word `r / 64` is row `r`; bits past ``count`` are always clear.
    private(set) var words: [UInt64]
    /// The number of rows.
    let count: Int

    /// All rows (`filled`) or none.
    init(count: Int, filled: Bool) {
        self.count = count
        let n = (count + 63) / 64
        words = [UInt64](repeating: filled ? ~0 : 0, count: n)
        if filled && count % 64 != 0 { words[n - 1] = (UInt64(1) << UInt64(count % 64)) - 1 }
    }

    /// A mask from whole words (bits past `count` must be clear).
    init(count: Int, words: [UInt64]) {
        self.count = count
        self.words = words
    }

    /// Whether no row is in the mask.
    var isEmpty: Bool { words.allSatisfy { $0 == 0 } }
    /// The number of rows set.
    var selected: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

    subscript(row: Int) -> Bool {
        get { words[row >> 6] & (UInt64(1) << UInt64(row & 63)) != 0 }
        set {
            if newValue {
                words[row >> 6] |= UInt64(1) << UInt64(row & 63)
            } else {
                words[row >> 6] &= ~(UInt64(1) << UInt64(row & 63))
            }
        }
    }

    /// Keeps the rows also in `other`.
    mutating func formIntersection(_ other: RowMask) {
        for i in words.indices { words[i] &= other.words[i] }
    }

    /// Adds the rows of `other`.
    mutating func formUnion(_ other: RowMask) {
        for i in words.indices { words[i] |= other.words[i] }
    }

    /// Removes the rows of `other`.
    mutating func subtract(_ other: RowMask) {
        for i in words.indices { words[i] &= ~other.words[i] }
    }

    /// Calls `body` with each row in the mask, ascending.
    func forEach(_ body: (Int) throws -> Void) rethrows {
        for (w, word) in words.enumerated() {
            var bits = word
            while bits != 0 {
                let b = bits.trailingZeroBitCount
                try body(w << 6 | b)
                bits &= bits &- 1
            }
        }
    }

    /// The rows of `0..<count` for which `test` holds, decided for every row (for cheap tests,
    /// where a branch-free loop beats visiting only the candidates).
    static func build(count: Int, _ test: (Int) throws -> Bool) rethrows -> RowMask {
        var words = [UInt64](repeating: 0, count: (count + 63) / 64)
        var base = 0
        while base < count {
            let end = Swift.min(base + 64, count)
            var word: UInt64 = 0
            for row in base..<end where try test(row) { word |= UInt64(1) << UInt64(row - base) }
            words[base >> 6] = word
            base = end
        }
        return RowMask(count: count, words: words)
    }

    /// The rows of `candidates` for which `test` holds.
    static func select(_ candidates: RowMask, _ test: (Int) throws -> Bool) rethrows -> RowMask {
        var out = RowMask(count: candidates.count, filled: false)
        try candidates.forEach { row in if try test(row) { out[row] = true } }
        return out
    }
}

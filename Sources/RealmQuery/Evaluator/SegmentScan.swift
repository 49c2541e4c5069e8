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
            let keys = try reader.keys(group: g).array
            let rows = try mask(plan, g, RowMask(count: keys.count, filled: true), keys)
            rows.forEach { out.append(ObjectKey(keys[$0])) }
        }
        return out
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
    private func mask(_ predicate: CompiledPredicate, _ g: Int, _ candidates: RowMask, _ keys: [Int64]) throws -> RowMask {
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

import Foundation
import RealmQuery
import RealmStorage
import RealmTestSupport
import Testing

/// Random predicates over random objects: the evaluator (through query text, the parser and the
/// binder) against a plain Swift model of the rules, written separately from the evaluator.
@Suite struct DifferentialTests {
    /// One object of the model.
    struct Row {
        var a: Int64
        var oa: Int64?
        var x: Double
        var ox: Double?
        var s: String
        var os: String?
        var flag: Bool
        var oflag: Bool?
        var list: [Int64]
    }

    /// A generated predicate: its text and what the model says for a row.
    struct Generated {
        var text: String
        var holds: (Row) -> Bool
    }

    static let words = ["", "a", "ab", "B", "ba", "abc", "Ab", "b"]
    static let doubles: [Double] = [-2.5, -1, -0.0, 0, 0.5, 1, 2.5, .nan]

    static func row(_ r: inout SplitMix) -> Row {
        func maybe<T>(_ v: T) -> T? { r.below(4) == 0 ? nil : v }
        return Row(
            a: Int64(r.below(11)) - 5, oa: maybe(Int64(r.below(11)) - 5), x: doubles[r.below(doubles.count)],
            ox: maybe(doubles[r.below(doubles.count)]), s: words[r.below(words.count)], os: maybe(words[r.below(words.count)]),
            flag: r.below(2) == 0, oflag: maybe(r.below(2) == 0), list: (0..<r.below(4)).map { _ in Int64(r.below(7)) - 3 })
    }

    // MARK: The model

    static func order<T: Comparable>(_ l: T?, _ op: String, _ r: T?) -> Bool {
        switch op {
        case "==": return l == r
        case "!=": return l != r
        default:
            guard let l, let r else { return false }
            switch op {
            case "<": return l < r
            case "<=": return l <= r
            case ">": return l > r
            default: return l >= r
            }
        }
    }

    /// IEEE comparisons (NaN equals nothing), nil equal only to nil.
    static func double(_ l: Double?, _ op: String, _ r: Double?) -> Bool {
        guard let l, let r else { return op == "==" ? l == nil && r == nil : op == "!=" ? !(l == nil && r == nil) : false }
        switch op {
        case "==": return l == r
        case "!=": return l != r
        case "<": return l < r
        case "<=": return l <= r
        case ">": return l > r
        default: return l >= r
        }
    }

    static func string(_ l: String?, _ op: String, _ r: String, caseless: Bool) -> Bool {
        guard var l else { return op == "!=" }
        var r = r
        if caseless { (l, r) = (l.lowercased(), r.lowercased()) }
        let (lb, rb) = (Array(l.utf8), Array(r.utf8))
        switch op {
        case "==": return lb == rb
        case "!=": return lb != rb
        case "BEGINSWITH": return !rb.isEmpty && lb.starts(with: rb)
        case "ENDSWITH": return !rb.isEmpty && lb.reversed().starts(with: rb.reversed())
        default: return !rb.isEmpty && lb.count >= rb.count && (0...(lb.count - rb.count)).contains { Array(lb[$0..<$0 + rb.count]) == rb }
        }
    }

    // MARK: The tests

    /// Stores `rows` (row groups of 64) and returns the committed snapshot.
    static func store(_ rows: [Row], in dir: TempDir) throws -> (Store, Snapshot) {
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 64))
        let tx = try store.beginWrite()
        try tx.createTable("R")
        let columns: [ColumnSchema] = [
            .init("a", .int), .init("oa", .int, nullable: true), .init("x", .double), .init("ox", .double, nullable: true),
            .init("s", .string), .init("os", .string, nullable: true), .init("flag", .bool), .init("oflag", .bool, nullable: true),
            .init("list", .int, list: true),
        ]
        for c in columns { try tx.addColumn("R", c) }
        for row in rows { try tx.insert("R", values(row)) }
        return (store, try tx.commit())
    }

    static func values(_ row: Row) -> [String: StorageValue] {
        [
            "a": .int(row.a), "oa": row.oa.map { .int($0) } ?? .null, "x": .double(row.x), "ox": row.ox.map { .double($0) } ?? .null,
            "s": .string(row.s), "os": row.os.map { .string($0) } ?? .null, "flag": .bool(row.flag),
            "oflag": row.oflag.map { .bool($0) } ?? .null, "list": .list(row.list.map { .int($0) }),
        ]
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomPredicatesAgreeWithTheModel(seed: UInt64) throws {
        var r = SplitMix(seed: seed)
        let rows = (0..<300).map { _ in Self.row(&r) }
        let dir = TempDir()
        let (store, snapshot) = try Self.store(rows, in: dir)
        // The transaction changes every fifth object, so it reads loaded row groups.
        let tx = try store.beginWrite()
        defer { tx.cancel() }
        var changed = rows
        let keys = try snapshot.objectKeys("R")
        for i in stride(from: 0, to: rows.count, by: 5) {
            changed[i] = Self.row(&r)
            for (column, value) in Self.values(changed[i]) { try tx.set("R", keys[i], column, value) }
        }
        let table = snapshot.catalog.table("R")!
        for _ in 0..<1_000 {
            let p = Self.generate(&r, depth: 3)
            let bound = try BoundPredicate.compile(p.text, table: table, catalog: snapshot.catalog)
            let want = keys.indices.filter { p.holds(rows[$0]) }.map { keys[$0] }
            #expect(try QueryEvaluator(snapshot).filter("R", bound) == want, "\(p.text) over the snapshot")
            let wantChanged = keys.indices.filter { p.holds(changed[$0]) }.map { keys[$0] }
            #expect(try QueryEvaluator(tx).filter("R", bound) == wantChanged, "\(p.text) over the transaction")
        }
    }

    /// The model's sort order: nil first, then NaN, then numbers; strings by UTF-8 bytes.
    static func sortValue(_ row: Row, _ column: String) -> (rank: Int, number: Double, text: [UInt8]) {
        func number(_ d: Double?) -> (Int, Double, [UInt8]) { d.map { $0.isNaN ? (1, 0, []) : (2, $0, []) } ?? (0, 0, []) }
        switch column {
        case "a": return number(Double(row.a))
        case "oa": return number(row.oa.map(Double.init))
        case "x": return number(row.x)
        case "ox": return number(row.ox)
        case "s": return (2, 0, Array(row.s.utf8))
        default: return row.os.map { (2, 0, Array($0.utf8)) } ?? (0, 0, [])
        }
    }

    @Test(arguments: [4, 5] as [UInt64])
    func randomSortsAgreeWithTheModel(seed: UInt64) throws {
        var r = SplitMix(seed: seed)
        let rows = (0..<300).map { _ in Self.row(&r) }
        let dir = TempDir()
        let (_, snapshot) = try Self.store(rows, in: dir)
        let keys = try snapshot.objectKeys("R")
        let table = snapshot.catalog.table("R")!
        for _ in 0..<100 {
            let columns = (0..<(1 + r.below(3))).map { _ in ["a", "oa", "x", "ox", "s", "os"][r.below(6)] }
            let ascending = columns.map { _ in r.below(2) == 0 }
            let limit: Int? = r.below(2) == 0 ? r.below(40) : nil
            let subset = keys.indices.filter { _ in r.below(3) != 0 }
            let want = subset.sorted { i, j in
                for (c, column) in columns.enumerated() {
                    let (a, b) = (Self.sortValue(rows[i], column), Self.sortValue(rows[j], column))
                    if a.rank != b.rank { return ascending[c] == (a.rank < b.rank) }
                    if a.number != b.number { return ascending[c] == (a.number < b.number) }
                    if a.text != b.text { return ascending[c] == a.text.lexicographicallyPrecedes(b.text) }
                }
                return i < j
            }.map { keys[$0] }
            let sortKeys = try zip(columns, ascending).map {
                SortKey(path: try BoundKeyPath.bind($0, table: table, catalog: snapshot.catalog), ascending: $1)
            }
            let got = try QueryEvaluator(snapshot).sort("R", subset.map { keys[$0] }, by: sortKeys, limit: limit)
            #expect(got == Array(want.prefix(limit ?? want.count)), "\(columns) \(ascending) limit \(String(describing: limit))")
        }
    }

    // MARK: Generation

    static let orderings = ["==", "!=", "<", "<=", ">", ">="]

    static func generate(_ r: inout SplitMix, depth: Int) -> Generated {
        if depth > 0 && r.below(3) == 0 {
            let n = 1 + r.below(3)
            let parts = (0..<n).map { _ in generate(&r, depth: depth - 1) }
            switch r.below(3) {
            case 0:
                return Generated(text: "(" + parts.map(\.text).joined(separator: " AND ") + ")") { row in parts.allSatisfy { $0.holds(row) }
                }
            case 1:
                return Generated(text: "(" + parts.map(\.text).joined(separator: " OR ") + ")") { row in parts.contains { $0.holds(row) } }
            default: return Generated(text: "NOT " + parts[0].text) { row in !parts[0].holds(row) }
            }
        }
        return leaf(&r)
    }

    static func leaf(_ r: inout SplitMix) -> Generated {
        let op = orderings[r.below(orderings.count)]
        let v = Int64(r.below(11)) - 5
        let d = doubles[r.below(doubles.count - 1)]
        let w = words[r.below(words.count)]
        switch r.below(14) {
        case 0: return Generated(text: "a \(op) \(v)") { order($0.a, op, v) }
        case 1: return Generated(text: "oa \(op) \(v)") { order($0.oa, op, v) }
        case 2:
            let equal = r.below(2) == 0
            return Generated(text: "oa \(equal ? "==" : "!=") nil") { equal ? $0.oa == nil : $0.oa != nil }
        case 3: return Generated(text: "x \(op) \(d)") { double($0.x, op, d) }
        case 4: return Generated(text: "ox \(op) \(v)") { double($0.ox, op, Double(v)) }
        case 5:
            let (lo, hi) = (Int64(r.below(11)) - 5, Int64(r.below(11)) - 5)
            return Generated(text: "oa BETWEEN {\(lo), \(hi)}") { row in row.oa.map { lo <= $0 && $0 <= hi } ?? false }
        case 6:
            let set = (0..<r.below(4)).map { _ in Int64(r.below(11)) - 5 }
            let withNil = r.below(3) == 0
            let items = set.map(String.init) + (withNil ? ["nil"] : [])
            return Generated(text: "oa IN {\(items.joined(separator: ", "))}") { row in row.oa.map(set.contains) ?? withNil }
        case 7:
            let sop = ["==", "!=", "BEGINSWITH", "ENDSWITH", "CONTAINS"][r.below(5)]
            let caseless = r.below(2) == 0
            let column = r.below(2) == 0 ? "s" : "os"
            return Generated(text: "\(column) \(sop)\(caseless ? "[c]" : "") '\(w)'") { row in
                string(column == "s" ? row.s : row.os, sop, w, caseless: caseless)
            }
        case 8:
            let (b, equal, optional) = (r.below(2) == 0, r.below(2) == 0, r.below(2) == 0)
            return Generated(text: "\(optional ? "oflag" : "flag") \(equal ? "==" : "!=") \(b)") { row in
                let value = optional ? row.oflag : row.flag
                return equal ? value == b : value != b
            }
        case 9:
            let modifier = ["ANY", "ALL", "NONE"][r.below(3)]
            let c = Int64(r.below(7)) - 3
            return Generated(text: "\(modifier) list \(op) \(c)") { row in
                let hits = row.list.filter { order($0, op, c) }.count
                return modifier == "ANY" ? hits > 0 : modifier == "ALL" ? hits == row.list.count : hits == 0
            }
        case 10:
            let c = Int64(r.below(4))
            return Generated(text: "list.@count \(op) \(c)") { order(Int64($0.list.count), op, c) }
        case 11:
            let fn = ["@sum", "@min", "@max"][r.below(3)]
            return Generated(text: "list.\(fn) \(op) \(v)") { row in
                let value: Int64? = fn == "@sum" ? row.list.reduce(0, +) : fn == "@min" ? row.list.min() : row.list.max()
                return order(value, op, v)
            }
        case 12: return Generated(text: "a \(op) oa") { order($0.a, op, $0.oa) }
        default:
            let c = Int64(r.below(7)) - 3
            return Generated(text: "SUBQUERY(list, $e, $e > \(c)).@count \(op) 1") { order(Int64($0.list.filter { $0 > c }.count), op, 1) }
        }
    }
}

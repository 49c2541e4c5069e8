import Foundation
import RealmQuery
import RealmStorage

/// `realm-dump --objects CLASS --where PREDICATE`: the predicate is parsed and bound by RealmQuery
/// (``BoundPredicate/compile(_:arguments:table:catalog:linkingObjects:)``) and evaluated here, one
/// object at a time, by a small interim evaluator of Spec/QUERY.md §7 until RealmQuery's
/// `QueryEvaluator` lands; then ``matches(_:_:)`` becomes a call to it and nothing else changes.
///
/// Supported: `AND`/`OR`/`NOT`, `TRUEPREDICATE`/`FALSEPREDICATE`, comparisons of key paths (through
/// to-one links, and through lists with `ANY`/`ALL`/`NONE`) with constants, `IN`, `BETWEEN`, the
/// string operators with `[c]`/`[d]`, `LIKE`. Not supported (an error says so): collection
/// operators (`@count`, `@sum`, …), `@length`, `SUBQUERY`, backlinks, and a key path on the right.
/// `Sendable`.
package struct ObjectFilter: Sendable {
    package let predicate: BoundPredicate
    let table: String

    /// Compiles `text` against `table` of `catalog`.
    /// - Throws: ``ToolFailure`` (usage) with the query error and its caret.
    package init(_ text: String, table: TableSchema, catalog: Catalog) throws {
        do {
            predicate = try BoundPredicate.compile(text, table: table, catalog: catalog)
        } catch {
            throw ToolFailure(.usage, "invalid --where predicate: \(error)")
        }
        self.table = table.name
        try Self.checkSupported(predicate)
    }

    static func checkSupported(_ p: BoundPredicate) throws {
        switch p {
        case .constant: return
        case .and(let ps), .or(let ps): for q in ps { try checkSupported(q) }
        case .not(let q): try checkSupported(q)
        case .comparison(let c):
            guard case .keyPath(let path) = c.left else {
                throw ToolFailure(
                    .usage, "--where: '\(c.left)' (collection operators, @length, SUBQUERY) needs the query evaluator, not built yet")
            }
            for step in path.steps {
                if case .backlink = step {
                    throw ToolFailure(.usage, "--where: '\(path)' follows a backlink, which needs the query evaluator, not built yet")
                }
            }
            switch c.right {
            case .constant, .list: return
            default: throw ToolFailure(.usage, "--where: '\(c.right)' on the right side needs the query evaluator, not built yet")
            }
        }
    }

    /// Whether the object `key` with column values `row` (of the filter's table) matches.
    package func matches(_ s: Snapshot, _ key: ObjectKey, _ row: [String: StorageValue]) throws -> Bool {
        try evaluate(predicate, s, row)
    }

    func evaluate(_ p: BoundPredicate, _ s: Snapshot, _ row: [String: StorageValue]) throws -> Bool {
        switch p {
        case .constant(let b): return b
        case .and(let ps):
            for q in ps where try !evaluate(q, s, row) { return false }
            return true
        case .or(let ps):
            for q in ps where try evaluate(q, s, row) { return true }
            return false
        case .not(let q): return try !evaluate(q, s, row)
        case .comparison(let c):
            guard case .keyPath(let path) = c.left else { return false }
            let values = try self.values(path, s, row)
            let test = { (v: StorageValue) in Self.compare(v, c) }
            switch c.modifier {
            case nil: return test(values.first ?? .null)
            case .any: return values.contains(where: test)
            case .all: return values.allSatisfy(test)
            case .some(.none): return !values.contains(where: test)
            }
        }
    }

    /// The values a key path reaches from the object (Spec/QUERY.md §7.1): one for a to-one path
    /// (nil through a nil link), any number for a to-many one.
    func values(_ path: BoundKeyPath, _ s: Snapshot, _ row: [String: StorageValue]) throws -> [StorageValue] {
        var current: [StorageValue] = []
        var toMany = false
        for (i, step) in path.steps.enumerated() {
            guard case .column(let table, let column) = step else { return [] }
            var next: [StorageValue] = []
            if i == 0 {
                next = [row[column.name] ?? .null]
            } else {
                for v in current {
                    guard case .link(let k) = v else {
                        if !toMany { next.append(.null) }
                        continue
                    }
                    next.append(try s.value(table, k, column.name))
                }
            }
            if column.isList {
                toMany = true
                next = next.flatMap { v -> [StorageValue] in
                    if case .list(let items) = v { return items }
                    return []
                }
            }
            current = next
        }
        return current
    }

    static func compare(_ v: StorageValue, _ c: BoundComparison) -> Bool {
        switch c.right {
        case .list(let items):
            switch c.op {
            case .between:
                guard items.count == 2 else { return false }
                return compare(v, .greaterOrEqual, items[0], c.options) && compare(v, .lessOrEqual, items[1], c.options)
            default: return items.contains { compare(v, .equal, $0, c.options) }
            }
        case .constant(let r): return compare(v, c.op, r, c.options)
        default: return false
        }
    }

    /// One comparison of two values of one type (Spec/QUERY.md §7.2–§7.5).
    static func compare(_ a: StorageValue, _ op: ComparisonOperator, _ b: StorageValue, _ options: ComparisonOptions) -> Bool {
        if a.isNull || b.isNull {
            switch op {
            case .equal, .like: return a.isNull && b.isNull
            case .notEqual: return a.isNull != b.isNull
            default: return false
            }
        }
        switch op {
        case .equal: return equal(a, b, options)
        case .notEqual: return !equal(a, b, options)
        case .less: return order(a, b).map { $0 < 0 } ?? false
        case .lessOrEqual: return order(a, b).map { $0 <= 0 } ?? false
        case .greater: return order(a, b).map { $0 > 0 } ?? false
        case .greaterOrEqual: return order(a, b).map { $0 >= 0 } ?? false
        case .beginsWith, .endsWith, .contains, .like:
            guard let (x, y) = bytes(a, b, options) else { return false }
            switch op {
            case .beginsWith: return !y.isEmpty && x.starts(with: y)
            case .endsWith: return !y.isEmpty && x.reversed().starts(with: y.reversed())
            case .contains: return !y.isEmpty && contains(x, y)
            default:
                if case .string = a, case .string(let p) = b {
                    return like(Array(transform(stringOf(a), options).unicodeScalars), Array(transform(p, options).unicodeScalars))
                }
                return like(x, y)
            }
        case .between, .in: return false
        }
    }

    static func stringOf(_ v: StorageValue) -> String {
        if case .string(let s) = v { return s }
        return ""
    }

    static func bytes(_ a: StorageValue, _ b: StorageValue, _ options: ComparisonOptions) -> ([UInt8], [UInt8])? {
        switch (a, b) {
        case (.string(let x), .string(let y)): (Array(transform(x, options).utf8), Array(transform(y, options).utf8))
        case (.binary(let x), .binary(let y)): (x, y)
        default: nil
        }
    }

    /// `[d]` then `[c]` (Spec/QUERY.md §7.3).
    static func transform(_ s: String, _ options: ComparisonOptions) -> String {
        var out = s
        if options.contains(.diacriticInsensitive) {
            var scalars = String.UnicodeScalarView()
            for u in out.decomposedStringWithCanonicalMapping.unicodeScalars where u.properties.generalCategory != .nonspacingMark {
                scalars.append(u)
            }
            out = String(scalars)
        }
        if options.contains(.caseInsensitive) {
            var scalars = String.UnicodeScalarView()
            for u in out.unicodeScalars { scalars.append(contentsOf: u.properties.lowercaseMapping.unicodeScalars) }
            out = String(scalars)
        }
        return out
    }

    static func equal(_ a: StorageValue, _ b: StorageValue, _ options: ComparisonOptions) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): transform(x, options).utf8.elementsEqual(transform(y, options).utf8)
        case (.double(let x), .double(let y)): x == y
        case (.float(let x), .float(let y)): x == y
        case (.decimal128(let l1, let h1), .decimal128(let l2, let h2)): Decimal128(low: l1, high: h1) == Decimal128(low: l2, high: h2)
        case (.timestamp, .timestamp): order(a, b) == 0
        default: a == b
        }
    }

    /// -1, 0, 1, or nil when the values have no order (NaN, or a type without one).
    static func order(_ a: StorageValue, _ b: StorageValue) -> Int? {
        func cmp<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x == y ? 0 : 1) }
        switch (a, b) {
        case (.int(let x), .int(let y)): return cmp(x, y)
        case (.double(let x), .double(let y)): return x.isNaN || y.isNaN ? nil : cmp(x, y)
        case (.float(let x), .float(let y)): return x.isNaN || y.isNaN ? nil : cmp(x, y)
        case (.decimal128(let l1, let h1), .decimal128(let l2, let h2)):
            let x = Decimal128(low: l1, high: h1)
            let y = Decimal128(low: l2, high: h2)
            return x.isNaN || y.isNaN ? nil : cmp(x, y)
        case (.timestamp(let s1, let n1), .timestamp(let s2, let n2)):
            // Normalize negative nanoseconds (instants before 1970) before comparing.
            func norm(_ s: Int64, _ n: Int32) -> (Int64, Int32) { n < 0 ? (s - 1, n + 1_000_000_000) : (s, n) }
            let (x, y) = (norm(s1, n1), norm(s2, n2))
            return x == y ? 0 : (x < y ? -1 : 1)
        default: return nil
        }
    }

    static func contains(_ x: [UInt8], _ y: [UInt8]) -> Bool {
        guard y.count <= x.count else { return false }
        for i in 0...(x.count - y.count) where x[i..<(i + y.count)].elementsEqual(y) { return true }
        return false
    }

    /// `?` one element, `*` any run (Spec/QUERY.md §7.4), iterative with backtracking to the last star.
    static func like<E: Equatable>(_ text: [E], _ pattern: [E], star: E, one: E) -> Bool {
        var t = 0
        var p = 0
        var starAt: Int?
        var resume = 0
        while t < text.count {
            if p < pattern.count && (pattern[p] == one || (pattern[p] != star && pattern[p] == text[t])) {
                t += 1
                p += 1
            } else if p < pattern.count && pattern[p] == star {
                starAt = p
                resume = t
                p += 1
            } else if let s = starAt {
                p = s + 1
                resume += 1
                t = resume
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == star { p += 1 }
        return p == pattern.count
    }

    static func like(_ text: [Unicode.Scalar], _ pattern: [Unicode.Scalar]) -> Bool { like(text, pattern, star: "*", one: "?") }
    static func like(_ text: [UInt8], _ pattern: [UInt8]) -> Bool {
        like(text, pattern, star: UInt8(ascii: "*"), one: UInt8(ascii: "?"))
    }
}

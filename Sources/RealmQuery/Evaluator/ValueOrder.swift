import Foundation
import RealmStorage

/// Equality and order of stored values (Spec/QUERY.md §7.5, §7.10, §9).
///
/// Values of one column type compare as §7.5 says; values of different types (mixed values, and
/// the exact sums of ints that leave `Int64`) compare when both are numbers (exactly, across int,
/// float, double and decimal128) or both of one other type, and are otherwise neither equal nor
/// ordered.
enum ValueOrder {
    /// A number in the form it is compared in.
    enum Number {
        case int(Int64)
        case double(Double)
        case decimal(Decimal128)
    }

    static func number(_ v: StorageValue) -> Number? {
        switch v {
        case .int(let i): .int(i)
        case .float(let f): .double(Double(f))
        case .double(let d): .double(d)
        case .decimal128(let low, let high): .decimal(Decimal128(low: low, high: high))
        default: nil
        }
    }

    /// -1, 0 or 1; nil when either is NaN.
    static func compare(_ a: Number, _ b: Number) -> Int? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return sign(x, y)
        case (.double(let x), .double(let y)):
            if x.isNaN || y.isNaN { return nil }
            return x < y ? -1 : (x == y ? 0 : 1)
        case (.int(let x), .double(let y)): return compare(x, y)
        case (.double(let x), .int(let y)): return compare(y, x).map { -$0 }
        case (.decimal(let x), .decimal(let y)): return compare(x, y)
        case (.decimal(let x), .int(let y)): return compare(x, Decimal128(y))
        case (.int(let x), .decimal(let y)): return compare(Decimal128(x), y)
        case (.decimal(let x), .double(let y)): return y.isNaN ? nil : compare(x, Decimal128(y))
        case (.double(let x), .decimal(let y)): return x.isNaN ? nil : compare(Decimal128(x), y)
        }
    }

    @inline(__always)
    static func sign<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x == y ? 0 : 1) }

    static func compare(_ x: Decimal128, _ y: Decimal128) -> Int? {
        if x.isNaN || y.isNaN { return nil }
        return x < y ? -1 : (x == y ? 0 : 1)
    }

    /// An int and a double compared exactly (no rounding of the int).
    static func compare(_ i: Int64, _ d: Double) -> Int? {
        if d.isNaN { return nil }
        let di = Double(i)
        // Rounding is monotonic, so a strict difference after rounding is a strict difference before.
        if di < d { return -1 }
        if di > d { return 1 }
        // `d` is an integer within [-2^63, 2^63].
        if d >= 0x1p63 { return -1 }
        return sign(i, Int64(d))
    }

    /// A timestamp as nanoseconds since the epoch (stored forms of one instant may differ).
    @inline(__always)
    static func instant(_ seconds: Int64, _ nanoseconds: Int32) -> Int128 {
        Int128(seconds) * 1_000_000_000 + Int128(nanoseconds)
    }

    /// Whether `a == b` holds without options: nil equals only nil; NaN equals nothing.
    static func equal(_ a: StorageValue, _ b: StorageValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
        case (.binary(let x), .binary(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.objectId(let x), .objectId(let y)): return x == y
        case (.uuid(let x), .uuid(let y)): return x == y
        case (.link(let x), .link(let y)): return x == y
        case (.typedLink(let t, let k), .typedLink(let u, let l)): return t == u && k == l
        case (.timestamp(let s, let n), .timestamp(let t, let m)): return instant(s, n) == instant(t, m)
        case (.int(let x), .int(let y)): return x == y
        default:
            guard let x = number(a), let y = number(b) else { return false }
            return compare(x, y) == 0
        }
    }

    /// The order of `a` and `b` for `<`, `<=`, `>`, `>=` and `BETWEEN`: numbers with numbers and
    /// timestamps with timestamps; nil for every other pair (nil, NaN, strings, different kinds).
    static func order(_ a: StorageValue, _ b: StorageValue) -> Int? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return sign(x, y)
        case (.timestamp(let s, let n), .timestamp(let t, let m)): return sign(instant(s, n), instant(t, m))
        default:
            guard let x = number(a), let y = number(b) else { return nil }
            return compare(x, y)
        }
    }

    // MARK: Sort order (§9)

    /// The rank of a value's kind in the sort order of mixed values: nil, bools, numbers, strings,
    /// binary data, timestamps, ObjectIds, UUIDs, links (Spec/QUERY.md §9).
    static func rank(_ v: StorageValue) -> Int {
        switch v {
        case .null: 0
        case .bool: 1
        case .int, .float, .double, .decimal128: 2
        case .string: 3
        case .binary: 4
        case .timestamp: 5
        case .objectId: 6
        case .uuid: 7
        case .link, .typedLink: 8
        case .list, .map: 9
        }
    }

    /// The total order of sorting and `distinct`: nil first, NaN after nil and before every number,
    /// strings and binary data by bytes, `false` before `true`, ObjectIds and UUIDs by bytes.
    static func sortOrder(_ a: StorageValue, _ b: StorageValue) -> Int {
        switch (a, b) {
        case (.int(let x), .int(let y)): return sign(x, y)
        case (.double(let x), .double(let y)) where !x.isNaN && !y.isNaN: return sign(x, y)
        case (.string(let x), .string(let y)): return bytes(x.utf8, y.utf8)
        case (.binary(let x), .binary(let y)): return bytes(x, y)
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (x ? 1 : -1)
        case (.timestamp(let s, let n), .timestamp(let t, let m)): return sign(instant(s, n), instant(t, m))
        case (.objectId(let x), .objectId(let y)): return bytes(x, y)
        case (.uuid(let x), .uuid(let y)): return bytes(uuidBytes(x), uuidBytes(y))
        case (.link(let x), .link(let y)): return sign(x, y)
        case (.typedLink(let t, let k), .typedLink(let u, let l)): return t != u ? sign(t, u) : sign(k, l)
        default:
            let (ra, rb) = (rank(a), rank(b))
            if ra != rb { return sign(ra, rb) }
            guard let x = number(a), let y = number(b) else { return 0 }
            if let order = compare(x, y) { return order }
            return sign(isNaN(x) ? 0 : 1, isNaN(y) ? 0 : 1)
        }
    }

    static func isNaN(_ n: Number) -> Bool {
        switch n {
        case .int: false
        case .double(let d): d.isNaN
        case .decimal(let d): d.isNaN
        }
    }

    /// Lexicographic order of two byte sequences (a prefix first).
    static func bytes<A: Sequence<UInt8>, B: Sequence<UInt8>>(_ a: A, _ b: B) -> Int {
        var i = a.makeIterator()
        var j = b.makeIterator()
        while true {
            switch (i.next(), j.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?) where x != y: return x < y ? -1 : 1
            default: continue
            }
        }
    }

    static func uuidBytes(_ u: UUID) -> [UInt8] {
        let b = u.uuid
        return [b.0, b.1, b.2, b.3, b.4, b.5, b.6, b.7, b.8, b.9, b.10, b.11, b.12, b.13, b.14, b.15]
    }
}

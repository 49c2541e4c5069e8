import Foundation
import RealmStorage

/// How the tools write stored values as text, the same way in JSON and CSV:
///
/// | type | text |
/// |---|---|
/// | int, bool | `42`, `true` |
/// | float, double | shortest round-trip decimal (`0.1`, `1e+20`); `nan`, `inf`, `-inf` |
/// | string | the string |
/// | binary | base64 (RFC 4648, with padding) |
/// | timestamp | ISO 8601 in UTC, fractional seconds only when present (`2024-05-06T07:08:09.5Z`) |
/// | objectId | 24 lowercase hex digits |
/// | uuid | lowercase 8-4-4-4-12 |
/// | decimal128 | its decimal text (`1.50`, `-Inf`, `NaN`) |
/// | link | the target's object key |
/// | typed link (mixed) | `{"table": name, "key": key}` |
/// | list, set | a JSON array |
/// | map | a JSON object, keys sorted by their UTF-8 bytes |
///
/// A mixed value is written as the value it holds. `Sendable` (no state).
package struct ValueText: Sendable {
    /// The catalog, to name the tables of typed links.
    package let catalog: Catalog

    package init(catalog: Catalog) { self.catalog = catalog }

    /// The value as JSON.
    package func json(_ v: StorageValue) -> JSONValue {
        switch v {
        case .null: .null
        case .int(let i): .int(i)
        case .bool(let b): .bool(b)
        case .float(let f): f.isFinite ? .number(Self.float(f)) : .string(Self.float(f))
        case .double(let d): .double(d)
        case .string(let s): .string(s)
        case .binary(let b): .string(Self.base64(b))
        case .timestamp(let s, let n): .string(Self.iso8601(seconds: s, nanoseconds: n))
        case .objectId(let b): .string(Self.hex(b))
        case .uuid(let u): .string(u.uuidString.lowercased())
        case .decimal128(let lo, let hi): .string(Decimal128(low: lo, high: hi).description)
        case .link(let k): .int(k.rawValue)
        case .typedLink(let table, let key):
            .object([("table", .string(catalog.tables.first { $0.id == table }?.name ?? "#\(table)")), ("key", .int(key.rawValue))])
        case .list(let items): .array(items.map(json))
        case .map(let entries):
            .object(Self.sorted(entries).map { ($0.key, json($0.value)) })
        }
    }

    /// A map's entries in the UTF-8 order of their keys: the order every export writes them in.
    package static func sorted(_ entries: [String: StorageValue]) -> [(key: String, value: StorageValue)] {
        entries.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    /// One CSV field (before quoting) of a value of `column`: empty for null; collections and
    /// mixed values as compact JSON text; everything else as in the table above.
    package func csvField(_ v: StorageValue, _ column: ColumnSchema) -> String {
        if case .null = v { return "" }
        if column.isList || column.isMap || column.type == .mixed { return json(v).compact }
        switch json(v) {
        case .string(let s): return s
        case .number(let n): return n
        case .bool(let b): return b ? "true" : "false"
        case let other: return other.compact
        }
    }

    /// Shortest round-trip text of a double; `nan`, `inf`, `-inf` for the rest.
    package static func double(_ d: Double) -> String {
        if d.isNaN { return "nan" }
        if d.isInfinite { return d < 0 ? "-inf" : "inf" }
        return "\(d)"
    }

    static func float(_ f: Float) -> String {
        if f.isNaN { return "nan" }
        if f.isInfinite { return f < 0 ? "-inf" : "inf" }
        return "\(f)"
    }

    static func base64(_ b: [UInt8]) -> String { Data(b).base64EncodedString() }

    static func hex(_ b: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(b.count * 2)
        for x in b {
            out.append(digits[Int(x >> 4)])
            out.append(digits[Int(x & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// ISO 8601 in UTC of an instant stored as seconds and nanoseconds since 1970 (proleptic
    /// Gregorian calendar; years before 1 or after 9999 are written with a sign and more digits).
    package static func iso8601(seconds: Int64, nanoseconds: Int32) -> String {
        var s = seconds
        var n = Int64(nanoseconds)
        if n < 0 {
            s -= 1
            n += 1_000_000_000
        }
        s += n / 1_000_000_000
        n %= 1_000_000_000
        let days = s >= 0 ? s / 86_400 : (s - 86_399) / 86_400
        let secondOfDay = s - days * 86_400
        let (y, m, d) = civil(days)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        var year = "\(abs(y))"
        if year.count < 4 { year = String(repeating: "0", count: 4 - year.count) + year }
        if y < 0 || y > 9999 { year = (y < 0 ? "-" : "+") + year }
        var out = "\(year)-\(two(m))-\(two(d))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))"
        if n > 0 {
            var fraction = String(n)
            fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            out += "." + fraction
        }
        return out + "Z"
    }

    /// Year, month, day of a day number counted from 1970-01-01 (Howard Hinnant's algorithm).
    static func civil(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// ISO 8601 of a `Date` with exactly three fractional digits (for commit times).
    package static func iso8601(_ date: Date) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let millis = ms - seconds * 1000
        // Always three digits, so that columns of commit times line up.
        return String(iso8601(seconds: seconds, nanoseconds: 0).dropLast()) + "." + String(String(millis + 1000).dropFirst()) + "Z"
    }
}

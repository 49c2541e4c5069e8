import Foundation

/// A value stored in (or read from) a column. The engine's dynamic currency: the object layer maps
/// Swift properties to and from these.
public enum StorageValue: Hashable, Sendable, CustomStringConvertible {
    /// No value.
    case null
    /// An integer (int columns).
    case int(Int64)
    /// A boolean.
    case bool(Bool)
    /// A 32-bit float.
    case float(Float)
    /// A 64-bit float.
    case double(Double)
    /// A string.
    case string(String)
    /// Bytes.
    case binary([UInt8])
    /// Seconds and nanoseconds since 1970-01-01T00:00:00Z; nanoseconds in 0..<1_000_000_000 (or negative
    /// with negative seconds, as Realm stores dates before 1970).
    case timestamp(seconds: Int64, nanoseconds: Int32)
    /// The 12 bytes of a BSON ObjectId.
    case objectId([UInt8])
    /// A UUID.
    case uuid(UUID)
    /// IEEE 754-2008 decimal128 as its low and high 64-bit words (BID encoding).
    case decimal128(low: UInt64, high: UInt64)
    /// A link: the object key of the target, in the column's target table.
    case link(ObjectKey)
    /// A link to the object `key` of the table whose catalog id is `table` (ids are stable and never
    /// reused). Stored only in mixed columns.
    case typedLink(table: UInt32, key: ObjectKey)
    /// The elements of a list (or set) column.
    case list([StorageValue])
    /// The entries of a map column: any string keys, including the empty string.
    case map([String: StorageValue])

    /// Whether this is ``null``.
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// Whether this value can be stored in a column of `type` (ignoring nullability and lists): a
    /// mixed column takes every scalar and typed links.
    func fits(_ type: ColumnType) -> Bool {
        switch (self, type) {
        case (.int, .int), (.bool, .bool), (.float, .float), (.double, .double), (.string, .string),
            (.binary, .binary), (.timestamp, .timestamp), (.uuid, .uuid), (.decimal128, .decimal128),
            (.link, .link):
            return true
        case (.objectId(let b), .objectId): return b.count == 12
        case (.int, .mixed), (.bool, .mixed), (.float, .mixed), (.double, .mixed), (.string, .mixed), (.binary, .mixed),
            (.timestamp, .mixed), (.uuid, .mixed), (.decimal128, .mixed), (.typedLink, .mixed):
            return true
        case (.objectId(let b), .mixed): return b.count == 12
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .null: "null"
        case .int(let v): "\(v)"
        case .bool(let v): "\(v)"
        case .float(let v): "\(v)"
        case .double(let v): "\(v)"
        case .string(let s): "\"\(s)\""
        case .binary(let b): "<\(b.count) bytes>"
        case .timestamp(let s, let n): "@\(s).\(n)"
        case .objectId(let b): "ObjectId(\(b.map { String(format: "%02x", $0) }.joined()))"
        case .uuid(let u): u.uuidString
        case .decimal128(let lo, let hi): "Decimal128(\(hi):\(lo))"
        case .link(let k): "→\(k)"
        case .typedLink(let t, let k): "→table \(t)\(k)"
        case .list(let l): "[" + l.map(\.description).joined(separator: ", ") + "]"
        case .map(let m):
            m.isEmpty ? "[:]" : "[" + m.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "]"
        }
    }

    /// Equality of the stored representation, used by tests, the primary-key index and set columns:
    /// floats compare by bit pattern (NaN equals itself, -0.0 differs from 0.0) and strings by their
    /// UTF-8 bytes (canonically equivalent strings with different bytes differ).
    package func bitwiseEquals(_ o: StorageValue) -> Bool {
        switch (self, o) {
        case (.float(let a), .float(let b)): a.bitPattern == b.bitPattern
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
        case (.list(let a), .list(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.bitwiseEquals($1) }
        case (.map(let a), .map(let b)): a.count == b.count && a.allSatisfy { k, v in b[k].map { v.bitwiseEquals($0) } ?? false }
        default: self == o
        }
    }
}

/// A value hashed and compared by ``StorageValue/bitwiseEquals(_:)``: the identity of a set element.
package struct BitwiseKey: Hashable {
    package let value: StorageValue
    package init(_ value: StorageValue) { self.value = value }
    package static func == (a: BitwiseKey, b: BitwiseKey) -> Bool { a.value.bitwiseEquals(b.value) }
    /// Bitwise-equal values have identical representations, so the ordinary hash agrees.
    package func hash(into hasher: inout Hasher) { value.hash(into: &hasher) }
}

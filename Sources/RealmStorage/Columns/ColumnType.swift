/// The type of a column's values (Spec/FORMAT.md §4.1). Raw values are stored in the file.
public enum ColumnType: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// A 64-bit signed integer.
    case int = 1
    /// A boolean.
    case bool = 2
    /// A 32-bit IEEE float.
    case float = 3
    /// A 64-bit IEEE float.
    case double = 4
    /// UTF-8 text.
    case string = 5
    /// Bytes.
    case binary = 6
    /// An instant: seconds and nanoseconds since 1970 (UTC).
    case timestamp = 7
    /// A 12-byte BSON ObjectId.
    case objectId = 8
    /// A UUID.
    case uuid = 9
    /// An IEEE 754-2008 decimal128.
    case decimal128 = 10
    /// A link to an object of the column's target table (its object key).
    case link = 11
    /// Any scalar value or a typed link (a link to an object of any table), possibly null; stored in
    /// the bytes lane as a tag byte and a payload (Spec/FORMAT.md §4.7). Format version 2.
    case mixed = 12

    /// The physical lane the values are stored in.
    var lane: Lane {
        switch self {
        case .int, .bool, .link: .integer
        case .float: .fixed(4)
        case .double: .fixed(8)
        case .timestamp: .fixed(12)
        case .objectId: .fixed(12)
        case .uuid, .decimal128: .fixed(16)
        case .string, .binary, .mixed: .bytes
        }
    }

    enum Lane: Equatable {
        case integer
        case fixed(Int)
        case bytes
    }

    public var description: String {
        switch self {
        case .int: "int"
        case .bool: "bool"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .binary: "binary"
        case .timestamp: "timestamp"
        case .objectId: "objectId"
        case .uuid: "uuid"
        case .decimal128: "decimal128"
        case .link: "link"
        case .mixed: "mixed"
        }
    }
}

/// A stable, 64-bit identifier of an object within its table. Keys are never reused.
public struct ObjectKey: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    /// The key with raw value `v`.
    public init(_ v: Int64) { rawValue = v }
    public static func < (a: ObjectKey, b: ObjectKey) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "#\(rawValue)" }
}

import Foundation
import RealmStorage

/// What a constant is compared with: the type it must take (Spec/QUERY.md §8).
struct ValueTarget {
    var type: ColumnType
    /// For `.link`: the table of the objects.
    var linkTarget: String?
    /// Whether nil is a value the other side can have (so `== nil` means something).
    var allowsNull: Bool
    /// What messages name the other side by (made into text only for a message).
    var naming: Side.Naming
    /// How messages name the other side: `'age' (int)`.
    var name: String { naming.text }
    /// For mixed targets: the tables whose ids typed links carry.
    var catalog: Catalog?
}

/// Converts constants to the type of the property (or aggregate) they are compared with.
enum ValueConversion {
    static func convert(_ value: QueryValue, to target: ValueTarget, at offset: Int) throws(QueryError) -> StorageValue {
        func mismatch(_ why: String = "") -> QueryError {
            QueryError(.typeMismatch, "\(target.name) cannot be compared with \(value)\(why)", offset: offset)
        }
        switch value {
        case .null:
            guard target.allowsNull else { throw mismatch(": it is never nil") }
            return .null
        case .list:
            throw QueryError(.typeMismatch, "a list can only follow IN or BETWEEN", offset: offset)
        case _ where target.type == .mixed:
            return try mixed(value, to: target, at: offset)
        case .object(let table, let key):
            guard target.type == .link, table == target.linkTarget else { throw mismatch() }
            return .link(key)
        case .bool(let b):
            guard target.type == .bool else { throw mismatch() }
            return .bool(b)
        case .integer(let i):
            switch target.type {
            case .int: return .int(i)
            case .float: return .float(Float(i))
            case .double: return .double(Double(i))
            case .decimal128: return Decimal128Literal.encode(integer: i)
            // RealmSwift compares a bool with the numbers 0 and 1 (Spec/QUERY.md §7.4).
            case .bool where i == 0 || i == 1: return .bool(i == 1)
            default: throw mismatch()
            }
        case .fractional(let text):
            return try fractional(text, to: target, at: offset, mismatch: mismatch())
        case .string(let s):
            switch target.type {
            case .string: return .string(s)
            case .objectId:
                guard let bytes = objectIdBytes(s) else { throw mismatch(": an ObjectId string has 24 hexadecimal digits") }
                return .objectId(bytes)
            case .uuid:
                guard let uuid = UUID(uuidString: s) else { throw mismatch(": not a UUID string") }
                return .uuid(uuid)
            // A decimal written as text, as RealmSwift accepts it: '1.5', '-2E+10', 'Inf', '-Inf',
            // 'NaN' (Spec/QUERY.md §7.4).
            case .decimal128:
                guard let d = try? Decimal128(string: s) else { throw mismatch(": not a decimal128 string") }
                return .decimal128(low: d.low, high: d.high)
            default: throw mismatch()
            }
        case .typed(let typed):
            return try convert(typed, to: target, at: offset, mismatch: mismatch())
        }
    }

    private static func fractional(
        _ text: String, to target: ValueTarget, at offset: Int, mismatch: @autoclosure () -> QueryError
    ) throws(QueryError) -> StorageValue {
        func outOfRange() -> QueryError {
            QueryError(.invalidLiteral, "\(text) is out of the range of \(target.type)", offset: offset)
        }
        switch target.type {
        case .float:
            guard let f = Float(text), f.isFinite else { throw outOfRange() }
            return .float(f)
        case .double:
            guard let d = Double(text), d.isFinite else { throw outOfRange() }
            return .double(d)
        case .decimal128:
            guard let d = Decimal128Literal.encode(text) else {
                throw QueryError(
                    .invalidLiteral, "\(text) needs more than the 34 digits or the exponent range of decimal128", offset: offset)
            }
            return d
        case .int:
            throw QueryError(
                .typeMismatch, "\(target.name) holds integers and cannot be compared with the fractional number \(text)", offset: offset)
        default:
            throw mismatch()
        }
    }

    /// A constant compared with a mixed value keeps its own type: integers stay int, fractional
    /// literals become double, strings stay strings, objects become typed links (Spec/QUERY.md §7.10).
    private static func mixed(_ value: QueryValue, to target: ValueTarget, at offset: Int) throws(QueryError) -> StorageValue {
        switch value {
        case .bool(let b): return .bool(b)
        case .integer(let i): return .int(i)
        case .string(let s): return .string(s)
        case .fractional(let text):
            guard let d = Double(text), d.isFinite else {
                throw QueryError(.invalidLiteral, "\(text) is out of the range of double", offset: offset)
            }
            return .double(d)
        case .object(let table, let key):
            guard let id = target.catalog?.table(table)?.id else {
                throw QueryError(
                    .typeMismatch, "\(target.name) cannot be compared with an object of the unknown table \(table)", offset: offset)
            }
            return .typedLink(table: id, key: key)
        case .typed(.objectId(let bytes)) where bytes.count != 12:
            throw QueryError(.invalidArgument, "an ObjectId has 12 bytes, not \(bytes.count)", offset: offset)
        case .typed(.link), .typed(.list), .typed(.map), .null, .list:
            throw QueryError(.typeMismatch, "\(target.name) cannot be compared with \(value)", offset: offset)
        case .typed(let v):
            return v
        }
    }

    /// Arguments of types the text has no literal for.
    private static func convert(
        _ value: StorageValue, to target: ValueTarget, at offset: Int, mismatch: @autoclosure () -> QueryError
    ) throws(QueryError) -> StorageValue {
        switch (value, target.type) {
        case (.float, .float), (.double, .double), (.binary, .binary), (.timestamp, .timestamp), (.uuid, .uuid),
            (.decimal128, .decimal128), (.link, .link):
            return value
        case (.float(let f), .double): return .double(Double(f))
        case (.double(let d), .float): return .float(Float(d))
        case (.float(let f), .decimal128): return Decimal128Literal.encode(binary: Double(f), shortest: "\(f)")
        case (.double(let d), .decimal128): return Decimal128Literal.encode(binary: d, shortest: "\(d)")
        case (.float, .int), (.double, .int):
            throw QueryError(.typeMismatch, "\(target.name) holds integers and cannot be compared with \(value)", offset: offset)
        case (.objectId(let bytes), .objectId):
            guard bytes.count == 12 else {
                throw QueryError(.invalidArgument, "an ObjectId has 12 bytes, not \(bytes.count)", offset: offset)
            }
            return value
        case (.int, _), (.bool, _), (.string, _), (.null, _), (.list, _):
            return try convert(QueryValue(value), to: target, at: offset)
        default:
            throw mismatch()
        }
    }

    /// The 12 bytes of an ObjectId written as 24 hexadecimal digits.
    static func objectIdBytes(_ hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == 24 else { return nil }
        var bytes: [UInt8] = []
        for i in stride(from: 0, to: 24, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}

/// Exact decimal text to IEEE 754-2008 decimal128 in the BID encoding (the engine's
/// `StorageValue.decimal128(low:high:)`).
enum Decimal128Literal {
    private static let bias = 6176
    private static let maxExponent = 6111
    private static let minExponent = -6176
    private static let maxDigits = 34

    static func encode(integer i: Int64) -> StorageValue {
        words(negative: i < 0, coefficient: UInt128(i.magnitude), exponent: 0)
    }

    /// A binary float's value as decimal128: NaN and infinities as such, finite values through
    /// their shortest round-tripping decimal text (so `0.1` becomes decimal 0.1).
    static func encode(binary: Double, shortest: String) -> StorageValue {
        if binary.isNaN { return .decimal128(low: 0, high: 0x7C00_0000_0000_0000) }
        if binary.isInfinite { return .decimal128(low: 0, high: (binary < 0 ? 1 << 63 : 0) | 0x7800_0000_0000_0000) }
        return encode(shortest)!
    }

    /// `[-]digits[.digits][e[±]digits]` exactly, or `nil` when it needs more than 34 significant
    /// digits or an exponent out of range.
    static func encode(_ text: String) -> StorageValue? {
        var negative = false
        var digits: [UInt8] = []
        var exponent = 0
        var seenDot = false
        var chars = Substring(text)
        if let sign = chars.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            chars = chars.dropFirst()
        }
        while let c = chars.first, c != "e", c != "E" {
            chars = chars.dropFirst()
            if c == "." {
                seenDot = true
                continue
            }
            guard let d = c.wholeNumberValue, c.isASCII else { return nil }
            if seenDot { exponent -= 1 }
            if digits.isEmpty && d == 0 { continue }
            digits.append(UInt8(d))
        }
        if !chars.isEmpty {
            guard let e = Int(chars.dropFirst()), abs(e) < 100_000 else { return nil }
            exponent += e
        }
        while digits.count > maxDigits, digits.last == 0 {
            digits.removeLast()
            exponent += 1
        }
        guard digits.count <= maxDigits else { return nil }
        var coefficient = digits.reduce(UInt128(0)) { $0 * 10 + UInt128($1) }
        var count = digits.count
        if coefficient == 0 { exponent = min(max(exponent, minExponent), maxExponent) }
        while exponent > maxExponent, count < maxDigits {
            coefficient *= 10
            count += 1
            exponent -= 1
        }
        while exponent < minExponent, coefficient % 10 == 0 {
            coefficient /= 10
            exponent += 1
        }
        guard (minExponent...maxExponent).contains(exponent) else { return nil }
        return words(negative: negative, coefficient: coefficient, exponent: exponent)
    }

    private static func words(negative: Bool, coefficient: UInt128, exponent: Int) -> StorageValue {
        let high = (negative ? UInt64(1) << 63 : 0) | UInt64(exponent + bias) << 49 | UInt64(coefficient >> 64)
        return .decimal128(low: UInt64(truncatingIfNeeded: coefficient), high: high)
    }
}

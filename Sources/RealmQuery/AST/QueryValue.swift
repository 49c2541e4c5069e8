import Foundation
import RealmStorage

/// A constant in a query: a literal of the text, or an argument given for `%@`.
///
/// A constant has no column type until it is bound (Spec/QUERY.md §8): an integer literal stays an
/// ``integer(_:)`` so that it can compare with an int, float, double or decimal128 property, while a
/// literal with a fraction or exponent is ``fractional(_:)``, kept as written so that it converts
/// exactly to decimal128 and correctly rounded to double or float — and never to int. Values that
/// text cannot spell (dates, binary data, object ids, …) arrive as arguments in ``typed(_:)``.
/// `Sendable`.
package enum QueryValue: Sendable, Hashable, CustomStringConvertible {
    /// `nil`/`NULL`, or a null argument.
    case null
    /// `TRUE`/`YES`, `FALSE`/`NO`, or a bool argument.
    case bool(Bool)
    /// An integer literal (decimal, `0x` hexadecimal, `0o` octal, `0b` binary) or an int argument.
    case integer(Int64)
    /// A literal with a fraction or an exponent, as written: `"5.5"`, `"-1e-3"`.
    case fractional(String)
    /// A string literal or argument.
    case string(String)
    /// `{a, b, …}` or a `%@` array argument: only the right side of `IN` and `BETWEEN`.
    case list([QueryValue])
    /// An argument of a type the text has no literal for: float, double, binary, timestamp,
    /// objectId, uuid, decimal128, link. (Ints, bools, strings and null normalize to the cases above.)
    case typed(StorageValue)
    /// A managed object given as an argument, for equality with a link.
    case object(table: String, key: ObjectKey)

    /// The constant for an argument's value: ints, bools, strings and null become ``integer(_:)``,
    /// ``bool(_:)``, ``string(_:)`` and ``null``, lists become ``list(_:)``, the rest ``typed(_:)``.
    package init(_ value: StorageValue) {
        switch value {
        case .null: self = .null
        case .int(let v): self = .integer(v)
        case .bool(let v): self = .bool(v)
        case .string(let v): self = .string(v)
        case .list(let vs): self = .list(vs.map(QueryValue.init))
        default: self = .typed(value)
        }
    }

    /// The canonical text: literals as the parser reads them (strings double-quoted, `nil`,
    /// `TRUE`/`FALSE`, lists in braces, `oid(…)`, `uuid(…)`, `T<seconds>:<nanoseconds>`,
    /// `B64"…"`); typed arguments that have no literal form in the engine's value notation
    /// (`Decimal128(…)`, …) and objects as `Table#key`.
    package var description: String {
        switch self {
        case .null: "nil"
        case .bool(let b): b ? "TRUE" : "FALSE"
        case .integer(let i): "\(i)"
        case .fractional(let text): text
        case .string(let s): Self.quoted(s)
        case .list(let items): "{" + items.map(\.description).joined(separator: ", ") + "}"
        case .typed(.objectId(let b)) where b.count == 12: "oid(" + b.map { String(format: "%02x", $0) }.joined() + ")"
        case .typed(.uuid(let u)): "uuid(\(u.uuidString.lowercased()))"
        case .typed(.timestamp(let s, let ns)): "T\(s):\(ns)"
        case .typed(.binary(let b)): "B64\"\(Data(b).base64EncodedString())\""
        case .typed(let v): v.description
        case .object(let table, let key): "\(table)\(key)"
        }
    }

    /// `s` as a double-quoted string literal that the lexer reads back as `s`.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\0": out += "\\0"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

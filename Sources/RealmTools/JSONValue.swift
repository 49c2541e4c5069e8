/// A JSON value whose objects keep their keys in the order they were built, so the tools' output
/// is deterministic (golden files compare it byte for byte). `Sendable`.
package indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number written exactly as given (an integer, or a double's shortest round-trip text).
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Keys in order; duplicates are the builder's mistake.
    case object([(String, JSONValue)])

    package static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// An integer.
    package static func int<T: BinaryInteger>(_ v: T) -> JSONValue { .number("\(v)") }

    /// An optional integer (null when absent).
    package static func int<T: BinaryInteger>(_ v: T?) -> JSONValue { v.map { .number("\($0)") } ?? .null }

    /// An optional string (null when absent).
    package static func string(_ v: String?) -> JSONValue { v.map { .string($0) } ?? .null }

    /// A double; JSON has no NaN or infinities, so those become the strings `nan`, `inf`, `-inf`.
    package static func double(_ v: Double) -> JSONValue {
        v.isFinite ? .number(ValueText.double(v)) : .string(ValueText.double(v))
    }

    /// The value on one line, without spaces: one JSON Lines record.
    package var compact: String {
        var out = ""
        write(to: &out, indent: nil, level: 0)
        return out
    }

    /// The value indented by two spaces per level.
    package var pretty: String {
        var out = ""
        write(to: &out, indent: "  ", level: 0)
        return out
    }

    private func write(to out: inout String, indent: String?, level: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n
        case .string(let s): Self.quote(s, into: &out)
        case .array(let items):
            if items.isEmpty {
                out += "[]"
                return
            }
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                Self.newline(&out, indent, level + 1)
                item.write(to: &out, indent: indent, level: level + 1)
            }
            Self.newline(&out, indent, level)
            out += "]"
        case .object(let members):
            if members.isEmpty {
                out += "{}"
                return
            }
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out += "," }
                Self.newline(&out, indent, level + 1)
                Self.quote(key, into: &out)
                out += indent == nil ? ":" : ": "
                value.write(to: &out, indent: indent, level: level + 1)
            }
            Self.newline(&out, indent, level)
            out += "}"
        }
    }

    private static func newline(_ out: inout String, _ indent: String?, _ level: Int) {
        guard let indent else { return }
        out += "\n" + String(repeating: indent, count: level)
    }

    /// Writes `s` as a JSON string: quotes, backslashes and control characters escaped (RFC 8259).
    package static func quote(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

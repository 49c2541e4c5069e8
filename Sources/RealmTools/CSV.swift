import Foundation

/// RFC 4180 records: fields separated by commas, records ended by CRLF; a field holding a comma,
/// a double quote, CR, LF or leading/trailing spaces is enclosed in double quotes with each double
/// quote doubled. An empty string is written as `""` so that readers (DuckDB, pandas with
/// `keep_default_na=False`) can tell it from a null, which is an empty unquoted field. `Sendable`.
package enum CSV {
    /// One record, CRLF included. `nil` fields are nulls.
    package static func record(_ fields: [String?]) -> String {
        var out = ""
        for (i, f) in fields.enumerated() {
            if i > 0 { out += "," }
            if let f { out += field(f) }
        }
        return out + "\r\n"
    }

    /// One field, quoted when it needs to be.
    package static func field(_ s: String) -> String {
        let needsQuotes =
            s.isEmpty || s.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 10 || $0 == 13 }
            || s.first == " " || s.last == " "
        guard needsQuotes else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

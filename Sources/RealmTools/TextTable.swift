/// Columns of text padded to their widest cell, numbers right-aligned. `Sendable`.
package struct TextTable: Sendable {
    package enum Alignment: Sendable { case left, right }

    package var headers: [String]
    package var alignments: [Alignment]
    package var rows: [[String]] = []
    /// Spaces before every line.
    package var indent = 0

    package init(_ columns: [(String, Alignment)], indent: Int = 0) {
        headers = columns.map(\.0)
        alignments = columns.map(\.1)
        self.indent = indent
    }

    package mutating func add(_ row: [String]) { rows.append(row) }

    /// The table, one line per row after the header line, each ending in a newline; trailing
    /// spaces are trimmed.
    package var text: String {
        var widths = headers.map(\.count)
        for r in rows { for (i, cell) in r.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) } }
        func line(_ cells: [String]) -> String {
            var out = String(repeating: " ", count: indent)
            for (i, cell) in cells.enumerated() where i < widths.count {
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                out += (i > 0 ? "  " : "") + (alignments[i] == .right ? pad + cell : cell + pad)
            }
            while out.hasSuffix(" ") { out.removeLast() }
            return out + "\n"
        }
        return ([headers] + rows).map(line).joined()
    }
}

/// Byte counts for people: `1234567` → `1,234,567 bytes (1.2 MB)`.
package enum ByteCount {
    /// An integer with thousands separators.
    package static func grouped<T: BinaryInteger>(_ n: T) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    /// Decimal units (kB = 1000 bytes), one decimal.
    package static func short<T: BinaryInteger>(_ n: T) -> String {
        let v = Double(Int64(n))
        let units = ["bytes", "kB", "MB", "GB", "TB"]
        var x = v
        var u = 0
        while abs(x) >= 1000 && u < units.count - 1 {
            x /= 1000
            u += 1
        }
        if u == 0 { return "\(Int64(n)) bytes" }
        let tenths = Int64((x * 10).rounded())
        return "\(tenths / 10).\(abs(tenths % 10)) \(units[u])"
    }

    /// `1,234,567 bytes (1.2 MB)`; small counts without the parenthesis.
    package static func describe<T: BinaryInteger>(_ n: T) -> String {
        n.magnitude < 1000 ? "\(n) bytes" : "\(grouped(n)) bytes (\(short(n)))"
    }

    /// A share as a percentage with one decimal: `part` of `whole`.
    package static func percent<T: BinaryInteger>(_ part: T, of whole: T) -> String {
        guard whole != 0 else { return "0.0%" }
        let value = Double(Int64(part)) * 100 / Double(Int64(whole))
        let tenths = Int64((abs(value) * 10).rounded())
        return (value < 0 && tenths > 0 ? "-" : "") + "\(tenths / 10).\(tenths % 10)%"
    }
}

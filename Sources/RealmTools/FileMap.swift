import RealmStorage

/// `realm-dump --map FILE.svg`: a picture of the file. The committed bytes are laid out left to
/// right and top to bottom in rows of equal byte width; each stretch is coloured by the version
/// whose commit wrote it (a hue per version, oldest to newest), solid where the current version
/// still reaches it (live) and pale where it does not (dead); the header is grey and committed bytes
/// of no reachable commit are hatched. Every block carries a tooltip (`<title>`) with its kind,
/// offset, length and version. `Sendable` (no state).
package enum FileMap {
    package static let width = 1000
    package static let rowHeight = 14
    package static let rowCount = 64

    /// The SVG document for `r.blocks` (inspect with `blocks: true`).
    package static func svg(_ r: Inspector.Report) -> String {
        let total = max(1, UInt64(r.committedLength))
        let bytesPerRow = max(1, (total + UInt64(rowCount) - 1) / UInt64(rowCount))
        let rows = Int((total + bytesPerRow - 1) / bytesPerRow)
        let versions = Array(Set(r.blocks.compactMap(\.version))).sorted()
        let legendTop = rows * rowHeight + 30
        let height = legendTop + 22 * (2 + (versions.count + 7) / 8) + 10
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width + 20)" height="\(height)" font-family="monospace" font-size="11">
            <defs><pattern id="unknown" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">\
            <rect width="6" height="6" fill="#eeeeee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#999999" stroke-width="2"/></pattern></defs>
            <text x="10" y="14">\(escape(r.path)): \(r.committedLength) committed bytes, \(bytesPerRow) bytes per row, \
            version \(r.currentVersion) current; solid = live, pale = dead</text>

            """
        for b in r.blocks {
            let fill = b.kind == "header" ? "#9e9e9e" : b.kind == "unknown" ? "url(#unknown)" : color(b.version, versions, live: b.isLive)
            let title =
                "\(b.kind) at \(b.offset), \(b.length) bytes" + (b.version.map { ", version \($0)" } ?? "")
                + (b.isLive ? ", live" : ", dead")
            // A block may wrap over several rows: one rectangle per row it touches.
            var start = b.offset
            let end = b.offset + b.length
            while start < end {
                let row = start / bytesPerRow
                let rowEnd = min(end, (row + 1) * bytesPerRow)
                let x = 10 + Double(start - row * bytesPerRow) * Double(width) / Double(bytesPerRow)
                let w = max(0.5, Double(rowEnd - start) * Double(width) / Double(bytesPerRow))
                out +=
                    "<rect x=\"\(fmt(x))\" y=\"\(24 + Int(row) * rowHeight)\" width=\"\(fmt(w))\" height=\"\(rowHeight - 2)\" fill=\"\(fill)\">"
                out += "<title>\(escape(title))</title></rect>\n"
                start = rowEnd
            }
        }
        // Legend: one swatch per version, then live/dead/header/unknown.
        var x = 10
        var y = legendTop
        for (i, v) in versions.enumerated() {
            if i > 0 && i % 8 == 0 {
                x = 10
                y += 22
            }
            out += "<rect x=\"\(x)\" y=\"\(y)\" width=\"14\" height=\"14\" fill=\"\(color(v, versions, live: true))\"/>"
            out += "<text x=\"\(x + 18)\" y=\"\(y + 11)\">v\(v)</text>\n"
            x += 120
        }
        y += 22
        out += "<rect x=\"10\" y=\"\(y)\" width=\"14\" height=\"14\" fill=\"#9e9e9e\"/><text x=\"28\" y=\"\(y + 11)\">header</text>\n"
        out +=
            "<rect x=\"130\" y=\"\(y)\" width=\"14\" height=\"14\" fill=\"url(#unknown)\"/><text x=\"148\" y=\"\(y + 11)\">no reachable commit</text>\n"
        let live = r.blocks.filter(\.isLive).reduce(UInt64(0)) { $0 + $1.length }
        out +=
            "<text x=\"330\" y=\"\(y + 11)\">live \(live) bytes, dead \(UInt64(r.committedLength) - min(UInt64(r.committedLength), live)) bytes</text>\n"
        return out + "</svg>\n"
    }

    /// A hue per version spread over the circle; live blocks saturated, dead ones pale.
    static func color(_ version: UInt64?, _ versions: [UInt64], live: Bool) -> String {
        guard let version, let i = versions.firstIndex(of: version) else { return live ? "#607d8b" : "#cfd8dc" }
        let hue = Double(i) * 360 / Double(max(1, versions.count)) * 0.85
        return hsl(hue, live ? 0.65 : 0.35, live ? 0.45 : 0.85)
    }

    static func hsl(_ h: Double, _ s: Double, _ l: Double) -> String {
        let c = (1 - abs(2 * l - 1)) * s
        let hp = h / 60
        let x = c * (1 - abs(hp.truncatingRemainder(dividingBy: 2) - 1))
        let (r, g, b): (Double, Double, Double) =
            switch hp {
            case ..<1: (c, x, 0)
            case ..<2: (x, c, 0)
            case ..<3: (0, c, x)
            case ..<4: (0, x, c)
            case ..<5: (x, 0, c)
            default: (c, 0, x)
            }
        let m = l - c / 2
        func hex(_ v: Double) -> String {
            let n = Int(((v + m) * 255).rounded())
            return (n < 16 ? "0" : "") + String(min(255, max(0, n)), radix: 16)
        }
        return "#" + hex(r) + hex(g) + hex(b)
    }

    static func fmt(_ v: Double) -> String {
        let hundredths = Int((v * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }

    /// A JSON summary of the map (for `--map FILE.svg --json`).
    package static func json(_ r: Inspector.Report, written path: String) -> JSONValue {
        let live = r.blocks.filter(\.isLive)
        return .object([
            ("map", .string(path)), ("committedLength", .int(r.committedLength)), ("blocks", .int(r.blocks.count)),
            ("liveBlocks", .int(live.count)), ("liveBytes", .int(live.reduce(UInt64(0)) { $0 + $1.length })),
            (
                "stretches",
                .array(
                    r.blocks.map {
                        .object([
                            ("kind", .string($0.kind)), ("offset", .int($0.offset)), ("length", .int($0.length)),
                            ("version", .int($0.version)),
                            ("live", .bool($0.isLive)),
                        ])
                    })
            ),
        ])
    }
}

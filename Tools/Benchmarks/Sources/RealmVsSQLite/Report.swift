import Foundation

/// The results of a run: text table, JSON (Codable) and an SVG chart of the ratios.
struct Report: Codable {
    var n: Int
    var repetitions: Int
    var machine: String
    var workloads: [Workload]
    /// Bytes on disk by system and moment ("after W1", "after W8", "W8 growth", "compacted").
    var sizes: [String: [String: Samples]]
    /// W1's peak resident memory in a process of its own (bytes), by system: the process's whole
    /// high-water mark, its runtime included.
    var aloneW1Peak: [String: Samples] = [:]

    static let this = Runner.this
    static let sqlite = Runner.full

    static let duckdb = Runner.duckdb

    /// CPU, cores, OS, SQLite version (and DuckDB's, when it ran).
    static func machine(sqlite: String, duckdb: String = "") -> String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }.map {
                $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            } ?? "unknown CPU"
        let os = ProcessInfo.processInfo.operatingSystemVersionString
        return "\(model), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(os), SQLite \(sqlite)"
            + (duckdb.isEmpty ? "" : ", DuckDB \(duckdb)")
    }

    /// Whether every workload's answers agree across systems (and, for N = 1,000,000, equal the
    /// expected ones of the issue).
    var answersAgree: Bool { problems.isEmpty }

    var problems: [String] {
        var out: [String] = []
        let expected: [String: String] =
            n == 1_000_000
            ? ["W2": "490000", "W3": "12200", "W4": "49950000 / 49.5 / 0 / 99.9", "W5": "5049900"] : [:]
        for w in workloads {
            let answers = Set(w.answers.values)
            if answers.count > 1 {
                out.append("\(w.id): \(w.answers.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: "; "))")
            }
            if let e = expected[w.id], let a = answers.first, answers.count == 1, a != e { out.append("\(w.id): \(a), expected \(e)") }
            if w.answers.values.contains(where: { $0.contains("≠") }) { out.append("\(w.id): answers changed between repetitions") }
        }
        return out
    }

    /// How many times faster this library is than SQLite FULL (or `other`) on `w` (< 1: slower).
    func speedup(_ w: Workload, than other: String = Report.sqlite) -> Double? {
        guard let a = w.samples[Self.this]?.median, let b = w.samples[other]?.median, a > 0, b > 0 else { return nil }
        return w.higherIsBetter ? a / b : b / a
    }

    static func ratioText(_ r: Double) -> String { r >= 1 ? String(format: "%.1f× faster", r) : String(format: "%.1f× slower", 1 / r) }

    func met(_ w: Workload) -> Bool? {
        guard let m = w.samples[Self.this]?.median else { return nil }
        switch w.id {
        case "W1": return m <= 0.40
        case "W2": return m <= 0.5
        case "W3", "W4": return m <= 3
        case "W5": return m <= 10
        case "W6", "W8": return m <= 40
        case "W7": return w.samples[Self.sqlite].map { m >= $0.median }
        case "W7c": return w.samples[Self.sqlite].map { m >= 3 * $0.median }
        case "W9": return m <= 0.5
        case "W10": return m >= 40
        default: return nil
        }
    }

    static func format(_ v: Double, _ unit: String) -> String {
        switch unit {
        case "s": String(format: "%.3f", v)
        case "ms": v < 10 ? String(format: "%.2f", v) : String(format: "%.1f", v)
        case "commits/s": String(format: "%.0f", v)
        default: String(format: "%.2f", v)
        }
    }

    static func cell(_ s: Samples?, _ unit: String) -> String {
        guard let s, !s.values.isEmpty else { return "–" }
        return "\(format(s.median, unit)) (\(format(s.min, unit))–\(format(s.max, unit)))"
    }

    static func megabytes(_ b: Double) -> String { String(format: "%.1f MB", b / 1e6) }

    /// The report as a Markdown table plus sizes, memory and answer checks.
    func text() -> String {
        var out = "N = \(n), \(repetitions) repetitions, medians (min–max); read workloads (W2–W6, W10): the third run "
        out += "of each repetition; \(machine)\n\n"
        out += "| workload | unit | this library | SQLite WAL FULL | ratio | target | met |\n|---|---|---|---|---|---|---|\n"
        for w in workloads {
            var sqlite = Self.cell(w.samples[Self.sqlite], w.unit)
            if let normal = w.samples[Runner.normal] { sqlite += "; NORMAL \(Self.cell(normal, w.unit))" }
            let ratio = speedup(w).map { $0 >= 1 ? String(format: "%.1f× faster", $0) : String(format: "%.1f× slower", 1 / $0) } ?? "–"
            let ok = met(w).map { $0 ? "yes" : "no" } ?? "–"
            out +=
                "| \(w.id) \(w.title) | \(w.unit) | \(Self.cell(w.samples[Self.this], w.unit)) | \(sqlite) | \(ratio) | \(w.target) | \(ok) |\n"
        }
        let withDuckDB = workloads.filter { $0.samples[Self.duckdb] != nil }
        if !withDuckDB.isEmpty {
            out += "\nDuckDB (one thread, the same rows, timed inside Python around each query and its fetch):\n\n"
            out += "| workload | unit | this library | DuckDB (1 thread) | ratio |\n|---|---|---|---|---|\n"
            for w in withDuckDB {
                let ratio = speedup(w, than: Self.duckdb).map(Self.ratioText) ?? "–"
                out += "| \(w.id) \(w.title) | \(w.unit) | \(Self.cell(w.samples[Self.this], w.unit)) | "
                out += "\(Self.cell(w.samples[Self.duckdb], w.unit)) | \(ratio) |\n"
            }
        }
        out += "\nFirst run of each read workload after W1 (caches cold; medians across repetitions):\n\n"
        let duckColumn = !withDuckDB.isEmpty
        out +=
            "| workload | this library | SQLite WAL FULL |"
            + (duckColumn ? " DuckDB (1 thread) |\n|---|---|---|---|\n" : "\n|---|---|---|\n")
        for w in workloads {
            guard w.samples.values.contains(where: { !$0.firstRuns.isEmpty }) else { continue }
            let mine = w.samples[Self.this]?.firstRunMedian.map { Self.format($0, w.unit) } ?? "–"
            let theirs = w.samples[Self.sqlite]?.firstRunMedian.map { Self.format($0, w.unit) } ?? "–"
            let duck = duckColumn ? " \(w.samples[Self.duckdb]?.firstRunMedian.map { Self.format($0, w.unit) } ?? "–") |" : ""
            out += "| \(w.id) (\(w.unit)) | \(mine) | \(theirs) |\(duck)\n"
        }
        out += "\n| file size | this library | SQLite WAL |\n|---|---|---|\n"
        for what in ["after W1", "after W8", "W8 growth", "compacted"] {
            let a = sizes[Self.this]?[what].map { Self.megabytes($0.median) } ?? "–"
            let b = sizes[Self.sqlite]?[what].map { Self.megabytes($0.median) } ?? "–"
            out += "| \(what) | \(a) | \(b) |\n"
        }
        if !aloneW1Peak.isEmpty {
            out += "\n| peak resident memory of W1 alone, in a fresh process (median) | this library | SQLite WAL FULL |\n|---|---|---|\n"
            let a = aloneW1Peak[Self.this].map { Self.megabytes($0.median) } ?? "–"
            let b = aloneW1Peak[Self.sqlite].map { Self.megabytes($0.median) } ?? "–"
            out += "| W1 | \(a) | \(b) |\n"
        }
        out +=
            "\n| peak resident memory in the run's process (each includes what ran before it) | this library | SQLite WAL FULL |\n|---|---|---|\n"
        for w in workloads where w.id != "W9" {
            let a = w.samples[Self.this].map { Self.megabytes(Double($0.peakBytes)) } ?? "–"
            let b = w.samples[Self.sqlite].map { Self.megabytes(Double($0.peakBytes)) } ?? "–"
            out += "| \(w.id) | \(a) | \(b) |\n"
        }
        out += "\nanswers: "
        out +=
            problems.isEmpty
            ? "every system agrees" + (n == 1_000_000 ? " and matches the expected values" : "") : problems.joined(separator: "; ")
        for w in workloads { if let a = w.answers[Self.this] { out += "\n  \(w.id): \(a)" } }
        return out + "\n"
    }

    /// A bar per workload: how many times faster (right, green) or slower (left, red) this library
    /// is than SQLite (WAL, synchronous FULL), on a log scale.
    func svg() -> String {
        let rowHeight = 38
        let labelWidth = 330
        let half = 260
        let width = labelWidth + 2 * half + 420
        let height = 60 + rowHeight * workloads.count + 30
        let maxLog = 6.0  // 64×
        var s = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" font-family="sans-serif" font-size="13">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="22" font-size="15" font-weight="bold">This library vs SQLite (WAL, synchronous FULL; thin blue bars: vs DuckDB, one thread), N = \(n): times faster (→) or slower (←)</text>

            """
        let center = labelWidth + half
        for (i, w) in workloads.enumerated() {
            let y = 45 + i * rowHeight
            s += "<text x=\"10\" y=\"\(y + 18)\">\(Self.escape("\(w.id) \(w.title)"))</text>\n"
            guard let r = speedup(w) else { continue }
            let l = Swift.max(-maxLog, Swift.min(maxLog, log2(r)))
            let length = Int(abs(l) / maxLog * Double(half))
            let x = l >= 0 ? center : center - length
            s +=
                "<rect x=\"\(x)\" y=\"\(y + 5)\" width=\"\(Swift.max(length, 1))\" height=\"18\" fill=\"\(l >= 0 ? "#3a9d5d" : "#c8553d")\"/>\n"
            let label = Self.ratioText(r)
            let tx = l >= 0 ? x + length + 6 : x - 6
            s += "<text x=\"\(tx)\" y=\"\(y + 18)\" text-anchor=\"\(l >= 0 ? "start" : "end")\">\(label)</text>\n"
            // Against DuckDB, where it ran: a thin blue bar under SQLite's.
            if let d = speedup(w, than: Self.duckdb) {
                let dl = Swift.max(-maxLog, Swift.min(maxLog, log2(d)))
                let dlength = Int(abs(dl) / maxLog * Double(half))
                let dx = dl >= 0 ? center : center - dlength
                s += "<rect x=\"\(dx)\" y=\"\(y + 24)\" width=\"\(Swift.max(dlength, 1))\" height=\"5\" fill=\"#3d6fc8\"/>\n"
                let dtx = dl >= 0 ? dx + dlength + 6 : dx - 6
                s += "<text x=\"\(dtx)\" y=\"\(y + 30)\" font-size=\"10\" fill=\"#3d6fc8\" text-anchor=\"\(dl >= 0 ? "start" : "end")\">"
                s += "DuckDB: \(Self.ratioText(d))</text>\n"
            }
        }
        s += "<line x1=\"\(center)\" y1=\"40\" x2=\"\(center)\" y2=\"\(height - 25)\" stroke=\"black\"/>\n"
        for k in [-6, -3, 3, 6] {
            let x = center + Int(Double(k) / maxLog * Double(half))
            s +=
                "<text x=\"\(x)\" y=\"\(height - 8)\" text-anchor=\"middle\" fill=\"#555\">\(k < 0 ? "\(1 << -k)× slower" : "\(1 << k)× faster")</text>\n"
        }
        return s + "</svg>\n"
    }

    static func escape(_ t: String) -> String {
        t.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(
            of: ">", with: "&gt;")
    }
}

import Foundation
import GRDB

/// `realm-vs-sqlite`: the workloads of Tools/Benchmarks/results/NOTES.md, "Workloads" for this library (public RealmSwift API) and
/// for SQLite (GRDB, WAL; `synchronous` FULL, and NORMAL too for W7), alternating the systems in
/// each repetition; W9 in fresh processes. Prints each median (min–max), the ratio, the target,
/// peak memory and file sizes, and checks that both systems computed the same answers.
///
/// Options: `--quick` (N = 100,000, 3 repetitions), `--n N`, `--repetitions R`, `--json FILE`,
/// `--svg FILE` (a chart of the ratios), `--dir DIR` (where the database files go).
@main
struct RealmVsSQLite {
    static func main() throws {
        var args = Array(CommandLine.arguments.dropFirst())
        if args.first == "--w9" {
            try childW9(system: args[1], path: args[2])
            return
        }
        if args.first == "--w1-alone" {
            try childW1(system: args[1], n: Int(args[2]) ?? 1_000_000, path: args[3])
            return
        }
        var options = Options()
        while !args.isEmpty {
            let a = args.removeFirst()
            func value() -> String {
                guard !args.isEmpty else { fail("\(a) needs a value") }
                return args.removeFirst()
            }
            switch a {
            case "--quick":
                options.n = 100_000
                options.repetitions = 3
            case "--n": options.n = Int(value()) ?? options.n
            case "--repetitions": options.repetitions = max(1, Int(value()) ?? options.repetitions)
            case "--json": options.json = value()
            case "--svg": options.svg = value()
            case "--dir": options.dir = value()
            case "--systems":
                let v = value()
                options.systems = v == "this" ? [Runner.this] : v == "sqlite" ? [Runner.full] : [Runner.this, Runner.full]
            case "--only": options.only = Set(value().split(separator: ",").map(String.init))
            case "--no-duckdb": options.duckdb = false
            case "-h", "--help":
                print(
                    "usage: realm-vs-sqlite [--quick] [--n N] [--repetitions R] [--json FILE] [--svg FILE] [--dir DIR] [--systems this|sqlite|both] [--only W2,W7,...] [--no-duckdb]"
                )
                return
            default: fail("unknown option \(a)")
            }
        }
        let runner = Runner(options)
        try runner.run()
        let report = runner.report()
        print(report.text())
        if let json = options.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(report).write(to: URL(fileURLWithPath: json))
        }
        if let svg = options.svg { try report.svg().write(toFile: svg, atomically: true, encoding: .utf8) }
        if !report.answersAgree { fail("the systems computed different answers (see above)") }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("realm-vs-sqlite: \(message)\n".utf8))
        exit(1)
    }

    /// The child side of W9: open the file, count, print the count and the seconds it took.
    static func childW9(system: String, path: String) throws {
        let start = DispatchTime.now().uptimeNanoseconds
        let count =
            switch system {
            case "realm": try RealmSystem.openAndCount(path)
            // The engine alone (`--w9 engine FILE`, by hand): no model class to discover.
            case "engine": try RealmSystem.engineOpenAndCount(path)
            default: try SQLiteSystem.openAndCount(path)
            }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        print("\(count) \(seconds)")
    }

    /// The child side of W1's memory: W1 alone in a fresh process (a new file at `path`, removed
    /// after), printing the process's peak resident memory in bytes (its whole high-water mark,
    /// the runtime's own memory included) — what nothing run before it in the process inflates.
    static func childW1(system: String, n: Int, path: String) throws {
        if system == "realm" {
            RealmSystem.remove(path)
            try RealmSystem(path: path).w1Insert(n)
            RealmSystem.remove(path)
        } else {
            SQLiteSystem.remove(path)
            try SQLiteSystem(path: path).w1Insert(n)
            SQLiteSystem.remove(path)
        }
        print(Measure.peakResident())
        // REALM_BENCH_SMAPS=1 (by hand): where the resident memory is, per mapping, on stderr.
        if ProcessInfo.processInfo.environment["REALM_BENCH_SMAPS"] != nil {
            for (kb, mapping) in Measure.residentByMapping() {
                FileHandle.standardError.write(Data("\(kb) kB \(mapping)\n".utf8))
            }
        }
    }
}

struct Options {
    var n = 1_000_000
    var repetitions = 5
    var json: String?
    var svg: String?
    var dir = NSTemporaryDirectory()
    /// The systems to run (both by default; one for profiling).
    var systems = [Runner.this, Runner.full]
    /// The workloads to run besides W1 (all when nil; for profiling).
    var only: Set<String>?
    /// Run DuckDB (the `duckdb` Python package, one thread) on the read workloads W2–W5 and W10 in
    /// each repetition, when `python3` can import it (`--no-duckdb`: never).
    var duckdb = true
}

/// One workload of the report.
struct Workload: Codable {
    var id: String
    var title: String
    /// "s", "ms", "commits/s" or "M objects/s".
    var unit: String
    var higherIsBetter: Bool
    var target: String
    /// Samples by system name.
    var samples: [String: Samples] = [:]
    /// Answers by system name (checked equal across systems).
    var answers: [String: String] = [:]
}

/// Runs every repetition and keeps the samples.
final class Runner {
    let options: Options
    var workloads: [Workload]
    var sizes: [String: [String: [Int]]] = [:]  // system → what → bytes per repetition
    /// W1's peak resident memory in a process of its own, by system, per repetition.
    var aloneW1Peaks: [String: [Int]] = [:]
    var sqliteVersion = ""
    static let this = "this library"
    static let full = "SQLite WAL FULL"
    static let normal = "SQLite WAL NORMAL"
    static let duckdb = "DuckDB (1 thread)"
    var duckdbVersion = ""

    init(_ options: Options) {
        self.options = options
        workloads = [
            Workload(id: "W1", title: "insert N objects, one durable write", unit: "s", higherIsBetter: false, target: "≤ 0.40 s"),
            Workload(id: "W2", title: "count age > 50", unit: "ms", higherIsBetter: false, target: "≤ 0.5 ms"),
            Workload(
                id: "W3", title: "count age BETWEEN {20, 30} AND name BEGINSWITH 'name-1'", unit: "ms", higherIsBetter: false,
                target: "≤ 3 ms"),
            Workload(id: "W4", title: "sum(score), avg(age), min(age), max(score)", unit: "ms", higherIsBetter: false, target: "≤ 3 ms"),
            Workload(id: "W5", title: "sorted by score descending, first 100 ids", unit: "ms", higherIsBetter: false, target: "≤ 10 ms"),
            Workload(id: "W6", title: "100,000 primary-key lookups reading name", unit: "ms", higherIsBetter: false, target: "≤ 40 ms"),
            Workload(
                id: "W7", title: "10,000 durable one-insert transactions", unit: "commits/s", higherIsBetter: true, target: "≥ SQLite FULL"),
            Workload(
                id: "W7c", title: "4 threads × 2,500 durable one-insert transactions", unit: "commits/s", higherIsBetter: true,
                target: "≥ 3× SQLite FULL"),
            Workload(
                id: "W8", title: "one transaction: age += 1 on every 10th object", unit: "ms", higherIsBetter: false, target: "≤ 40 ms"),
            Workload(id: "W9", title: "fresh process: open the file and count", unit: "ms", higherIsBetter: false, target: "≤ 0.5 ms"),
            Workload(
                id: "W10", title: "iterate all objects reading name and age", unit: "M objects/s", higherIsBetter: true, target: "≥ 40"),
        ]
    }

    func recordFirst(_ id: String, _ system: String, _ value: Double) {
        guard let i = workloads.firstIndex(where: { $0.id == id }) else { return }
        workloads[i].samples[system, default: Samples()].firstRuns.append(value)
    }

    func record(_ id: String, _ system: String, _ value: Double, peak: Int, answer: String? = nil) {
        guard let i = workloads.firstIndex(where: { $0.id == id }) else { return }
        workloads[i].samples[system, default: Samples()].values.append(value)
        workloads[i].samples[system, default: Samples()].peakBytes = max(workloads[i].samples[system]?.peakBytes ?? 0, peak)
        if let answer {
            if let old = workloads[i].answers[system], old != answer {
                workloads[i].answers[system] = "\(old) ≠ \(answer)"
            } else {
                workloads[i].answers[system] = answer
            }
        }
    }

    func size(_ system: String, _ what: String, _ bytes: Int) { sizes[system, default: [:]][what, default: []].append(bytes) }

    func run() throws {
        let n = options.n
        let keys = Data6.lookupKeys(100_000, n: n)
        for rep in 0..<options.repetitions {
            let order = rep % 2 == 0 ? [Self.this, Self.full] : [Self.full, Self.this]
            for system in order where options.systems.contains(system) {
                let path =
                    options.dir
                    + "/realm-vs-sqlite-\(ProcessInfo.processInfo.processIdentifier)-\(system == Self.this ? "realm" : "sqlite")"
                if system == Self.this { RealmSystem.remove(path) } else { SQLiteSystem.remove(path) }
                FileHandle.standardError.write(Data("repetition \(rep + 1)/\(options.repetitions): \(system)\n".utf8))
                do {
                    let s: BenchSystem = system == Self.this ? try RealmSystem(path: path) : try SQLiteSystem(path: path)
                    try runWorkloads(s, system, n: n, keys: keys, path: path)
                }
                if options.only?.contains("W9") ?? true { try runW9(system, path) }
                try runW1Alone(system)
                if system == order.last && options.duckdb { try runDuckDB() }
                // REALM_BENCH_KEEP=1 keeps the files (to profile W9 by hand).
                if ProcessInfo.processInfo.environment["REALM_BENCH_KEEP"] == nil {
                    if system == Self.this { RealmSystem.remove(path) } else { SQLiteSystem.remove(path) }
                }
            }
        }
        if let q = try? DatabaseQueue() {
            sqliteVersion = (try? q.read { db in try String.fetchOne(db, sql: "SELECT sqlite_version()") }) ?? ""
        }
    }

    func runWorkloads(_ s: BenchSystem, _ system: String, n: Int, keys: [Int], path: String) throws {
        func wanted(_ id: String) -> Bool { options.only?.contains(id) ?? true }
        var (_, t, peak) = try Measure.run { try s.w1Insert(n) }
        record("W1", system, t, peak: peak)
        size(system, "after W1", try s.fileSize())
        // Read workloads run three times on the same open database: the third run (steady state)
        // is the sample; the first (right after W1, nothing cached but what the insert left) is
        // kept beside it as the cold run.
        func read<T>(_ id: String, _ body: () throws -> T, _ value: (T, Double) -> Double, _ answer: (T) -> String) throws {
            guard wanted(id) else { return }
            var first = 0.0
            for run in 0..<3 {
                let (r, seconds, peak) = try Measure.run(body)
                if run == 0 { first = value(r, seconds) }
                if run == 2 {
                    record(id, system, value(r, seconds), peak: peak, answer: answer(r))
                    recordFirst(id, system, first)
                }
            }
        }
        try read("W2", { try s.w2Count() }, { $1 * 1000 }, { "\($0)" })
        try read("W3", { try s.w3Count() }, { $1 * 1000 }, { "\($0)" })
        try read("W4", { try s.w4Aggregates() }, { $1 * 1000 }, { "\($0)" })
        try read("W5", { try s.w5Top100() }, { $1 * 1000 }, { "\($0)" })
        try read("W6", { try s.w6Lookups(keys) }, { $1 * 1000 }, { "\($0) bytes" })
        try read("W10", { try s.w10Iterate() }, { Double($0.0) / $1 / 1e6 }, { "\($0.0) objects, ages \($0.1)" })
        let commits = 10_000
        if wanted("W7") {
            (_, t, peak) = try Measure.run { try s.w7Commits(start: n, count: commits) }
            record("W7", system, Double(commits) / t, peak: peak)
        }
        if wanted("W7c") {
            // After W7's objects; removed again so W8 and W9 see the same table.
            let start = n + 2 * commits
            (_, t, peak) = try Measure.run { try s.w7cCommits(start: start, threads: 4, perThread: commits / 4) }
            record("W7c", system, Double(commits) / t, peak: peak)
            try s.removeObjects(from: start)
        }
        guard wanted("W8") else { return }
        if system == Self.full && wanted("W7") {
            let normal = try SQLiteSystem(path: path, synchronous: "NORMAL")
            (_, t, peak) = try Measure.run { try normal.w7Commits(start: n + commits, count: commits) }
            record("W7", Self.normal, Double(commits) / t, peak: peak)
            // Both systems hold N + 10,000 objects for W8 and W9.
            try normal.pool.write { db in try db.execute(sql: "DELETE FROM person WHERE id >= ?", arguments: [n + commits]) }
        }
        let before = try s.fileSize()
        (_, t, peak) = try Measure.run { try s.w8Update(n) }
        record("W8", system, t * 1000, peak: peak)
        size(system, "after W8", try s.fileSize())
        size(system, "W8 growth", try s.fileSize() - before)
        size(system, "compacted", try s.compactedSize())
    }

    /// DuckDB's read workloads, timed inside Python around each query and its fetch
    /// (`Scripts/duckdb_workloads.py`): recorded as a third system when `python3` imports `duckdb`.
    func runDuckDB() throws {
        let read = ["W2", "W3", "W4", "W5", "W10"].filter { options.only?.contains($0) ?? true }
        guard !read.isEmpty else { return }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Scripts/duckdb_workloads.py").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", script, "\(options.n)", options.dir]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        FileHandle.standardError.write(Data("  \(Self.duckdb)\n".utf8))
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        struct Run: Decodable {
            var first: Double
            var third: Double
            var answer: String
        }
        struct Output: Decodable {
            var version: String
            var workloads: [String: Run]
        }
        guard p.terminationStatus == 0, let o = try? JSONDecoder().decode(Output.self, from: data) else {
            FileHandle.standardError.write(Data("  DuckDB skipped: python3 with the duckdb package is needed (pip install duckdb)\n".utf8))
            return
        }
        duckdbVersion = o.version
        for id in read {
            guard let r = o.workloads[id] else { continue }
            let value = { (seconds: Double) in id == "W10" ? Double(self.options.n) / seconds / 1e6 : seconds * 1000 }
            record(id, Self.duckdb, value(r.third), peak: 0, answer: r.answer)
            recordFirst(id, Self.duckdb, value(r.first))
        }
    }

    /// Runs this program again with `arguments` and returns what it printed.
    func child(_ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        if !FileManager.default.fileExists(atPath: p.executableURL!.path) {
            p.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        }
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// W1 again in a process of its own, for its peak resident memory: in this process each
    /// system's peak would start from what the workloads before it left resident.
    func runW1Alone(_ system: String) throws {
        let path =
            options.dir + "/realm-vs-sqlite-w1-\(ProcessInfo.processInfo.processIdentifier)-\(system == Self.this ? "realm" : "sqlite")"
        // Skipped, not fatal, when the child cannot run (under valgrind, for one).
        guard let out = try? child(["--w1-alone", system == Self.this ? "realm" : "sqlite", "\(options.n)", path]),
            let bytes = Int(out.trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            FileHandle.standardError.write(Data("  W1 alone in a fresh process: skipped (the child did not run)\n".utf8))
            return
        }
        aloneW1Peaks[system, default: []].append(bytes)
    }

    func runW9(_ system: String, _ path: String) throws {
        let text = try child(["--w9", system == Self.this ? "realm" : "sqlite", path])
        let parts = text.split(separator: " ")
        guard parts.count == 2, let seconds = Double(parts[1].trimmingCharacters(in: .whitespacesAndNewlines)) else {
            RealmVsSQLite.fail("W9 child failed: \(text)")
        }
        record("W9", system, seconds * 1000, peak: 0, answer: String(parts[0]))
    }

    func report() -> Report {
        Report(
            n: options.n, repetitions: options.repetitions, machine: Report.machine(sqlite: sqliteVersion, duckdb: duckdbVersion),
            workloads: workloads,
            sizes: sizes.mapValues { $0.mapValues { Samples(values: $0.map(Double.init)) } },
            aloneW1Peak: aloneW1Peaks.mapValues { Samples(values: $0.map(Double.init)) })
    }
}

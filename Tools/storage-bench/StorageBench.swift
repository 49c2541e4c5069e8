import Foundation
import RealmStorage

/// Measures the storage engine on the 1M-object `Person` table of Tools/Benchmarks/results/NOTES.md, "Workloads" (engine level; the
/// SQLite comparison lives in the benchmark package). Usage: `storage-bench [N] [--dir DIR]`.
@main
struct StorageBench {
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let t = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - t) / 1e9
    }

    /// The `Person` table of Tools/Benchmarks/results/NOTES.md, "Workloads".
    static func createPerson(_ tx: WriteTransaction) throws {
        try tx.createTable("Person", primaryKey: ColumnSchema("id", .int))
        try tx.addColumn("Person", ColumnSchema("name", .string))
        try tx.addColumn("Person", ColumnSchema("age", .int))
        try tx.addColumn("Person", ColumnSchema("score", .double))
        try tx.addColumn("Person", ColumnSchema("active", .bool))
    }

    /// Person `i` of Tools/Benchmarks/results/NOTES.md, "Workloads", in catalog order.
    static func person(_ i: Int) -> [StorageValue] {
        [.int(Int64(i)), .string("name-\(i % 10000)"), .int(Int64((i * 7) % 100)), .double(Double(i % 1000) / 10), .bool(i % 3 == 0)]
    }

    static func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

    /// The disk's floor for durable commits in `dir`, per second: `count` writes of `bytes` bytes,
    /// each after the last over space already written (as the engine grows its file by writing
    /// zeros ahead of its commits), each followed by one `fdatasync` — what a commit cannot do
    /// with less. The disk's speed varies from run to run here, so commits are judged against it.
    static func syncFloor(dir: String, bytes: Int, count: Int = 5000) throws -> Double {
        let path = dir + "/storage-bench-floor"
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let h = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? h.close() }
        try h.write(contentsOf: Data(count: bytes * count + (1 << 20)))
        try h.synchronize()
        let block = Data(repeating: 0x5A, count: bytes)
        let t = try time {
            for i in 0..<count {
                try h.seek(toOffset: UInt64(i * bytes))
                try h.write(contentsOf: block)
                guard fdatasync(h.fileDescriptor) == 0 else { throw CocoaError(.fileWriteUnknown) }
            }
        }
        return Double(count) / t
    }

    static func fileSize(_ p: String) -> Int { (try? FileManager.default.attributesOfItem(atPath: p)[.size] as? Int) ?? 0 }

    /// User and system CPU time of this process so far.
    static func cpuSeconds() -> (user: Double, system: Double) {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return (
            Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6, Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
        )
    }

    static func peakRSSMiB() -> Double {
        guard let s = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = s.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return 0 }
        return Double(line.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0) / 1024
    }

    static func main() throws {
        let args = CommandLine.arguments
        let n = args.dropFirst().first.flatMap { Int($0) } ?? 1_000_000
        let dir = args.firstIndex(of: "--dir").map { args[$0 + 1] } ?? NSTemporaryDirectory()
        let path = dir + "/storage-bench.realm"
        func reset(_ p: String) { for f in [p, p + ".lock"] { try? FileManager.default.removeItem(atPath: f) } }
        reset(path)
        print("storage-bench: N = \(n), file \(path)")

        // 1. Insert N objects in one durable transaction, with the primary-key index.
        // Compaction off: the commit loops measure what commits append.
        var options = Store.Options(create: true)
        options.compaction = .off
        let store = try Store.open(at: path, options: options)
        var insert = 0.0
        var commitTime = 0.0
        insert = try time {
            let tx = try store.beginWrite()
            try createPerson(tx)
            for i in 0..<n {
                try tx.insert("Person", row: person(i))
            }
            commitTime = try time { try tx.commit() }
        }
        print(
            String(
                format:
                    "insert %d objects, one durable commit: %.3f s (commit %.3f s); committed %.1f MB, file %.1f MB with growth room (target ≤ 0.3 s, ≤ 15 MB)",
                n, insert, commitTime, Double(try store.snapshot().fileLength) / 1e6, Double(fileSize(path)) / 1e6))

        // Where the bytes go, per column and encoding.
        let report = try Inspector().inspect(path: path, segments: true)
        var byColumn: [String: (bytes: UInt64, encodings: Set<String>)] = [:]
        for seg in report.segments {
            byColumn[seg.column, default: (0, [])].bytes += seg.storedBytes
            byColumn[seg.column]!.encodings.insert(seg.encodings.joined(separator: "+"))
        }
        for (name, v) in byColumn.sorted(by: { $0.value.bytes > $1.value.bytes }) {
            print(
                String(
                    format: "  %-8@ %6.2f MB  %@", name as NSString, Double(v.bytes) / 1e6,
                    v.encodings.sorted().joined(separator: ", ") as NSString))
        }

        // 2. count(age > 50) by scanning.
        let snap = try store.snapshot()
        var counts: [Double] = []
        var c = 0
        for _ in 0..<50 { counts.append(try time { c = try snap.count("Person", whereInt: "age", .greater(50)) }) }
        print(String(format: "count age > 50 = %d: median %.3f ms (target ≤ 0.5 ms)", c, median(counts) * 1000))

        // 3. 100,000 random primary-key lookups reading name. The ids come from a linear
        // congruential generator, as in realm-bench's W6 (the system generator makes a system call
        // for each number, which cost more than a lookup).
        var rng = UInt64(42)
        let lookups = try time {
            for _ in 0..<100_000 {
                rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let id = Int64(rng >> 33) % Int64(n)
                let k = try snap.objectKey("Person", primaryKey: .int(id))!
                _ = try snap.value("Person", k, "name")
            }
        }
        print(String(format: "100,000 primary-key lookups reading name: %.1f ms", lookups * 1000))

        // 4. Fresh open and count.
        let reopen = try time {
            let s2 = try Store.open(at: path, options: .init(readOnly: true))
            _ = try s2.snapshot().objectCount("Person")
        }
        print(String(format: "open + count: %.3f ms", reopen * 1000))

        // 5. 10,000 one-object durable commits: into the 1M-object table (the workload), then into
        // an empty file (what a commit costs when the table's row-group list and index are small).
        func commitLoop(_ target: Store, from first: Int, _ label: String) throws {
            // STORAGE_BENCH_COMMIT_COUNT changes the number (profiles compare two counts).
            let commits = ProcessInfo.processInfo.environment["STORAGE_BENCH_COMMIT_COUNT"].flatMap { Int($0) } ?? 10_000
            let lengthBefore = try target.snapshot().fileLength
            let cpuBefore = cpuSeconds()
            var each: [Double] = []
            each.reserveCapacity(commits)
            let t = try time {
                for i in first..<(first + commits) {
                    let started = DispatchTime.now().uptimeNanoseconds
                    let tx = try target.beginWrite()
                    try tx.insert("Person", row: person(i))
                    try tx.commit()
                    each.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e3)
                }
            }
            let sorted = each.sorted()
            let lengthAfter = try target.snapshot().fileLength
            print(
                String(
                    format: "%d one-object durable commits %@: %.0f commits/s (target ≥ 8,500); file %.1f MB", commits, label as NSString,
                    Double(commits) / t, Double(lengthAfter) / 1e6))
            let cpuAfter = cpuSeconds()
            let cpu = (user: cpuAfter.user - cpuBefore.user, system: cpuAfter.system - cpuBefore.system)
            print(
                String(
                    format:
                        "  per commit: %.1f µs in all, %.1f µs of it on the CPU (user %.1f + system %.1f), %.1f µs waiting for the disk",
                    t / Double(commits) * 1e6, (cpu.user + cpu.system) / Double(commits) * 1e6, cpu.user / Double(commits) * 1e6,
                    cpu.system / Double(commits) * 1e6, (t - cpu.user - cpu.system) / Double(commits) * 1e6))
            // The slowest 1 % holds the ~14 commits that grow the file (they sync its new zeros
            // too, ~1.2-1.6 ms each) and the disk's own slow syncs, which its floor loop has too.
            print(
                String(
                    format: "  commit latency: median %.1f µs, 90th percentile %.1f µs, 99th %.1f µs, the slowest 1%% %.1f ms in all",
                    sorted[commits / 2], sorted[commits * 9 / 10], sorted[commits * 99 / 100],
                    sorted[(commits * 99 / 100)...].reduce(0, +) / 1000))
            let bytes = (lengthAfter - lengthBefore) / commits
            let floor = try syncFloor(dir: dir, bytes: bytes)
            print(
                String(
                    format:
                        "  the disk's floor right after: a bare %d-byte write + fdatasync, 5,000 times: %.0f/s (commits reached %.0f%% of it)",
                    bytes, floor, Double(commits) / t / floor * 100))
        }
        // 6. What one-object commits append in the middle of a large table (issue 27).
        // STORAGE_BENCH_PATCH_COMMITS changes the number (the first changes of each segment and
        // index chunk write more: longer runs show the steady state).
        let patchCommits = ProcessInfo.processInfo.environment["STORAGE_BENCH_PATCH_COMMITS"].flatMap { Int($0) } ?? 2_000
        /// Makes `patchCommits` commits of `body` (given the commit's number and a pseudo-random
        /// number, the same sequence each time) and prints what they appended per commit.
        func appendedPerCommit(_ label: String, _ body: (WriteTransaction, Int, Int64) throws -> Void) throws {
            let lengthBefore = try store.snapshot().fileLength
            var rng = UInt64(7)
            for c in 0..<patchCommits {
                rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let tx = try store.beginWrite()
                try body(tx, c, Int64(rng >> 33))
                try tx.commit()
            }
            let appended = try store.snapshot().fileLength - lengthBefore
            print(
                String(
                    format: "%d one-object commits %@: %.0f bytes appended per commit", patchCommits, label as NSString,
                    Double(appended) / Double(patchCommits)))
        }
        if ProcessInfo.processInfo.environment["STORAGE_BENCH_COMMITS"] != "empty" {
            // The 1M-object table: updates of one column at random keys, then deletes at random keys.
            func person(_ tx: WriteTransaction, _ random: Int64) throws -> ObjectKey? {
                try tx.objectKey("Person", primaryKey: .int(random % Int64(n)))
            }
            try appendedPerCommit(", set age at a random key") { tx, _, r in
                if let k = try person(tx, r) { try tx.set("Person", k, "age", .int(k.rawValue % 77)) }
            }
            try appendedPerCommit(", set name at a random key") { tx, _, r in
                if let k = try person(tx, r) { try tx.set("Person", k, "name", .string("renamed-\(k.rawValue)")) }
            }
            try appendedPerCommit(", set score at a random key") { tx, _, r in
                if let k = try person(tx, r) { try tx.set("Person", k, "score", .double(Double(k.rawValue) / 3)) }
            }
            try appendedPerCommit(", delete at a random key") { tx, _, r in
                if let k = try person(tx, r) { try tx.delete("Person", k) }
            }
            // Scans with those patches pending (Spec/FORMAT.md §4.8): the first reads patched
            // segments and applies them, the next ones read the cached result.
            let patched = try store.snapshot()
            var scans: [Double] = []
            for _ in 0..<50 { scans.append(try time { c = try patched.count("Person", whereInt: "age", .greater(50)) }) }
            print(
                String(
                    format: "count age > 50 with the commits' patches pending: first %.3f ms, median %.3f ms (before them: median %.3f ms)",
                    scans[0] * 1000, median(scans) * 1000, median(counts) * 1000))

            // A table with a string primary key whose index grows in random key order, and a
            // second string column: N objects, then one-object inserts, updates and deletes.
            func tagName(_ i: Int) -> String { "tag-\(UInt64(truncatingIfNeeded: i) &* 0x9E37_79B9_7F4A_7C15)" }
            let tx = try store.beginWrite()
            try tx.createTable("Tag", primaryKey: ColumnSchema("name", .string))
            try tx.addColumn("Tag", ColumnSchema("note", .string))
            try tx.addColumn("Tag", ColumnSchema("uses", .int))
            for i in 0..<n { _ = try tx.insert("Tag", row: [.string(tagName(i)), .string("note \(i % 977)"), .int(Int64(i % 13))]) }
            try tx.commit()
            // Existing objects at random, distinct for the deletes (a multiplicative walk).
            func tag(_ tx: WriteTransaction, _ c: Int, _ salt: UInt64) throws -> ObjectKey {
                try tx.objectKey("Tag", primaryKey: .string(tagName(Int((UInt64(c) &* 2_654_435_761 &+ salt) % UInt64(n)))))!
            }
            let table = "to a \(n)-object table with a string primary key, "
            try appendedPerCommit(table + "insert with a random string key") { tx, c, _ in
                _ = try tx.insert("Tag", row: [.string(tagName(n + c)), .string("new"), .int(1)])
            }
            try appendedPerCommit(table + "set a string at a random key") { tx, c, _ in
                try tx.set("Tag", try tag(tx, c, 40_503), "note", .string("changed \(c)"))
            }
            try appendedPerCommit(table + "delete at a random key") { tx, c, _ in try tx.delete("Tag", try tag(tx, c, 81_006)) }
        }
        // STORAGE_BENCH_COMMITS=large (or empty) runs only that loop (for profiling one of them);
        // none runs neither.
        let which = ProcessInfo.processInfo.environment["STORAGE_BENCH_COMMITS"]
        if which != "empty" && which != "none" { try commitLoop(store, from: n, "into the \(n)-object table") }
        let path2 = dir + "/storage-bench-commits.realm"
        if which != "large" && which != "none" {
            reset(path2)
            let s3 = try Store.open(at: path2, options: options)
            do {
                let tx = try s3.beginWrite()
                try createPerson(tx)
                try tx.commit()
            }
            try commitLoop(s3, from: 0, "into an empty table")
        }
        print(String(format: "peak RSS %.0f MiB", peakRSSMiB()))
        // STORAGE_BENCH_KEEP=1 leaves the files for realm-dump.
        if ProcessInfo.processInfo.environment["STORAGE_BENCH_KEEP"] == nil {
            reset(path)
            reset(path2)
        }
    }
}

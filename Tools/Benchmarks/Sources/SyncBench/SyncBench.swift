import Foundation
import PostgresNIO
import RealmSwift
import RealmSwiftSync

/// The benchmark's synced class: the rows of the local benchmark (`realm-vs-sqlite`), keyed by
/// `_id` as sync requires.
final class SyncPerson: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var score = 0.0
    @Persisted var active = false
}

/// The sync benchmark (issue 51): a `realm-sync` process, a PostgreSQL cluster and clients on this
/// machine, each workload against a PostgreSQL baseline measured in the same run.
///
///     swift build -c release --product realm-sync
///     Tools/with-test-postgres swift run -c release --package-path Tools/Benchmarks sync-bench \
///         --server .build/release/realm-sync [--n 1000000] [--json FILE] [--stop-after S1|S2]
///
/// - S1 bootstrap: a new client subscribes to every `SyncPerson` (N rows, loaded with SQL) and
///   waits for the set to complete; baseline `COPY (SELECT …) TO STDOUT` of the same rows (psql).
/// - S2 uploads: 10,000 one-object commits on one client, until the server acknowledged the last;
///   baseline the same 10,000 inserts over one PostgresNIO connection, one transaction each.
/// - S3 latency: a commit on client A until client B's notification, 1,000 times; p50 and p99.
/// - S6 latency of another application's write: a row inserted with plain SQL until client B's
///   notification, 500 times; p50 and p99 (Spec/SYNC.md §8.4).
/// - S4 the server's resident memory with 100 idle sessions, and S5 the bytes of one
///   one-property update on the wire.
@main
struct SyncBench {
    static func main() async throws {
        var args = Array(CommandLine.arguments.dropFirst())
        func option(_ name: String) -> String? {
            guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
            defer { args.removeSubrange(i...(i + 1)) }
            return args[i + 1]
        }
        let n = Int(option("--n") ?? "") ?? 1_000_000
        let writes = Int(option("--writes") ?? "") ?? 10_000
        let latencyRounds = Int(option("--latency") ?? "") ?? 1_000
        let idle = Int(option("--idle") ?? "") ?? 100
        // S7: --load-sessions 0 skips it.
        let loadSessions = Int(option("--load-sessions") ?? "") ?? 200
        let loadWrites = Int(option("--load-writes") ?? "") ?? 100
        let json = option("--json")
        // `--stop-after S1` (or S2, S3) ends the run after that workload, to profile it alone.
        let stopAfter = option("--stop-after")
        guard let server = option("--server"), let url = ProcessInfo.processInfo.environment["REALM_SYNC_POSTGRES"] else {
            FileHandle.standardError.write(Data("usage: REALM_SYNC_POSTGRES=URL sync-bench --server PATH [--n N] [--json FILE]\n".utf8))
            exit(2)
        }
        let bench = try await Bench(serverPath: server, postgres: url)
        defer { bench.stop() }
        var results: [(String, String, Double, Double, String)] = []

        // S1: bootstrap.
        try await bench.load(n)
        let copy = try bench.timed {
            try bench.psql("\\copy (SELECT _id, name, age, score, active FROM \"\(bench.appId)\".\"SyncPerson\") TO '/dev/null'")
        }
        let boot = try await bench.timedAsync {
            let client = try await bench.client("boot")
            try await client.subscribeAll()
            let count = try client.count()
            guard count == n else { throw BenchError("the bootstrap brought \(count) objects, not \(n)") }
        }
        results.append(("S1 bootstrap of \(n) objects", "s", boot, copy, "≤ 3× COPY"))
        if stopAfter == "S1" { return Report.print(results, n: n) }

        // S2: uploads.
        let writer = try await bench.client("writer")
        try await writer.subscribeAll()
        let uploads = try await bench.timedAsync {
            for i in 0..<writes { try writer.add(n + i) }
            try await writer.session.wait(for: .upload)
        }
        let inserts = try await bench.timedAsync { try await bench.inserts(writes, from: n + writes) }
        results.append(("S2 \(writes) one-object commits, all in PostgreSQL", "s", uploads, inserts, "≤ 2× PostgresNIO inserts"))
        if stopAfter == "S2" { return Report.print(results, n: n) }

        // S3: latency.
        let reader = try await bench.client("reader")
        try await reader.subscribeAll()
        let latencies = try await bench.latency(writer: writer, reader: reader, rounds: latencyRounds, firstId: n + 2 * writes)
        results.append(("S3 latency p50, commit on A to notification on B", "ms", latencies.p50 * 1000, .nan, ""))
        results.append(("S3 latency p99", "ms", latencies.p99 * 1000, .nan, "≤ 50 ms"))
        // S3 across servers: the writer on the first server, a reader on a second one.
        let second = try bench.secondServer()
        let farReader = try await bench.client("far-reader", port: second.port)
        try await farReader.subscribeAll()
        let far = try await bench.latency(writer: writer, reader: farReader, rounds: latencyRounds, firstId: n + 4 * writes)
        results.append(("S3 across two servers, p50", "ms", far.p50 * 1000, .nan, ""))
        results.append(("S3 across two servers, p99", "ms", far.p99 * 1000, .nan, "≤ 50 ms"))
        await farReader.close()
        second.process.terminate()
        second.process.waitUntilExit()
        // S6: an insert made with plain SQL by another application, to a client's notification.
        let sql = try await bench.sqlLatency(reader: reader, rounds: min(latencyRounds, 500), firstId: n + 3 * writes)
        results.append(("S6 latency p50, SQL insert to notification", "ms", sql.p50 * 1000, .nan, ""))
        results.append(("S6 latency p99", "ms", sql.p99 * 1000, .nan, "≤ 100 ms"))

        // S4: idle sessions.
        let before = bench.serverResidentBytes()
        var idlers: [BenchClient] = []
        for i in 0..<idle {
            let c = try await bench.client("idle\(i)", subscribe: false)
            try await c.connect()
            idlers.append(c)
        }
        try await Task.sleep(for: .seconds(2))
        let after = bench.serverResidentBytes()
        results.append(
            ("S4 server memory, \(idle) idle sessions", "MiB", Double(after) / 1048576, Double(before) / 1048576, "(baseline: none open)"))
        results.append(("S4 per idle session", "KiB", Double(after - before) / Double(idle) / 1024, .nan, ""))

        // S5: bytes of a one-property update.
        let bytes = BenchClient.updateBytes()
        results.append(("S5 one-property update, client to server", "bytes", Double(bytes.upload), .nan, ""))
        results.append(("S5 the same update, server to another client", "bytes", Double(bytes.download), .nan, ""))

        // S7: load through two servers.
        if loadSessions > 0 {
            let r = try await bench.load(sessions: loadSessions, writes: loadWrites, spread: 30, deadline: .seconds(240))
            let total = Double(loadSessions * loadWrites)
            results.append(("S7 \(loadSessions) sessions on 2 servers × \(loadWrites) writes: all delivered in", "s", r.seconds, .nan, ""))
            results.append(("S7 deliveries missing at the end (0: none lost)", "objects", Double(r.lost), .nan, "0"))
            results.append(("S7 rows in PostgreSQL (no duplicate: = writes)", "rows", Double(r.stored), total, "= writes"))
            results.append(("S7 latency p50, commit to another client's file", "ms", r.p50 * 1000, .nan, ""))
            results.append(("S7 latency p99", "ms", r.p99 * 1000, .nan, ""))
            results.append(("S7 server CPU per write (both servers)", "ms", r.serverCPUSeconds / total * 1000, .nan, ""))
            results.append(("S7 server memory (both servers)", "MiB", Double(r.serverResidentBytes) / 1048576, .nan, ""))
            results.append(
                ("S7 loopback bytes per write (clients, servers, PostgreSQL)", "bytes", Double(r.loopbackBytes) / total, .nan, ""))
        }

        Report.print(results, n: n)
        if let json { try Report.json(results, n: n).write(toFile: json, atomically: true, encoding: .utf8) }
        for c in idlers + [writer, reader] { await c.close() }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

import Foundation
import Logging
import PostgresNIO
import RealmSwift
import RealmSwiftSync
import RealmSyncProtocol

/// The server process, the database and the clients of one benchmark run.
final class Bench: Sendable {
    let appId = "bench" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    let postgres: String
    let process: Process
    let port: Int
    let directory: URL
    let serverPath: String

    init(serverPath: String, postgres: String) async throws {
        self.postgres = postgres
        self.serverPath = serverPath
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("a benchmark secret of more than thirty-two bytes".utf8).write(to: directory.appendingPathComponent("secret"))
        (process, port) = try Self.launch(serverPath, postgres: postgres, appId: appId, directory: directory)
    }

    /// Starts a server of the benchmark's application on a free port; its process and port.
    static func launch(_ serverPath: String, postgres: String, appId: String, directory: URL) throws -> (Process, Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: serverPath)
        process.arguments = [
            "serve", "--postgres", postgres, "--listen", "127.0.0.1:0", "--jwt-secret-file",
            directory.appendingPathComponent("secret").path, "--app-id", appId, "--log-level", "error",
            "--max-sessions-per-user", "1000",
        ]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.standardError
        try process.run()
        var line: [UInt8] = []
        while true {
            let b = out.fileHandleForReading.readData(ofLength: 1)
            if b.isEmpty || b.first == 0x0A { break }
            line.append(b.first!)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let p = text.split(separator: ":").last.flatMap({ Int($0) }) else { throw BenchError("realm-sync did not start: \(text)") }
        return (process, p)
    }

    /// Another server on the same database (for the two-server workloads).
    func secondServer() throws -> (process: Process, port: Int) {
        try Self.launch(serverPath, postgres: postgres, appId: appId, directory: directory)
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    func client(_ name: String, subscribe: Bool = true, port: Int? = nil) async throws -> BenchClient {
        try await BenchClient(self, root: directory.appendingPathComponent(name), baseURL: port.map { "http://127.0.0.1:\($0)" })
    }

    /// Seconds that `body` takes.
    func timed(_ body: () throws -> Void) throws -> Double {
        let start = ContinuousClock.now
        try body()
        return (ContinuousClock.now - start) / .seconds(1)
    }

    nonisolated(nonsending) func timedAsync(_ body: () async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        try await body()
        return (ContinuousClock.now - start) / .seconds(1)
    }

    /// Runs `psql -c COMMAND` on the benchmark's database.
    func psql(_ command: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        p.arguments = [postgres, "-q", "-v", "ON_ERROR_STOP=1", "-c", command]
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw BenchError("psql failed: \(command)") }
    }

    /// Creates the class's table through a client's schema, then loads `n` rows with SQL (the
    /// rows the local benchmark loads) with their conflict state, as a restore of a store would:
    /// with `realm_sync.applying` set, so that the capture of SQL writes (Spec/SYNC.md §8.4) does
    /// not turn them into history entries, and S1 measures the bootstrap alone.
    func load(_ n: Int) async throws {
        let c = try await client("schema", subscribe: false)
        try await c.connect()
        await c.close()
        let clocks =
            #"{"name":"1/00000000000000000000000000000000","age":"1/00000000000000000000000000000000","score":"1/00000000000000000000000000000000","active":"1/00000000000000000000000000000000"}"#
        try psql(
            """
            SET realm_sync.applying = on; \
            INSERT INTO "\(appId)"."SyncPerson" (_id, name, age, score, active, _sync_clocks, _sync_created, _sync_created_by) \
            SELECT i, 'name-' || i, i % 100, (i % 1000) * 0.5, i % 2 = 0, '\(clocks)'::jsonb, 1, '\\x00000000000000000000000000000000'::bytea \
            FROM generate_series(0, \(n - 1)) AS i; ANALYZE "\(appId)"."SyncPerson"
            """)
    }

    /// `count` inserts into a table of the same shape over one PostgresNIO connection, one
    /// transaction each (the baseline of S2).
    func inserts(_ count: Int, from first: Int) async throws {
        try psql(
            "CREATE TABLE IF NOT EXISTS \"\(appId)\".baseline (_id bigint PRIMARY KEY, name text, age bigint, score double precision, active boolean)"
        )
        try await withConnection { connection in
            for i in first..<(first + count) {
                try await connection.query(
                    "INSERT INTO \(unescaped: "\"\(appId)\".baseline") VALUES (\(i), \("name-\(i)"), \(i % 100), \(Double(i % 1000) * 0.5), \(i % 2 == 0))",
                    logger: Logger(label: "bench"))
            }
        }
    }

    /// Runs `body` on a connection of its own to the benchmark's database (another application's,
    /// not a server's).
    func withConnection(_ body: (PostgresConnection) async throws -> Void) async throws {
        var config = try PostgresClient.Configuration(url: postgres)
        config.options.maximumConnections = 1
        let client = PostgresClient(configuration: config)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            try await client.withConnection { try await body($0) }
            group.cancelAll()
        }
    }

    /// Commits on `writer` and waits for `reader`'s notification, `rounds` times.
    func latency(writer: BenchClient, reader: BenchClient, rounds: Int, firstId: Int) async throws -> (p50: Double, p99: Double) {
        var samples: [Double] = []
        let seen = reader.watch()
        for r in 0..<rounds {
            let id = firstId + r
            let start = ContinuousClock.now
            try writer.add(id)
            try await seen.wait(for: id)
            samples.append((ContinuousClock.now - start) / .seconds(1))
        }
        return Report.percentiles(samples)
    }

    /// Inserts a row with plain SQL (another application's write, Spec/SYNC.md §8.4) and waits
    /// for `reader`'s notification of it, `rounds` times.
    func sqlLatency(reader: BenchClient, rounds: Int, firstId: Int) async throws -> (p50: Double, p99: Double) {
        var samples: [Double] = []
        let seen = reader.watch()
        try await withConnection { connection in
            for r in 0..<rounds {
                let id = firstId + r
                let start = ContinuousClock.now
                try await connection.query(
                    "INSERT INTO \(unescaped: "\"\(appId)\".\"SyncPerson\"") (_id, name, age, score, active) VALUES (\(id), \("name-\(id)"), \(id % 100), \(Double(id % 1000) * 0.5), \(id % 2 == 0))",
                    logger: Logger(label: "bench"))
                try await seen.wait(for: id)
                samples.append((ContinuousClock.now - start) / .seconds(1))
            }
        }
        return Report.percentiles(samples)
    }

    /// The server process's resident memory.
    func serverResidentBytes() -> Int { Self.residentBytes(process) }

    /// A process's resident memory.
    static func residentBytes(_ process: Process) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return (Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0) * 1024
    }
}

extension PostgresClient.Configuration {
    init(url: String) throws {
        guard let u = URLComponents(string: url), let host = u.host else { throw BenchError("not a PostgreSQL URL: \(url)") }
        self.init(
            host: host, port: u.port ?? 5432, username: u.user ?? "postgres", password: u.password,
            database: String(u.path.dropFirst()), tls: .disable)
    }
}

/// One client of the benchmark: an app with its own directory and user, and its synced file.
final class BenchClient: Sendable {
    let app: App
    let user: User
    let configuration: Realm.Configuration

    init(_ bench: Bench, root: URL, baseURL: String? = nil) async throws {
        app = App(id: bench.appId, configuration: AppConfiguration(baseURL: baseURL ?? bench.baseURL, rootDirectory: root))
        user = try await app.login(credentials: .anonymous)
        var config = user.flexibleSyncConfiguration()
        config.objectTypes = [SyncPerson.self]
        configuration = config
    }

    var session: SyncSession { (try! Realm(configuration: configuration)).syncSession! }

    /// Opens the file (its session connects) and waits until the server answered.
    func connect() async throws { try await session.wait(for: .download) }

    func subscribeAll() async throws {
        let subs = try Realm(configuration: configuration).subscriptions
        try await subs.update { subs.append(QuerySubscription<SyncPerson>(name: "all")) }
    }

    func count() throws -> Int {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        return realm.objects(SyncPerson.self).count
    }

    func add(_ id: Int) throws {
        let realm = try Realm(configuration: configuration)
        try realm.write {
            let p = SyncPerson()
            p._id = id
            p.name = "name-\(id)"
            p.age = id % 100
            p.score = Double(id % 1000) * 0.5
            realm.add(p)
        }
    }

    /// The ids this client's file receives, as its notifications report them.
    func watch() -> Watcher { Watcher(configuration) }

    func close() async { try? await user.logOut() }

    /// The encoded sizes of one one-property update: the UPLOAD a client sends and the DOWNLOAD
    /// another receives, each plus its WebSocket frame header (2 bytes from the server, 6 from a
    /// client, which masks).
    static func updateBytes() -> (upload: Int, download: Int) {
        let set = Instruction("SyncPerson", .int(123_456), .set(path: ["age"], value: .int(42)))
        let upload = SyncMessage.upload([Upload(clientVersion: 1_000_000, clock: UInt64(1) << 50, instructions: [set])]).encoded()
        let entry = Entry(
            serverVersion: 1_000_000, originClientFileId: [UInt8](repeating: 7, count: 16), originClientVersion: 1_000_000,
            clock: UInt64(1) << 50, instructions: [Instruction("SyncPerson", .int(123_456), .create), set])
        let download = SyncMessage.download(fromVersion: 999_999, entries: [entry], latestServerVersion: 1_000_000).encoded()
        return (upload.count + 6, download.count + 2)
    }
}

/// Calls `handle`, on `queue`, with the objects of `type` each change of the file inserts (a Realm
/// confined to `queue` observes them); the token keeps the observation.
func observeInsertions<T: Object>(
    of type: T.Type, configuration: Realm.Configuration, on queue: DispatchQueue, _ handle: @escaping ([T]) -> Void
) -> NotificationToken {
    queue.sync {
        let realm = try! Realm(configuration: configuration, queue: queue)
        return realm.objects(type).observe(on: queue) { change in
            guard case .update(let r, _, let insertions, _) = change else { return }
            handle(insertions.map { r[$0] })
        }
    }
}

/// Follows a client's `SyncPerson` objects on a queue of its own and tells waiters when an id
/// arrives.
final class Watcher: @unchecked Sendable {
    // Guarded by `lock`.
    private var seen = Set<Int>()
    private var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
    private let lock = NSLock()
    private let queue = DispatchQueue(label: "bench.watch")
    private var token: NotificationToken?

    init(_ configuration: Realm.Configuration) {
        token = observeInsertions(of: SyncPerson.self, configuration: configuration, on: queue) { [weak self] inserted in
            guard let self else { return }
            let ids = inserted.map(\._id)
            self.lock.lock()
            var ready: [CheckedContinuation<Void, Never>] = []
            for id in ids {
                self.seen.insert(id)
                if let c = self.waiting.removeValue(forKey: id) { ready.append(c) }
            }
            self.lock.unlock()
            for c in ready { c.resume() }
        }
    }

    func wait(for id: Int) async throws {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            lock.lock()
            if seen.contains(id) {
                lock.unlock()
                c.resume()
            } else {
                waiting[id] = c
                lock.unlock()
            }
        }
    }
}

enum Report {
    /// The median and the 99th percentile of `samples` (nan when there are none).
    static func percentiles(_ samples: [Double]) -> (p50: Double, p99: Double) {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return (.nan, .nan) }
        return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
    }

    static func ratio(_ a: Double, _ b: Double) -> String {
        guard b.isFinite, b > 0 else { return "" }
        return String(format: "%.2f×", a / b)
    }

    static func print(_ rows: [(String, String, Double, Double, String)], n: Int) {
        Swift.print("| workload | unit | sync | baseline | ratio | target |")
        Swift.print("|---|---|---|---|---|---|")
        for (name, unit, value, base, target) in rows {
            Swift.print(
                "| \(name) | \(unit) | \(String(format: "%.3f", value)) | \(base.isFinite ? String(format: "%.3f", base) : "") | \(ratio(value, base)) | \(target) |"
            )
        }
    }

    static func json(_ rows: [(String, String, Double, Double, String)], n: Int) -> String {
        let items = rows.map { row -> String in
            let base = row.3.isFinite ? "\(row.3)" : "null"
            return #"{"workload":"\#(row.0)","unit":"\#(row.1)","value":\#(row.2),"baseline":\#(base),"target":"\#(row.4)"}"#
        }
        return "{\"n\":\(n),\"results\":[\n" + items.joined(separator: ",\n") + "\n]}\n"
    }
}

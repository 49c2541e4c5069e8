import Foundation
import RealmSwift
import RealmSwiftSync

/// The class of the load workload: notes every client writes and every client subscribes to.
final class LoadNote: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var writer = 0
    @Persisted var at = Date()
}

/// What the load workload measured.
struct LoadResult {
    var seconds: Double
    var p50: Double
    var p99: Double
    var serverCPUSeconds: Double
    var serverResidentBytes: Int
    var loopbackBytes: Int
    var lost: Int
    var stored: Int
}

extension Bench {
    /// `sessions` clients, half on each of two servers, each subscribed to every note and
    /// writing `writes` notes (one commit each, paced over about `spread` seconds): waits until
    /// every client has every note, or `deadline` passes (the run stops by itself). Latency is a
    /// note's commit to its arrival in the files of four probe clients.
    func load(sessions: Int, writes: Int, spread: Double, deadline: Duration) async throws -> LoadResult {
        let second = try secondServer()
        defer {
            second.process.terminate()
            second.process.waitUntilExit()
        }
        let ports = [port, second.port]
        var clients: [LoadClient] = []
        for i in 0..<sessions {
            let c = try await LoadClient(self, name: "load\(i)", port: ports[i % 2])
            clients.append(c)
        }
        for c in clients { try await c.subscribe() }
        let probes = clients.prefix(4).map { LatencyProbe($0.configuration) }
        let cpuBefore = [process, second.process].map(Self.cpuSeconds).reduce(0, +)
        let loopBefore = Self.loopbackBytes()
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, c) in clients.enumerated() {
                group.addTask {
                    // Start spread over the first pause, so the writers do not commit in step.
                    let pause = spread / Double(writes)
                    try await Task.sleep(for: .milliseconds(Int(Double(i) / Double(sessions) * pause * 1000)))
                    for k in 0..<writes {
                        try c.write(id: i * writes + k, writer: i)
                        try await Task.sleep(for: .milliseconds(Int(pause * 1000)))
                    }
                }
            }
            try await group.waitForAll()
        }
        let total = sessions * writes
        let end = ContinuousClock.now + deadline
        var lost = total * sessions
        while ContinuousClock.now < end {
            lost = try clients.reduce(0) { $0 + (total - (try $1.count())) }
            if lost == 0 { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        let cpu = [process, second.process].map(Self.cpuSeconds).reduce(0, +) - cpuBefore
        let loop = Self.loopbackBytes() - loopBefore
        let rss = Self.residentBytes(process) + Self.residentBytes(second.process)
        let (p50, p99) = Report.percentiles(probes.flatMap { $0.samples() })
        let stored = try countRows("LoadNote")
        for c in clients { await c.close() }
        return LoadResult(
            seconds: seconds, p50: p50, p99: p99,
            serverCPUSeconds: cpu, serverResidentBytes: rss, loopbackBytes: loop, lost: lost, stored: stored)
    }

    /// A process's CPU time (user and system), from /proc.
    static func cpuSeconds(_ process: Process) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14 and stime 15 (1-based in proc(5)).
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Bytes through the loopback interface so far (received; every byte sent on it is received).
    static func loopbackBytes() -> Int {
        guard let dev = try? String(contentsOfFile: "/proc/net/dev", encoding: .utf8),
            let line = dev.split(separator: "\n").first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("lo:") })
        else { return 0 }
        let fields = line.split(separator: ":")[1].split(separator: " ", omittingEmptySubsequences: true)
        return Int(fields.first ?? "") ?? 0
    }

    /// The rows of a class table, counted with psql.
    func countRows(_ table: String) throws -> Int {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        p.arguments = [postgres, "-Atq", "-c", "SELECT count(*) FROM \"\(appId)\".\"\(table)\""]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
}

/// One client of the load workload.
final class LoadClient: Sendable {
    let user: User
    let configuration: Realm.Configuration

    init(_ bench: Bench, name: String, port: Int) async throws {
        let app = App(
            id: bench.appId,
            configuration: AppConfiguration(
                baseURL: "http://127.0.0.1:\(port)", rootDirectory: bench.directory.appendingPathComponent(name)))
        user = try await app.login(credentials: .anonymous)
        var config = user.flexibleSyncConfiguration()
        config.objectTypes = [LoadNote.self]
        configuration = config
    }

    func subscribe() async throws {
        let subs = try Realm(configuration: configuration).subscriptions
        try await subs.update { subs.append(QuerySubscription<LoadNote>(name: "all")) }
    }

    func write(id: Int, writer: Int) throws {
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(LoadNote(value: ["_id": id, "writer": writer, "at": Date()])) }
    }

    func count() throws -> Int {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        return realm.objects(LoadNote.self).count
    }

    func close() async { try? await user.logOut() }
}

/// The delay from each note's commit to its insertion in one client's file, as its notifications
/// report them.
final class LatencyProbe: @unchecked Sendable {
    private var delays: [Double] = []  // guarded by `lock`
    private let lock = NSLock()
    private let queue = DispatchQueue(label: "bench.probe")
    private var token: NotificationToken?

    init(_ configuration: Realm.Configuration) {
        token = observeInsertions(of: LoadNote.self, configuration: configuration, on: queue) { [weak self] inserted in
            guard let self else { return }
            let now = Date()
            let d = inserted.map { now.timeIntervalSince($0.at) }
            self.lock.lock()
            self.delays += d
            self.lock.unlock()
        }
    }

    func samples() -> [Double] {
        lock.lock()
        defer { lock.unlock() }
        return delays
    }
}

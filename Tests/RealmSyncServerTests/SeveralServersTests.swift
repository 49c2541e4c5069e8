import Foundation
import PostgresNIO
import RealmStorage
import RealmSwift
import RealmSwiftSync
import RealmTestSupport
import Testing

/// The class the client writer processes (SyncClientWriter) write, as the tests' clients see it.
final class CrashDog: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var name = ""
}

/// Several `realm-sync` processes serving one PostgreSQL database (issue 52 §3): a change accepted
/// by one reaches the clients of all, and clients given every server's URL go on through another
/// when theirs is killed.
extension SyncServerTests {
    /// A client of the deployment whose servers are `urls`, the `first`th tried first, with dogs,
    /// owners and the writers' dogs subscribed.
    static func deploymentClient(_ urls: [String], first: Int, appId: String) async throws -> TestClient {
        let ordered = Array(urls[first...] + urls[..<first])
        return try await TestClient(appId: appId, objectTypes: [ClientDog.self, ClientOwner.self, CrashDog.self]) {
            $0.baseURL = ordered[0]
            $0.additionalBaseURLs = Array(ordered.dropFirst())
        } initialSubscriptions: { subs in
            subs.append(QuerySubscription<ClientDog>(name: "dogs"))
            subs.append(QuerySubscription<ClientOwner>(name: "owners"))
            subs.append(QuerySubscription<CrashDog>(name: "writers"))
        }
    }

    /// A deployment replica: dogs as "id name age owner", owners as "id city", the writers' dogs
    /// as "crash id name" lines.
    static func deploymentReplica(_ configuration: Realm.Configuration) throws -> [String] {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        let dogs = realm.objects(ClientDog.self).map { "dog \($0._id.stringValue) \($0.name) \($0.age) \($0.owner?._id ?? "-")" }
        let owners = realm.objects(ClientOwner.self).map { "owner \($0._id) \($0.city)" }
        let crash = realm.objects(CrashDog.self).map { "crash \($0._id) \($0.name)" }
        return (dogs + owners + crash).sorted()
    }

    /// The same lines from the PostgreSQL tables.
    static func deploymentReplica(appId: String) async throws -> [String] {
        let crash = try await TestDatabase.withClient { client in
            var out: [String] = []
            let sql = "SELECT _id, name FROM \"\(appId)\".\"CrashDog\""
            if let rows = try? await client.query(PostgresQuery(unsafeSQL: sql)) {
                for try await (id, name) in rows.decode((Int64, String).self) { out.append("crash \(id) \(name)") }
            }
            return out
        }
        return (try await Self.replica(appId: appId).filter { !$0.hasPrefix("note") } + crash).sorted()
    }

    /// Three servers on one PostgreSQL, six clients of this process (two starting on each
    /// server, all knowing the three) writing dogs and owners at random, and three client
    /// processes writing their own dogs; servers are killed (SIGKILL) and started again, client
    /// processes are killed in the middle of their writes and started again. After quiescence
    /// every client file holds exactly what PostgreSQL holds, every commit a client process
    /// reported is in PostgreSQL, and no upload is recorded twice.
    @Test(arguments: [UInt64(71), 72])
    func threeServersNineClientsAndKillsConverge(seed: UInt64) async throws {
        var rng = SplitMix(seed: seed)
        var servers: [ServerProcess?] = [try await ServerProcess()]
        let appId = servers[0]!.appId
        for _ in 1..<3 { servers.append(try await ServerProcess(appId: appId)) }
        let ports = servers.map { $0!.port }
        let urls = servers.map { $0!.baseURL }
        var clients: [TestClient] = []
        for i in 0..<6 {
            let c = try await Self.deploymentClient(urls, first: i % 3, appId: appId)
            _ = try Realm(configuration: c.configuration)
            clients.append(c)
        }
        for c in clients { try await bounded { try await c.sync() } }

        // Before any fault: a write through the first server reaches the clients of the others.
        try clients[0].write { $0.add(ClientDog(name: "first", age: 1)) }
        for c in clients[1..<3] {
            #expect(try await eventually { try Self.deploymentReplica(c.configuration).contains { $0.contains(" first 1 ") } })
        }

        let writer = try #require(BuiltExecutable.path("SyncClientWriter"), "SyncClientWriter was not built next to the tests")
        let roots = (0..<3).map { _ in FileManager.default.temporaryDirectory.appendingPathComponent("realm-writer-\(UUID().uuidString)") }
        defer { for r in roots { try? FileManager.default.removeItem(at: r) } }
        var runs = [0, 0, 0]
        func startWriter(_ w: Int, count: Int) throws -> ChildProcess {
            runs[w] += 1
            let order = Array(urls[w...] + urls[..<w]).joined(separator: ",")
            return try ChildProcess(writer, [order, appId, roots[w].path, "\(w * 100_000 + runs[w] * 1_000)", "\(count)"])
        }
        var writers = try (0..<3).map { try startWriter($0, count: 400) }
        var reported = Set<Int>()
        func collect(_ child: ChildProcess) {
            for line in child.output where line.hasPrefix("wrote ") { reported.insert(Int(line.dropFirst(6))!) }
        }

        let owners = ["ada", "bob", "cy"]
        var kills = 0
        for step in 0..<90 {
            let c = clients[rng.below(clients.count)]
            switch rng.below(100) {
            case 0..<30:
                try c.write { realm in
                    let dog = ClientDog(name: "n\(step)", age: rng.below(20))
                    if rng.below(2) == 0 { dog.owner = realm.object(ofType: ClientOwner.self, forPrimaryKey: owners[rng.below(3)]) }
                    realm.add(dog)
                }
            case 30..<50:
                try c.write { realm in
                    let dogs = realm.objects(ClientDog.self)
                    guard !dogs.isEmpty else { return }
                    let dog = dogs[rng.below(dogs.count)]
                    if rng.below(2) == 0 { dog.age = rng.below(20) } else { dog.name = "m\(step)" }
                }
            case 50..<58:
                try c.write { realm in
                    let dogs = realm.objects(ClientDog.self)
                    guard !dogs.isEmpty else { return }
                    realm.delete(dogs[rng.below(dogs.count)])
                }
            case 58..<70:
                try c.write { realm in
                    realm.create(ClientOwner.self, value: ["_id": owners[rng.below(3)], "city": "c\(step)"], update: .modified)
                }
            case 70..<80:
                // A server is killed, or one that was killed starts again; one always stays up
                // while the others are down, so that the clients have somewhere to go.
                let s = rng.below(3)
                if let server = servers[s] {
                    if servers.compactMap({ $0 }).count > 1 {
                        server.stop(signal: SIGKILL)
                        servers[s] = nil
                        kills += 1
                    }
                } else {
                    servers[s] = try await ServerProcess(appId: appId, port: ports[s])
                }
            case 80..<88:
                // A client process is killed in the middle of its writes and starts again.
                let w = rng.below(3)
                writers[w].end()
                collect(writers[w])
                writers[w] = try startWriter(w, count: 400)
            default:
                try await Task.sleep(for: .milliseconds(rng.below(40)))
            }
        }
        #expect(kills >= 2 && runs.reduce(0, +) >= 6, "seed \(seed): \(kills) server kills, \(runs) writer runs")

        // The first server down for good, the second up: a client and a client process that try
        // the first one first go on through another.
        servers[0]?.stop(signal: SIGKILL)
        servers[0] = nil
        if servers[1] == nil { servers[1] = try await ServerProcess(appId: appId, port: ports[1]) }
        try clients[0].write { $0.add(ClientDog(name: "failover", age: 2)) }
        #expect(
            try await eventually(60) { try Self.deploymentReplica(clients[1].configuration).contains { $0.contains(" failover 2 ") } },
            "seed \(seed): a write of a client of the killed server did not reach another server's client")
        writers[0].end()
        collect(writers[0])
        writers[0] = try startWriter(0, count: 5)
        #expect(
            try await writers[0].waitFor(90) { $0 == "uploaded" }, "writer 0 with its first server down: \(writers[0].output.suffix(5))")

        for s in 0..<3 where servers[s] == nil { servers[s] = try await ServerProcess(appId: appId, port: ports[s]) }
        defer { for s in servers { s?.stop() } }
        // The writers are killed once more, then each runs to the end of its uploads.
        for w in 0..<3 {
            writers[w].end()
            collect(writers[w])
            let last = try startWriter(w, count: 1)
            #expect(try await last.waitFor(90) { $0 == "uploaded" }, "writer \(w): \(last.output.suffix(5))")
            last.end()
            collect(last)
        }
        try await Self.quiesce(clients, seed: seed, log: servers.map { $0?.log ?? "" }.joined(separator: "\n---\n"))
        let store = try await Self.deploymentReplica(appId: appId)
        for (i, c) in clients.enumerated() {
            let local = try Self.deploymentReplica(c.configuration)
            #expect(local == store, "seed \(seed): client \(i) differs: \(Set(local).symmetricDifference(store).sorted().prefix(6))")
        }
        let stored = Set(store.filter { $0.hasPrefix("crash ") }.compactMap { Int($0.split(separator: " ")[1]) })
        #expect(!reported.isEmpty && reported.isSubset(of: stored), "lost: \(reported.subtracting(stored).sorted().prefix(10))")
        #expect(try await Self.uploadsRecordedTwice(appId: appId) == 0)
        for c in clients { await c.close() }
    }
}

extension SyncServerTests {
    /// Load through two servers, scaled to the test machine (the benchmark's S7 runs 200 sessions
    /// of 100 writes): 20 sessions, half on each server, each writing 10 dogs while subscribed to
    /// everyone's. Every write reaches every session's file, PostgreSQL holds each once, and the
    /// test stops by itself (every wait is bounded).
    @Test func twentySessionsOnTwoServersEachSeeEveryWrite() async throws {
        let first = try await ServerProcess()
        let second = try await ServerProcess(appId: first.appId)
        defer {
            first.stop()
            second.stop()
        }
        let urls = [first.baseURL, second.baseURL]
        var clients: [TestClient] = []
        for i in 0..<20 {
            let c = try await Self.deploymentClient(urls, first: i % 2, appId: first.appId)
            _ = try Realm(configuration: c.configuration)
            clients.append(c)
        }
        for c in clients { try await bounded { try await c.sync() } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, c) in clients.enumerated() {
                group.addTask {
                    for k in 0..<10 {
                        try c.write { $0.add(ClientDog(name: "w\(i)-\(k)", age: k)) }
                        try await Task.sleep(for: .milliseconds(20))
                    }
                }
            }
            try await group.waitForAll()
        }
        for c in clients {
            #expect(try await eventually(90) { try c.dogs().count == 200 }, "\((try? c.dogs().count) ?? -1) of 200")
        }
        let store = try await Self.deploymentReplica(appId: first.appId)
        #expect(store.filter { $0.hasPrefix("dog ") }.count == 200)
        #expect(try await Self.uploadsRecordedTwice(appId: first.appId) == 0)
        for c in clients { await c.close() }
    }
}

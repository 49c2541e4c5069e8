import Foundation
import PostgresNIO
import RealmStorage
import RealmSwift
import RealmSwiftSync
import RealmTestSupport
import Testing

/// Three real clients (the RealmSwiftSync library, each with its own user and file) make random
/// writes — creates, deletes, scalar writes, links, and changes of lists (of strings and of links),
/// sets and maps, on objects they share — online and while
/// suspended, while the server is killed (SIGKILL) and restarted and PostgreSQL is stopped at once
/// and started again. After quiescence every client file holds exactly what the PostgreSQL tables
/// hold. (What the tables hold is checked against the conflict rules by
/// threeClientsAndCrashesConvergeToTheModel.) A failure names its seed.
extension SyncServerTests {
    /// The state of a replica: dogs as "id name age owner" lines, owners as "id city" lines.
    static func replica(_ configuration: Realm.Configuration) throws -> [String] {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        let dogs = realm.objects(ClientDog.self).map { "dog \($0._id.stringValue) \($0.name) \($0.age) \($0.owner?._id ?? "-")" }
        let owners = realm.objects(ClientOwner.self).map { "owner \($0._id) \($0.city)" }
        let notes = realm.objects(ClientNote.self).map { n in
            let scores = n.scores.keys.sorted().map { "\($0)=\(n.scores[$0]!)" }
            let address = n.address.map { "\($0.street)/\($0.city)/\($0.geo.map { "\($0.lat)" } ?? "-")" } ?? "-"
            return "note \(n._id) \(Array(n.tags)) \(Array(n.numbers).sorted()) \(scores) \(n.dogs.map(\._id.stringValue)) \(address)"
        }
        return (dogs + owners + notes).sorted()
    }

    static func replica(appId: String) async throws -> [String] {
        try await TestDatabase.withClient { client in
            var out: [String] = []
            let dogs = "SELECT encode(_id, 'hex'), name, age, owner FROM \"\(appId)\".\"ClientDog\""
            for try await (id, name, age, owner) in try await client.query(PostgresQuery(unsafeSQL: dogs)).decode(
                (String, String, Int64, String?).self)
            {
                out.append("dog \(id) \(name) \(age) \(owner ?? "-")")
            }
            let owners = "SELECT _id, city FROM \"\(appId)\".\"ClientOwner\""
            if let rows = try? await client.query(PostgresQuery(unsafeSQL: owners)) {
                for try await (id, city) in rows.decode((String, String).self) { out.append("owner \(id) \(city)") }
            }
            // A list element that links to a deleted dog stays in the store; clients do not show it.
            let notes = """
                SELECT _id, ARRAY(SELECT jsonb_array_elements_text(tags)), \
                ARRAY(SELECT x::bigint FROM jsonb_array_elements_text(numbers) x ORDER BY 1), \
                ARRAY(SELECT key || '=' || value FROM jsonb_each_text(scores) ORDER BY 1), \
                ARRAY(SELECT x FROM jsonb_array_elements_text(dogs) WITH ORDINALITY AS e(x, n) \
                WHERE EXISTS (SELECT 1 FROM "\(appId)"."ClientDog" d WHERE encode(d._id, 'hex') = x) ORDER BY n), \
                CASE WHEN jsonb_typeof(address) = 'object' THEN (address->>'street') || '/' || (address->>'city') || '/' || \
                coalesce(address->'geo'->>'lat', '-') ELSE '-' END \
                FROM "\(appId)"."ClientNote"
                """
            if let rows = try? await client.query(PostgresQuery(unsafeSQL: notes)) {
                for try await (id, tags, numbers, scores, dogs, address) in rows.decode(
                    (Int64, [String], [Int64], [String], [String], String?).self)
                {
                    out.append("note \(id) \(tags) \(numbers) \(scores) \(dogs) \(address ?? "-")")
                }
            }
            return out.sorted()
        }
    }

    /// Quiescence: every client uploads, then every client downloads what the others uploaded,
    /// twice. A client that does not get there within a minute fails the test with its
    /// session's trace and `log`.
    static func quiesce(_ clients: [TestClient], seed: UInt64, log: @autoclosure () -> String) async throws {
        for round in 0..<2 {
            for (i, c) in clients.enumerated() {
                for direction in [SyncSession.ProgressDirection.upload, .download] {
                    do {
                        try await bounded(60) { try await c.session.wait(for: direction) }
                    } catch {
                        let s = try c.session
                        Issue.record(
                            "seed \(seed): no quiescence: client \(i) waited for \(direction) in round \(round) (\(error)), session \(s.state) \(s.connectionState), trace \(s.trace); the server's log ends with: \(log())"
                        )
                        throw error
                    }
                }
            }
        }
    }

    @Test(arguments: [UInt64(61), 62, 63])
    func realClientsConvergeUnderFaults(seed: UInt64) async throws {
        var rng = SplitMix(seed: seed)
        var server = try await ServerProcess()
        let appId = server.appId
        let port = server.port
        var clients: [TestClient] = []
        for _ in 0..<3 {
            let c = try await TestClient(notes: server)
            _ = try c.dogs()
            clients.append(c)
        }
        for c in clients { try await bounded { try await c.sync() } }
        let owners = ["ada", "bob", "cy"]
        var serverUp = true
        var suspended = Set<Int>()
        for step in 0..<120 {
            let i = rng.below(3)
            let c = clients[i]
            switch rng.below(130) {
            case 0..<30:
                try c.write { realm in
                    let dog = ClientDog(name: "n\(step)", age: rng.below(20))
                    if rng.below(2) == 0 { dog.owner = realm.object(ofType: ClientOwner.self, forPrimaryKey: owners[rng.below(3)]) }
                    realm.add(dog)
                }
            case 30..<55:
                try c.write { realm in
                    let dogs = realm.objects(ClientDog.self)
                    guard !dogs.isEmpty else { return }
                    let dog = dogs[Int(rng.below(dogs.count))]
                    if rng.below(2) == 0 { dog.age = rng.below(20) } else { dog.name = "m\(step)" }
                }
            case 55..<65:
                try c.write { realm in
                    let dogs = realm.objects(ClientDog.self)
                    guard !dogs.isEmpty else { return }
                    realm.delete(dogs[Int(rng.below(dogs.count))])
                }
            case 65..<80:
                // Owners are shared by primary key: concurrent creates and writes meet.
                try c.write { realm in
                    realm.create(
                        ClientOwner.self, value: ["_id": owners[rng.below(3)], "city": "c\(step)"], update: .modified)
                }
            case 80..<85:
                try c.write { realm in
                    let dogs = realm.objects(ClientDog.self)
                    guard !dogs.isEmpty else { return }
                    dogs[Int(rng.below(dogs.count))].owner = realm.object(
                        ofType: ClientOwner.self, forPrimaryKey: owners[rng.below(3)])
                }
            case 100..<130:
                // Notes are shared by primary key: their lists, sets and maps change concurrently.
                try c.write { realm in
                    let note = realm.create(ClientNote.self, value: ["_id": rng.below(3)], update: .modified)
                    switch rng.below(11) {
                    case 8: note.address = ClientAddress(value: ["street": "s\(step)", "city": "c\(step)"])
                    case 9:
                        if let a = note.address {
                            if rng.below(2) == 0 { a.city = "c\(step)" } else { a.street = "s\(step)" }
                        }
                    case 10:
                        if let a = note.address {
                            if let g = a.geo, rng.below(2) == 0 {
                                g.lat = Double(rng.below(90))
                            } else {
                                a.geo = ClientGeo(value: ["lat": 1.0])
                            }
                        }
                    case 0: note.tags.insert("t\(step)", at: rng.below(note.tags.count + 1))
                    case 1: if !note.tags.isEmpty { note.tags.remove(at: rng.below(note.tags.count)) }
                    case 2: if note.tags.count > 1 { note.tags.move(from: rng.below(note.tags.count), to: rng.below(note.tags.count)) }
                    case 3: note.numbers.insert(rng.below(5))
                    case 4: note.numbers.remove(rng.below(5))
                    case 5: note.scores["k\(rng.below(3))"] = Double(rng.below(9))
                    case 6: note.scores.removeObject(for: "k\(rng.below(3))")
                    default:
                        let dogs = realm.objects(ClientDog.self)
                        if !dogs.isEmpty && rng.below(3) != 0 {
                            note.dogs.append(dogs[rng.below(dogs.count)])
                        } else if !note.dogs.isEmpty {
                            note.dogs.remove(at: rng.below(note.dogs.count))
                        }
                    }
                }
            case 85..<90:
                // A client goes offline for a while, or comes back.
                if suspended.contains(i) {
                    try c.session.resume()
                    suspended.remove(i)
                } else {
                    try c.session.suspend()
                    suspended.insert(i)
                }
            case 90..<94:
                if serverUp {
                    server.stop(signal: SIGKILL)
                    serverUp = false
                } else {
                    server = try await ServerProcess(appId: appId, port: port)
                    serverUp = true
                }
            case 94..<96:
                _ = await Self.crashPostgres()
            default:
                try await Task.sleep(for: .milliseconds(rng.below(30)))
            }
        }
        if !serverUp { server = try await ServerProcess(appId: appId, port: port) }
        defer { server.stop() }
        for i in suspended { try clients[i].session.resume() }
        try await Self.quiesce(clients, seed: seed, log: server.log)
        let store = try await Self.replica(appId: appId)
        for (i, c) in clients.enumerated() {
            let local = try Self.replica(c.configuration)
            #expect(local == store, "seed \(seed): client \(i) differs: \(Set(local).symmetricDifference(store).sorted().prefix(6))")
        }
        #expect(store.contains { $0.hasPrefix("dog") } && store.contains { $0.hasPrefix("note") }, "seed \(seed)")
        for c in clients { await c.close() }
    }
}

import Foundation
import PostgresNIO
import RealmStorage
import RealmSwift
import RealmSwiftSync
import RealmTestSupport
import Testing

/// Rows other applications write with plain SQL reach the clients (Spec/SYNC.md §8.4, issue 52
/// §4): captured by triggers, turned into history entries by a server, and ordered against the
/// clients' writes by the conflict rules.
extension SyncServerTests {
    /// Runs `sql` as another application would (a connection of its own, not a server's).
    static func sql(_ sql: String) async throws {
        try await TestDatabase.withClient { client in _ = try await client.query(PostgresQuery(unsafeSQL: sql)) }
    }

    /// Whether `sql` is refused with an error whose text contains `reason`.
    static func refused(_ sql: String, _ reason: String) async -> Bool {
        do {
            try await Self.sql(sql)
            return false
        } catch let error as PSQLError {
            return (error.serverInfo?[.message] ?? "").contains(reason)
        } catch {
            return false
        }
    }

    @Test func rowsWrittenWithSQLReachTheClients() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let app = "\"\(server.appId)\""
        let a = try await TestClient(server)
        let b = try await TestClient(server)
        for c in [a, b] {
            _ = try c.dogs()
            try await bounded { try await c.sync() }
        }
        func owners(_ c: TestClient) throws -> [String] {
            let realm = try Realm(configuration: c.configuration)
            realm.refresh()
            return realm.objects(ClientOwner.self).map { "\($0._id) \($0.city)" }.sorted()
        }
        func dogs(_ c: TestClient) throws -> [String] {
            let realm = try Realm(configuration: c.configuration)
            realm.refresh()
            return realm.objects(ClientDog.self).map { "\($0.name) \($0.age) \($0.owner?._id ?? "-")" }.sorted()
        }

        // An INSERT: the object appears in both files.
        try a.write { $0.add(ClientOwner(value: ["_id": "ada", "city": "Bergen"])) }
        try await bounded { try await a.sync() }
        try await Self.sql("INSERT INTO \(app).\"ClientOwner\" (_id, city) VALUES ('sql1', 'Oslo')")
        try await Self.sql("INSERT INTO \(app).\"ClientDog\" (_id, name, age) VALUES (decode('0123456789abcdef01234567', 'hex'), 'rex', 3)")
        for c in [a, b] {
            #expect(try await eventually { try owners(c) == ["ada Bergen", "sql1 Oslo"] }, "\((try? owners(c)) ?? [])")
            #expect(try await eventually { try dogs(c) == ["rex 3 -"] }, "\((try? dogs(c)) ?? [])")
        }
        let rex = try ObjectId(string: "0123456789abcdef01234567")
        #expect(try Realm(configuration: b.configuration).object(ofType: ClientDog.self, forPrimaryKey: rex) != nil)

        // A client's write made before an UPDATE (by clock) loses to it, though it arrives after.
        try b.session.suspend()
        try b.write { $0.object(ofType: ClientDog.self, forPrimaryKey: rex)!.age = 7 }
        try await Task.sleep(for: .milliseconds(20))
        try await Self.sql("UPDATE \(app).\"ClientDog\" SET age = 42, owner = 'ada' WHERE name = 'rex'")
        try b.session.resume()
        for c in [a, b] {
            try await bounded { try await c.sync() }
            #expect(try await eventually { try dogs(c) == ["rex 42 ada"] }, "\((try? dogs(c)) ?? [])")
        }
        // A client's write after the UPDATE wins, as any later write does.
        try a.write { $0.object(ofType: ClientDog.self, forPrimaryKey: rex)!.age = 43 }
        try await bounded { try await a.sync() }
        #expect(try await eventually { try dogs(b) == ["rex 43 ada"] }, "\((try? dogs(b)) ?? [])")

        // A DELETE: the object leaves both files, and links to it become nil.
        try await Self.sql("DELETE FROM \(app).\"ClientOwner\" WHERE _id = 'ada'")
        for c in [a, b] {
            #expect(try await eventually { try owners(c) == ["sql1 Oslo"] && dogs(c) == ["rex 43 -"] }, "\((try? dogs(c)) ?? [])")
        }

        // What the service could not sync is refused in the writer's transaction, and nothing changes.
        #expect(await Self.refused("UPDATE \(app).\"ClientOwner\" SET _id = 'x' WHERE _id = 'sql1'", "primary key"))
        #expect(await Self.refused("UPDATE \(app).\"ClientOwner\" SET _sync_clocks = '{}' WHERE _id = 'sql1'", "_sync_clocks"))
        #expect(await Self.refused("TRUNCATE \(app).\"ClientOwner\"", "not truncated"))
        try await bounded { try await a.sync() }
        #expect(try owners(a) == ["sql1 Oslo"])
        #expect(try owners(b) == ["sql1 Oslo"] && dogs(b) == ["rex 43 -"])
        await a.close()
        await b.close()
    }

    /// An SQL write reaches the clients whose subscriptions match the row as it is after it.
    @Test func anSQLWriteReachesTheClientsItsRowMatches() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let app = "\"\(server.appId)\""
        let old = try await TestClient(server, objectTypes: [ClientDog.self, ClientOwner.self]) {
            $0.append(QuerySubscription<ClientDog>(name: "old") { $0.age > 10 })
        }
        _ = try old.dogs()
        try await bounded { try await old.sync() }
        try await Self.sql("INSERT INTO \(app).\"ClientDog\" (_id, name, age) VALUES (decode('00000000000000000000000a', 'hex'), 'pup', 1)")
        try await Self.sql(
            "INSERT INTO \(app).\"ClientDog\" (_id, name, age) VALUES (decode('00000000000000000000000b', 'hex'), 'gran', 15)")
        #expect(try await eventually { try old.dogs() == ["gran:15"] }, "\((try? old.dogs()) ?? [])")
        try await Self.sql("UPDATE \(app).\"ClientDog\" SET age = 11 WHERE name = 'pup'")
        try await Self.sql("UPDATE \(app).\"ClientDog\" SET age = 2 WHERE name = 'gran'")
        #expect(try await eventually { try old.dogs() == ["pup:11"] }, "\((try? old.dogs()) ?? [])")
        await old.close()
    }
}

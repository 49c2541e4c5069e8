import Foundation
import PostgresNIO
import RealmStorage
import RealmSwift
import RealmSwiftSync
import RealmTestSupport
import Testing

/// Waits (bounded) for an asynchronous `condition`.
func eventuallyAsync(_ seconds: Double, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}

/// The history kept bounded, and client reset in RealmSwift's four modes (Spec/SYNC.md §8.5,
/// issue 52 §4).
extension SyncServerTests {
    /// The store's newest server version and the newest it compacted away (`_sync_meta`).
    static func meta(appId: String) async throws -> (version: Int, compacted: Int) {
        try await TestDatabase.withClient { client in
            let sql = "SELECT server_version, compacted_through FROM \"\(appId)\"._sync_meta WHERE id = 1"
            for try await (v, c) in try await client.query(PostgresQuery(unsafeSQL: sql)).decode((Int64, Int64).self) {
                return (Int(v), Int(c))
            }
            return (0, 0)
        }
    }

    /// A server keeping its history one second, a writer, and a client `b` with `mode` that goes
    /// offline, writes, and comes back after the history it lacks was compacted away. Returns
    /// the clients and the server once `b` has come back (its reset under way or done).
    static func resetScene(_ mode: ClientResetMode, errors: Locked<[SyncError]>) async throws -> (ServerProcess, TestClient, TestClient) {
        let server = try await ServerProcess(extraArguments: ["--history-retention", "1"])
        let a = try await TestClient(server)
        try a.write { realm in
            realm.add(ClientOwner(value: ["_id": "shared", "city": "Oslo"]))
            realm.add(ClientDog(name: "rex", age: 1))
        }
        try await bounded { try await a.sync() }
        let plain = try await TestClient(server, subscribe: false)
        var config = plain.user.flexibleSyncConfiguration(clientResetMode: mode) { subs in
            subs.append(QuerySubscription<ClientDog>(name: "dogs"))
            subs.append(QuerySubscription<ClientOwner>(name: "owners"))
        }
        config.objectTypes = [ClientDog.self, ClientOwner.self]
        config.syncConfiguration?.errorHandler = { error, _ in if let e = error as? SyncError { errors.withLock { $0.append(e) } } }
        let b = TestClient(plain, configuration: config)
        _ = try b.dogs()
        try await bounded { try await b.sync() }
        #expect(try b.dogs() == ["rex:1"])

        // b goes offline and writes; a writes; the history b lacks is compacted away.
        try b.session.suspend()
        try b.write { realm in
            realm.add(ClientDog(name: "offline", age: 9))
            realm.object(ofType: ClientOwner.self, forPrimaryKey: "shared")!.city = "Bergen"
        }
        for i in 0..<3 { try a.write { $0.add(ClientDog(name: "a\(i)", age: 2)) } }
        try await bounded { try await a.sync() }
        let target = try await Self.meta(appId: server.appId).version - 1
        #expect(try await eventuallyAsync(15) { (try? await Self.meta(appId: server.appId).compacted) ?? 0 >= target })
        try b.session.resume()
        return (server, a, b)
    }

    static func cities(_ c: TestClient) throws -> [String] {
        let realm = try Realm(configuration: c.configuration)
        realm.refresh()
        return realm.objects(ClientOwner.self).map(\.city)
    }

    /// `.discardUnsyncedChanges`: the file becomes the server's state; the callbacks see it
    /// before and after.
    @Test func discardUnsyncedChangesBringsTheFileToTheServersState() async throws {
        let seen = Locked<[String]>([])
        let errors = Locked<[SyncError]>([])
        let mode = ClientResetMode.discardUnsyncedChanges(
            beforeReset: { before in seen.withLock { $0.append("before \(before.objects(ClientDog.self).count)") } },
            afterReset: { before, after in
                seen.withLock {
                    $0.append("after \(before.objects(ClientDog.self).count) \(after.objects(ClientDog.self).count)")
                }
            })
        let (server, a, b) = try await Self.resetScene(mode, errors: errors)
        defer { server.stop() }
        let expected = ["a0:2", "a1:2", "a2:2", "rex:1"]
        #expect(try await eventually(20) { try b.dogs() == expected }, "\((try? b.dogs()) ?? [])")
        #expect(try Self.cities(b) == ["Oslo"])
        #expect(try await eventually { seen.withLock { $0 } == ["before 2", "after 2 4"] }, "\(seen.withLock { $0 })")
        #expect(errors.withLock { $0 }.contains { $0.code == .clientResetError && !$0.isFatal })
        // Nothing of the discarded writes reaches the others; b syncs on.
        try b.write { $0.add(ClientDog(name: "later", age: 3)) }
        try await bounded { try await b.sync() }
        try await bounded { try await a.sync() }
        #expect(try a.dogs() == (expected + ["later:3"]).sorted())
        #expect(try Self.cities(a) == ["Oslo"])
        await a.close()
        await b.close()
    }

    /// `.recoverUnsyncedChanges` (the default) and `.recoverOrDiscardUnsyncedChanges`: the file
    /// becomes the server's state with the unsynced changes on it, and they are uploaded.
    @Test(arguments: [false, true])
    func recoverUnsyncedChangesKeepsAndUploadsThem(orDiscard: Bool) async throws {
        let afterCalled = Locked(false)
        let errors = Locked<[SyncError]>([])
        let after: @Sendable (Realm, Realm) -> Void = { _, after in
            afterCalled.withLock { $0 = after.objects(ClientDog.self).filter("name == 'offline'").count == 1 }
        }
        let mode: ClientResetMode =
            orDiscard ? .recoverOrDiscardUnsyncedChanges(afterReset: after) : .recoverUnsyncedChanges(afterReset: after)
        let (server, a, b) = try await Self.resetScene(mode, errors: errors)
        defer { server.stop() }
        let expected = ["a0:2", "a1:2", "a2:2", "offline:9", "rex:1"]
        #expect(try await eventually(20) { try b.dogs() == expected }, "\((try? b.dogs()) ?? [])")
        try await bounded { try await b.sync() }
        try await bounded { try await a.sync() }
        #expect(try a.dogs() == expected)
        #expect(try Self.cities(a) == ["Bergen"] && Self.cities(b) == ["Bergen"])
        #expect(afterCalled.withLock { $0 })
        #expect(try await Self.uploadsRecordedTwice(appId: server.appId) == 0)
        await a.close()
        await b.close()
    }

    /// `.manual`: the session stops, the file is left as it is, and the error's
    /// `clientResetInfo()` moves it aside; the next open makes a new file with the server's state.
    @Test func manualClientResetStopsAndLetsTheApplicationMoveTheFile() async throws {
        let errors = Locked<[SyncError]>([])
        let handled = Locked<[SyncError]>([])
        let mode = ClientResetMode.manual(errorHandler: { error, _ in
            if let e = error as? SyncError { handled.withLock { $0.append(e) } }
        })
        let (server, a, b) = try await Self.resetScene(mode, errors: errors)
        defer { server.stop() }
        #expect(try await eventually(20) { handled.withLock { !$0.isEmpty } })
        let error = try #require(handled.withLock { $0.first })
        #expect(error.code == .clientResetError && error.isFatal)
        let (backup, token) = try #require(error.clientResetInfo())
        #expect(try b.session.state == .inactive)
        #expect(try b.dogs() == ["offline:9", "rex:1"])  // untouched

        SyncSession.immediatelyHandleError(token, syncManager: b.app.syncManager)
        #expect(FileManager.default.fileExists(atPath: backup))
        #expect(try await eventually(20) { try b.dogs() == ["a0:2", "a1:2", "a2:2", "rex:1"] }, "\((try? b.dogs()) ?? [])")
        await a.close()
        await b.close()
    }

    /// The history shrinks as it is compacted; clients that are online go on, and a new client
    /// bootstraps from the tables.
    @Test func theHistoryIsCompactedAndOnlineClientsGoOn() async throws {
        let server = try await ServerProcess(extraArguments: ["--history-retention", "1"])
        defer { server.stop() }
        let a = try await TestClient(server)
        let b = try await TestClient(server)
        _ = try a.dogs()
        _ = try b.dogs()
        for i in 0..<20 { try a.write { $0.add(ClientDog(name: "d\(i)", age: i)) } }
        try await bounded { try await a.sync() }
        func historyRows() async throws -> Int {
            try await TestDatabase.withClient { client in
                var n = 0
                let sql = "SELECT count(*)::bigint FROM \"\(server.appId)\"._sync_history"
                for try await v in try await client.query(PostgresQuery(unsafeSQL: sql)).decode(Int64.self) { n = Int(v) }
                return n
            }
        }
        #expect(try await eventuallyAsync(15) { (try? await historyRows()) ?? 99 <= 1 })
        try a.write { $0.add(ClientDog(name: "after", age: 50)) }
        try await bounded { try await a.sync() }
        try await bounded { try await b.sync() }
        #expect(try b.dogs().count == 21)
        let c = try await TestClient(server)
        _ = try c.dogs()
        try await bounded { try await c.sync() }
        #expect(try c.dogs() == a.dogs())
        for x in [a, b, c] { await x.close() }
    }
}

import Foundation
import RealmStorage
import RealmSwift
import RealmSwiftSync
import Testing

/// `Results.subscribe` and `unsubscribe` as the seed (RealmSwift's `Results` reference) states
/// them: each naming rule, the `unsubscribe` example, and the timeout.
extension SyncServerTests {
    /// A server with ten dogs aged 1 to 10, and a client of it subscribed to nothing.
    private func tenDogs() async throws -> (ServerProcess, TestClient, TestClient) {
        let server = try await ServerProcess()
        let writer = try await TestClient(server)
        try writer.write { realm in for age in 1...10 { realm.add(ClientDog(name: "d\(age)", age: age)) } }
        try await bounded { try await writer.sync() }
        return (server, writer, try await TestClient(server, subscribe: false))
    }

    @Test func subscribeFollowsEachNamingRuleOfTheSeed() async throws {
        let (server, writer, reader) = try await tenDogs()
        defer { server.stop() }
        try await ClientActor().run { actor in
            let realm = try await Realm(configuration: reader.configuration, actor: actor)
            func names() -> [String] { realm.subscriptions.map { "\($0.name ?? "-"):\($0.queryString)" }.sorted() }
            _ = try await realm.objects(ClientDog.self).where { $0.age >= 8 }.subscribe()
            #expect(names() == ["-:age >= 8"])
            // Unnamed, the query of an unnamed subscription: none is created.
            _ = try await realm.objects(ClientDog.self).where { $0.age >= 8 }.subscribe()
            #expect(names() == ["-:age >= 8"])
            // Named, the query of an unnamed subscription: a named one is created.
            _ = try await realm.objects(ClientDog.self).where { $0.age >= 8 }.subscribe(name: "old")
            #expect(names() == ["-:age >= 8", "old:age >= 8"])
            // Unnamed, the query of a named subscription only: an unnamed one is created.
            _ = try await realm.objects(ClientDog.self).where { $0.age < 3 }.subscribe(name: "young")
            _ = try await realm.objects(ClientDog.self).where { $0.age < 3 }.subscribe()
            #expect(names() == ["-:age < 3", "-:age >= 8", "old:age >= 8", "young:age < 3"])
            // A name already on the identical query: nothing is created.
            _ = try await realm.objects(ClientDog.self).where { $0.age < 3 }.subscribe(name: "young")
            #expect(names() == ["-:age < 3", "-:age >= 8", "old:age >= 8", "young:age < 3"])
            // A name taken by another query: that subscription gets the new query.
            let young = try await realm.objects(ClientDog.self).where { $0.age < 5 }.subscribe(name: "young", waitForSync: .always)
            #expect(names() == ["-:age < 3", "-:age >= 8", "old:age >= 8", "young:age < 5"])
            #expect(young.count == 4)
            #expect(realm.objects(ClientDog.self).count == 7)
            #expect(realm.subscriptions.state == .complete)
        }
        await writer.close()
        await reader.close()
    }

    /// The seed's example: `results2.unsubscribe()` removes "overOne" only; "adults" and the
    /// unnamed subscription remain, and so do the objects they match.
    @Test func unsubscribeRemovesOnlyTheResultsOwnSubscription() async throws {
        let (server, writer, reader) = try await tenDogs()
        defer { server.stop() }
        try await ClientActor().run { actor in
            let realm = try await Realm(configuration: reader.configuration, actor: actor)
            let results1 = try await realm.objects(ClientDog.self).where { $0.age > 1 }.subscribe(name: "adults")
            let results2 = try await realm.objects(ClientDog.self).where { $0.age > 1 }.subscribe(name: "overOne")
            let results3 = try await realm.objects(ClientDog.self).where { $0.age > 1 }.subscribe()
            #expect(realm.subscriptions.count == 3)
            results2.unsubscribe()
            #expect(realm.subscriptions.map { $0.name ?? "-" }.sorted() == ["-", "adults"])
            let session = try #require(realm.syncSession)
            try await bounded { try await session.wait(for: .download) }
            realm.refresh()
            // The results keep their filter and still hold what the other subscriptions match.
            #expect(results2.count == 9)
            #expect(realm.objects(ClientDog.self).count == 9)
            results1.unsubscribe()
            results3.unsubscribe()
            #expect(realm.subscriptions.count == 0)
            try await bounded { try await session.wait(for: .download) }
            realm.refresh()
            #expect(realm.objects(ClientDog.self).count == 0)
        }
        await writer.close()
        await reader.close()
    }

    /// A subscribe that waits longer than its timeout throws RealmSwift's error (POSIX
    /// `ETIMEDOUT`), and the subscription stays: its objects arrive once the session is back.
    @Test func aSubscribeThatTimesOutKeepsItsSubscription() async throws {
        let (server, writer, reader) = try await tenDogs()
        defer { server.stop() }
        try await ClientActor().run { actor in
            let realm = try await Realm(configuration: reader.configuration, actor: actor)
            let session = try #require(realm.syncSession)
            session.suspend()
            do {
                _ = try await realm.objects(ClientDog.self).where { $0.age >= 8 }.subscribe(waitForSync: .always, timeout: 0.5)
                Issue.record("subscribe did not time out")
            } catch let error as NSError {
                #expect(error.domain == NSPOSIXErrorDomain)
                #expect(error.code == Int(ETIMEDOUT))
                #expect(error.localizedDescription == "Waiting for update timed out after 0.5 seconds.")
            }
            #expect(realm.subscriptions.count == 1)
            #expect(realm.objects(ClientDog.self).isEmpty)
            session.resume()
            try await bounded { try await session.wait(for: .download) }
            realm.refresh()
            #expect(realm.objects(ClientDog.self).count == 3)
            // With a timeout long enough, it returns with the objects.
            let young = try await realm.objects(ClientDog.self).where { $0.age < 3 }.subscribe(timeout: 30)
            #expect(young.count == 2)
        }
        await writer.close()
        await reader.close()
    }

    /// `Results.subscribe` with a query through a link's `_id` and a collection's count, in
    /// RealmSwift's typed query syntax.
    @Test func subscribeThroughALinksKeyAndACollectionsCount() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let writer = try await TestClient(notes: server)
        try writer.write { realm in
            let o1 = realm.create(ClientOwner.self, value: ["_id": "o1", "city": "Oslo"])
            let o2 = realm.create(ClientOwner.self, value: ["_id": "o2", "city": "Rome"])
            for (n, owner) in [o1, o2, nil].enumerated() {
                realm.create(ClientDog.self, value: ["name": "d\(n)", "age": n]).owner = owner
            }
            realm.create(ClientNote.self, value: ["_id": 1]).tags.append(objectsIn: ["a", "b"])
            realm.create(ClientNote.self, value: ["_id": 2]).tags.append("a")
        }
        try await bounded { try await writer.sync() }
        let types: [ObjectBase.Type] = [ClientNote.self, ClientDog.self, ClientOwner.self, ClientAddress.self, ClientGeo.self]
        let reader = try await TestClient(server, objectTypes: types)
        try await ClientActor().run { actor in
            let realm = try await Realm(configuration: reader.configuration, actor: actor)
            // The owners in Oslo too, so that the dogs' links to them resolve in the file.
            _ = try await realm.objects(ClientOwner.self).where { $0.city == "Oslo" }.subscribe()
            let many = try await realm.objects(ClientNote.self).where { $0.tags.count >= 2 }.subscribe()
            #expect(many.map(\._id) == [1])
            let owned = try await realm.objects(ClientDog.self).where { $0.owner._id == "o1" }.subscribe(name: "o1")
            #expect(owned.map(\.name) == ["d0"])
            let unowned = try await realm.objects(ClientDog.self).where { $0.owner == nil }.subscribe()
            #expect(unowned.map(\.name) == ["d2"])
            #expect(realm.objects(ClientDog.self).count == 2)
        }
        await writer.close()
        await reader.close()
    }

    /// A set saved while an older one still waited for the server supersedes it (RealmSwift's
    /// `.superseded`); a set that completed before a newer one stays complete.
    @Test func aSetReplacedBeforeItCompletedIsSuperseded() async throws {
        let (server, writer, reader) = try await tenDogs()
        defer { server.stop() }
        try await ClientActor().run { actor in
            let realm = try await Realm(configuration: reader.configuration, actor: actor)
            let session = try #require(realm.syncSession)
            let first = realm.subscriptions
            try await first.update { first.append(QuerySubscription<ClientDog>(name: "old") { $0.age >= 8 }) }
            #expect(first.state == .complete)
            session.suspend()
            let second = realm.subscriptions
            second.update({ second.append(QuerySubscription<ClientDog>(name: "young") { $0.age < 3 }) }, onComplete: nil)
            #expect(second.state == .pending)
            let third = realm.subscriptions
            third.update({ third.remove(named: "old") }, onComplete: nil)
            #expect(second.state == .superseded)
            #expect(third.state == .pending)
            #expect(first.state == .complete)
            session.resume()
            try await bounded { try await session.wait(for: .download) }
            #expect(third.state == .complete)
            #expect(second.state == .superseded)
            #expect(realm.subscriptions.state == .complete)
            realm.refresh()
            #expect(realm.objects(ClientDog.self).count == 2)
        }
        await writer.close()
        await reader.close()
    }

    /// With `rerunOnOpen`, the initial subscriptions run at each open of the file (after every
    /// Realm of the last one was released), as in RealmSwift's own test: an unnamed query that
    /// changed adds a subscription.
    @Test func rerunOnOpenRunsTheInitialSubscriptionsAtEachOpen() async throws {
        let (server, writer, reader) = try await tenDogs()
        defer { server.stop() }
        let opens = Locked(0)
        var config = reader.user.flexibleSyncConfiguration(
            initialSubscriptions: { subs in
                let n = opens.withLock { n in
                    n += 1
                    return n
                }
                subs.append(QuerySubscription<ClientDog> { $0.age > 10 - 3 * n })
            }, rerunOnOpen: true)
        config.objectTypes = [ClientDog.self, ClientOwner.self]
        let c = config
        try await ClientActor().run { actor in
            let realm = try await Realm(configuration: c, actor: actor, downloadBeforeOpen: .always)
            #expect(realm.subscriptions.count == 1)
            #expect(realm.objects(ClientDog.self).count == 3)
        }
        try await ClientActor().run { actor in
            let realm = try await Realm(configuration: c, actor: actor, downloadBeforeOpen: .always)
            #expect(realm.subscriptions.count == 2)
            #expect(realm.objects(ClientDog.self).count == 6)
        }
        #expect(opens.withLock { $0 } == 2)
        await writer.close()
        await reader.close()
    }

    /// Without a timeout, `subscribe` waits however long the server is away: across the
    /// reconnections to a server that stopped and came back.
    @Test(.timeLimit(.minutes(2))) func aSubscribeWithoutTimeoutWaitsAcrossReconnections() async throws {
        let (server, writer, reader) = try await tenDogs()
        let (appId, port) = (server.appId, server.port)
        try await ClientActor().run { actor in
            let realm = try await Realm(configuration: reader.configuration, actor: actor)
            let session = try #require(realm.syncSession)
            try await bounded { try await session.wait(for: .download) }
            server.stop()
            let restarted = Task {
                try await Task.sleep(for: .seconds(1))
                return try await ServerProcess(appId: appId, port: port)
            }
            let old = try await realm.objects(ClientDog.self).where { $0.age >= 8 }.subscribe(waitForSync: .always)
            #expect(old.count == 3)
            #expect(realm.subscriptions.state == .complete)
            try await restarted.value.stop()
        }
        await writer.close()
        await reader.close()
    }
}

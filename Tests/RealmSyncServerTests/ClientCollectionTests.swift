import Foundation
import PostgresNIO
import RealmSwift
import RealmSwiftSync
import RealmSyncProtocol
import Testing

/// A synced class with a property of every collection kind, a mixed value and a decimal.
final class ClientNote: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var tags: List<String>
    @Persisted var maybe: List<Int?>
    @Persisted var numbers: MutableSet<Int>
    @Persisted var scores: Map<String, Double>
    @Persisted var dogs: List<ClientDog>
    @Persisted var friends: MutableSet<ClientDog>
    @Persisted var byName: Map<String, ClientDog?>
    @Persisted var anything: AnyRealmValue
    @Persisted var anyList: List<AnyRealmValue>
    @Persisted var amount: Decimal128
    @Persisted var address: ClientAddress?
}

extension TestClient {
    /// A client of its own (user and directory) whose file holds `objectTypes`, with these
    /// initial subscriptions (none: nil).
    init(
        _ server: ServerProcess, objectTypes: [ObjectBase.Type], initialSubscriptions: (@Sendable (SyncSubscriptionSet) -> Void)? = nil
    ) async throws {
        let base = try await TestClient(server, subscribe: false)
        var config = base.user.flexibleSyncConfiguration(initialSubscriptions: initialSubscriptions)
        config.objectTypes = objectTypes
        self.init(base, configuration: config)
    }

    /// This client with notes, dogs and owners in its schema, all subscribed.
    init(notes server: ServerProcess) async throws {
        try await self.init(server, objectTypes: [ClientNote.self, ClientDog.self, ClientOwner.self, ClientAddress.self, ClientGeo.self]) {
            $0.append(QuerySubscription<ClientNote>(name: "notes"))
            $0.append(QuerySubscription<ClientDog>(name: "dogs"))
            $0.append(QuerySubscription<ClientOwner>(name: "owners"))
        }
    }

    /// Every note of the file, as text that names each property's contents.
    func notes() throws -> [String] {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        return realm.objects(ClientNote.self).sorted(byKeyPath: "_id").map { n in
            let anything: String =
                switch n.anything {
                case .object(let o): "dog \((o as? ClientDog)?.name ?? "?")"
                default: "\(n.anything)"
                }
            return [
                "\(n._id)", "tags=\(Array(n.tags))", "maybe=\(Array(n.maybe))", "numbers=\(Array(n.numbers).sorted())",
                "scores=\(n.scores.keys.sorted().map { "\($0):\(n.scores[$0]!)" })", "dogs=\(n.dogs.map(\.name))",
                "friends=\(n.friends.map(\.name).sorted())",
                "byName=\(n.byName.keys.sorted().map { "\($0):\(n.byName[$0].flatMap { $0 }?.name ?? "nil")" })",
                "anything=\(anything)", "anyList=\(n.anyList.map { "\($0)" })", "amount=\(n.amount)",
            ].joined(separator: " ")
        }
    }
}

extension SyncServerTests {
    @Test func collectionsMixedValuesAndDecimalsTravelBetweenClients() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let a = try await TestClient(notes: server)
        let b = try await TestClient(notes: server)
        try a.write { realm in
            let rex = realm.create(ClientDog.self, value: ["name": "Rex", "age": 3])
            let fido = realm.create(ClientDog.self, value: ["name": "Fido", "age": 5])
            let note = realm.create(ClientNote.self, value: ["_id": 1])
            note.tags.append(objectsIn: ["red", "green", "blue"])
            note.maybe.append(objectsIn: [1, nil, 3])
            note.numbers.insert(objectsIn: [1, 2, 3])
            note.scores["x"] = 1.5
            note.scores["y"] = -2
            note.dogs.append(objectsIn: [rex, fido, rex])
            note.friends.insert(fido)
            note.byName["rex"] = rex
            note.byName["nobody"] = .some(nil)
            note.anything = .object(fido)
            note.anyList.append(objectsIn: [.int(7), .string("seven"), .double(7.5), .none])
            note.amount = try Decimal128(string: "123.456")
        }
        try await bounded { try await a.sync() }
        _ = try b.notes()
        try await bounded { try await b.sync() }
        let expected = try a.notes()
        #expect(try b.notes() == expected)
        #expect(expected.first?.contains("tags=[\"red\", \"green\", \"blue\"]") == true)
        #expect(expected.first?.contains("dogs=[\"Rex\", \"Fido\", \"Rex\"]") == true)
        #expect(expected.first?.contains("anything=dog Fido") == true)

        // Changes of every kind: a list element moved, removed and inserted, set and map entries
        // erased, a mixed value and a decimal replaced.
        try b.write { realm in
            let note = try #require(realm.object(ofType: ClientNote.self, forPrimaryKey: 1))
            note.tags.move(from: 2, to: 0)
            note.tags.remove(at: 2)
            note.tags.insert("yellow", at: 1)
            note.numbers.remove(2)
            note.scores.removeObject(for: "y")
            note.scores["z"] = 3
            note.scores["inf"] = .infinity
            note.dogs.remove(at: 0)
            note.anything = .string("text")
            note.amount = try Decimal128(string: "-0.5")
            note.maybe[1] = 2
        }
        try await bounded { try await b.sync() }
        try await bounded { try await a.sync() }
        let changed = try b.notes()
        #expect(try a.notes() == changed)
        #expect(changed.first?.contains("tags=[\"blue\", \"yellow\", \"red\"]") == true)
        #expect(changed.first?.contains("maybe=[Optional(1), Optional(2), Optional(3)]") == true)
        #expect(changed.first?.contains("numbers=[1, 3]") == true, "\(changed)")
        #expect(changed.first?.contains("scores=[\"inf:inf\", \"x:1.5\", \"z:3.0\"]") == true)

        // SQL users read the collections as jsonb, the decimal as numeric, the mixed value tagged.
        let row = try await TestDatabase.withClient { pg in
            var out: [String?] = []
            for try await r in try await pg.query(
                PostgresQuery(
                    unsafeSQL:
                        "SELECT tags::text, (SELECT array_agg(x::int ORDER BY x::int) FROM jsonb_array_elements_text(numbers) x)::text, scores::text, amount::text, anything::text, jsonb_array_length(dogs) FROM \"\(server.appId)\".\"ClientNote\" WHERE _id = 1"
                )
            ).decode((String?, String?, String?, String?, String?, Int32?).self) {
                out = [r.0, r.1, r.2, r.3, r.4, r.5.map(String.init)]
            }
            return out
        }
        #expect(
            row == [
                #"["blue", "yellow", "red"]"#, "{1,3}", #"{"x": 1.5, "z": 3.0, "inf": "Infinity"}"#, "-0.5", #"{"t": 6, "v": "text"}"#, "2",
            ])
        await a.close()
        await b.close()
    }

    @Test func concurrentCollectionChangesMergeByTheRules() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let a = try await TestClient(notes: server)
        let b = try await TestClient(notes: server)
        try a.write { realm in
            let note = realm.create(ClientNote.self, value: ["_id": 2])
            note.tags.append(objectsIn: ["one", "two", "three"])
            note.numbers.insert(objectsIn: [1, 2])
            note.scores["k"] = 1
        }
        try await bounded { try await a.sync() }
        _ = try b.notes()
        try await bounded { try await b.sync() }
        #expect(try b.notes() == a.notes())

        // Both offline; each changes the same collections.
        try a.session.suspend()
        try b.session.suspend()
        try a.write { realm in
            let note = try #require(realm.object(ofType: ClientNote.self, forPrimaryKey: 2))
            note.tags.insert("a-after-one", at: 1)
            note.tags.append("a-last")
            note.numbers.insert(3)
            note.numbers.remove(1)
            note.scores["a"] = 10
            note.scores["k"] = 2
        }
        try await Task.sleep(for: .milliseconds(10))  // b's clock after a's
        try b.write { realm in
            let note = try #require(realm.object(ofType: ClientNote.self, forPrimaryKey: 2))
            note.tags.insert("b-after-one", at: 1)
            note.tags.remove(at: 2)  // "two"
            note.numbers.insert(4)
            note.scores["b"] = 20
            note.scores["k"] = 3  // written after a's: the later clock wins
        }
        try a.session.resume()
        try b.session.resume()
        try await bounded { try await a.sync() }
        try await bounded { try await b.sync() }
        try await bounded { try await a.sync() }
        let merged = try a.notes()
        #expect(try b.notes() == merged)
        // Every insert is kept; the erased element is gone; the newer of two inserts at one place
        // comes first.
        #expect(merged.first?.contains(#"tags=["one", "b-after-one", "a-after-one", "three", "a-last"]"#) == true, "\(merged)")
        #expect(merged.first?.contains("numbers=[2, 3, 4]") == true, "\(merged)")
        #expect(merged.first?.contains(#"scores=["a:10.0", "b:20.0", "k:3.0"]"#) == true, "\(merged)")
        await a.close()
        await b.close()
    }
}

final class ClientGeo: EmbeddedObject {
    @Persisted var lat = 0.0
    @Persisted var lon = 0.0
}

final class ClientAddress: EmbeddedObject {
    @Persisted var street = ""
    @Persisted var city = ""
    @Persisted var geo: ClientGeo?
    @Persisted var tags: List<String>
}

/// A synced class holding embedded objects: one, a list of them, and one inside another.
final class ClientPerson: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var name = ""
    @Persisted var address: ClientAddress?
    @Persisted var previous: List<ClientAddress>
}

extension TestClient {
    /// This client with people and their embedded addresses, all people subscribed.
    init(people server: ServerProcess) async throws {
        try await self.init(server, objectTypes: [ClientPerson.self, ClientAddress.self, ClientGeo.self]) {
            $0.append(QuerySubscription<ClientPerson>(name: "people"))
        }
    }

    /// Every person of the file, as text.
    func people() throws -> [String] {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        func text(_ a: ClientAddress?) -> String {
            guard let a else { return "nil" }
            return "(\(a.street), \(a.city), \(a.geo.map { "\($0.lat)/\($0.lon)" } ?? "nil"), \(Array(a.tags)))"
        }
        return realm.objects(ClientPerson.self).sorted(byKeyPath: "_id").map { p in
            "\(p._id) \(p.name) \(text(p.address)) \(p.previous.map(text))"
        }
    }
}

extension SyncServerTests {
    @Test func embeddedObjectsTravelAndMergePropertyByProperty() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let a = try await TestClient(people: server)
        let b = try await TestClient(people: server)
        try a.write { realm in
            let p = realm.create(ClientPerson.self, value: ["_id": 1, "name": "Ada"])
            p.address = ClientAddress(value: ["street": "1 Main", "city": "Lyon", "geo": ["lat": 45.7, "lon": 4.8], "tags": ["home"]])
            p.previous.append(ClientAddress(value: ["street": "2 Old", "city": "Paris"]))
            p.previous.append(ClientAddress(value: ["street": "3 Older", "city": "Nice"]))
        }
        try await bounded { try await a.sync() }
        _ = try b.people()
        try await bounded { try await b.sync() }
        #expect(try b.people() == a.people())
        #expect(try b.people() == [#"1 Ada (1 Main, Lyon, 45.7/4.8, ["home"]) ["(2 Old, Paris, nil, [])", "(3 Older, Nice, nil, [])"]"#])

        // Offline, each changes another property of the same embedded objects: both changes stay.
        try a.session.suspend()
        try b.session.suspend()
        try a.write { realm in
            let p = try #require(realm.object(ofType: ClientPerson.self, forPrimaryKey: 1))
            p.address?.street = "9 New"
            p.address?.geo?.lat = 1.5
        }
        try await Task.sleep(for: .milliseconds(10))
        try b.write { realm in
            let p = try #require(realm.object(ofType: ClientPerson.self, forPrimaryKey: 1))
            p.address?.city = "Lille"
            p.address?.tags.append("work")
            p.previous[1].city = "Nîmes"  // an element of a list of embedded objects, changed in place
        }
        try a.session.resume()
        try b.session.resume()
        try await bounded { try await a.sync() }
        try await bounded { try await b.sync() }
        try await bounded { try await a.sync() }
        let merged = try a.people()
        #expect(try b.people() == merged)
        #expect(merged == [#"1 Ada (9 New, Lille, 1.5/4.8, ["home", "work"]) ["(2 Old, Paris, nil, [])", "(3 Older, Nîmes, nil, [])"]"#])

        // SQL users read embedded objects as jsonb.
        let city = try await TestDatabase.withClient { pg in
            var out: String?
            for try await c in try await pg.query(
                PostgresQuery(unsafeSQL: "SELECT address->>'city' FROM \"\(server.appId)\".\"ClientPerson\" WHERE _id = 1")
            ).decode(String?.self) {
                out = c
            }
            return out
        }
        #expect(city == "Lille")

        // Removing the embedded object removes it everywhere; the removed objects leave the file.
        try b.write { realm in
            let p = try #require(realm.object(ofType: ClientPerson.self, forPrimaryKey: 1))
            p.address = nil
            p.previous.removeAll()
        }
        try await bounded { try await b.sync() }
        try await bounded { try await a.sync() }
        #expect(try a.people() == ["1 Ada nil []"])
        #expect(try Realm(configuration: a.configuration).objects(ClientPerson.self).first?.address == nil)
        await a.close()
        await b.close()
    }
}

/// A synced class whose subscriptions compare dates, ObjectIds, UUIDs and data.
final class ClientEvent: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var at = Date(timeIntervalSince1970: 0)
    @Persisted var key = UUID()
    @Persisted var blob = Data()
    @Persisted var name = ""
}

extension SyncServerTests {
    @Test func subscriptionsCompareDatesObjectIdsUUIDsAndData() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let a = try await TestClient(server, objectTypes: [ClientEvent.self]) { $0.append(QuerySubscription<ClientEvent>(name: "all")) }
        let start = Date(timeIntervalSince1970: 1_700_000_000.000_000_5)  // nanoseconds beyond a timestamptz's microseconds
        let ids = (0..<6).map { _ in ObjectId.generate() }
        let keys = (0..<6).map { _ in UUID() }
        try a.write { realm in
            for i in 0..<6 {
                realm.add(
                    ClientEvent(value: [
                        "_id": ids[i], "at": start.addingTimeInterval(Double(i) * 60), "key": keys[i], "blob": Data([UInt8(i)]),
                        "name": "e\(i)",
                    ]))
            }
        }
        try await bounded { try await a.sync() }

        let b = try await TestClient(server, objectTypes: [ClientEvent.self])
        let config = b.configuration
        let realm = try Realm(configuration: config)
        let end = start.addingTimeInterval(120)
        let subscriptions = realm.subscriptions
        try await subscriptions.update {
            subscriptions.append(QuerySubscription<ClientEvent>(name: "window") { $0.at >= start && $0.at < end })
            subscriptions.append(QuerySubscription<ClientEvent>(name: "byId") { $0._id == ids[4] })
            subscriptions.append(QuerySubscription<ClientEvent>(name: "byKey") { $0.key == keys[5] })
        }
        let names = { () -> [String] in
            try Realm(configuration: config).objects(ClientEvent.self).map(\.name).sorted()
        }
        #expect(try await eventually { try names() == ["e0", "e1", "e4", "e5"] }, "\((try? names()) ?? [])")
        // Data, and a date an instant (500 ns) after the first event: nanoseconds count.
        try await subscriptions.update {
            subscriptions.removeAll()
            subscriptions.append(QuerySubscription<ClientEvent>(name: "blob") { $0.blob == Data([3]) })
            subscriptions.append(
                QuerySubscription<ClientEvent>(name: "after") {
                    $0.at > start.addingTimeInterval(-1e-7) && $0.at < start.addingTimeInterval(1)
                })
        }
        #expect(try await eventually { try names() == ["e0", "e3"] }, "\((try? names()) ?? [])")
        await a.close()
        await b.close()
    }
}

extension SyncServerTests {
    /// A commit whose upload is larger than a message may be (16 MiB) goes in UPLOAD_PARTs and is
    /// applied whole; its entry comes to a subscribed client in DOWNLOAD_PARTs of at most about
    /// 4 MiB, and the client applies it whole.
    @Test func aCommitLargerThanAMessageIsUploadedAndDownloadedInParts() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let a = try await TestClient(server)
        let b = try await TestClient(server)
        // A client speaking the protocol directly, subscribed to every dog, to see the messages
        // (once `a` has made the class known).
        _ = try a.dogs()
        try await bounded(60) { try await a.sync() }
        let raw = try await SyncConnection(server, token: try await server.anonymousToken())
        _ = try await raw.hello(schema: [])
        raw.send(.query(querySetVersion: 1, subscriptions: [Subscription(className: "ClientDog", query: "TRUEPREDICATE")]))
        _ = try await raw.receive(until: { $0.bootstrapped()?.last == true })
        let text = String(repeating: "x", count: 100_000)
        try a.write { realm in
            for i in 0..<200 { realm.add(ClientDog(name: "\(i)-" + text, age: i)) }  // about 20 MB
        }
        try await bounded(120) { try await a.sync() }
        let stored = try await TestDatabase.withClient { pg in
            var out: (Int, Int) = (0, 0)
            for try await (n, bytes) in try await pg.query(
                PostgresQuery(unsafeSQL: "SELECT count(*), sum(length(name)) FROM \"\(server.appId)\".\"ClientDog\"")
            ).decode((Int, Int).self) {
                out = (n, bytes)
            }
            return out
        }
        #expect(stored.0 == 200 && stored.1 > 20_000_000, "\(stored)")
        _ = try b.dogs()
        try await bounded(120) { try await b.sync() }
        #expect(try b.dogs().count == 200)
        var assembly = DownloadAssembly()
        var parts = 0
        var entry: Entry?
        while entry == nil {
            let m = try await raw.receive(within: 60)
            guard case .downloadPart(_, let part, let last, _) = m else { continue }
            #expect(m.encoded().count < 5 << 20)
            parts += 1
            entry = try assembly.add(part, last: last)
        }
        #expect(parts >= 5)
        #expect(entry?.instructions.filter { $0.operation == .create }.count == 200)
        await raw.close()
        await a.close()
        await b.close()
    }
}

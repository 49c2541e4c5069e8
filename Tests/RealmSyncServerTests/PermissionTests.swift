import Foundation
import JWTKit
import PostgresNIO
import RealmStorage
import RealmSwift
import RealmSwiftSync
import RealmSyncProtocol
import RealmSyncServer
import RealmTestSupport
import Testing

/// A synced class with an owner (the client side of `SyncServerTests.doc`).
final class ClientDoc: Object {
    @Persisted(primaryKey: true) var _id = ""
    @Persisted var ownerId = ""
    @Persisted var shared = false
    @Persisted var title = ""
}

/// Permissions (Spec/SYNC.md §10, issue 52 §2): roles with read filters over the object and the
/// user, evaluated by PostgreSQL.
extension SyncServerTests {
    /// A class of documents with an owner, and a flag that shares them with everyone.
    static let doc = SyncClass(
        "Doc", primaryKeyTag: 6,
        properties: [.init("ownerId", valueTag: 6), .init("shared", valueTag: 1), .init("title", valueTag: 6)])

    static let permissions = """
        {
          "classes": {
            "Doc": [
              { "name": "admin", "applyWhen": { "role": "admin" }, "read": "TRUEPREDICATE", "write": "TRUEPREDICATE" },
              { "name": "user", "read": "ownerId == %user.id OR shared == true", "write": "ownerId == %user.id" }
            ],
            "ClientDoc": [
              { "name": "admin", "applyWhen": { "role": "admin" }, "read": "TRUEPREDICATE", "write": "TRUEPREDICATE" },
              { "name": "user", "read": "ownerId == %user.id OR shared == true", "write": "ownerId == %user.id" }
            ]
          },
          "defaultRoles": [ { "name": "everyone", "read": "TRUEPREDICATE", "write": "TRUEPREDICATE" } ]
        }
        """

    /// A server with `permissions`, and the access token of a JWT user with `claims`.
    static func permissionedServer(_ permissions: String) async throws -> (ServerProcess, (String, [String: String]) async throws -> String)
    {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("permissions-\(UUID().uuidString).json")
        try Data(permissions.utf8).write(to: file)
        let server = try await ServerProcess(extraArguments: ["--permissions", file.path])
        return (
            server,
            { user, claims in
                let token = try await Self.jwt(server, user: user, role: claims["role"])
                let (status, json) = try await server.post("jwt", ["token": token])
                guard status == 200, let access = json["accessToken"] as? String else {
                    throw SyncServerError("login of \(user): \(status)")
                }
                return access
            }
        )
    }

    /// A JWT of the application of `server` naming `user`, with a `role` claim when given.
    static func jwt(_ server: ServerProcess, user: String, role: String?) async throws -> String {
        struct Claims: JWTPayload {
            var sub: SubjectClaim
            var role: String?
            func verify(using algorithm: some JWTAlgorithm) throws {}
        }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Data(server.secret)), digestAlgorithm: .sha256)
        return try await keys.sign(Claims(sub: SubjectClaim(value: user), role: role))
    }

    /// A RealmSwift client of `server` with every document subscribed.
    static func docsClient(_ server: ServerProcess) async throws -> TestClient {
        try await TestClient(server, objectTypes: [ClientDoc.self]) { $0.append(QuerySubscription<ClientDoc>(name: "docs")) }
    }

    /// A client of `server` that wrote, and uploaded, a private document (p1, "secret-p1") and a
    /// shared one (s1, "open-s1") of its user.
    static func docsWriter(_ server: ServerProcess) async throws -> TestClient {
        let a = try await docsClient(server)
        let owner = a.user.id
        try a.write { realm in
            realm.create(ClientDoc.self, value: ["_id": "p1", "ownerId": owner, "title": "secret-p1"])
            realm.create(ClientDoc.self, value: ["_id": "s1", "ownerId": owner, "shared": true, "title": "open-s1"])
        }
        try await bounded { try await a.sync() }
        return a
    }

    static func doc(_ id: String, owner: String, shared: Bool, title: String) -> [Instruction] {
        [
            Instruction("Doc", .string(id), .create),
            Instruction("Doc", .string(id), .set(path: ["ownerId"], value: .string(owner))),
            Instruction("Doc", .string(id), .set(path: ["shared"], value: .bool(shared))),
            Instruction("Doc", .string(id), .set(path: ["title"], value: .string(title))),
        ]
    }

    /// A reader receives only what its role lets it read, and no byte of anything else: in its
    /// bootstrap, and in downloads as objects become readable or stop being so.
    @Test func aUserReceivesOnlyWhatItsRoleMayRead() async throws {
        let (server, login) = try await Self.permissionedServer(Self.permissions)
        defer { server.stop() }
        let alice = try await SyncConnection(server, token: try await login("alice", [:]))
        _ = try await alice.hello(schema: [Self.doc])
        alice.send(
            .upload([
                Upload(
                    clientVersion: 1, clock: 1 << 20,
                    instructions: Self.doc("a1", owner: "alice", shared: false, title: "secret-a1")
                        + Self.doc("a2", owner: "alice", shared: true, title: "open-a2"))
            ]))
        _ = try await alice.receiveAck()

        // Everything bob is sent, as bytes.
        var bobBytes: [UInt8] = []
        func subscribeAll(_ c: SyncConnection, bytes: inout [UInt8]) async throws -> [String] {
            c.send(.query(querySetVersion: 1, subscriptions: [Subscription(className: "Doc", query: "TRUEPREDICATE")]))
            var keys: [String] = []
            while true {
                let m = try await c.receive()
                bytes += m.encoded()
                guard let (objects, _, last) = m.bootstrapped(schema: [Self.doc]) else { continue }
                keys += objects.compactMap { if case .string(let k) = $0.primaryKey { k } else { nil } }
                if last { return keys.sorted() }
            }
        }
        let bob = try await SyncConnection(server, token: try await login("bob", [:]))
        _ = try await bob.hello(schema: [Self.doc])
        bob.send(
            .upload([Upload(clientVersion: 1, clock: 1 << 20, instructions: Self.doc("b1", owner: "bob", shared: false, title: "bob-b1"))]))
        _ = try await bob.receiveAck()
        #expect(try await subscribeAll(bob, bytes: &bobBytes) == ["a2", "b1"])
        var carolBytes: [UInt8] = []
        let carol = try await SyncConnection(server, token: try await login("carol", ["role": "admin"]))
        _ = try await carol.hello(schema: [Self.doc])
        #expect(try await subscribeAll(carol, bytes: &carolBytes) == ["a1", "a2", "b1"])

        // Alice edits her private document (bob hears nothing of it), shares it (it reaches
        // bob), then unshares the other (bob is told to erase it).
        func upload(_ version: UInt64, _ instructions: [Instruction]) async throws {
            alice.send(.upload([Upload(clientVersion: version, clock: (version + 1) << 20, instructions: instructions)]))
            _ = try await alice.receiveAck()
        }
        try await upload(2, [Instruction("Doc", .string("a1"), .set(path: ["title"], value: .string("secret-a1-edited")))])
        bob.send(.mark(requestId: 1, serverVersion: 0))
        while true {
            let m = try await bob.receive()
            bobBytes += m.encoded()
            if case .mark(1, _) = m { break }
        }
        var key = WireWriter()
        key.value(.string("a1"))
        #expect(!bobBytes.contains(subsequence: key.bytes))
        #expect(!bobBytes.contains(subsequence: Array("secret-a1".utf8)))
        #expect(carolBytes.contains(subsequence: Array("secret-a1".utf8)))  // the check can see it
        try await upload(3, [Instruction("Doc", .string("a1"), .set(path: ["shared"], value: .bool(true)))])
        try await upload(4, [Instruction("Doc", .string("a2"), .set(path: ["shared"], value: .bool(false)))])
        var seen: [Instruction] = []
        while !seen.contains(Instruction("Doc", .string("a2"), .erase)) {
            guard case .download(_, let entries, _) = try await bob.receive() else { continue }
            seen += entries.flatMap(\.instructions)
        }
        #expect(seen.first { $0.primaryKey == .string("a1") } == Instruction("Doc", .string("a1"), .create))
        #expect(seen.contains(Instruction("Doc", .string("a1"), .set(path: ["title"], value: .string("secret-a1-edited")))))
        await alice.close()
        await bob.close()
        await carol.close()
    }

    /// Two RealmSwift clients of a server with permissions: the second's file holds only the
    /// documents it may read, and `realm-dump` of it shows nothing of the others in any version.
    @Test func aClientFileHoldsOnlyWhatItsUserMayRead() async throws {
        let (server, _) = try await Self.permissionedServer(Self.permissions)
        defer { server.stop() }
        let a = try await Self.docsWriter(server)
        let b = try await Self.docsClient(server)
        _ = try Realm(configuration: b.configuration)  // starts its session
        try await bounded { try await b.sync() }
        #expect(try Realm(configuration: b.configuration).objects(ClientDoc.self).map(\._id) == ["s1"])
        let dump = try #require(BuiltExecutable.path("realm-dump"))
        let path = try #require(b.configuration.fileURL?.path)
        for arguments in [["--objects", "ClientDoc", path], ["--changes", "0", path]] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: dump)
            process.arguments = arguments
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(text.contains("open-s1"), "\(arguments)")
            #expect(!text.contains("secret-p1") && !text.contains("p1\""), "\(arguments): \(text)")
        }
        await a.close()
        await b.close()
    }

    /// Writes the user's role forbids (§10): to an object it may not write as it is, and leaving
    /// one it may not write. They are not applied, the rest of the upload is, the writer is told
    /// (WRITE_REFUSED, before the acknowledgement) and gets the objects back as the store has
    /// them in its own entry; the others never see the writes.
    @Test func aForbiddenWriteIsUndoneOnItsWriterOnly() async throws {
        let (server, login) = try await Self.permissionedServer(Self.permissions)
        defer { server.stop() }
        let alice = try await SyncConnection(server, token: try await login("alice", [:]))
        _ = try await alice.hello(schema: [Self.doc])
        alice.send(
            .upload([
                Upload(
                    clientVersion: 1, clock: 1 << 20,
                    instructions: Self.doc("a2", owner: "alice", shared: true, title: "open-a2"))
            ]))
        _ = try await alice.receiveAck()
        let carol = try await SyncConnection(server, token: try await login("carol", ["role": "admin"]))
        _ = try await carol.hello(schema: [Self.doc])
        carol.send(.query(querySetVersion: 1, subscriptions: [Subscription(className: "Doc", query: "TRUEPREDICATE")]))
        _ = try await carol.receive(until: { $0.bootstrapped()?.last == true })
        let bob = try await SyncConnection(server, token: try await login("bob", [:]))
        _ = try await bob.hello(schema: [Self.doc])
        bob.send(
            .upload([Upload(clientVersion: 1, clock: 1 << 20, instructions: Self.doc("b1", owner: "bob", shared: false, title: "bob-b1"))]))
        _ = try await bob.receiveAck()
        bob.send(.query(querySetVersion: 1, subscriptions: [Subscription(className: "Doc", query: "TRUEPREDICATE")]))
        _ = try await bob.receive(until: { $0.bootstrapped()?.last == true })
        // Carol has heard of b1.
        _ = try await carol.receive(until: { m in
            if case .download(_, let entries, _) = m {
                entries.contains { $0.instructions.contains { $0.primaryKey == .string("b1") } }
            } else {
                false
            }
        })

        // Bob edits alice's shared document, creates one of his own, forges one owned by alice,
        // and gives his own away: only his new document is written.
        bob.send(
            .upload([
                Upload(
                    clientVersion: 2, clock: 2 << 20,
                    instructions: [Instruction("Doc", .string("a2"), .set(path: ["title"], value: .string("hacked")))]
                        + Self.doc("b2", owner: "bob", shared: false, title: "bob-b2")
                        + Self.doc("f1", owner: "alice", shared: true, title: "forged")
                        + [Instruction("Doc", .string("b1"), .set(path: ["ownerId"], value: .string("alice")))])
            ]))
        var refusal: SyncMessage?
        var own: [Instruction] = []
        while true {
            let m = try await bob.receive()
            if case .writeRefused = m { refusal = m }
            if case .uploadAck(2, _) = m { #expect(refusal != nil, "WRITE_REFUSED comes before the acknowledgement") }
            if case .download(_, let entries, _) = m { own += entries.flatMap(\.instructions) }
            if own.contains(Instruction("Doc", .string("f1"), .erase)) { break }
        }
        #expect(
            refusal
                == .writeRefused(
                    clientVersion: 2,
                    objects: [
                        SyncStoreModel.ObjectID("Doc", .string("a2")), SyncStoreModel.ObjectID("Doc", .string("f1")),
                        SyncStoreModel.ObjectID("Doc", .string("b1")),
                    ], reason: "the user's role may not write the object"))
        // His own entry brings back a2 and b1 as the store has them, erases f1, and has b2.
        #expect(own.contains(Instruction("Doc", .string("a2"), .set(path: ["title"], value: .string("open-a2")))))
        #expect(own.contains(Instruction("Doc", .string("b1"), .set(path: ["ownerId"], value: .string("bob")))))
        #expect(own.contains(Instruction("Doc", .string("b2"), .set(path: ["title"], value: .string("bob-b2")))))
        let rows = try await TestDatabase.withClient { pg in
            var out: [String] = []
            for try await (id, owner, title) in try await pg.query(
                PostgresQuery(unsafeSQL: "SELECT _id, \"ownerId\", title FROM \"\(server.appId)\".\"Doc\" ORDER BY _id")
            ).decode((String, String, String).self) {
                out.append("\(id) \(owner) \(title)")
            }
            return out
        }
        #expect(rows == ["a2 alice open-a2", "b1 bob bob-b1", "b2 bob bob-b2"])
        // Carol, who may read everything, hears of b2 only.
        var seen: [Instruction] = []
        while !seen.contains(where: { $0.primaryKey == .string("b2") }) {
            guard case .download(_, let entries, _) = try await carol.receive() else { continue }
            seen += entries.flatMap(\.instructions)
        }
        #expect(seen.allSatisfy { $0.primaryKey == .string("b2") }, "\(seen)")
        await alice.close()
        await bob.close()
        await carol.close()
    }

    /// A RealmSwift client's write its role forbids is reported to its error handler as
    /// RealmSwift reports a compensating write, and undone in its file.
    @Test func aClientsForbiddenWriteIsReportedAndUndone() async throws {
        let (server, _) = try await Self.permissionedServer(Self.permissions)
        defer { server.stop() }
        let a = try await Self.docsClient(server)
        let owner = a.user.id
        try a.write { realm in realm.create(ClientDoc.self, value: ["_id": "s1", "ownerId": owner, "shared": true, "title": "open-s1"]) }
        try await bounded { try await a.sync() }
        let errors = Locked<[SyncError]>([])
        let plain = try await Self.docsClient(server)
        var config = plain.configuration
        config.syncConfiguration?.errorHandler = { error, _ in if let e = error as? SyncError { errors.withLock { $0.append(e) } } }
        let b = TestClient(plain, configuration: config)
        _ = try Realm(configuration: b.configuration)
        try await bounded { try await b.sync() }
        try b.write { realm in realm.object(ofType: ClientDoc.self, forPrimaryKey: "s1")?.title = "hacked" }
        try await bounded { try await b.sync() }
        #expect(try Realm(configuration: b.configuration).object(ofType: ClientDoc.self, forPrimaryKey: "s1")?.title == "open-s1")
        let rejected = errors.withLock { $0 }.first { $0.code == .writeRejected }
        #expect(rejected?.compensatingWriteInfo?.map(\.objectType) == ["ClientDoc"])
        #expect(rejected?.compensatingWriteInfo?.first?.primaryKey == .string("s1"))
        try await bounded { try await a.sync() }
        #expect(try Realm(configuration: a.configuration).object(ofType: ClientDoc.self, forPrimaryKey: "s1")?.title == "open-s1")
        await a.close()
        await b.close()
    }

    /// A user whose claims change (it logs in again with another JWT) gets its file bootstrapped
    /// again under its new role: what it may no longer read leaves the file, what it now may
    /// read enters it.
    @Test func aUserWhoseClaimsChangeSeesWhatItsNewRoleMayRead() async throws {
        let (server, _) = try await Self.permissionedServer(Self.permissions)
        defer { server.stop() }
        let a = try await Self.docsWriter(server)
        let admin = Credentials.jwt(token: try await Self.jwt(server, user: "carol", role: "admin"))
        let client = try await TestClient(appId: server.appId, credentials: admin, objectTypes: [ClientDoc.self]) {
            $0.baseURL = server.baseURL
        } initialSubscriptions: {
            $0.append(QuerySubscription<ClientDoc>(name: "docs"))
        }
        defer { try? FileManager.default.removeItem(at: client.root) }
        let (app, carol, config) = (client.app, client.user, client.configuration)
        func ids() throws -> [String] {
            let realm = try Realm(configuration: config)
            realm.refresh()
            return realm.objects(ClientDoc.self).map(\._id).sorted()
        }
        _ = try Realm(configuration: config)
        try await bounded { try await client.sync() }
        #expect(try ids() == ["p1", "s1"])

        // The same user without the admin claim: the private document leaves the file.
        _ = try await app.login(credentials: .jwt(token: try await Self.jwt(server, user: "carol", role: nil)))
        #expect(try await eventually { try ids() == ["s1"] }, "\((try? ids()) ?? [])")
        // Admin again: it comes back.
        _ = try await app.login(credentials: .jwt(token: try await Self.jwt(server, user: "carol", role: "admin")))
        #expect(try await eventually { try ids() == ["p1", "s1"] }, "\((try? ids()) ?? [])")
        try? await carol.logOut()
        await a.close()
    }

    @Test func aPermissionsFileThatDoesNotParseIsRefused() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("permissions-\(UUID().uuidString).json")
        try Data(#"{"classes": {"Doc": [{"name": "r", "read": "ownerId ==", "write": "TRUEPREDICATE"}]}}"#.utf8).write(to: file)
        await #expect(throws: (any Error).self) { try await ServerProcess(extraArguments: ["--permissions", file.path]) }
        try Data(#"{"classes": {"Doc": [{"name": "r", "read": "ownerId == %user.name", "write": "TRUEPREDICATE"}]}}"#.utf8).write(to: file)
        await #expect(throws: (any Error).self) { try await ServerProcess(extraArguments: ["--permissions", file.path]) }
        try Data("not json".utf8).write(to: file)
        await #expect(throws: (any Error).self) { try await ServerProcess(extraArguments: ["--permissions", file.path]) }
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes.
    func contains(subsequence needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
        return (0...(count - needle.count)).contains { i in self[i..<(i + needle.count)].elementsEqual(needle) }
    }
}

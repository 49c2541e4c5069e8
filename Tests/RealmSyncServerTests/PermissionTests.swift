import Foundation
import JWTKit
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
              { "name": "user", "read": "ownerId == %user.id OR shared == true", "write": "TRUEPREDICATE" }
            ],
            "ClientDoc": [
              { "name": "user", "read": "ownerId == %user.id OR shared == true", "write": "TRUEPREDICATE" }
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
        struct Claims: JWTPayload {
            var sub: SubjectClaim
            var role: String?
            func verify(using algorithm: some JWTAlgorithm) throws {}
        }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Data(server.secret)), digestAlgorithm: .sha256)
        return (
            server,
            { user, claims in
                let token = try await keys.sign(Claims(sub: SubjectClaim(value: user), role: claims["role"]))
                let (status, json) = try await server.post("jwt", ["token": token])
                guard status == 200, let access = json["accessToken"] as? String else {
                    throw SyncServerError("login of \(user): \(status)")
                }
                return access
            }
        )
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
                        + Self.doc("a2", owner: "alice", shared: true, title: "open-a2")
                        + Self.doc("b1", owner: "bob", shared: false, title: "bob-b1"))
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
        let a = try await TestClient(server, objectTypes: [ClientDoc.self]) { $0.append(QuerySubscription<ClientDoc>(name: "docs")) }
        let b = try await TestClient(server, objectTypes: [ClientDoc.self]) { $0.append(QuerySubscription<ClientDoc>(name: "docs")) }
        let owner = a.user.id
        try a.write { realm in
            realm.create(ClientDoc.self, value: ["_id": "p1", "ownerId": owner, "title": "secret-p1"])
            realm.create(ClientDoc.self, value: ["_id": "s1", "ownerId": owner, "shared": true, "title": "open-s1"])
        }
        try await bounded { try await a.sync() }
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

    @Test func aPermissionsFileThatDoesNotParseIsRefused() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("permissions-\(UUID().uuidString).json")
        try Data(#"{"classes": {"Doc": [{"name": "r", "read": "ownerId ==", "write": "TRUEPREDICATE"}]}}"#.utf8).write(to: file)
        await #expect(throws: (any Error).self) { try await ServerProcess(extraArguments: ["--permissions", file.path]) }
        try Data(#"{"classes": {"Doc": [{"name": "r", "read": "ownerId == %user.name", "write": "TRUEPREDICATE"}]}}"#.utf8).write(to: file)
        await #expect(throws: (any Error).self) { try await ServerProcess(extraArguments: ["--permissions", file.path]) }
        // A write filter is refused while write filters are not enforced.
        try Data(#"{"classes": {"Doc": [{"name": "r", "read": "TRUEPREDICATE", "write": "ownerId == %user.id"}]}}"#.utf8).write(to: file)
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

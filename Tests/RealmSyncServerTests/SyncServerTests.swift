import Foundation
import JWTKit
import NIOCore
import PostgresNIO
import RealmSyncProtocol
import RealmSyncServer
import Testing

/// The sync server as a real process on loopback with a real PostgreSQL (Spec/SYNC.md): logins,
/// the handshake, uploads applied in PostgreSQL's typed tables and acknowledged, bootstraps and
/// downloads filtered by subscriptions, the conflict rules, and bad input.
@Suite(.enabled(if: TestDatabase.available, "set REALM_SYNC_POSTGRES to run the sync server tests"), .serialized)
struct SyncServerTests {
    @Test func anAnonymousUserConnectsAndGetsAClientFileIdentity() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let token = try await server.anonymousToken()
        let connection = try await SyncConnection(server, token: token)
        let id = try await connection.hello()
        #expect(id.count == 16)
        // The identity is kept: a second connection with it is welcomed with the same one.
        await connection.close()
        let again = try await SyncConnection(server, token: token)
        #expect(try await again.hello(id) == id)
        await again.close()
    }

    @Test func anUploadLandsInTypedColumnsAndIsAcknowledgedAfterItsCommit() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let connection = try await SyncConnection(server, token: try await server.anonymousToken())
        _ = try await connection.hello()
        var instructions = TestSchema.person(1, name: "Ann", age: 31)
        instructions += [
            Instruction("Dog", .string("rex"), .create), Instruction("Dog", .string("rex"), .set(path: ["name"], value: .string("Rex"))),
            Instruction("Person", .int(1), .set(path: ["dog"], value: .link(class: "Dog", primaryKey: .string("rex")))),
            Instruction("Person", .int(1), .set(path: ["born"], value: .timestamp(seconds: 1_000_000_000, nanoseconds: 123_456_789))),
            Instruction("Person", .int(1), .set(path: ["score"], value: .double(2.5))),
        ]
        connection.send(.upload([Upload(clientVersion: 7, clock: HybridClock.value(milliseconds: 1000), instructions: instructions)]))
        let ack = try await connection.receive()
        #expect(ack == .uploadAck(clientVersion: 7, serverVersion: 1))
        // SQL users read the objects directly.
        let row = try await TestDatabase.withClient { pg in
            let rows = try await pg.query(
                PostgresQuery(unsafeSQL: "SELECT name, age, dog, born, score FROM \"\(server.appId)\".\"Person\" WHERE _id = 1"))
            var out: [(String, Int64?, String?, Date?, Double)] = []
            for try await r in rows.decode((String, Int64?, String?, Date?, Double).self) { out.append(r) }
            return out
        }
        #expect(row.count == 1)
        #expect(row.first?.0 == "Ann")
        #expect(row.first?.1 == 31)
        #expect(row.first?.2 == "rex")
        #expect(row.first?.3.map { abs($0.timeIntervalSince1970 - 1_000_000_000.123456) < 1e-5 } == true)
        #expect(row.first?.4 == 2.5)
        // An upload sent again (after a lost acknowledgement) is acknowledged, not applied twice.
        connection.send(.upload([Upload(clientVersion: 7, clock: HybridClock.value(milliseconds: 1000), instructions: instructions)]))
        #expect(
            try await connection.receiveAck()
                == .uploadAck(clientVersion: 7, serverVersion: 1))
        let history = try await TestDatabase.withClient { pg in
            var n = 0
            for try await c in try await pg.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \"\(server.appId)\"._sync_history"))
                .decode(Int.self)
            { n = c }
            return n
        }
        #expect(history == 1)
        await connection.close()
    }

    @Test func aSubscriberIsBootstrappedThenFollowsChangesInAndOutOfItsQuery() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let writer = try await SyncConnection(server, token: try await server.anonymousToken())
        _ = try await writer.hello()
        writer.send(
            .upload([
                Upload(
                    clientVersion: 1, clock: HybridClock.value(milliseconds: 1000),
                    instructions: TestSchema.person(1, name: "Ann", age: 31) + TestSchema.person(2, name: "Bob", age: 12))
            ]))
        _ = try await writer.receiveAck()

        let reader = try await SyncConnection(server, token: try await server.anonymousToken())
        _ = try await reader.hello()
        reader.send(.query(querySetVersion: 1, subscriptions: [Subscription(name: "adults", className: "Person", query: "age >= 18")]))
        var objects: [ObjectState] = []
        while true {
            let m = try await reader.receive()
            if case .download = m { continue }  // the history so far, before the subscription
            guard let (batch, version, last) = m.bootstrapped() else { Issue.record("expected BOOTSTRAP, got \(m)"); return }
            #expect(version == 1)
            objects += batch
            if last { break }
        }
        #expect(objects.map(\.primaryKey) == [.int(1)])
        #expect(objects.first?.properties.contains(PropertyState("name", .string("Ann"))) == true)

        // Bob turns 18: he enters the reader's view, whole.
        writer.send(
            .upload([
                Upload(
                    clientVersion: 2, clock: HybridClock.value(milliseconds: 2000),
                    instructions: [Instruction("Person", .int(2), .set(path: ["age"], value: .int(18)))])
            ]))
        guard case .download(_, let entries, _) = try await reader.receive() else { Issue.record("expected DOWNLOAD"); return }
        let entered = entries.flatMap(\.instructions)
        #expect(entered.contains(Instruction("Person", .int(2), .create)))
        #expect(entered.contains(Instruction("Person", .int(2), .set(path: ["name"], value: .string("Bob")))))
        // Ann's age becomes 17: she leaves it.
        writer.send(
            .upload([
                Upload(
                    clientVersion: 3, clock: HybridClock.value(milliseconds: 3000),
                    instructions: [Instruction("Person", .int(1), .set(path: ["age"], value: .int(17)))])
            ]))
        guard case .download(_, let left, _) = try await reader.receive() else { Issue.record("expected DOWNLOAD"); return }
        #expect(left.flatMap(\.instructions) == [Instruction("Person", .int(1), .erase)])
        await writer.close()
        await reader.close()
    }

    @Test func concurrentWritesResolveByTheirClocksAndADeleteWins() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let a = try await SyncConnection(server, token: try await server.anonymousToken())
        let b = try await SyncConnection(server, token: try await server.anonymousToken())
        _ = try await a.hello()
        _ = try await b.hello()
        func ack(_ c: SyncConnection) async throws { _ = try await c.receiveAck() }
        a.send(
            .upload([
                Upload(
                    clientVersion: 1, clock: HybridClock.value(milliseconds: 1000), instructions: TestSchema.person(1, name: "Ann", age: 30)
                )
            ]))
        try await ack(a)
        // b's write is later by its clock, though it arrives first.
        b.send(
            .upload([
                Upload(
                    clientVersion: 1, clock: HybridClock.value(milliseconds: 5000),
                    instructions: [Instruction("Person", .int(1), .set(path: ["name"], value: .string("Bea")))])
            ]))
        try await ack(b)
        a.send(
            .upload([
                Upload(
                    clientVersion: 2, clock: HybridClock.value(milliseconds: 4000),
                    instructions: [Instruction("Person", .int(1), .set(path: ["name"], value: .string("Amy")))])
            ]))
        try await ack(a)
        let name = try await TestDatabase.withClient { pg in
            var out = ""
            for try await n in try await pg.query(PostgresQuery(unsafeSQL: "SELECT name FROM \"\(server.appId)\".\"Person\" WHERE _id = 1"))
                .decode(String.self)
            { out = n }
            return out
        }
        #expect(name == "Bea")
        // A delete, then a concurrent update made before it (a lower clock): the object stays deleted.
        b.send(
            .upload([
                Upload(
                    clientVersion: 2, clock: HybridClock.value(milliseconds: 6000), instructions: [Instruction("Person", .int(1), .erase)])
            ]))
        try await ack(b)
        a.send(
            .upload([
                Upload(
                    clientVersion: 3, clock: HybridClock.value(milliseconds: 5500),
                    instructions: [Instruction("Person", .int(1), .set(path: ["age"], value: .int(44)))])
            ]))
        try await ack(a)
        let count = try await TestDatabase.withClient { pg in
            var n = -1
            for try await c in try await pg.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \"\(server.appId)\".\"Person\"")).decode(
                Int.self)
            { n = c }
            return n
        }
        #expect(count == 0)
        await a.close()
        await b.close()
    }

    @Test func aJWTOfTheApplicationLogsInItsSubject() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        struct Claims: JWTPayload {
            var sub: SubjectClaim
            var exp: ExpirationClaim
            func verify(using algorithm: some JWTAlgorithm) throws {}
        }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Data(server.secret)), digestAlgorithm: .sha256)
        let good = try await keys.sign(Claims(sub: "user-42", exp: ExpirationClaim(value: Date() + 600)))
        let (status, json) = try await server.post("jwt", ["token": good])
        #expect(status == 200)
        #expect(json["userId"] as? String == "user-42")
        let expired = try await keys.sign(Claims(sub: "user-42", exp: ExpirationClaim(value: Date() - 600)))
        #expect(try await server.post("jwt", ["token": expired]).0 == 401)
        let other = JWTKeyCollection()
        await other.add(hmac: HMACKey(from: Data("another secret of at least thirty-two bytes".utf8)), digestAlgorithm: .sha256)
        let forged = try await other.sign(Claims(sub: "user-42", exp: ExpirationClaim(value: Date() + 600)))
        #expect(try await server.post("jwt", ["token": forged]).0 == 401)
        // A refresh token gives new tokens; an access token is not a refresh token.
        let refresh = try #require(json["refreshToken"] as? String)
        #expect(try await server.post("refresh", ["refreshToken": refresh]).0 == 200)
        #expect(try await server.post("refresh", ["refreshToken": try #require(json["accessToken"] as? String)]).0 == 401)
    }

    @Test func badInputGetsATypedErrorAndTheServerGoesOnServingOthers() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let token = try await server.anonymousToken()
        func expectError(_ c: SyncConnection, code: UInt64, fatal: Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let m: SyncMessage
            do {
                m = try await c.receive(until: { if case .error = $0 { true } else { false } })
            } catch {
                Issue.record("waiting for error \(code): \(error)", sourceLocation: sourceLocation)
                throw error
            }
            guard case .error(let got, let message, let isFatal, _) = m else { return }
            #expect(got == code, "\(message)")
            #expect(isFatal == fatal)
            if fatal { #expect(await c.closedByServer()) }
        }
        // No token, a forged token, another protocol version: refused in answer to HELLO.
        for (refused, code) in [
            (try await SyncConnection(server, token: nil), 2), (try await SyncConnection(server, token: token + "x"), 2),
            (try await SyncConnection(server, token: token, version: "99"), 1),
        ] as [(SyncConnection, UInt64)] {
            refused.send(.hello(clientFileId: [], lastServerVersion: 0, lastUploadAcked: 0, schema: TestSchema.all))
            try await expectError(refused, code: code, fatal: true)
        }
        // A truncated message, an unknown type, a text message, a message before HELLO.
        for bad in [[1, 0x10], [0x7F], [3, 0]] as [[UInt8]] {
            let c = try await SyncConnection(server, token: token)
            c.sendRaw(bad)
            try await expectError(c, code: 3, fatal: true)
        }
        let text = try await SyncConnection(server, token: token)
        text.sendText()
        try await expectError(text, code: 3, fatal: true)
        // A schema the store cannot take, and one that contradicts it.
        let badSchema = try await SyncConnection(server, token: token)
        badSchema.send(
            .hello(
                clientFileId: [], lastServerVersion: 0, lastUploadAcked: 0, schema: [SyncClass("NoKey", primaryKeyTag: 5, properties: [])]))
        try await expectError(badSchema, code: 4, fatal: true)
        let good = try await SyncConnection(server, token: token)
        _ = try await good.hello()
        let mismatch = try await SyncConnection(server, token: token)
        mismatch.send(
            .hello(
                clientFileId: [], lastServerVersion: 0, lastUploadAcked: 0,
                schema: [SyncClass("Dog", primaryKeyTag: 6, properties: [.init("name", valueTag: 3)])]))
        try await expectError(mismatch, code: 5, fatal: true)
        // An upload naming an unknown class or property, or a value of the wrong type: refused
        // whole (nothing of it applied) and the session goes on.
        for bad in [
            [Instruction("Cat", .int(1), .create)],
            TestSchema.person(9, name: "X", age: 1) + [Instruction("Person", .int(9), .set(path: ["nope"], value: .int(1)))],
            TestSchema.person(9, name: "X", age: 1) + [Instruction("Person", .int(9), .set(path: ["name"], value: .int(1)))],
            // A set instruction on a string; a list state, which only servers send.
            TestSchema.person(9, name: "X", age: 1) + [Instruction("Person", .int(9), .setAdd(path: ["name"], value: .string("x")))],
            TestSchema.person(9, name: "X", age: 1) + [Instruction("Person", .int(9), .listState(path: ["name"], ids: [], values: []))],
        ] {
            good.send(.upload([Upload(clientVersion: 1, clock: 1 << 20, instructions: bad)]))
            try await expectError(good, code: 6, fatal: false)
        }
        // An invalid subscription query: a typed error naming what is not supported.
        good.send(.query(querySetVersion: 1, subscriptions: [Subscription(className: "Person", query: "dog.name == 'x'")]))
        try await expectError(good, code: 7, fatal: false)
        good.send(.query(querySetVersion: 1, subscriptions: [Subscription(className: "Person", query: "age >")]))
        try await expectError(good, code: 7, fatal: false)
        // The parts of two uploads interleaved: a protocol error, and nothing of either applied.
        let parted = try await SyncConnection(server, token: token)
        _ = try await parted.hello()
        parted.send(
            .uploadPart(Upload(clientVersion: 1, clock: 1 << 20, instructions: TestSchema.person(7, name: "P", age: 7)), last: false))
        parted.send(
            .uploadPart(Upload(clientVersion: 2, clock: 1 << 21, instructions: TestSchema.person(8, name: "Q", age: 8)), last: true))
        try await expectError(parted, code: 3, fatal: true)
        // Nothing was applied; the session and the server still serve.
        good.send(.upload([Upload(clientVersion: 1, clock: 1 << 20, instructions: TestSchema.person(3, name: "Cy", age: 3))]))
        #expect(
            try await good.receiveAck()
                == .uploadAck(clientVersion: 1, serverVersion: 1))
        await good.close()
    }

    @Test func aClientThatSaysNothingIsDisconnected() async throws {
        let server = try await ServerProcess(extraArguments: ["--handshake-timeout", "0.5"])
        defer { server.stop() }
        let silent = try await SyncConnection(server, token: try await server.anonymousToken())
        guard case .error(3, _, true, _) = try await silent.receive() else { Issue.record("expected a fatal badMessage"); return }
        #expect(await silent.closedByServer())
        // A refused client that says nothing is told why, then disconnected, all the same.
        let refused = try await SyncConnection(server, token: nil)
        guard case .error(2, _, true, _) = try await refused.receive() else { Issue.record("expected a fatal invalidToken"); return }
    }

    @Test func sigtermStopsTheServerGracefully() async throws {
        let server = try await ServerProcess()
        let connection = try await SyncConnection(server, token: try await server.anonymousToken())
        _ = try await connection.hello()
        #expect(server.stop() == 0)
        #expect(await connection.closedByServer())
    }

    /// A server that lived through a PostgreSQL restart still stops gracefully (it used to hang in
    /// its shutdown).
    @Test func aServerStopsGracefullyAfterPostgreSQLRestarted() async throws {
        let server = try await ServerProcess()
        let connection = try await SyncConnection(server, token: try await server.anonymousToken())
        _ = try await connection.hello()
        guard await Self.crashPostgres() else { return }
        // It serves again once PostgreSQL is back.
        let again = try await SyncConnection(server, token: try await server.anonymousToken())
        _ = try await again.hello()
        #expect(server.stop() == 0)
    }

    @Test func badOptionsAreRefusedWithAReason() throws {
        let binary = try ServerProcess.binary()
        for arguments in [
            ["serve", "--postgres", "mysql://x", "--listen", "127.0.0.1:0", "--jwt-secret-file", "/dev/null"],
            ["serve", "--postgres", "postgres://u@127.0.0.1/db", "--listen", "nowhere", "--jwt-secret-file", "/dev/null"],
            ["serve", "--postgres", "postgres://u@127.0.0.1/db", "--listen", "127.0.0.1:0", "--jwt-secret-file", "/nonexistent"],
        ] {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: binary)
            p.arguments = arguments
            let err = Pipe()
            p.standardError = err
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            #expect(p.terminationStatus != 0)
            #expect(message.contains("Error"), "\(message)")
        }
    }
}

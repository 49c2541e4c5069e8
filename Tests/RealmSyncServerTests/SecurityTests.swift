import Foundation
import JWTKit
import RealmSwift
import RealmSwiftSync
import RealmSyncProtocol
import RealmSyncServer
import RealmTestSupport
import Testing

/// Refusals at the door (issue 52 §5): an application's JWT is checked for its signature, expiry,
/// not-before, subject and audience; a user's sessions on a server are limited. Each refusal is a
/// typed error, and is logged.
extension SyncServerTests {
    @Test func anApplicationsJWTMustNameTheAudienceAndBeValidNow() async throws {
        let server = try await ServerProcess(extraArguments: ["--jwt-audience", "realm-tests"])
        defer { server.stop() }
        struct Claims: JWTPayload {
            var sub: SubjectClaim
            var exp: ExpirationClaim?
            var nbf: NotBeforeClaim?
            var aud: AudienceClaim?
            func verify(using algorithm: some JWTAlgorithm) throws {}
        }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Data(server.secret)), digestAlgorithm: .sha256)
        let soon = ExpirationClaim(value: Date() + 600)
        let cases: [(Claims, Int)] = [
            (Claims(sub: "u1", exp: soon, aud: AudienceClaim(value: ["realm-tests"])), 200),
            (Claims(sub: "u1", exp: soon, aud: AudienceClaim(value: ["other", "realm-tests"])), 200),
            (Claims(sub: "u1", exp: soon), 401),  // no audience
            (Claims(sub: "u1", exp: soon, aud: AudienceClaim(value: ["other"])), 401),
            (Claims(sub: "u1", exp: ExpirationClaim(value: Date() - 5), aud: AudienceClaim(value: ["realm-tests"])), 401),
            (Claims(sub: "u1", exp: soon, nbf: NotBeforeClaim(value: Date() + 600), aud: AudienceClaim(value: ["realm-tests"])), 401),
            (Claims(sub: "", exp: soon, aud: AudienceClaim(value: ["realm-tests"])), 401),
        ]
        for (n, (claims, expected)) in cases.enumerated() {
            let token = try await keys.sign(claims)
            let (status, _) = try await server.post("jwt", ["token": token])
            #expect(status == expected, "case \(n)")
        }
        let (code, json) = try await server.post("jwt", ["token": "not a token"])
        #expect(code == 401 && json["error"] as? String == "invalidToken")
        #expect(try await eventually { server.log.contains("login refused") && server.log.contains("audience is not realm-tests") })
    }

    @Test func aUsersSessionsOnAServerAreLimited() async throws {
        let server = try await ServerProcess(extraArguments: ["--max-sessions-per-user", "2"])
        defer { server.stop() }
        let token = try await server.anonymousToken()
        let first = try await SyncConnection(server, token: token)
        let second = try await SyncConnection(server, token: token)
        _ = try await first.hello()
        _ = try await second.hello()
        let third = try await SyncConnection(server, token: token)
        third.send(.hello(clientFileId: [], lastServerVersion: 0, lastUploadAcked: 0, schema: TestSchema.all))
        let refusal = try await third.receive(until: { if case .error = $0 { true } else { false } })
        guard case .error(let code, let message, let fatal, _) = refusal else { return }
        #expect(code == 12 && fatal, "\(message)")
        #expect(await third.closedByServer())
        // Another user is not affected, and a closed session frees its place.
        let other = try await SyncConnection(server, token: try await server.anonymousToken())
        _ = try await other.hello()
        await first.close()
        try await Task.sleep(for: .milliseconds(200))
        let again = try await SyncConnection(server, token: token)
        _ = try await again.hello()
        for c in [second, other, again] { await c.close() }
    }
}

extension SyncServerTests {
    /// The test certificate authority and the server certificate it signed (127.0.0.1, ::1,
    /// localhost; valid to 2126).
    static let certificates = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Certificates")

    /// A server speaking HTTPS and WSS with the test certificate: a client that trusts the test
    /// authority logs in and syncs; one that does not is refused at the TLS handshake.
    @Test func aServerWithTLSServesClientsThatTrustItsCertificate() async throws {
        let server = try await ServerProcess(extraArguments: [
            "--tls-certificate", Self.certificates.appendingPathComponent("server.pem").path,
            "--tls-key", Self.certificates.appendingPathComponent("server.key").path,
        ])
        defer { server.stop() }
        // A host name: TLS names the server it expects (SNI), which an IP address cannot be.
        let url = "https://localhost:\(server.port)"
        func client(trusting: Bool) async throws -> TestClient {
            try await TestClient(appId: server.appId, objectTypes: [ClientDog.self, ClientOwner.self]) {
                $0.baseURL = url
                $0.trustedCertificateAuthorities = trusting ? Self.certificates.appendingPathComponent("ca.pem") : nil
            } initialSubscriptions: {
                $0.append(QuerySubscription<ClientDog>(name: "dogs"))
            }
        }
        let a = try await client(trusting: true)
        let b = try await client(trusting: true)
        try a.write { $0.add(ClientDog(name: "secure", age: 1)) }
        _ = try b.dogs()
        do {
            try await bounded { try await a.sync() }
            try await bounded { try await b.sync() }
        } catch {
            Issue.record("\(error): \((try? a.session.trace) ?? [])")
            throw error
        }
        #expect(try b.dogs() == ["secure:1"])
        do {
            _ = try await client(trusting: false)
            Issue.record("a client that does not trust the certificate logged in")
        } catch let error as AppError {
            #expect(error.code == .httpRequestFailed)
        }
        await a.close()
        await b.close()
    }
}

extension SyncServerTests {
    /// A message larger than the server's limit (16 MiB) ends its connection with an error, and
    /// the server goes on serving.
    @Test func aMessageLargerThanTheLimitIsRefused() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let token = try await server.anonymousToken()
        let big = try await SyncConnection(server, token: token)
        _ = try await big.hello()
        big.sendRaw([UInt8](repeating: 3, count: (16 << 20) + 1))
        #expect(await big.closedByServer(within: 20))
        let other = try await SyncConnection(server, token: token)
        _ = try await other.hello()
        await other.close()
    }
}

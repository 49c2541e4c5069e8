import Foundation
import JWTKit
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

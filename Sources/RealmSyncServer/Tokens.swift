import Foundation
import JWTKit

/// The claims of the tokens the server signs (Spec/SYNC.md §3).
struct SessionClaims: JWTPayload {
    var sub: SubjectClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    var kind: String

    func verify(using algorithm: some JWTAlgorithm) throws {
        try exp.verifyNotExpired()
    }
}

/// The claims the server requires of an application's own token: a subject, and an expiry in the
/// future when it has one. Other claims are kept for permissions.
struct ApplicationClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim?

    func verify(using algorithm: some JWTAlgorithm) throws {
        try exp?.verifyNotExpired()
        guard !sub.value.isEmpty else { throw JWTError.claimVerificationFailure(failedClaim: sub, reason: "empty subject") }
    }
}

/// Signs and checks tokens with the deployment's HS256 secret. Servers keep no token: any server
/// of a deployment checks any token.
struct TokenAuthority: Sendable {
    let keys: JWTKeyCollection
    let appId: String
    static let accessLifetime: TimeInterval = 30 * 60
    static let refreshLifetime: TimeInterval = 60 * 24 * 3600

    init(secret: [UInt8], appId: String) async {
        keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Data(secret)), digestAlgorithm: .sha256)
        self.appId = appId
    }

    struct Tokens: Codable, Sendable {
        var userId: String
        var accessToken: String
        var refreshToken: String
    }

    func issue(for userId: String) async throws -> Tokens {
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        func claims(_ kind: String, _ lifetime: TimeInterval) -> SessionClaims {
            SessionClaims(
                sub: SubjectClaim(value: userId), aud: AudienceClaim(value: [appId]), exp: ExpirationClaim(value: now + lifetime),
                iat: IssuedAtClaim(value: now), kind: kind)
        }
        return Tokens(
            userId: userId, accessToken: try await keys.sign(claims("access", Self.accessLifetime)),
            refreshToken: try await keys.sign(claims("refresh", Self.refreshLifetime)))
    }

    /// The user of a valid token of `kind` for this application; nil for any other token.
    func user(of token: String, kind: String) async -> String? {
        guard let claims = try? await keys.verify(token, as: SessionClaims.self), claims.kind == kind,
            claims.aud.value.contains(appId)
        else { return nil }
        return claims.sub.value
    }

    /// The user an application's own JWT names; nil when it does not verify.
    func applicationUser(of token: String) async -> String? {
        (try? await keys.verify(token, as: ApplicationClaims.self))?.sub.value
    }
}

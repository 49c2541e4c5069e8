import Foundation
import JWTKit

/// The claims of the tokens the server signs (Spec/SYNC.md §3).
struct SessionClaims: JWTPayload {
    var sub: SubjectClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    var kind: String
    /// The other claims of the application's JWT the user logged in with, for permissions (§10).
    var claims: [String: ClaimValue]?

    func verify(using algorithm: some JWTAlgorithm) throws {
        try exp.verifyNotExpired()
    }
}

/// The claims the server requires of an application's own token: a subject, an expiry in the
/// future and a not-before in the past when it has them, and the deployment's audience when the
/// server was given one (`--jwt-audience`). Its other claims with a string, number, boolean or null value are kept
/// for permissions (`%user.claims.NAME`, §10).
struct ApplicationClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim?
    var nbf: NotBeforeClaim?
    var aud: AudienceClaim?
    var others: [String: ClaimValue] = [:]

    private static let registered: Set<String> = ["sub", "exp", "iat", "nbf", "aud", "iss", "jti"]

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: ClaimKey.self)
        sub = try c.decode(SubjectClaim.self, forKey: ClaimKey("sub"))
        exp = try c.decodeIfPresent(ExpirationClaim.self, forKey: ClaimKey("exp"))
        nbf = try c.decodeIfPresent(NotBeforeClaim.self, forKey: ClaimKey("nbf"))
        aud = try c.decodeIfPresent(AudienceClaim.self, forKey: ClaimKey("aud"))
        for key in c.allKeys where !Self.registered.contains(key.stringValue) {
            if let v = try? c.decode(ClaimValue.self, forKey: key) { others[key.stringValue] = v }
        }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ClaimKey.self)
        try c.encode(sub, forKey: ClaimKey("sub"))
        try c.encodeIfPresent(exp, forKey: ClaimKey("exp"))
        try c.encodeIfPresent(nbf, forKey: ClaimKey("nbf"))
        try c.encodeIfPresent(aud, forKey: ClaimKey("aud"))
        for (k, v) in others { try c.encode(v, forKey: ClaimKey(k)) }
    }

    func verify(using algorithm: some JWTAlgorithm) throws {
        try exp?.verifyNotExpired()
        try nbf?.verifyNotBefore()
        guard !sub.value.isEmpty else { throw JWTError.claimVerificationFailure(failedClaim: sub, reason: "empty subject") }
    }
}

/// Any claim's name.
struct ClaimKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// The value of a claim kept for permissions.
enum ClaimValue: Codable, Sendable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let d = try? c.decode(Double.self) {
            self = .number(d)
        } else {
            self = .string(try c.decode(String.self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let s): try c.encode(s)
        case .number(let d): try c.encode(d)
        case .bool(let b): try c.encode(b)
        case .null: try c.encodeNil()
        }
    }
}

/// Who a session serves: the user's id and the claims kept from their login.
struct SyncUser: Sendable, Equatable {
    var id: String
    var claims: [String: ClaimValue] = [:]
}

/// Signs and checks tokens with the deployment's HS256 secret. Servers keep no token: any server
/// of a deployment checks any token.
struct TokenAuthority: Sendable {
    let keys: JWTKeyCollection
    let appId: String
    /// The audience an application's JWT must name (`aud`); nil: any or none.
    var audience: String?
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

    func issue(for user: SyncUser) async throws -> Tokens {
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        func claims(_ kind: String, _ lifetime: TimeInterval) -> SessionClaims {
            SessionClaims(
                sub: SubjectClaim(value: user.id), aud: AudienceClaim(value: [appId]), exp: ExpirationClaim(value: now + lifetime),
                iat: IssuedAtClaim(value: now), kind: kind, claims: user.claims.isEmpty ? nil : user.claims)
        }
        return Tokens(
            userId: user.id, accessToken: try await keys.sign(claims("access", Self.accessLifetime)),
            refreshToken: try await keys.sign(claims("refresh", Self.refreshLifetime)))
    }

    /// The user of a valid token of `kind` for this application; nil for any other token.
    func user(of token: String, kind: String) async -> SyncUser? {
        guard let claims = try? await keys.verify(token, as: SessionClaims.self), claims.kind == kind,
            claims.aud.value.contains(appId)
        else { return nil }
        return SyncUser(id: claims.sub.value, claims: claims.claims ?? [:])
    }

    /// The user an application's own JWT names, with its other claims; or why it is refused.
    func applicationUser(of token: String) async -> Result<SyncUser, SessionFailure> {
        let claims: ApplicationClaims
        do {
            claims = try await keys.verify(token, as: ApplicationClaims.self)
        } catch {
            return .failure(.invalidToken("the token does not verify (signature, expiry, not-before or subject): \(error)"))
        }
        if let audience, !(claims.aud?.value.contains(audience) ?? false) {
            return .failure(.invalidToken("the token's audience is not \(audience)"))
        }
        return .success(SyncUser(id: claims.sub.value, claims: claims.others))
    }
}

import Foundation
import NIOSSL
import PostgresNIO

/// How a `realm-sync` server runs: where it listens, which PostgreSQL database holds its data, and
/// the secret its tokens are signed with (Spec/SYNC.md §3).
public struct SyncServerConfiguration: Sendable {
    /// The application served (`App(id:)`); its objects live in the PostgreSQL schema of that name.
    public var appId: String
    /// The address to listen on: a loopback or other local address.
    public var host: String
    /// The port to listen on; 0 picks a free one (the server prints the one it got).
    public var port: Int
    /// The PostgreSQL database.
    public var postgres: PostgresClient.Configuration
    /// The HS256 secret that signs access tokens and the application's own JWTs.
    public var jwtSecret: [UInt8]
    /// The largest sync message the server reads (Spec/SYNC.md §4): 16 MiB.
    public var maximumMessageSize = 16 << 20
    /// How long a client has, once connected, to send HELLO; then the session ends (`badMessage`).
    public var handshakeTimeout: Duration = .seconds(10)
    /// How many objects a `BOOTSTRAP_TABLE` message carries, about (Spec/SYNC.md §8.3).
    public var bootstrapBatch = 20_000
    /// The bytes a `DOWNLOAD` or `DOWNLOAD_PART` message aims to stay under (Spec/SYNC.md §8.3):
    /// 4 MiB, far below any client's limit.
    public var downloadMessageSize = 4 << 20
    /// Who may read and write what (Spec/SYNC.md §10); nil: every user reads and writes every
    /// object.
    public var permissions: Permissions?
    /// TLS for the server's HTTP and WebSocket (swift-nio-ssl); nil: plain HTTP, for a server
    /// behind a TLS-terminating proxy or on loopback.
    public var tls: TLSConfiguration?
    /// The audience (`aud`) an application's JWT must name to log in; nil: any or none.
    public var jwtAudience: String?
    /// The most sessions one user may have open on this server at once; more are refused
    /// (`tooManySessions`, Spec/SYNC.md §9).
    public var maximumSessionsPerUser = 100
    /// How long the history keeps an entry that not every client has (Spec/SYNC.md §8.5); a client
    /// offline for longer gets a client reset. Nil: the history is kept whole.
    public var historyRetention: Duration?

    /// A server for `appId` on `host:port` storing in `postgres`, signing with `jwtSecret`.
    public init(appId: String, host: String, port: Int, postgres: PostgresClient.Configuration, jwtSecret: [UInt8]) throws(SyncServerError)
    {
        guard Self.isValidAppId(appId) else {
            throw SyncServerError("the application id \"\(appId)\" is not 1 to 48 letters, digits, '-' or '_'")
        }
        guard jwtSecret.count >= 32 else {
            throw SyncServerError("the JWT secret has \(jwtSecret.count) bytes; it needs at least 32")
        }
        self.appId = appId
        self.host = host
        self.port = port
        self.postgres = postgres
        self.jwtSecret = jwtSecret
    }

    static func isValidAppId(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 48
            && id.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_")
            }
    }

    /// A PostgreSQL connection configuration from a URL:
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, without TLS (the service and its
    /// database talk on a private network or loopback; `sslmode=require` is refused rather than
    /// silently ignored).
    public static func postgres(url: String) throws(SyncServerError) -> PostgresClient.Configuration {
        guard let u = URLComponents(string: url), u.scheme == "postgres" || u.scheme == "postgresql",
            let host = u.host, !host.isEmpty, let user = u.user, !user.isEmpty
        else {
            throw SyncServerError("\"\(url)\" is not a PostgreSQL URL (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE)")
        }
        if let mode = u.queryItems?.first(where: { $0.name == "sslmode" })?.value, mode != "disable" {
            throw SyncServerError("sslmode=\(mode) is not supported; use sslmode=disable on a private network")
        }
        let database = u.path.hasPrefix("/") ? String(u.path.dropFirst()) : u.path
        return PostgresClient.Configuration(
            host: host, port: u.port ?? 5432, username: user, password: u.password,
            database: database.isEmpty ? nil : database, tls: .disable)
    }
}

/// A server that cannot start: a bad option, or a database it cannot use.
public struct SyncServerError: Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

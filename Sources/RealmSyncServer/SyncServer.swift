import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import Metrics
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import RealmSyncProtocol
import ServiceLifecycle

/// The `realm-sync` server (Spec/SYNC.md): HTTP login endpoints and the sync WebSocket, with every
/// durable byte in PostgreSQL. Stateless: several servers on one database serve the same data.
///
/// ```swift
/// let server = try await SyncServer(configuration)
/// try await server.run()   // until SIGTERM or SIGINT
/// ```
public struct SyncServer: Sendable {
    /// The WebSocket subprotocol of protocol version 1 (Spec/SYNC.md §2.2).
    public static let subprotocolPrefix = "realm-swift-linux.sync."
    /// The protocol versions this server serves.
    public static let protocolVersions: [Int] = [1]

    let configuration: SyncServerConfiguration
    let logger: Logger

    /// A server with `configuration`, logging to `logger`.
    public init(_ configuration: SyncServerConfiguration, logger: Logger = Logger(label: "realm-sync")) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Connects to PostgreSQL, creates or migrates the store's tables, and serves until SIGTERM or
    /// SIGINT, when it stops accepting, closes its sessions (code 1000) and its connections.
    /// `onListening` gets the bound port once the server accepts connections.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        var database = configuration.postgres
        // The servers' own writes are not captured as other applications' (§8.4).
        database.options.additionalStartupParameters.append(("options", "-c realm_sync.applying=on"))
        let postgres = PostgresClient(configuration: database, backgroundLogger: logger)
        let store = SyncStore(client: postgres, appId: configuration.appId, logger: logger)
        let feed = VersionFeed(store: store, retention: configuration.historyRetention)
        var tokens = await TokenAuthority(secret: configuration.jwtSecret, appId: configuration.appId)
        tokens.audience = configuration.jwtAudience
        var app = Application(
            router: httpRouter(tokens: tokens),
            server: try server(store: store, feed: feed, tokens: tokens),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "realm-sync"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
            logger: logger
        )
        let logger = self.logger
        app.beforeServerStarts {
            // PostgreSQL may be starting too (a machine booting, a failover): tried for 30 s.
            let deadline = ContinuousClock.now + .seconds(30)
            while true {
                do {
                    try await store.migrate()
                    return
                } catch {
                    if ContinuousClock.now > deadline {
                        throw SyncServerError("cannot prepare the PostgreSQL store: \(String(reflecting: error))")
                    }
                    logger.warning("PostgreSQL is not ready; trying again", metadata: ["error": "\(String(reflecting: error))"])
                    try await Task.sleep(for: .milliseconds(250))
                }
            }
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: postgres),
                    .init(service: feed),
                    .init(service: app),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
    }

    private struct Login: Decodable {
        var token: String?
        var refreshToken: String?
    }

    private struct ErrorBody: ResponseEncodable {
        var error: String
        var message: String
    }

    /// HTTP/1 with the WebSocket upgrade, behind TLS when the configuration has it.
    private func server(store: SyncStore, feed: VersionFeed, tokens: TokenAuthority) throws -> HTTPServerBuilder {
        let plain = HTTPServerBuilder.http1WebSocketUpgrade(
            webSocketRouter: webSocketRouter(store: store, feed: feed, tokens: tokens),
            configuration: .init(ws: WebSocketServerConfiguration(maxFrameSize: configuration.maximumMessageSize)))
        guard let tls = configuration.tls else { return plain }
        return try .tls(plain, tlsConfiguration: tls)
    }

    /// The subprotocols a WebSocket upgrade request offers, in order.
    private static func offeredSubprotocols(_ request: Request) -> [String] {
        request.headers[values: .secWebSocketProtocol].flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    private static func refuse(_ status: HTTPResponse.Status, _ code: String, _ message: String) -> EditedResponse<ErrorBody> {
        EditedResponse(status: status, response: ErrorBody(error: code, message: message))
    }

    private func httpRouter(tokens: TokenAuthority) -> Router<BasicRequestContext> {
        let router = Router()
        let appId = configuration.appId
        let base = "/api/v1/apps/\(appId)/auth"
        router.post("\(base)/anonymous") { _, _ -> EditedResponse<TokenAuthority.Tokens> in
            let user = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            return EditedResponse(status: .ok, response: try await tokens.issue(for: SyncUser(id: user)))
        }
        let logger = self.logger
        router.post("\(base)/jwt") { request, context -> Response in
            let body = try? await request.decode(as: Login.self, context: context)
            let result: Result<SyncUser, SessionFailure> =
                if let token = body?.token { await tokens.applicationUser(of: token) } else { .failure(.invalidToken("no token")) }
            switch result {
            case .success(let user):
                return try EditedResponse(status: .ok, response: try await tokens.issue(for: user)).response(
                    from: request, context: context)
            case .failure(let refusal):
                logger.warning("login refused", metadata: ["reason": "\(refusal.message)"])
                Counter(label: "realm_sync_refused_logins").increment()
                return try Self.refuse(.unauthorized, "invalidToken", refusal.message).response(from: request, context: context)
            }
        }
        router.post("\(base)/refresh") { request, context -> Response in
            let body = try? await request.decode(as: Login.self, context: context)
            guard let token = body?.refreshToken, let user = await tokens.user(of: token, kind: "refresh") else {
                logger.warning("token refresh refused")
                Counter(label: "realm_sync_refused_logins").increment()
                return try Self.refuse(.unauthorized, "invalidToken", "the refresh token is missing, expired or not this server's")
                    .response(from: request, context: context)
            }
            return try EditedResponse(status: .ok, response: try await tokens.issue(for: user)).response(from: request, context: context)
        }
        return router
    }

    private func webSocketRouter(store: SyncStore, feed: VersionFeed, tokens: TokenAuthority) -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        let configuration = self.configuration
        let logger = self.logger
        let sessions = SessionCount(limit: configuration.maximumSessionsPerUser)
        router.ws("/api/v1/apps/\(configuration.appId)/sync") { request, _ in
            // Any version of this protocol is accepted here, so that a version this server does
            // not serve gets a typed error (protocolVersion) instead of a bare HTTP 400.
            let offered = Self.offeredSubprotocols(request)
            guard let chosen = offered.first(where: { $0.hasPrefix(Self.subprotocolPrefix) }) else { return .dontUpgrade }
            return .upgrade([.secWebSocketProtocol: chosen])
        } onUpgrade: { inbound, outbound, context in
            let request = context.request
            let offered = Self.offeredSubprotocols(request)
            let versions = offered.compactMap {
                $0.hasPrefix(Self.subprotocolPrefix) ? Int($0.dropFirst(Self.subprotocolPrefix.count)) : nil
            }
            // A refused client is told so in answer to its first message (HELLO): an ERROR sent
            // at once can reach the client in the same packet as the upgrade's answer, where a
            // client's upgrade handler may drop it.
            var refusal: SessionFailure?
            let bearer = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
            let user = if let bearer { await tokens.user(of: bearer, kind: "access") } else { SyncUser?.none }
            if !versions.contains(where: Self.protocolVersions.contains) {
                refusal = .protocolVersion(
                    "this server serves protocol versions \(Self.protocolVersions.map(String.init).joined(separator: ", "))")
            } else if user == nil {
                refusal = .invalidToken("the access token is missing, expired or not signed for this application")
            } else if let user, !sessions.open(for: user.id) {
                refusal = .tooManySessions(
                    "the user has \(configuration.maximumSessionsPerUser) sessions on this server, the most it serves a user")
            }
            defer { if refusal == nil, let user { sessions.close(for: user.id) } }
            let session = SyncSession(
                store: store, feed: feed, user: user ?? SyncUser(id: ""), refusal: refusal, configuration: configuration,
                outbound: outbound,
                logger: logger)
            try await session.run(inbound)
        }
        return router
    }
}

extension TokenAuthority.Tokens: ResponseEncodable {}

/// The sessions each user has open on this server, kept under a limit.
final class SessionCount: Sendable {
    private let counts = NIOLockedValueBox<[String: Int]>([:])
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Counts a new session of `user`; false (and not counted) when the user has `limit`.
    func open(for user: String) -> Bool {
        counts.withLockedValue { c in
            guard c[user, default: 0] < limit else { return false }
            c[user, default: 0] += 1
            return true
        }
    }

    func close(for user: String) {
        counts.withLockedValue { c in
            c[user, default: 1] -= 1
            if c[user] == 0 { c[user] = nil }
        }
    }
}

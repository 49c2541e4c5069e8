import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import RealmStorage

/// Where an ``App`` finds its server and keeps its files.
///
/// ```swift
/// let app = App(id: "default", configuration: AppConfiguration(baseURL: "http://127.0.0.1:8080"))
/// ```
public struct AppConfiguration: Sendable, Equatable {
    /// The server's base URL (`realm-sync serve --listen`), `http://` or `https://`.
    public var baseURL: String?
    /// Other servers of the same deployment (`realm-sync` processes serving the same PostgreSQL
    /// database), tried in turn after ``baseURL`` when the server in use cannot be reached: a
    /// login goes to the next one at once, a sync session connects to the next one. Not in
    /// RealmSwift, whose service had one URL.
    public var additionalBaseURLs: [String] = []
    /// A PEM file of the certificate authorities to trust for `https://` base URLs, instead of the
    /// system's (a deployment with its own CA, or a test certificate). Not in RealmSwift, which
    /// used the platform's trust store.
    public var trustedCertificateAuthorities: URL?
    /// Where the app keeps its users and synced Realm files. Default: `realm-sync/` in the current
    /// directory (RealmSwift keeps them in the platform's application-support directory, which
    /// Linux does not have).
    public var rootDirectory: URL?
    /// How long sync connections may take (nil: RealmSwift's defaults).
    public var syncTimeouts: SyncTimeoutOptions?

    /// A configuration for the server at `baseURL` (default `http://127.0.0.1:8080`) and the
    /// other servers of its deployment, if any.
    public init(
        baseURL: String? = nil, rootDirectory: URL? = nil, syncTimeouts: SyncTimeoutOptions? = nil, additionalBaseURLs: [String] = [],
        trustedCertificateAuthorities: URL? = nil
    ) {
        self.baseURL = baseURL
        self.additionalBaseURLs = additionalBaseURLs
        self.trustedCertificateAuthorities = trustedCertificateAuthorities
        self.rootDirectory = rootDirectory
        self.syncTimeouts = syncTimeouts
    }
}

/// The timeouts of sync connections, in milliseconds (RealmSwift's `SyncTimeoutOptions`).
///
/// ```swift
/// let config = AppConfiguration(baseURL: url, syncTimeouts: SyncTimeoutOptions(connectTimeout: 15_000))
/// ```
public struct SyncTimeoutOptions: Sendable, Equatable {
    /// The longest a connection may take to be established: the TCP connection, the WebSocket
    /// handshake and the server's `WELCOME` (Spec/SYNC.md §2.2). A connection that takes longer
    /// is closed, reported to the error handler (`connectionFailed`) once, and made again.
    /// Default 120,000 (2 minutes), as in RealmSwift.
    public var connectTimeout: UInt
    /// How long RealmSwift keeps an unused connection open. Kept for source compatibility: this
    /// client keeps one connection per synced file while its session is active.
    public var connectionLingerTime: UInt
    /// How often RealmSwift pings the server. Kept for source compatibility: this client pings
    /// every 10 seconds and treats a pong missing by the next ping as a lost connection.
    public var pingKeepalivePeriod: UInt
    /// How long RealmSwift waits for a pong. Kept for source compatibility (see
    /// ``pingKeepalivePeriod``).
    public var pongKeepaliveTimeout: UInt
    /// RealmSwift's limit on fast reconnections. Kept for source compatibility: this client
    /// reconnects with a backoff from 0.1 to 5 seconds.
    public var fastReconnectLimit: UInt

    /// The given timeouts; each left out takes RealmSwift's default.
    public init(
        connectTimeout: UInt? = nil, connectionLingerTime: UInt? = nil, pingKeepalivePeriod: UInt? = nil,
        pongKeepaliveTimeout: UInt? = nil, fastReconnectLimit: UInt? = nil
    ) {
        self.connectTimeout = connectTimeout ?? 120_000
        self.connectionLingerTime = connectionLingerTime ?? 30_000
        self.pingKeepalivePeriod = pingKeepalivePeriod ?? 60_000
        self.pongKeepaliveTimeout = pongKeepaliveTimeout ?? 120_000
        self.fastReconnectLimit = fastReconnectLimit ?? 60_000
    }
}

/// How a user logs in (RealmSwift's `Credentials`; those this server serves).
public enum Credentials: Sendable, Equatable {
    /// A new anonymous user, or the one already logged in anonymously.
    case anonymous
    /// A JSON Web Token the application issued, signed (HS256) with the server's secret; its
    /// `sub` claim names the user.
    case jwt(token: String)
}

/// A client of one sync application on one server: its users and their sync sessions.
/// `App(id:)` with the same id and configuration shares one set of users and sessions in a
/// process, as RealmSwift's cached apps do.
///
/// ```swift
/// let app = App(id: "default", configuration: AppConfiguration(baseURL: "http://127.0.0.1:8080"))
/// let user = try await app.login(credentials: .anonymous)
/// let realm = try await Realm(configuration: user.flexibleSyncConfiguration(), downloadBeforeOpen: .always)
/// ```
public final class App: Sendable {
    /// The application's id (`realm-sync serve --app-id`).
    public let appId: String
    /// The configuration it was made with.
    public let configuration: AppConfiguration
    let core: AppCore

    /// The app `id` on the server `configuration` names.
    public init(id: String, configuration: AppConfiguration? = nil) {
        self.appId = id
        self.configuration = configuration ?? AppConfiguration()
        self.core = AppCore.shared(id: id, configuration: self.configuration)
    }

    /// The sync manager: the error handler every session of the app reports to.
    public var syncManager: SyncManager { core.syncManager }

    /// The user who logged in last and has not logged out, if any (kept across launches).
    public var currentUser: User? { core.currentUser }

    /// Every user logged in on this app, by id.
    public var allUsers: [String: User] { core.allUsers }

    /// Logs in with `credentials` and makes the user ``currentUser``.
    /// - Throws: ``AppError`` — `.httpRequestFailed` (the server is unreachable or failed),
    ///   `.authError` (the credentials were refused).
    public func login(credentials: Credentials) async throws -> User {
        try await core.login(credentials)
    }

    /// ``login(credentials:)`` with a completion handler.
    public func login(credentials: Credentials, _ completion: @escaping @Sendable (Result<User, any Error>) -> Void) {
        Task {
            do { completion(.success(try await core.login(credentials))) } catch { completion(.failure(error)) }
        }
    }
}

/// Where a sync session's errors go (RealmSwift's `SyncManager`).
public final class SyncManager: Sendable {
    private let handler = Locked<(@Sendable (any Error, SyncSession?) -> Void)?>(nil)
    /// The app's sessions, by file path.
    let sessions = Locked<[String: SyncClient]>([:])

    /// Stops the session of the file at `path` and forgets it: the next open of the file starts
    /// a new one.
    func forgetSession(path: String) {
        sessions.withLock { $0.removeValue(forKey: path) }?.detach()
    }

    /// Called with every error of every session of the app that has no error handler of its own
    /// (``SyncConfiguration``), on a background thread.
    public var errorHandler: (@Sendable (any Error, SyncSession?) -> Void)? {
        get { handler.withLock { $0 } }
        set { handler.withLock { $0 = newValue } }
    }
}

/// Whether a user is logged in (RealmSwift's `User.State`).
public enum UserState: Sendable, Equatable {
    /// Logged in: sessions sync.
    case loggedIn
    /// Logged out: sessions are stopped; logging in again resumes them.
    case loggedOut
    /// Removed from the app.
    case removed
}

/// A user of an ``App`` (RealmSwift's `User`): opens synced Realms with
/// ``flexibleSyncConfiguration(clientResetMode:initialSubscriptions:rerunOnOpen:)``.
public final class User: Sendable {
    /// The user's id on the server (the `sub` of its tokens).
    public let id: String
    let core: AppCore
    private let tokens: Locked<(access: String?, refresh: String?, state: UserState)>

    init(id: String, access: String?, refresh: String?, core: AppCore) {
        self.id = id
        self.core = core
        self.tokens = Locked((access, refresh, access == nil ? .loggedOut : .loggedIn))
    }

    /// The access token the sync sessions present (valid 30 minutes; renewed with the refresh
    /// token).
    public var accessToken: String? { tokens.withLock { $0.access } }
    /// The refresh token (valid 60 days).
    public var refreshToken: String? { tokens.withLock { $0.refresh } }
    /// Whether the user is logged in, out or removed.
    public var state: UserState { tokens.withLock { $0.state } }
    /// Whether the user is logged in.
    public var isLoggedIn: Bool { state == .loggedIn }

    /// Logs the user out: its sessions stop and its tokens are forgotten (its files stay).
    public func logOut() async throws {
        core.logOut(self)
    }

    /// ``logOut()`` with a completion handler.
    public func logOut(_ completion: @escaping @Sendable ((any Error)?) -> Void) {
        core.logOut(self)
        completion(nil)
    }

    func update(access: String?, refresh: String?, state: UserState) {
        tokens.withLock { $0 = (access, refresh, state) }
    }

    /// A fresh access token from the server, through the refresh token.
    /// - Throws: ``AppError`` `.invalidSession` when the refresh token is refused.
    func refreshAccessToken() async throws -> String {
        guard let refresh = refreshToken, isLoggedIn else { throw AppError(.invalidSession, "the user is logged out") }
        let issued = try await core.post("refresh", ["refreshToken": refresh])
        update(access: issued.accessToken, refresh: issued.refreshToken, state: .loggedIn)
        core.saveUsers()
        return issued.accessToken
    }
}

/// What an app shares between its `App` instances in a process: users, sessions, the error
/// handler.
final class AppCore: Sendable {
    let appId: String
    let configuration: AppConfiguration
    let syncManager = SyncManager()
    private struct Users {
        var users: [User] = []
        var current: String?
        var anonymous: Set<String> = []
    }
    private let state = Locked(Users())
    var sessions: Locked<[String: SyncClient]> { syncManager.sessions }

    private static let registry = Locked<[String: AppCore]>([:])

    static func shared(id: String, configuration: AppConfiguration) -> AppCore {
        let key =
            "\(id)\u{0}\(([configuration.baseURL ?? ""] + configuration.additionalBaseURLs).joined(separator: " "))\u{0}\(configuration.rootDirectory?.path ?? "")\u{0}\(configuration.trustedCertificateAuthorities?.path ?? "")"
        return registry.withLock { r in
            if let c = r[key] { return c }
            let c = AppCore(appId: id, configuration: configuration)
            r[key] = c
            return c
        }
    }

    private init(appId: String, configuration: AppConfiguration) {
        self.appId = appId
        self.configuration = configuration
        servers = ([configuration.baseURL ?? "http://127.0.0.1:8080"] + configuration.additionalBaseURLs).map { url in
            var s = url
            while s.hasSuffix("/") { s.removeLast() }
            return s
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        if let authorities = configuration.trustedCertificateAuthorities { tls.trustRoots = .file(authorities.path) }
        self.tls = tls
        // One HTTP client per app, for the process's life (apps are shared and never released).
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        loadUsers()
    }

    /// How `https://` and `wss://` connections check the server's certificate.
    let tls: TLSConfiguration
    /// The client of the HTTP endpoints (logins).
    private let http: HTTPClient

    /// The deployment's servers: the base URL, then the additional ones.
    let servers: [String]
    /// The index of the server in use.
    private let serverIndex = Locked(0)

    /// The base URL of the server in use.
    var baseURL: String { servers[serverIndex.withLock { $0 }] }

    /// Moves to the next server when `url` (which could not be reached) is still the one in use.
    func unreachable(_ url: String) {
        serverIndex.withLock { i in
            if servers[i] == url { i = (i + 1) % servers.count }
        }
    }

    var directory: URL {
        let root =
            configuration.rootDirectory
            ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("realm-sync")
        return root.appendingPathComponent(appId.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? String($0) : "_" }.joined())
    }

    var currentUser: User? {
        state.withLock { s in s.users.first { $0.id == s.current && $0.isLoggedIn } }
    }

    var allUsers: [String: User] {
        state.withLock { s in Dictionary(s.users.filter(\.isLoggedIn).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a }) }
    }

    struct Issued: Codable {
        var userId: String
        var accessToken: String
        var refreshToken: String
    }

    func login(_ credentials: Credentials) async throws -> User {
        let issued: Issued
        switch credentials {
        case .anonymous:
            if let user = state.withLock({ s in s.users.first { $0.isLoggedIn && s.anonymous.contains($0.id) } }) {
                state.withLock { $0.current = user.id }
                saveUsers()
                return user
            }
            issued = try await post("anonymous", [:])
        case .jwt(let token):
            issued = try await post("jwt", ["token": token])
        }
        let user = state.withLock { s in
            if let u = s.users.first(where: { $0.id == issued.userId }) {
                u.update(access: issued.accessToken, refresh: issued.refreshToken, state: .loggedIn)
                s.current = u.id
                return u
            }
            let u = User(id: issued.userId, access: issued.accessToken, refresh: issued.refreshToken, core: self)
            s.users.append(u)
            s.current = u.id
            return u
        }
        if credentials == .anonymous { _ = state.withLock { $0.anonymous.insert(user.id) } }
        saveUsers()
        for client in sessions.withLock({ Array($0.values) }) where client.user === user { client.userLoggedIn() }
        return user
    }

    func logOut(_ user: User) {
        user.update(access: nil, refresh: nil, state: .loggedOut)
        state.withLock { s in if s.current == user.id { s.current = nil } }
        saveUsers()
        for client in sessions.withLock({ Array($0.values) }) where client.user === user { client.userLoggedOut() }
    }

    /// POSTs to `auth/PATH` and decodes the issued tokens, trying each server of the deployment in
    /// turn while they cannot be reached.
    func post(_ path: String, _ body: [String: String]) async throws -> Issued {
        var attempts = servers.count
        while true {
            do {
                return try await post(path, body, to: baseURL)
            } catch let error as Unreachable {
                attempts -= 1
                unreachable(error.server)
                if attempts == 0 { throw error.error }
            }
        }
    }

    /// A server that did not answer, and the error to report when none does.
    private struct Unreachable: Error {
        let server: String
        let error: AppError
    }

    private func post(_ path: String, _ body: [String: String], to baseURL: String) async throws -> Issued {
        guard URL(string: "\(baseURL)/api/v1/apps/\(appId)/auth/\(path)") != nil else {
            throw AppError(.httpRequestFailed, "the base URL \(baseURL) is not a URL")
        }
        var request = HTTPClientRequest(url: "\(baseURL)/api/v1/apps/\(appId)/auth/\(path)")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: Array(try JSONEncoder().encode(body))))
        let data: Data
        let status: Int
        do {
            let response = try await http.execute(request, timeout: .seconds(30))
            status = Int(response.status.code)
            data = Data(Array(buffer: try await response.body.collect(upTo: 1 << 20)))
        } catch {
            throw Unreachable(
                server: baseURL, error: AppError(.httpRequestFailed, "the server at \(baseURL) could not be reached: \(error)"))
        }
        guard status == 200 else {
            let message = (try? JSONDecoder().decode([String: String].self, from: data))?["message"] ?? "HTTP status \(status)"
            throw AppError(status == 401 ? (path == "refresh" ? .invalidSession : .authError) : .httpRequestFailed, message, status: status)
        }
        do {
            return try JSONDecoder().decode(Issued.self, from: data)
        } catch {
            throw AppError(.httpRequestFailed, "the server's answer is not a login: \(error)", status: status)
        }
    }

    // MARK: Users kept across launches

    private struct SavedUser: Codable {
        var id: String
        var accessToken: String?
        var refreshToken: String?
        var anonymous: Bool
    }

    private struct SavedUsers: Codable {
        var users: [SavedUser]
        var current: String?
    }

    private var usersFile: URL { directory.appendingPathComponent("users.json") }

    private func loadUsers() {
        guard let data = try? Data(contentsOf: usersFile), let saved = try? JSONDecoder().decode(SavedUsers.self, from: data) else {
            return
        }
        state.withLock { s in
            s.users = saved.users.map { User(id: $0.id, access: $0.accessToken, refresh: $0.refreshToken, core: self) }
            s.current = saved.current
            s.anonymous = Set(saved.users.filter(\.anonymous).map(\.id))
        }
    }

    func saveUsers() {
        let saved = state.withLock { s in
            SavedUsers(
                users: s.users.map {
                    SavedUser(id: $0.id, accessToken: $0.accessToken, refreshToken: $0.refreshToken, anonymous: s.anonymous.contains($0.id))
                }, current: s.current)
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try JSONEncoder().encode(saved).write(to: usersFile, options: .atomic)
        } catch {
            syncManager.errorHandler?(SyncError(.clientInternalError, "the app's users could not be saved: \(error)"), nil)
        }
    }
}

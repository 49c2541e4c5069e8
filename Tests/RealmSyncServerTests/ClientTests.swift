import Foundation
import NIOCore
import NIOPosix
import PostgresNIO
import RealmStorage
import RealmSwift
import RealmSwiftSync
import Testing

/// A synced class of the client tests (its own name, so its table does not meet the protocol
/// tests' classes in the shared database).
final class ClientDog: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var owner: ClientOwner?

    convenience init(name: String, age: Int) {
        self.init()
        self.name = name
        self.age = age
    }
}

final class ClientOwner: Object {
    @Persisted(primaryKey: true) var _id = ""
    @Persisted var city = ""
}

/// One client of the tests: an app with its own root directory (so two clients in one process
/// have two users and two files), logged in anonymously, with every ClientDog and ClientOwner
/// subscribed.
struct TestClient: Sendable {
    let app: App
    let user: User
    let configuration: Realm.Configuration
    let root: URL

    init(_ server: ServerProcess, root: URL? = nil, subscribe: Bool = true) async throws {
        self.root = root ?? FileManager.default.temporaryDirectory.appendingPathComponent("realm-client-\(UUID().uuidString)")
        app = App(
            id: server.appId,
            configuration: AppConfiguration(
                baseURL: server.baseURL, rootDirectory: self.root, syncTimeouts: SyncTimeoutOptions(connectTimeout: 15_000)))
        user = try await app.login(credentials: .anonymous)
        var config =
            subscribe
            ? user.flexibleSyncConfiguration(initialSubscriptions: { subs in
                subs.append(QuerySubscription<ClientDog>(name: "dogs"))
                subs.append(QuerySubscription<ClientOwner>(name: "owners"))
            })
            : user.flexibleSyncConfiguration()
        config.objectTypes = [ClientDog.self, ClientOwner.self]
        configuration = config
    }

    /// A client of `appId` of its own (user and directory) through an app configured as
    /// `configure` says (the base URL, other servers, trusted authorities; the directory and a
    /// 15 s connect timeout are set here), logged in with `credentials`, whose file holds
    /// `objectTypes` with `initialSubscriptions`.
    init(
        appId: String, credentials: Credentials = .anonymous, objectTypes: [ObjectBase.Type],
        configure: (inout AppConfiguration) -> Void, initialSubscriptions: @escaping @Sendable (SyncSubscriptionSet) -> Void
    ) async throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("realm-client-\(UUID().uuidString)")
        var appConfiguration = AppConfiguration(rootDirectory: root, syncTimeouts: SyncTimeoutOptions(connectTimeout: 15_000))
        configure(&appConfiguration)
        app = App(id: appId, configuration: appConfiguration)
        user = try await app.login(credentials: credentials)
        var config = user.flexibleSyncConfiguration(initialSubscriptions: initialSubscriptions)
        config.objectTypes = objectTypes
        configuration = config
    }

    /// The same client with another configuration (same user and directory).
    init(_ other: TestClient, configuration: Realm.Configuration) {
        app = other.app
        user = other.user
        root = other.root
        self.configuration = configuration
    }

    /// The file's dogs as (name, age), by name.
    func dogs() throws -> [String] {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        return realm.objects(ClientDog.self).sorted(byKeyPath: "name").map { "\($0.name):\($0.age)" }
    }

    func write(_ body: (Realm) throws -> Void) throws {
        let realm = try Realm(configuration: configuration)
        try realm.write { try body(realm) }
    }

    /// Logs the user out: its sessions stop (they would otherwise retry a stopped server).
    func close() async { try? await user.logOut() }

    var session: SyncSession {
        get throws { try #require(try Realm(configuration: configuration).syncSession) }
    }

    /// Waits until the server has this client's changes and this client has the server's.
    func sync() async throws {
        try await session.wait(for: .upload)
        try await session.wait(for: .download)
    }
}

/// Waits (bounded) for `condition`.
func eventually(_ seconds: Double = 20, _ condition: () throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try condition()
}

/// A `wait` bounded in time: fails the test instead of hanging it.
func bounded<T: Sendable>(_ seconds: Double = 30, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        guard let first = try await group.next(), let value = first else {
            group.cancelAll()
            throw TimedOut(seconds: seconds)
        }
        group.cancelAll()
        return value
    }
}

extension SyncServerTests {
    @Test func twoClientsConvergeThroughTheServer() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let a = try await TestClient(server)
        let b = try await TestClient(server)
        try a.write { $0.add(ClientDog(name: "Rex", age: 3)) }
        try await bounded { try await a.sync() }
        _ = try b.dogs()  // opens b's file: its session starts
        try await bounded { try await b.sync() }
        #expect(try b.dogs() == ["Rex:3"])

        // A change on b reaches a; a link to an owner travels with it.
        try b.write { realm in
            let dog = try #require(realm.objects(ClientDog.self).first)
            dog.age = 4
            dog.owner = realm.create(ClientOwner.self, value: ["_id": "ada", "city": "Lyon"])
        }
        try await bounded { try await b.sync() }
        try await bounded { try await a.sync() }
        #expect(try a.dogs() == ["Rex:4"])
        let owner = try Realm(configuration: a.configuration).objects(ClientDog.self).first?.owner
        #expect(owner?._id == "ada" && owner?.city == "Lyon")

        // A delete on a leaves b.
        try a.write { $0.delete($0.objects(ClientDog.self)) }
        try await bounded { try await a.sync() }
        try await bounded { try await b.sync() }
        #expect(try b.dogs() == [])
        await a.close()
        await b.close()
    }

    @Test func anObjectThatNoSubscriptionMatchesLeavesTheFile() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let a = try await TestClient(server)
        let b = try await TestClient(server)
        try a.write { realm in
            realm.add(ClientDog(name: "Old", age: 12))
            realm.add(ClientDog(name: "Young", age: 1))
        }
        try await bounded { try await a.sync() }
        _ = try b.dogs()
        try await bounded { try await b.sync() }
        #expect(try b.dogs() == ["Old:12", "Young:1"])

        let subs = try Realm(configuration: b.configuration).subscriptions
        try await bounded {
            try await subs.update {
                subs.remove(named: "dogs")
                subs.append(QuerySubscription<ClientDog>(name: "old") { $0.age > 5 })
            }
        }
        #expect(subs.state == .complete)
        #expect(subs.count == 2)
        #expect(subs.first(named: "old")?.queryString == "age > 5")
        #expect(try b.dogs() == ["Old:12"])

        // A dog that grows old enough enters b's file.
        try a.write { realm in realm.objects(ClientDog.self).filter("name == 'Young'").first?.age = 6 }
        try await bounded { try await a.sync() }
        #expect(try await eventually { try b.dogs() == ["Old:12", "Young:6"] })
        await a.close()
        await b.close()
    }

    @Test func anUnsupportedQueryIsATypedErrorOfTheUpdate() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let a = try await TestClient(server)
        _ = try a.dogs()
        let subs = try Realm(configuration: a.configuration).subscriptions
        do {
            try await bounded {
                try await subs.update { subs.append(QuerySubscription<ClientDog>(name: "owned") { $0.owner.city == "Lyon" }) }
            }
            Issue.record("a query through a link was accepted")
        } catch Realm.Error.subscriptionFailed {
            // As RealmSwift: the update throws, and the set's state is an error.
        }
        if case .error = subs.state {} else { Issue.record("the set's state is \(subs.state)") }
        await a.close()
    }

    @Test func localWritesGoOnOfflineAndAreUploadedOnce() async throws {
        let server = try await ServerProcess()
        let a = try await TestClient(server)
        try a.write { $0.add(ClientDog(name: "Before", age: 1)) }
        try await bounded { try await a.sync() }
        // The server goes away: writes go on, and the error handler hears of the connection.
        _ = server.stop(signal: SIGKILL)
        for i in 0..<5 { try a.write { $0.add(ClientDog(name: "Offline\(i)", age: i)) } }
        #expect(try a.dogs().count == 6)
        // A new server process on the same port and database: the client reconnects and uploads.
        let again = try await ServerProcess(appId: server.appId, port: server.port)
        defer { again.stop() }
        try await bounded(60) { try await a.sync() }
        let b = try await TestClient(again)
        _ = try b.dogs()
        try await bounded { try await b.sync() }
        #expect(try b.dogs() == ["Before:1", "Offline0:0", "Offline1:1", "Offline2:2", "Offline3:3", "Offline4:4"])
        let count = try await TestDatabase.withClient { client in
            let rows = try await client.query(
                PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM \"\(server.appId)\".\"ClientDog\" WHERE name LIKE 'Offline%'"))
            var n = 0
            for try await (c) in rows.decode(Int64.self) { n = Int(c) }
            return n
        }
        #expect(count == 5)
        await a.close()
        await b.close()
    }

    @Test func anObjectCreatedOutsideEverySubscriptionIsUndoneAndReported() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let errors = Locked<[SyncError]>([])
        let plain = try await TestClient(server, subscribe: false)
        var config = plain.configuration
        config.syncConfiguration?.initialSubscriptions = { subs in subs.append(QuerySubscription<ClientDog>(name: "old") { $0.age > 5 }) }
        config.syncConfiguration?.errorHandler = { error, _ in if let e = error as? SyncError { errors.withLock { $0.append(e) } } }
        let a = TestClient(plain, configuration: config)
        try a.write { realm in
            realm.add(ClientDog(name: "Puppy", age: 1))
            realm.add(ClientDog(name: "Senior", age: 9))
        }
        try await bounded { try await a.sync() }
        #expect(try a.dogs() == ["Senior:9"])
        let rejected = errors.withLock { $0 }.first { $0.code == .writeRejected }
        #expect(rejected?.compensatingWriteInfo?.map(\.objectType) == ["ClientDog"])
        let b = try await TestClient(server)
        _ = try b.dogs()
        try await bounded { try await b.sync() }
        #expect(try b.dogs() == ["Senior:9"])
        await a.close()
        await b.close()
    }

    @Test func loginFailuresAreTypedErrors() async throws {
        // Nothing listens on port 1: the HTTP request fails.
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("realm-client-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let nowhere = App(id: "nowhere", configuration: AppConfiguration(baseURL: "http://127.0.0.1:1", rootDirectory: root))
        do {
            _ = try await nowhere.login(credentials: .anonymous)
            Issue.record("a login without a server succeeded")
        } catch let e as AppError {
            #expect(e.code == .httpRequestFailed)
        }
        #expect(nowhere.currentUser == nil)
        // A token the server did not sign: refused, and nobody is logged in.
        let server = try await ServerProcess()
        defer { server.stop() }
        let app = App(id: server.appId, configuration: AppConfiguration(baseURL: server.baseURL, rootDirectory: root))
        do {
            _ = try await app.login(credentials: .jwt(token: "not.a.token"))
            Issue.record("a forged token logged in")
        } catch let e as AppError {
            #expect(e.code == .authError)
            #expect(e.httpStatusCode == 401)
        }
        #expect(app.currentUser == nil)
        // The anonymous user is kept across App instances (and launches: users.json).
        let user = try await app.login(credentials: .anonymous)
        #expect(
            App(id: server.appId, configuration: AppConfiguration(baseURL: server.baseURL, rootDirectory: root)).currentUser?.id == user.id)
        #expect(try await app.login(credentials: .anonymous).id == user.id)
        try await user.logOut()
        #expect(app.currentUser == nil && user.state == .loggedOut)
    }

    @Test func resultsSubscribeAndUnsubscribeAsRealmSwiftDoes() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let writer = try await TestClient(server)
        try writer.write { realm in for age in 1...10 { realm.add(ClientDog(name: "d\(age)", age: age)) } }
        try await bounded { try await writer.sync() }
        let reader = try await TestClient(server, subscribe: false)
        let isolation = ClientActor()
        try await isolation.run { actor in
            let realm = try await Realm(configuration: reader.configuration, actor: actor)
            #expect(realm.subscriptions.count == 0)
            let older = try await realm.objects(ClientDog.self).where { $0.age >= 8 }.subscribe(name: "older")
            #expect(older.count == 3)
            #expect(realm.subscriptions.count == 1)
            // The same query without a name: an unnamed subscription is added once.
            let unnamed = try await realm.objects(ClientDog.self).where { $0.age >= 8 }.subscribe()
            _ = try await realm.objects(ClientDog.self).where { $0.age >= 8 }.subscribe()
            #expect(realm.subscriptions.count == 2)
            // A name taken by another query gets the new query.
            let younger = try await realm.objects(ClientDog.self).where { $0.age < 3 }.subscribe(name: "older", waitForSync: .always)
            #expect(realm.subscriptions.count == 2)
            #expect(realm.subscriptions.first(named: "older")?.queryString == "age < 3")
            #expect(realm.objects(ClientDog.self).count == 5)
            #expect(younger.count == 2)
            // Results that did not subscribe remove no named subscription.
            realm.objects(ClientDog.self).where { $0.age < 3 }.unsubscribe()
            #expect(realm.subscriptions.count == 2)
            unnamed.unsubscribe()
            #expect(realm.subscriptions.count == 1)
            younger.unsubscribe()
            #expect(realm.subscriptions.count == 0)
            let session = try #require(realm.syncSession)
            try await bounded { try await session.wait(for: .download) }
            realm.refresh()
            #expect(realm.objects(ClientDog.self).count == 0)
            _ = older
        }
        await writer.close()
        await reader.close()
    }
}

/// An actor for the tests that need an actor-isolated Realm (`Results.subscribe`).
actor ClientActor {
    func run<T: Sendable>(_ body: @Sendable (isolated ClientActor) async throws -> T) async throws -> T { try await body(self) }
}

/// A bounded wait that ran out.
struct TimedOut: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "not done within \(seconds) s" }
}

extension SyncServerTests {
    /// A server that accepts the TCP connection but never answers the WebSocket handshake does not
    /// hold the session in `.connecting`: after the connect timeout the client reports
    /// `connectionFailed` (once) and connects again.
    @Test func aHandshakeThatNeverAnswersTimesOutAndTheClientTriesAgain() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("realm-client-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        // A user logged in through the real server, then an app of the same directory whose
        // server accepts connections and says nothing.
        _ = try await App(id: server.appId, configuration: AppConfiguration(baseURL: server.baseURL, rootDirectory: root))
            .login(credentials: .anonymous)
        let silent = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { $0.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { silent.close(promise: nil) }
        let port = try #require(silent.localAddress?.port)
        let app = App(
            id: server.appId,
            configuration: AppConfiguration(
                baseURL: "http://127.0.0.1:\(port)", rootDirectory: root, syncTimeouts: SyncTimeoutOptions(connectTimeout: 500)))
        let user = try #require(app.currentUser)
        let errors = Locked<[SyncError]>([])
        app.syncManager.errorHandler = { error, _ in if let e = error as? SyncError { errors.withLock { $0.append(e) } } }
        var config = user.flexibleSyncConfiguration()
        config.objectTypes = [ClientDog.self, ClientOwner.self]
        let session = try #require(try Realm(configuration: config).syncSession)
        #expect(try await eventually(10) { session.trace.filter { $0.hasSuffix(": connecting") }.count >= 3 }, "\(session.trace)")
        let reported = errors.withLock { $0 }
        #expect(reported.count == 1 && reported.first?.code == .connectionFailed, "\(reported)")
        #expect(reported.first?.message.contains("no answer within") == true, "\(reported)")
        #expect(session.connectionState != .connected)
    }
}

import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import PostgresNIO
import RealmSyncProtocol
import RealmSyncServer
import RealmTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The PostgreSQL server the sync tests use: `REALM_SYNC_POSTGRES` (a URL; `.ci/run` starts a
/// private cluster on loopback and sets it, see Tools/postgres-test-cluster). Without it the
/// suites are skipped, unless `REALM_SYNC_TESTS=required` (as in CI) makes that a failure.
enum TestDatabase {
    static let url = ProcessInfo.processInfo.environment["REALM_SYNC_POSTGRES"]
    static var available: Bool {
        url != nil || ProcessInfo.processInfo.environment["REALM_SYNC_TESTS"] == "required"
    }

    /// Runs `body` with a client of the test database.
    static func withClient<T: Sendable>(_ body: (PostgresClient) async throws -> T) async throws -> T {
        let url = try #require(url, "REALM_SYNC_POSTGRES is not set: start a cluster with Tools/postgres-test-cluster")
        var logger = Logger(label: "test")
        logger.logLevel = .warning  // the pool's notes of connections closed at the end are noise here
        let client = PostgresClient(configuration: try SyncServerConfiguration.postgres(url: url), backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            // A trivial query first, retried: right after PostgreSQL restarts (the crash tests) a
            // first connection can fail.
            for attempt in 1...50 {
                do {
                    try await client.query("SELECT 1")
                    break
                } catch {
                    if attempt == 50 { throw error }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            return try await body(client)
        }
    }
}

/// A `realm-sync serve` process on 127.0.0.1 with a fresh application (its own PostgreSQL
/// schema), stopped at the end of the test.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    let appId: String
    let port: Int
    let secret: [UInt8]
    let directory: URL
    private let output = Pipe()

    var logFile: URL { directory.appendingPathComponent("server.log") }

    /// What the server logged so far (warnings and errors), at most its last 4,000 characters.
    var log: String {
        String((try? String(contentsOf: logFile, encoding: .utf8))?.suffix(4000) ?? "")
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }
    var syncURL: String { "ws://127.0.0.1:\(port)/api/v1/apps/\(appId)/sync" }

    static func binary() throws -> String {
        guard let path = BuiltExecutable.path("realm-sync") else { throw SyncServerError("realm-sync was not built next to the tests") }
        return path
    }

    /// Starts a server for a new application `appId` (random unless given) and waits until it listens.
    init(appId: String? = nil, port: Int = 0, extraArguments: [String] = []) async throws {
        self.appId = appId ?? "t" + (0..<6).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        secret = Array("a test secret of more than thirty-two bytes".utf8)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("realm-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let secretFile = directory.appendingPathComponent("secret")
        try Data(secret).write(to: secretFile)
        process.executableURL = URL(fileURLWithPath: try Self.binary())
        process.arguments =
            [
                "serve", "--postgres", try #require(TestDatabase.url), "--listen", "127.0.0.1:\(port)", "--jwt-secret-file",
                secretFile.path,
                "--app-id", self.appId, "--log-level", "warning",
            ] + extraArguments
        process.standardOutput = output
        // The server's log goes to a file: a pipe nobody reads fills up (64 KiB) and then blocks
        // the server in its next log line, which looked like a hang of the sync under faults.
        let logFile = directory.appendingPathComponent("server.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: logFile)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The first line says where it listens.
        let handle = output.fileHandleForReading
        let line = await Task.detached { () -> String in
            var bytes: [UInt8] = []
            while true {
                let chunk = handle.readData(ofLength: 1)
                if chunk.isEmpty || chunk.first == 0x0A { break }
                bytes.append(chunk.first!)
            }
            return String(decoding: bytes, as: UTF8.self)
        }.value
        guard line.hasPrefix("listening on 127.0.0.1:"), let bound = Int(line.dropFirst("listening on 127.0.0.1:".count)) else {
            process.terminate()
            let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            throw SyncServerError("realm-sync did not start: \(line) \(log)")
        }
        self.port = bound
    }

    /// Stops the server with SIGTERM (a graceful shutdown) and returns its exit status.
    @discardableResult
    func stop(signal: Int32 = SIGTERM) -> Int32 {
        defer { try? FileManager.default.removeItem(at: directory) }
        return Self.end(process, signal: signal)
    }

    /// Sends `signal` to `process` and waits for its exit status. Reaped here with waitpid:
    /// Foundation's Process was seen never to notice some children's exits (waitUntilExit() then
    /// waits forever, holding a thread of the concurrency pool).
    static func end(_ process: Process, signal: Int32) -> Int32 {
        let pid = process.processIdentifier
        guard pid > 0 else { return -1 }
        kill(pid, signal)
        var status: Int32 = 0
        // Bounded: a server whose graceful shutdown does not end within 20 s is killed, and the
        // status says so (-2), so that a test asserting a clean exit fails instead of hanging.
        let deadline = Date() + 20
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F) }
            if r < 0 {
                // Foundation reaped it first; its status arrives a moment later (a race seen once).
                while process.isRunning && Date() < deadline { usleep(10_000) }
                return process.isRunning ? -1 : process.terminationStatus
            }
            if Date() > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return -2
            }
            usleep(10_000)
        }
    }

    deinit {
        _ = Self.end(process, signal: SIGKILL)
    }

    /// POSTs `body` to `path` under the application's auth endpoints; the status and JSON answer.
    func post(_ path: String, _ body: [String: String]) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: "\(baseURL)/api/v1/apps/\(appId)/auth/\(path)")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as! HTTPURLResponse).statusCode, json)
    }

    /// An anonymous user's access token.
    func anonymousToken() async throws -> String {
        let (status, json) = try await post("anonymous", [:])
        #expect(status == 200)
        return try #require(json["accessToken"] as? String)
    }
}

/// A client connection speaking the protocol's messages directly: what the tests send and what
/// the server answered, in order.
final class SyncConnection: Sendable {
    private let mailbox = Mailbox()
    private let outgoing: AsyncStream<[UInt8]>.Continuation
    private let task: Task<WebSocketCloseFrame?, any Error>

    actor Mailbox {
        var messages: [[UInt8]] = []
        var closed = false
        func put(_ m: [UInt8]) { messages.append(m) }
        func close() { closed = true }
        func take() -> [UInt8]? { messages.isEmpty ? nil : messages.removeFirst() }
    }

    /// Opens the sync WebSocket of `server` with `token` and protocol `version`.
    init(_ server: ServerProcess, token: String?, version: String = "1") async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        outgoing = continuation
        let subprotocol = SyncServer.subprotocolPrefix + version
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: 64 << 20,
            additionalHeaders: token.map { [.secWebSocketProtocol: subprotocol, .authorization: "Bearer \($0)"] } ?? [
                .secWebSocketProtocol: subprotocol
            ])
        let mailbox = self.mailbox
        let url = server.syncURL
        task = Task {
            try await WebSocketClient.connect(url: url, configuration: configuration, logger: Logger(label: "test-client")) {
                inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await bytes in stream {
                            if bytes == [0xFF, 0xFE] {
                                try await outbound.write(.text("not binary"))
                            } else {
                                try await outbound.writeBinaryMessage(ByteBuffer(bytes: bytes))
                            }
                        }
                        try await outbound.close(.normalClosure, reason: nil)
                    }
                    for try await message in inbound.messages(maxSize: 64 << 20) {
                        if case .binary(let b) = message { await mailbox.put(Array(b.readableBytesView)) }
                    }
                    await mailbox.close()
                    group.cancelAll()
                }
            }
        }
    }

    func send(_ message: SyncMessage) { outgoing.yield(message.encoded()) }
    func sendRaw(_ bytes: [UInt8]) { outgoing.yield(bytes) }
    func sendText() { outgoing.yield([0xFF, 0xFE]) }

    /// The next message from the server, within `seconds`.
    func receive(within seconds: Double = 10) async throws -> SyncMessage {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if let bytes = await mailbox.take() { return try SyncMessage.decode(bytes) }
            if await mailbox.closed { throw SyncServerError("the server closed the connection") }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw SyncServerError("no message from the server within \(seconds) s")
    }

    /// Messages until one that `stop` accepts; that one.
    func receive(until stop: (SyncMessage) -> Bool, within seconds: Double = 10) async throws -> SyncMessage {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let m = try await receive(within: max(0.01, (deadline - ContinuousClock.now) / .seconds(1)))
            if stop(m) { return m }
        }
    }

    /// The next UPLOAD_ACK (what comes before it is passed over).
    func receiveAck(within seconds: Double = 10) async throws -> SyncMessage {
        try await receive(until: { if case .uploadAck = $0 { true } else { false } }, within: seconds)
    }

    /// Whether the server closed the connection within `seconds`.
    func closedByServer(within seconds: Double = 10) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if await mailbox.closed { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    func close() async {
        outgoing.finish()
        _ = try? await task.value
    }
}

/// The schema most tests use: `Person` (int key, name, optional age, optional link to a `Dog`)
/// and `Dog` (string key).
enum TestSchema {
    static let dog = SyncClass("Dog", primaryKeyTag: 6, properties: [.init("name", valueTag: 6)])
    static let person = SyncClass(
        "Person", primaryKeyTag: 3,
        properties: [
            .init("name", valueTag: 6), .init("age", valueTag: 3, flags: 1), .init("dog", valueTag: 12, flags: 1, linkTarget: "Dog"),
            .init("born", valueTag: 8, flags: 1), .init("score", valueTag: 5), .init("tags", valueTag: 6, flags: 2),
            .init("nums", valueTag: 3, flags: 4), .init("marks", valueTag: 3, flags: 8),
        ])
    static let all = [dog, person]

    static func person(_ id: Int64, name: String, age: Int64?) -> [Instruction] {
        [
            Instruction("Person", .int(id), .create),
            Instruction("Person", .int(id), .set(path: ["name"], value: .string(name))),
            Instruction("Person", .int(id), .set(path: ["age"], value: age.map(SyncValue.int) ?? .null)),
        ]
    }
}

extension SyncMessage {
    /// The objects of a `BOOTSTRAP` or `BOOTSTRAP_TABLE`, its server version, and whether it ends the
    /// bootstrap; a table's null of a property of `schema` that is required (not optional, not a
    /// link) is left out, as "no value". Nil for other messages.
    func bootstrapped(schema: [SyncClass] = TestSchema.all) -> (objects: [ObjectState], serverVersion: UInt64, last: Bool)? {
        switch self {
        case .bootstrap(_, let version, let objects, let last): return (objects, version, last)
        case .bootstrapTable(_, let version, let table):
            let cls = schema.first { $0.name == table.className }
            func required(_ name: String) -> Bool {
                cls?.properties.first { $0.name == name }.map { $0.flags & 1 == 0 && $0.valueTag != 12 } ?? false
            }
            let objects = table.objects.map { o in
                ObjectState(o.className, o.primaryKey, o.properties.filter { $0.value != .null || !required($0.name) })
            }
            return (objects, version, false)
        default: return nil
        }
    }
}

extension SyncConnection {
    /// Sends HELLO with the test schema and returns the client file identity the server gave.
    func hello(_ clientFileId: [UInt8] = [], lastServerVersion: UInt64 = 0, schema: [SyncClass] = TestSchema.all) async throws -> [UInt8] {
        send(.hello(clientFileId: clientFileId, lastServerVersion: lastServerVersion, lastUploadAcked: 0, schema: schema))
        let m = try await receive()
        guard case .welcome(let id, _, _) = m else { throw SyncServerError("expected WELCOME, got \(m)") }
        return id
    }
}

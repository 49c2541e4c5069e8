import Foundation
import PostgresNIO
import RealmStorage
import RealmSwift
import RealmSwiftSync
import RealmTestSupport
import Testing

/// A child process whose output lines are collected as they come (its stderr goes into the same
/// pipe, so a child that dies says why in the failure).
final class ChildProcess: Sendable {
    let process: Process
    private let lines = Locked<[String]>([])

    init(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        let handle = pipe.fileHandleForReading
        let lines = self.lines
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let nl = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<nl], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...nl)
                    lines.withLock { $0.append(line) }
                }
            }
        }
    }

    var output: [String] { lines.withLock { $0 } }

    /// Waits (bounded) for a line that `accept` takes.
    func waitFor(_ seconds: Double, _ accept: (String) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if output.contains(where: accept) { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return output.contains(where: accept)
    }

    /// Kills the child with `signal` and reaps it (bounded, as ServerProcess.end).
    @discardableResult
    func end(signal: Int32 = SIGKILL) -> Int32 { ServerProcess.end(process, signal: signal) }

}

extension SyncServerTests {
    /// How many (client file, client version) pairs the history of `appId` holds more than once.
    static func uploadsRecordedTwice(appId: String) async throws -> Int {
        try await TestDatabase.withClient { client in
            let sql = """
                SELECT count(*)::bigint FROM (SELECT client_file_id, client_version FROM "\(appId)"._sync_history \
                WHERE client_file_id IS NOT NULL GROUP BY 1, 2 HAVING count(*) > 1) d
                """
            var n = 0
            for try await c in try await client.query(PostgresQuery(unsafeSQL: sql)).decode(Int64.self) { n = Int(c) }
            return n
        }
    }

    /// A client process killed (SIGKILL) while it writes and uploads, then started again on the
    /// same file, three times: every commit it reported is in PostgreSQL once, and each of its
    /// client versions is in the history once.
    @Test func aClientKilledWhileUploadingResumesWithNothingLostOrTwice() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let writer = try #require(BuiltExecutable.path("SyncClientWriter"), "SyncClientWriter was not built next to the tests")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("realm-crash-client-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var reported = Set<Int>()
        for round in 0..<3 {
            let child = try ChildProcess(writer, [server.baseURL, server.appId, root.path, "\(round * 1000)", "400"])
            // Kill it at a different point each round: while writing, or just after.
            let target = [40, 250, 399][round]
            let reached = try await child.waitFor(60) { $0 == "wrote \(round * 1000 + target)" }
            child.end()
            #expect(reached, "round \(round): \(child.output.suffix(5))")
            for line in child.output where line.hasPrefix("wrote ") { reported.insert(Int(line.dropFirst(6))!) }
        }
        // A last run that finishes: it uploads what the killed ones left.
        let last = try ChildProcess(writer, [server.baseURL, server.appId, root.path, "5000", "1"])
        #expect(try await last.waitFor(60) { $0 == "uploaded" }, "\(last.output.suffix(5))")
        last.end()
        reported.insert(5000)

        let ids = try await TestDatabase.withClient { client in
            var ids = Set<Int>()
            for try await id in try await client.query(PostgresQuery(unsafeSQL: "SELECT _id FROM \"\(server.appId)\".\"CrashDog\"")).decode(
                Int64.self)
            {
                ids.insert(Int(id))
            }
            return ids
        }
        let duplicates = try await Self.uploadsRecordedTwice(appId: server.appId)
        #expect(reported.isSubset(of: ids), "lost: \(reported.subtracting(ids).sorted().prefix(10))")
        #expect(duplicates == 0)
    }
}

extension SyncServerTests {
    /// The server is killed while a client uploads a thousand offline commits, and again while
    /// another client's bootstrap is under way: local writes go on, the error handlers hear of the
    /// lost connection, and after restarts every object is in PostgreSQL and in both files once.
    @Test func aServerKilledMidUploadAndMidBootstrapLosesNothing() async throws {
        var server = try await ServerProcess()
        let appId = server.appId
        let port = server.port
        let errors = Locked<[SyncError]>([])
        let plain = try await TestClient(server)
        var config = plain.configuration
        config.syncConfiguration?.errorHandler = { error, _ in if let e = error as? SyncError { errors.withLock { $0.append(e) } } }
        let a = TestClient(plain, configuration: config)
        _ = try a.dogs()
        try await bounded { try await a.sync() }
        server.stop(signal: SIGKILL)
        let total = 1000
        try a.write { realm in realm.add(ClientDog(name: "first", age: 0)) }
        for i in 1..<total { try a.write { $0.add(ClientDog(name: "d\(i)", age: i % 10)) } }
        #expect(try a.dogs().count == total)
        #expect(try await eventually { errors.withLock { $0 }.contains { $0.code == .connectionFailed } })

        func rows() async throws -> Int {
            try await TestDatabase.withClient { client in
                let sql = "SELECT count(*)::bigint FROM \"\(appId)\".\"ClientDog\""
                var n = 0
                if let r = try? await client.query(PostgresQuery(unsafeSQL: sql)) { for try await c in r.decode(Int64.self) { n = Int(c) } }
                return n
            }
        }
        // Mid-upload: killed as soon as some of the uploads are in PostgreSQL.
        server = try await ServerProcess(appId: appId, port: port)
        let deadline = ContinuousClock.now + .seconds(30)
        while try await rows() == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        server.stop(signal: SIGKILL)
        let landed = try await rows()
        #expect(landed > 0)
        server = try await ServerProcess(appId: appId, port: port)
        try await bounded(60) { try await a.sync() }
        #expect(try await rows() == total, "\(landed) of \(total) had landed when the server was killed")

        // Mid-bootstrap: a new subscriber, the server killed while it sends the objects.
        let b = try await TestClient(server)
        _ = try b.dogs()
        try await Task.sleep(for: .milliseconds(40))
        server.stop(signal: SIGKILL)
        server = try await ServerProcess(appId: appId, port: port)
        defer { server.stop() }
        try await bounded(60) { try await b.sync() }
        #expect(try b.dogs().count == total)
        #expect(try await Self.uploadsRecordedTwice(appId: appId) == 0)
        await a.close()
        await b.close()
    }
}

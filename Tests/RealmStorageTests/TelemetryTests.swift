import Foundation
import Logging
import MetricsTestKit
import RealmTestSupport
import Testing

@testable import RealmStorage

/// A log handler that keeps what it is given (for the tests).
final class CapturingLogHandler: LogHandler, @unchecked Sendable {
    let lines = Locked<[(level: Logger.Level, message: String, metadata: Logger.Metadata)]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        lines.withLock { $0.append((event.level, "\(event.message)", merged)) }
    }

    var logger: Logger { Logger(label: "test.realm") { _ in self } }
    func messages(_ level: Logger.Level) -> [String] { lines.withLock { $0.filter { $0.level == level }.map(\.message) } }
}

/// Logging and metrics (issue 30): what an operator needs to know is logged through the logger
/// the options give, the store's numbers reach the metrics factory, and neither costs anything
/// without one.
@Suite struct TelemetryTests {
    @Test func commitsAndCompactionsAreLoggedAndCounted() throws {
        let dir = TempDir()
        let log = CapturingLogHandler()
        let metrics = TestMetrics()
        var options = Store.Options(create: true)
        options.logger = log.logger
        options.metricsFactory = metrics
        options.compaction = .off
        options.slowCommitThreshold = .zero  // every commit is "slow": the warning is written
        let store = try Store.open(at: dir.file(), options: options)
        try store.write { tx in
            try tx.createTable("Item")
            try tx.addColumn("Item", ColumnSchema("n", .int))
        }
        for i in 0..<5 { try store.write { _ = try $0.insert("Item", ["n": .int(Int64(i))]) } }
        #expect(try metrics.expectCounter("realm_commits_total", [("path", store.path)]).totalValue == 6)
        #expect(try metrics.expectTimer("realm_commit_duration", [("path", store.path)]).values.count == 6)
        let fileBytes = try metrics.expectGauge("realm_file_bytes", [("path", store.path)]).lastValue
        let length = try store.snapshot().fileLength
        #expect(fileBytes.map { Int($0) } == length)
        #expect(try metrics.expectGauge("realm_live_bytes", [("path", store.path)]).lastValue ?? 0 > 0)
        #expect(try metrics.expectGauge("realm_active_versions", [("path", store.path)]).lastValue ?? 0 >= 1)
        #expect(log.messages(.warning).filter { $0.hasPrefix("slow commit") }.count == 6)
        #expect(log.lines.withLock { $0.allSatisfy { $0.metadata["realm.path"] == "\(store.path)" } })

        try store.compact()
        #expect(try metrics.expectCounter("realm_compactions_total", [("path", store.path)]).totalValue == 1)
        #expect(log.messages(.info).contains("compaction started"))
        #expect(log.messages(.info).contains { $0.hasPrefix("compaction finished") })
    }

    @Test func aRefusedWriteIsLogged() throws {
        let dir = TempDir()
        let log = CapturingLogHandler()
        var options = Store.Options(create: true, maximumNumberOfActiveVersions: 2)
        options.logger = log.logger
        let store = try Store.open(at: dir.file(), options: options)
        try store.write { try $0.createTable("Item") }
        let pinned = try store.snapshot().retained(kind: "frozen")
        try store.write { _ = try $0.insert("Item", [:]) }
        let older = try store.snapshot().retained(kind: "frozen")
        #expect(throws: StorageError.self) { try store.write { _ = try $0.insert("Item", [:]) } }
        #expect(log.messages(.warning).contains { $0.hasPrefix("write refused") })
        withExtendedLifetime((pinned, older)) {}
    }

    @Test func recoveryAndDamageAtOpenAreLogged() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir)
        for i in 0..<3 { try store.write { try $0.insert("Person", row: person(i)) } }
        let good = fileBytes(dir.file())
        let r = try Inspector().inspect(path: dir.file())
        let v = try #require(r.versions.first)
        // A torn last commit: recovery discards it, and says so.
        var torn = good
        torn[Int(v.commitStart) + 8] ^= 0x40
        _ = FileManager.default.createFile(atPath: dir.file("torn.realm"), contents: Data(torn))
        let log = CapturingLogHandler()
        var options = Store.Options(readOnly: true)
        options.logger = log.logger
        let opened = try Store.open(at: dir.file("torn.realm"), options: options)
        #expect(try opened.snapshot().version == v.version - 1)
        #expect(log.messages(.notice).contains { $0.contains("torn last commit") })
        // Damage before later commits: the open fails, and the damage is logged as an error.
        let older = try #require(r.versions.dropFirst(2).first)
        var damaged = good
        damaged[Int(older.commitStart) - CommitHead.size + 9] ^= 1
        _ = FileManager.default.createFile(atPath: dir.file("damaged.realm"), contents: Data(damaged))
        let log2 = CapturingLogHandler()
        options.logger = log2.logger
        #expect(throws: StorageError.self) { try Store.open(at: dir.file("damaged.realm"), options: options) }
        #expect(log2.messages(.error) == ["damage found at open"])
    }

    @Test func withoutABackendNothingIsMeasured() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true))
        #expect(store.telemetry.instruments == nil && store.telemetry.logger == nil && !store.telemetry.timesCommits)
    }
}

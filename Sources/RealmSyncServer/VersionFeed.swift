import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Tells every session of this server when the history has grown, whichever server committed it:
/// one `LISTEN` connection (Spec/SYNC.md §8.3), and a poll every few seconds in case a
/// notification was missed while that connection was being made again. The same channel says
/// when another application wrote rows with SQL: the feed then turns them into history entries
/// (§8.4), also every few seconds in case that notification was missed.
final class VersionFeed: Service, Sendable {
    private let store: SyncStore
    // A pthread mutex (NIOLockedValueBox), which ThreadSanitizer understands, unlike Mutex.
    private let subscribers = NIOLockedValueBox<[Int: AsyncStream<UInt64>.Continuation]>([:])
    private let nextId = Atomic<Int>(0)
    private let latest = Atomic<UInt64>(0)
    static let pollInterval: Duration = .seconds(2)
    /// Wakes the conversion of SQL writes (at most one wake-up waits).
    private let externalWrites: AsyncStream<Void>
    private let wakeConversion: AsyncStream<Void>.Continuation

    /// How long the history keeps entries (nil: forever).
    private let retention: Duration?
    /// How often the history is compacted: every quarter of the retention, at most every minute,
    /// at least every second.
    private let compactionInterval: Duration?

    init(store: SyncStore, retention: Duration? = nil) {
        self.store = store
        self.retention = retention
        compactionInterval = retention.map { min(max($0 / 4, .seconds(1)), .seconds(60)) }
        (externalWrites, wakeConversion) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// A stream of newer server versions, and the token that ends it.
    func subscribe() -> (Int, AsyncStream<UInt64>) {
        let id = nextId.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream.makeStream(of: UInt64.self, bufferingPolicy: .bufferingNewest(1))
        subscribers.withLockedValue { $0[id] = continuation }
        continuation.yield(latest.load(ordering: .relaxed))
        return (id, stream)
    }

    func unsubscribe(_ id: Int) {
        subscribers.withLockedValue { $0.removeValue(forKey: id) }?.finish()
    }

    /// A commit of `version` (this server's own, or one it heard of).
    func announce(_ version: UInt64) {
        let previous = latest.max(version, ordering: .relaxed).oldValue
        guard version > previous else { return }
        for c in subscribers.withLockedValue({ Array($0.values) }) { c.yield(version) }
    }

    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.listen() }
            group.addTask { await self.poll() }
            group.addTask { await self.convert() }
            await group.waitForAll()
        }
        for c in subscribers.withLockedValue({ Array($0.values) }) { c.finish() }
    }

    private func listen() async {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown {
                    try await self.store.client.withConnection { connection in
                        try await connection.listen(on: self.store.channel) { notifications in
                            for try await n in notifications {
                                if let v = UInt64(n.payload) {
                                    self.announce(v)
                                } else if n.payload == "external" {
                                    self.wakeConversion.yield()
                                }
                            }
                        }
                    }
                }
            } catch {
                if Task.isCancelled || Task.isShuttingDownGracefully { return }
                store.logger.warning("listening for new versions failed; trying again", metadata: ["error": "\(String(reflecting: error))"])
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    private func poll() async {
        await cancelWhenGracefulShutdown {
            var compacted = ContinuousClock.now
            while !Task.isCancelled {
                if let v = try? await self.store.latestVersion() { self.announce(v) }
                self.wakeConversion.yield()
                if let retention = self.retention, let interval = self.compactionInterval, ContinuousClock.now - compacted >= interval {
                    compacted = ContinuousClock.now
                    do {
                        try await self.store.compactHistory(retention: retention)
                    } catch {
                        self.store.logger.warning("compacting the history failed", metadata: ["error": "\(String(reflecting: error))"])
                    }
                }
                try? await Task.sleep(for: min(Self.pollInterval, self.compactionInterval ?? Self.pollInterval))
            }
        }
        wakeConversion.finish()
    }

    /// Converts the SQL writes recorded, whenever woken.
    private func convert() async {
        for await _ in externalWrites {
            do {
                while let v = try await store.convertExternal() { announce(v) }
            } catch {
                if Task.isCancelled || Task.isShuttingDownGracefully { return }
                store.logger.warning("converting SQL writes failed; trying again", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }
}

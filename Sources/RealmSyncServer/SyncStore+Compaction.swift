import Foundation
import NIOCore
import PostgresNIO
import RealmSyncProtocol

/// The history kept bounded (Spec/SYNC.md §8.5): entries every client seen within the retention
/// has, and entries older than the retention, are deleted; a client whose server version is
/// below what was deleted gets a client reset.
extension SyncStore {
    /// The newest server version, and the newest compacted away (0: none).
    func versions() async throws -> (latest: UInt64, compacted: UInt64) {
        for try await (v, c) in try await client.query(
            "SELECT server_version, compacted_through FROM \(unescaped: table("_sync_meta")) WHERE id = 1", logger: logger
        ).decode((Int64, Int64).self) {
            return (UInt64(v), UInt64(c))
        }
        return (0, 0)
    }

    /// The newest client version of client file `id` the store applied.
    func lastClientVersion(of id: [UInt8]) async throws -> UInt64 {
        for try await v in try await client.query(
            "SELECT last_client_version FROM \(unescaped: table("_sync_clients")) WHERE client_file_id = \(ByteBuffer(bytes: id))",
            logger: logger
        ).decode(Int64.self) {
            return UInt64(v)
        }
        return 0
    }

    /// Deletes the entries that every client seen within `retention` has integrated, and those
    /// older than `retention`; the newest entry always stays. Returns how many went.
    @discardableResult
    func compactHistory(retention: Duration) async throws -> Int {
        let seconds = Double(retention.components.seconds) + Double(retention.components.attoseconds) / 1e18
        return try await transaction { c in
            // Under the history's writer lock, so that compacted_through and the entries agree.
            _ = try await lockHistory(on: c)
            var deleted = 0
            var newest: Int64 = 0
            for try await (n, m) in try await c.query(
                """
                WITH floor AS (SELECT coalesce(min(server_version), 0) AS v FROM \(unescaped: table("_sync_clients")) \
                WHERE last_seen > now() - make_interval(secs => \(seconds))), \
                gone AS (DELETE FROM \(unescaped: table("_sync_history")) \
                WHERE server_version < (SELECT max(server_version) FROM \(unescaped: table("_sync_history"))) \
                AND (server_version <= (SELECT v FROM floor) OR at < now() - make_interval(secs => \(seconds))) \
                RETURNING server_version) \
                SELECT count(*)::bigint, coalesce(max(server_version), 0)::bigint FROM gone
                """, logger: logger
            ).decode((Int64, Int64).self) {
                deleted = Int(n)
                newest = m
            }
            if newest > 0 {
                try await c.query(
                    "UPDATE \(unescaped: table("_sync_meta")) SET compacted_through = greatest(compacted_through, \(newest)) WHERE id = 1",
                    logger: logger)
            }
            return deleted
        }
    }
}

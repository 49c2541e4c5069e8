import Foundation
import Logging
import Metrics

/// What a store tells an operator (swift-log, through ``Store/Options/logger``) and the numbers it
/// reports (swift-metrics, through ``Store/Options/metricsFactory``).
///
/// Logged: the version a store opened at, and a torn last commit recovery discarded (`.notice`);
/// damage found at open (`.error`) or skipped by a salvaging open (`.warning`); damage or an I/O
/// error met by a read that cannot throw, just before the object layer stops (`.critical`); each compaction
/// started and finished (`.info`, with bytes and how long the writer lock was held) or failed
/// (`.warning`); a write refused by the active-version limit (`.warning`); a commit slower than
/// ``Store/Options/slowCommitThreshold`` (`.warning`). Reported, with the dimension `path`:
/// `realm_commits_total`, `realm_commit_duration` (a timer), `realm_file_bytes`,
/// `realm_live_bytes`, `realm_active_versions` and `realm_compactions_total`.
///
/// Without a logger nothing is logged; without a metrics backend (the process's `MetricsSystem`
/// left as its no-op) no number is computed, and a commit reads no clock.
final class StoreTelemetry: Sendable {
    let logger: Logger?
    let slowCommit: Duration
    /// Nil without a metrics backend.
    let instruments: Instruments?

    struct Instruments: Sendable {
        let commits: Counter
        let commitDuration: Metrics.Timer
        let fileBytes: Gauge
        let liveBytes: Gauge
        let activeVersions: Gauge
        let compactions: Counter
    }

    init(path: String, options: Store.Options) {
        logger = options.logger.map { logger in
            var l = logger
            l[metadataKey: "realm.path"] = "\(path)"
            return l
        }
        slowCommit = options.slowCommitThreshold
        let factory = options.metricsFactory ?? MetricsSystem.factory
        if factory is NOOPMetricsHandler {
            instruments = nil
        } else {
            let d = [("path", path)]
            instruments = Instruments(
                commits: Counter(label: "realm_commits_total", dimensions: d, factory: factory),
                commitDuration: Metrics.Timer(label: "realm_commit_duration", dimensions: d, factory: factory),
                fileBytes: Gauge(label: "realm_file_bytes", dimensions: d, factory: factory),
                liveBytes: Gauge(label: "realm_live_bytes", dimensions: d, factory: factory),
                activeVersions: Gauge(label: "realm_active_versions", dimensions: d, factory: factory),
                compactions: Counter(label: "realm_compactions_total", dimensions: d, factory: factory))
        }
    }

    /// Whether commits are timed (for the metrics or the slow-commit log).
    var timesCommits: Bool { instruments != nil || logger != nil }

    static func metadata(_ e: StorageError, path: String) -> Logger.Metadata {
        var m: Logger.Metadata = ["realm.path": "\(path)", "error": "\(e.reason)"]
        if let o = e.offset { m["offset"] = "\(o)" }
        if let v = e.unreachableVersion { m["unreachableVersion"] = "\(v)" }
        return m
    }

    func opened(at version: UInt64, torn: (offset: Int, reason: String)?, damage: ChainDamage?) {
        guard let logger else { return }
        if let torn {
            logger.notice(
                "recovered at version \(version): a torn last commit (a crash during it) was discarded",
                metadata: ["offset": "\(torn.offset)", "reason": "\(torn.reason)"])
        } else {
            logger.debug("opened at version \(version)")
        }
        if let damage {
            logger.warning(
                "salvaged a damaged file at version \(damage.intactVersion); versions up to \(damage.newestUnreachableVersion) are unreadable",
                metadata: ["offset": "\(damage.offset)", "reason": "\(damage.reason)"])
        }
    }

    func committed(_ store: Store, version: UInt64, duration: Duration?, bytes: UInt64, fileSize: Int, liveBytes: UInt64) {
        if let i = instruments {
            i.commits.increment()
            if let duration { i.commitDuration.recordNanoseconds(Self.nanoseconds(duration)) }
            i.fileBytes.record(fileSize)
            i.liveBytes.record(Int(clamping: liveBytes))
            i.activeVersions.record(store.numberOfActiveVersions)
        }
        if let logger, let duration, duration >= slowCommit {
            logger.warning(
                "slow commit: version \(version) took \(duration)",
                metadata: ["bytes": "\(bytes)", "fileSize": "\(fileSize)"])
        }
    }

    /// A read that failed where its caller cannot throw (the object layer's property reads and
    /// iteration), just before the caller stops the process.
    func readFailed(_ error: any Error, reading what: String, path: String) {
        guard let logger else { return }
        if let e = error as? StorageError {
            logger.critical(
                e.code == .corrupted ? "damage found while reading \(what)" : "could not read \(what)",
                metadata: Self.metadata(e, path: path))
        } else {
            logger.critical("could not read \(what)", metadata: ["realm.path": "\(path)", "error": "\(error)"])
        }
    }

    func refused(active: Int, limit: Int) {
        logger?.warning(
            "write refused: it would keep \(active) versions active, above maximumNumberOfActiveVersions (\(limit))",
            metadata: ["active": "\(active)", "limit": "\(limit)"])
    }

    /// `bytes` is read only when there is a logger to tell.
    func compactionStarted(bytes: @autoclosure () -> Int) {
        guard let logger else { return }
        logger.info("compaction started", metadata: ["bytesBefore": "\(bytes())"])
    }

    func compacted(_ r: CompactionReport) {
        instruments?.compactions.increment()
        logger?.info(
            "compaction finished at version \(r.version): \(r.bytesBefore) → \(r.bytesAfter) bytes in \(r.duration)",
            metadata: [
                "bytesBefore": "\(r.bytesBefore)", "bytesAfter": "\(r.bytesAfter)", "writerHeld": "\(r.writerHeld)",
                "commitsWaited": "\(r.commitsWaited)",
            ])
    }

    func compactionFailed(_ error: any Error) {
        logger?.warning("automatic compaction failed; it is tried again once the file has grown", metadata: ["error": "\(error)"])
    }

    func compactionSkipped(_ error: StorageError) {
        logger?.warning(
            "automatic compaction skipped: \(error.reason); it is tried again once the file has grown",
            metadata: ["reason": "\(error.code)"])
    }

    func supersededFileStillLinked(links: Int, mark: SupersededMark) {
        logger?.warning(
            """
            a name still leads to the file the compaction replaced (a hard link made during the compaction): that file is \
            marked superseded, and no store opens it as the database
            """,
            metadata: ["links": "\(links)", "database": "\(mark.path)"])
    }

    static func nanoseconds(_ d: Duration) -> Int64 {
        let c = d.components
        return c.seconds &* 1_000_000_000 &+ c.attoseconds / 1_000_000_000
    }
}

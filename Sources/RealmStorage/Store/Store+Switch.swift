import Foundation

/// How much of a file its newest version uses (Spec/FORMAT.md §8).
public struct SpaceUsage: Sendable, Hashable, CustomStringConvertible {
    /// The committed length: the bytes of the file that belong to some version.
    public var fileSize: Int
    /// The bytes the newest version reaches (its live bytes).
    public var liveBytes: Int
    /// Bytes of the committed length that the newest version does not reach: what a compaction gives back.
    public var deadBytes: Int { max(0, fileSize - liveBytes) }

    /// A usage of `fileSize` committed bytes of which `liveBytes` are live.
    public init(fileSize: Int, liveBytes: Int) {
        self.fileSize = fileSize
        self.liveBytes = liveBytes
    }

    public var description: String { "\(fileSize) bytes, \(liveBytes) live, \(deadBytes) dead" }
}

/// When a store compacts its file by itself, in the background (online compaction, Spec/FORMAT.md §8).
///
/// ```swift
/// var options = Store.Options(create: true)
/// options.compaction = .automatic(minimumDeadBytes: 16 << 20, deadToLiveRatio: 1)
/// options.compaction = .custom { usage in usage.deadBytes > 100 << 20 }
/// options.compaction = .off
/// ```
///
/// After each of its commits, a store asks its policy with the newest version's ``SpaceUsage``; if
/// the answer is yes and no compaction of the file is running (in any process), it compacts on a
/// background queue. Commits go on meanwhile and wait only for its last step.
public struct CompactionPolicy: Sendable {
    enum Rule: Sendable {
        case off
        case thresholds(minimumDeadBytes: Int, deadToLiveRatio: Double)
        case custom(@Sendable (SpaceUsage) -> Bool)
    }
    let rule: Rule

    /// Never compact automatically (``Store/compact()`` and `realm-compact` still do).
    public static let off = CompactionPolicy(rule: .off)

    /// Compact when the dead bytes are at least `minimumDeadBytes` and more than
    /// `deadToLiveRatio` times the live bytes. The default (4 MiB, 0.75) keeps a file below about
    /// 1.75 times its live size plus what is committed while a compaction runs.
    public static func automatic(minimumDeadBytes: Int = 4 << 20, deadToLiveRatio: Double = 0.75) -> CompactionPolicy {
        CompactionPolicy(rule: .thresholds(minimumDeadBytes: max(0, minimumDeadBytes), deadToLiveRatio: max(0, deadToLiveRatio)))
    }

    /// ``automatic(minimumDeadBytes:deadToLiveRatio:)`` with its defaults: what a store uses unless told otherwise.
    public static var automatic: CompactionPolicy { .automatic() }

    /// Compact when `shouldCompact` says so. It is called after commits, on the committing thread:
    /// keep it cheap.
    public static func custom(_ shouldCompact: @escaping @Sendable (SpaceUsage) -> Bool) -> CompactionPolicy {
        CompactionPolicy(rule: .custom(shouldCompact))
    }

    /// Whether a file with this usage should be compacted now.
    public func shouldCompact(_ usage: SpaceUsage) -> Bool {
        switch rule {
        case .off: return false
        case .thresholds(let minimum, let ratio):
            return usage.deadBytes >= minimum && Double(usage.deadBytes) > ratio * Double(usage.liveBytes)
        case .custom(let f): return f(usage)
        }
    }

    var isOff: Bool {
        if case .off = rule { return true }
        return false
    }
}

/// What the last online compaction of a store did (``Store/lastCompaction``).
public struct CompactionReport: Sendable {
    /// When it started.
    public var startedAt: Date
    /// From start to switch, copy included.
    public var duration: Duration
    /// The committed length of the file before.
    public var bytesBefore: Int
    /// The size of the compacted file.
    public var bytesAfter: Int
    /// The version it copied without the writer word, and the newest version, at which it switched.
    public var copiedVersion: UInt64
    /// The newest version, at which the store switched to the compacted file.
    public var version: UInt64
    /// How long it held the writer word (the longest any commit waited for it): copying the commits
    /// made during the copy, and switching.
    public var writerHeld: Duration
    /// Write transactions of this store that were waiting for the writer word when it released it.
    public var commitsWaited: Int
    /// Whether a store of another process was waiting for the writer word when it released it.
    public var otherProcessesWaited: Bool
}

/// Where a store that followed a compaction finds the changes from a version of the file it left
/// (pinned by one of its snapshots at the switch) to the version the new file starts at: the old
/// file's newest snapshot, asked only when a change notification needs it (a walk of the old
/// file's history, never made while the writer word is held for the switch).
final class Bridge: Sendable {
    /// The old file at its newest version: where the new file's history starts.
    let snapshot: Snapshot
    /// The old file's versions pinned at the switch.
    let from: Set<UInt64>
    private let memo = Locked<[UInt64: Changeset]>([:])

    init(snapshot: Snapshot, from: Set<UInt64>) {
        self.snapshot = snapshot
        self.from = from
    }

    func changes(since version: UInt64) -> Changeset? {
        if let known = memo.withLock({ $0[version] }) { return known }
        guard let c = try? snapshot.changes(since: version) else { return nil }
        memo.withLock { $0[version] = c }
        return c
    }
}

extension Store {
    /// How much of the file the newest version this store has seen uses.
    public var spaceUsage: SpaceUsage {
        state.withLock { SpaceUsage(fileSize: Int($0.current.slot.fileLength), liveBytes: Int($0.current.record.liveBytes)) }
    }

    /// The last online compaction this store made, nil if none.
    public var lastCompaction: CompactionReport? { state.withLock { $0.lastCompaction } }

    /// The changes from `from` (a version of a file this store left) to `to` (where the file it
    /// follows now starts), if a snapshot pinned `from` when it switched.
    func bridge(from: UInt64, to: UInt64) -> Changeset? {
        let b = state.withLock { s in s.bridges.last { $0.snapshot.version == to && $0.from.contains(from) } }
        return b?.changes(since: from)
    }

    /// Lets go of the bridges whose old versions are no longer pinned (with them, the old file's
    /// mapping). Called with the state locked; the caller drops what it returns after unlocking
    /// (a snapshot's release takes the lock).
    func pruneBridges(_ s: inout State) -> [Bridge] {
        guard !s.bridges.isEmpty else { return [] }
        let pinned = s.localPins.map(\.version)
        var dropped: [Bridge] = []
        s.bridges.removeAll { b in
            let stale = !b.from.contains { pinned.contains($0) }
            if stale { dropped.append(b) }
            return stale
        }
        return dropped
    }

    /// Follows an online compaction (Spec/FORMAT.md §7, §8): when the lock file's generation moved
    /// since this store last looked (or cannot be read), it compares the file at ``path`` with the
    /// one it has open and switches to it if they differ. `holdingWriter`: the caller holds the
    /// writer word, so an odd generation was left by a compactor that died; it completes its
    /// switch marker (after making the rename durable, before anything is committed to the new file).
    /// - Returns: whether it switched.
    @discardableResult
    func followIfReplaced(holdingWriter: Bool) throws -> Bool {
        guard options.slot == nil else { return false }
        let generation = lockFile?.fileGeneration
        if let generation, generation % 2 == 0, generation == state.withLock({ $0.seenGeneration }) { return false }
        var switched = false
        let open = state.withLock { $0.current.file }
        if let onPath = SystemFile.inode(atPath: path), let mine = try? open.inode(), onPath != mine {
            try switchToReplacedFile()
            switched = true
        }
        var seen = generation
        if let g = generation, g % 2 == 1 {
            seen = nil
            if holdingWriter && !isReadOnly {
                // The compactor that made it odd held the word: it died between its first mark and
                // its last. Its rename, if it happened, must be durable before a commit goes there.
                try SystemFile.syncDirectory(Compactor.directory(of: path))
                lockFile?.endSwitch(g)
                seen = g &+ 1
            }
        }
        if let seen { state.withLock { $0.seenGeneration = seen } }
        return switched
    }

    /// Continues on the file now at ``path`` (a compacted copy renamed over the one this store had
    /// open). The old file is first brought to its newest commit, the version the copy starts at;
    /// for each older version a snapshot of this store still pins, the changes up to it are kept
    /// (``bridge(from:to:)``), so change notifications go on across the switch. Snapshots taken
    /// before keep reading the old file's bytes until they are released.
    func switchToReplacedFile() throws {
        try switchGate.withLock { _ in
            let file = try SystemFile.open(path, isReadOnly ? .readOnly : .readWrite)
            let old = state.withLock { $0.current.file }
            guard try file.inode() != old.inode() else { return }
            if lockFile?.mode == .writer { try lockFile?.markDataFile(file) }
            // Nothing is committed to the old file once it is replaced: its newest commit is where
            // the copy starts. The versions of the old file still pinned here (by snapshots, frozen
            // objects, notifiers' bases) get a bridge to it.
            _ = try? refreshCurrentFile(checkingDamage: false)
            let oldNewest = state.withLock { s in makeSnapshot(&s, s.current, kind: Self.compactionPinKind) }
            let pinned = Set(
                state.withLock { s in
                    s.localPins.lazy.filter { $0.isPublished && $0.version < oldNewest.version }.map(\.version)
                })
            let current = try Self.recover(file, durable: lockFile?.durableCommit(), rejecting: lockFile?.failedCommit())
            let size = try file.size()
            // The cache is keyed by offsets and checksums of the old file: a block of the new one may
            // sit at the same offset with the same trailer. Emptied under the state lock, so a
            // snapshot's generation always goes with its file.
            let dropped = state.withLock { s in
                cache.removeAll()
                s.current = current
                s.allocatedLength = size
                s.failedCommit = nil
                s.adopted = true
                if !pinned.isEmpty { s.bridges.append(Bridge(snapshot: oldNewest, from: pinned)) }
                return pruneBridges(&s)
            }
            withExtendedLifetime(dropped) {}
        }
    }

    /// After a commit: starts an automatic compaction in the background when the policy asks for one.
    func considerCompaction(after usage: SpaceUsage) {
        let policy = options.compaction
        guard !policy.isOff, !isReadOnly, usage.fileSize >= state.withLock({ $0.automaticBackoff }), policy.shouldCompact(usage) else {
            return
        }
        let schedule = state.withLock { s in
            if s.automaticCompactionPending || s.compacting { return false }
            s.automaticCompactionPending = true
            return true
        }
        guard schedule else { return }
        Self.compactionQueue.async { [self] in
            var failedAt: Int?
            do {
                var compactor = Compactor()
                compactor.verification = .structure
                try compactor.compact(self)
            } catch let e as StorageError where e.code == .compactionInProgress {
                // Another store is at it.
            } catch let e as StorageError where e.code == .hardLinked {
                // Never compacted while it has other names (§8): said once per growth step.
                failedAt = usage.fileSize
                telemetry.compactionSkipped(e)
            } catch {
                failedAt = usage.fileSize
                telemetry.compactionFailed(error)
            }
            state.withLock { s in
                s.automaticCompactionPending = false
                // After a failure (a full disk, say), wait until the file has grown by as much again.
                if let failedAt { s.automaticBackoff = failedAt + max(usage.deadBytes, 1 << 20) }
            }
        }
    }

    /// Where automatic compactions run: one at a time per process, off every committing thread.
    static let compactionQueue = DispatchQueue(label: "RealmStorage.compaction", qos: .utility)
}

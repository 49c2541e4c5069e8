import Foundation
import Logging
import Metrics
import Synchronization

/// An open Realm file: the entry point of the storage engine.
///
/// A store hands out immutable ``Snapshot``s of committed versions and one ``WriteTransaction`` at
/// a time (across threads and processes, through the lock file beside the data file). Readers never
/// block the writer and the writer never blocks readers.
///
/// ```swift
/// let store = try Store.open(at: "/tmp/people.realm", options: .init(create: true))
/// let tx = try store.beginWrite()
/// try tx.createTable("Person", primaryKey: ColumnSchema("id", .int))
/// try tx.addColumn("Person", ColumnSchema("name", .string))
/// let key = try tx.insert("Person", ["id": .int(1), "name": .string("Ada")])
/// let snapshot = try tx.commit()
/// print(try snapshot.value("Person", key, "name"))  // "Ada"
/// ```
///
/// `Store` is `Sendable`: its mutable state lives in a `Locked`.
public final class Store: Sendable {
    /// How to open a store.
    public struct Options: Sendable {
        /// Create the file when it does not exist.
        public var create: Bool
        /// Open without ever writing the data file.
        public var readOnly: Bool
        /// The most versions that may stay pinned after a commit; nil means unlimited.
        public var maximumNumberOfActiveVersions: Int?
        /// Objects per row group (a fixed property of the writer, not of the file).
        public var rowGroupCapacity: Int
        /// Open as an observer that changes nothing on disk (implies read-only): an existing lock file
        /// is opened read-only, no lock is taken and no pin slot is claimed, so other processes cannot
        /// see this store (Spec/FORMAT.md §7). For tools that must leave a file and its directory
        /// exactly as they found them (`realm-dump`).
        package var isPassive = false
        /// Read the commit named by this header slot (0 or 1) instead of the newest valid one, and
        /// never advance from it: forensics on the other slot (`realm-dump --slot`). Only for
        /// read-only stores; the slot's version record is validated as usual.
        package var slot: Int?
        /// Let small commits go without a slot write, named by their commit head (format 3, Spec/
        /// FORMAT.md §3.4). Tests turn it off to exercise the slots alone.
        package var chainsCommits = true
        /// Tests: the thread that syncs first waits (up to 50 ms) until this many commits are
        /// pending, so that groups of a known size form however the threads are scheduled.
        package var groupCommitMinimum = 1
        /// A commit writes its blocks to the file once it holds this many bytes of them, instead
        /// of holding the whole commit in memory (a bulk insert's is as large as its data). Tests
        /// make it small so that small commits are written in pieces.
        package var commitFlushThreshold = 128 << 10
        /// Open a damaged file at its newest intact version instead of failing (Spec/FORMAT.md §6.6).
        ///
        /// A file whose commit chain is damaged (a commit head, version record or slot fails its
        /// check while later commits exist) does not open: `open` throws
        /// ``StorageError/Code/corrupted`` with ``StorageError/unreachableVersion``. With `salvage`
        /// it opens at the newest version that can be read, and ``Store/damage`` names the break and
        /// the versions skipped. A writable salvaging store never writes over the unreachable
        /// commits: its first commit goes after the end of the file, with a version number above
        /// every version the file shows, and names itself in a header slot.
        public var salvage = false
        /// When the store compacts its file by itself, in the background, while it stays open
        /// (Spec/FORMAT.md §8): by default when the dead bytes pass 4 MiB and three quarters of the
        /// live bytes.
        /// Read-only stores never compact.
        public var compaction: CompactionPolicy = .automatic
        /// Where the store says what an operator needs to know (swift-log): recovery at open,
        /// damage found, compactions started and finished, writes refused by the active-version
        /// limit, slow commits. Nil (the default): the store logs nothing.
        public var logger: Logger?
        /// A commit that takes at least this long is logged as slow (`.warning`).
        public var slowCommitThreshold: Duration = .milliseconds(250)
        /// Where the store reports its numbers (swift-metrics): commits, commit latency, file size,
        /// live bytes, active versions, compactions. Nil: the process's `MetricsSystem` (a no-op,
        /// and then no number is even computed, until a backend is bootstrapped).
        public var metricsFactory: (any MetricsFactory)?

        /// Options for ``Store/open(at:options:)``: create the file when missing, open it read-only, cap the versions pinned at once, and set how many objects a row group holds (1 to the segment maximum).
        public init(create: Bool = false, readOnly: Bool = false, maximumNumberOfActiveVersions: Int? = nil, rowGroupCapacity: Int = 4096) {
            self.create = create
            self.readOnly = readOnly
            self.maximumNumberOfActiveVersions = maximumNumberOfActiveVersions
            self.rowGroupCapacity = min(max(1, rowGroupCapacity), SegmentReader.maximumRows)
        }

        /// Read-only and passive: see ``isPassive``.
        package static var passive: Options {
            var o = Options(readOnly: true)
            o.isPassive = true
            return o
        }
    }

    /// The data file's path, with symbolic links resolved (the lock file is named after it).
    public let path: String
    /// The lock file's path (`path + ".lock"`).
    public var lockPath: String { path + ".lock" }
    /// The options the store was opened with.
    public let options: Options
    /// What a salvaging open (``Options/salvage``) skipped: nil when the file was not damaged.
    public let damage: ChainDamage?
    /// For a passive store (an inspection tool): the file was replaced by a compacted copy at
    /// another name and is no longer the database (Spec/FORMAT.md §8); any other store fails to
    /// open such a file with ``StorageError/Code/superseded``.
    package let superseded: SupersededMark?
    /// Whether this store never writes its data file.
    public var isReadOnly: Bool { options.readOnly || options.isPassive }

    struct Current {
        var file: SystemFile
        /// The format version in the file's static header (fixed for the life of the file).
        var formatVersion: UInt32
        var mapping: FileMapping
        /// Names the current commit: its header slot, or (for a chained commit) its commit head.
        var slot: CommitSlot
        /// The header slot holding the newest slot-named commit this store knows; the next slot
        /// write goes to the other one.
        var slotIndex: Int
        var record: VersionRecord
        /// How many chained commits lead from that slot's commit to the current one (Spec §3.4).
        var chained = 0
    }

    /// How many snapshots of one kind pin one version in this store.
    struct LocalPin {
        let version: UInt64
        let kind: String
        var count: Int
        /// The kind's number in the lock file (Spec/FORMAT.md §7), and whether the pin is published
        /// there: worked out once, not by comparing names each time the pins are published.
        let kindCode: UInt32
        let isPublished: Bool

        init(version: UInt64, kind: String, count: Int) {
            self.version = version
            self.kind = kind
            self.count = count
            kindCode = UInt32(LockFile.kindNames.firstIndex(of: kind) ?? LockFile.kindNames.count - 1)
            isPublished = !Store.unpublishedPinKinds.contains(kind)
        }
    }

    struct State {
        var current: Current
        /// This store's pins, by version and kind (a few entries, searched from the newest).
        var localPins: [LocalPin] = []
        /// The file's size as last set by this store (it grows ahead of the committed length).
        var allocatedLength = 0
        /// Extent of the last commit that failed after writing its slot (see the commit protocol).
        var failedCommit: FailedCommit?
        /// The lock file's file generation (Spec/FORMAT.md §7) when this store last looked at its
        /// path; nil when unknown (no lock file, or a switch was under way): every refresh then looks.
        var seenGeneration: UInt64?
        /// Changes from versions of files this store left (it followed an online compaction) to
        /// the version the compacted file starts at, for the versions its snapshots still pinned.
        var bridges: [Bridge] = []
        /// The last online compaction this store made (``Store/lastCompaction``).
        var lastCompaction: CompactionReport?
        /// An automatic compaction is scheduled or running; `automaticBackoff`: the committed length
        /// below which no automatic compaction is tried again after one failed.
        var automaticCompactionPending = false
        var automaticBackoff = 0
        /// A compaction by this store is running (the lock-file byte excludes other stores only).
        var compacting = false
        /// The current commit came from recovery or a refresh (another store's commit, which may
        /// have failed since): the next write transaction checks it (``abandonFailedCommit()``).
        var adopted = true
        /// This store holds the writer word and its current commit is the newest: it looked under
        /// the word and has not written the data file since, or its commit became current. Only
        /// then does it release the word with its own token (Spec/FORMAT.md §7).
        var writerUpToDate = false
    }

    /// The failed commit this store remembers, else the one the lock file records.
    func failedCommit() -> FailedCommit? { state.withLock { $0.failedCommit } ?? lockFile?.failedCommit() }

    let state: Locked<State>
    let lockFile: LockFile?
    let cache = BlockCache()
    /// The write transaction, the writer word between transactions and the commits not yet
    /// durable (group commit, ``awaitDurable(_:)``). Threads waiting to begin a transaction wait
    /// on condition ``transactionFree`` (one is woken when it ends); committed ones waiting for
    /// their sync on ``syncSettled`` (all are woken when a sync ends).
    let writers = Locked(Writers(), conditions: 2)
    static let transactionFree = 0
    static let syncSettled = 1
    /// Serializes switches to a compacted file (``switchToReplacedFile()``).
    let switchGate = Locked(())
    /// Write transactions of this store waiting to begin: those waiting when a compaction releases
    /// the writer word waited for it (``CompactionReport/commitsWaited``).
    let writersWaiting = Atomic<Int>(0)
    /// Logging and metrics (``Options/logger``, ``Options/metricsFactory``).
    let telemetry: StoreTelemetry

    private init(
        path: String, options: Options, current: Current, lockFile: LockFile?, damage: ChainDamage?, superseded: SupersededMark? = nil
    ) {
        self.path = path
        self.options = options
        self.damage = damage
        self.superseded = superseded
        self.state = Locked(State(current: current))
        self.lockFile = lockFile
        self.telemetry = StoreTelemetry(path: path, options: options)
    }

    /// Opens (or, with `options.create`, creates) the store at `path`.
    /// - Throws: ``StorageError`` — `.fileNotFound`, `.notARealmFile`, `.unsupportedFormatVersion`,
    ///   `.corrupted` (no valid commit, or a damaged commit chain: see ``Options/salvage``), `.io`.
    public static func open(at path: String, options: Options = Options()) throws -> Store {
        // One file, one lock file, whatever the name it is opened by.
        let path = SystemFile.canonicalPath(path)
        var opened: LockFile?
        do {
            let lock: LockFile?
            if options.readOnly || options.isPassive {
                let mode: LockFile.Mode = options.isPassive ? .observer : .reader
                lock = SystemFile.exists(path + ".lock") ? try? LockFile(path: path + ".lock", mode: mode) : nil
            } else {
                lock = try LockFile(path: path + ".lock", mode: .writer)
            }
            opened = lock
            if let lock, options.create && !options.readOnly && !SystemFile.exists(path) {
                // Create under the writer word so two creators cannot race.
                _ = try lock.acquireWriter()
                defer { lock.releaseWriter(upToDate: false) }
                if !SystemFile.exists(path) {
                    try create(path)
                    // The lock file may have served an earlier file at this path: its records
                    // name that file's commits.
                    lock.forgetCommitRecords()
                }
            }
            // An open that meets a compaction's switch starts again (below), at most three times.
            var attempt = 0
            while true {
                // Read before the data file is opened: a compaction switching files after this read
                // changes the generation again, so the next refresh follows it.
                let generation = lock?.fileGeneration
                let file = try SystemFile.open(path, options.readOnly || options.isPassive ? .readOnly : .readWrite)
                if let lock, lock.mode == .writer { try lock.markDataFile(file) }
                let (current, damage, torn) = try recover(
                    file, durable: lock?.durableCommit(), onlySlot: options.slot, rejecting: lock?.failedCommit(), salvage: options.salvage)
                // A file a compaction replaced, reached through another name (§8): no store reads or
                // writes it as the database; a passive store (an inspection tool) reads it and says so.
                var superseded: SupersededMark?
                if options.slot == nil, let (mark, inForce) = try supersededMark(current), inForce {
                    // Unless this very name now leads to another file: a compaction renamed its copy
                    // over it while this open read the old one (the old one's mark is then in force
                    // for every name). The open starts again, on the copy.
                    if attempt < 3, let onPath = SystemFile.identity(atPath: path), try onPath != file.identity() {
                        attempt += 1
                        continue
                    }
                    guard options.isPassive else { throw supersededError(mark, path) }
                    superseded = mark
                }
                let store = Store(path: path, options: options, current: current, lockFile: lock, damage: damage, superseded: superseded)
                store.telemetry.opened(at: current.record.version, torn: torn, damage: damage)
                let size = try file.size()
                // Nothing may be written over the unreachable commits: the next commit starts at the end
                // of the file, above every version seen, and writes its slot (Spec §6.2, as after a
                // failed commit; the lock file records it for the other stores).
                let unreachable = damage.flatMap { d in
                    store.isReadOnly ? nil : FailedCommit(version: d.newestUnreachableVersion, fileLength: UInt64(size))
                }
                store.state.withLock { s in
                    s.allocatedLength = size
                    s.failedCommit = unreachable
                    s.seenGeneration = generation.flatMap { $0 % 2 == 0 ? $0 : nil }
                }
                if let unreachable { lock?.recordFailed(unreachable) }
                return store
            }
        } catch let e as StorageError {
            // What this failed open created (its lock file) is removed, unless another opener uses it.
            opened?.removeIfCreatedAndUnused()
            if e.code == .corrupted { options.logger?.error("damage found at open", metadata: StoreTelemetry.metadata(e, path: path)) }
            throw e.withPath(path)
        }
    }

    /// Writes an empty version 1 to a new file and makes it durable.
    static func create(_ path: String) throws {
        let tmp = path + ".creating"
        SystemFile.unlink(tmp)
        let f = try SystemFile.open(tmp, .createNew)
        var renamed = false
        defer { if !renamed { SystemFile.unlink(tmp) } }
        var header = FileHeader.encodeStatic()
        header += [UInt8](repeating: 0, count: FileHeader.size - header.count)
        var record = VersionRecord(
            version: 1, parentVersion: 0, parentRecord: .none, commitStart: UInt64(FileHeader.size),
            commitChecksum: XXH64.hash([]), commitTime: Self.now(), liveBytes: 0, catalog: Catalog(), tables: [:],
            changeset: Changeset(), formatVersion: FileHeader.formatVersion)
        // liveBytes = header + this record.
        record.liveBytes = UInt64(FileHeader.size + record.encode().count)
        let bytes = record.encode()
        let slot = CommitSlot(
            version: 1, record: BlockRef(offset: UInt64(FileHeader.size), length: UInt64(bytes.count)),
            fileLength: UInt64(FileHeader.size + bytes.count), commitTime: record.commitTime,
            recordChecksum: blockTrailer(bytes))
        let s = slot.encode()
        header.replaceSubrange(FileHeader.slotOffsets[0]..<FileHeader.slotOffsets[0] + s.count, with: s)
        try f.write(header + bytes, at: 0)
        try f.syncAll()
        try SystemFile.rename(tmp, path)
        renamed = true
        try SystemFile.syncDirectory(
            (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent)
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000_000) }

    static func mappingLength(for fileLength: Int) -> Int {
        var len = 1 << 34  // 16 GiB of address space; the file grows underneath
        while len < fileLength * 2 { len <<= 1 }
        return len
    }

    /// Reads and validates the version record a slot points to, in a file of `formatVersion`.
    static func loadRecord(_ view: ByteView, _ slot: CommitSlot, formatVersion: UInt32, cache: BlockCache?) throws -> VersionRecord {
        let block = try readBlock(view, slot.record, BlockMagic.versionRecord, cache: cache)
        guard block.lastWord == slot.recordChecksum else {
            throw StorageError.corrupted("the version record is not the one the commit slot names", at: Int(slot.record.offset))
        }
        let record = try VersionRecord.decode(block, formatVersion: formatVersion)
        guard record.version == slot.version, record.commitTime == slot.commitTime else {
            throw StorageError.corrupted("slot and record disagree on the version", at: Int(slot.record.offset))
        }
        guard record.commitStart <= slot.record.offset else {
            throw StorageError.corrupted("commit start lies after its record", at: Int(slot.record.offset))
        }
        return record
    }

    /// Checks the XXH64 of every byte the commit wrote before its record (Spec/FORMAT.md §6.4).
    static func verifyCommitRegion(_ view: ByteView, _ record: VersionRecord, _ slot: CommitSlot) throws {
        let start = Int(record.commitStart)
        let length = Int(slot.record.offset) - start
        guard try view.checksumInPieces(start, length) == record.commitChecksum else {
            throw StorageError.corrupted("the newest commit's bytes do not match its checksum (torn commit)", at: start)
        }
    }

    /// Validates a block reference and the block's checksum (once per process, via `cache`).
    static func readBlock(_ view: ByteView, _ ref: BlockRef, _ magic: UInt32, cache: BlockCache?) throws -> ByteView {
        guard ref.length >= 16, ref.length % 8 == 0, ref.offset % 8 == 0, ref.offset >= UInt64(FileHeader.size),
            ref.length <= UInt64(view.count), ref.offset <= UInt64(view.count) - ref.length
        else {
            throw StorageError.corrupted(
                "block reference \(ref) lies outside the committed \(view.count) bytes", at: Int(clamping: ref.offset))
        }
        let b = try view.slice(Int(ref.offset), Int(ref.length))
        guard try b.u32(0) == magic else {
            throw StorageError.corrupted("expected block \(magicName(magic)), found \(magicName(try b.u32(0)))", at: Int(ref.offset))
        }
        let stored = try b.u64(b.count - 8)
        if let cache, cache.isVerified(ref, stored) { return b }
        guard try b.checksum(0, b.count - 8) == stored else {
            throw StorageError.corrupted("checksum mismatch in \(magicName(magic)) block", at: Int(ref.offset))
        }
        cache?.markVerified(ref, stored)
        return b
    }

    static func magicName(_ m: UInt32) -> String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: m >> (8 * UInt32($0))) }
        return bytes.allSatisfy { (0x20...0x7E).contains($0) } ? String(decoding: bytes, as: UTF8.self) : String(format: "0x%08x", m)
    }

    // MARK: Snapshots

    /// The newest committed version (refreshing from the file first).
    /// - Throws: ``StorageError`` if the file cannot be read.
    public func snapshot(kind: String = "snapshot") throws -> Snapshot {
        try refresh()
        return state.withLock { s in makeSnapshot(&s, s.current, kind: kind) }
    }

    func makeSnapshot(_ s: inout State, _ c: Current, kind: String) -> Snapshot {
        pinLocked(&s, c.record.version, kind)
        return Snapshot(
            store: self, view: c.mapping.view(validLength: Int(c.slot.fileLength)), formatVersion: c.formatVersion, record: c.record,
            kind: kind, cacheGeneration: cache.generation.load(ordering: .sequentiallyConsistent))
    }

    /// The version of the newest commit this store has seen.
    public var currentVersion: UInt64 { state.withLock { $0.current.record.version } }

    /// Reads the commit slots and moves to a newer commit made by another store or process.
    /// - Returns: whether the version advanced.
    @discardableResult
    public func refresh() throws -> Bool { try refresh(checkingDamage: false) }

    /// `checkingDamage`: a writer about to commit (holding the writer word) makes sure a chain that
    /// breaks after its version hides no newer commit, which its commit would write over.
    @discardableResult
    func refresh(checkingDamage: Bool) throws -> Bool {
        // A store fixed on one header slot (forensics) never advances.
        if options.slot != nil { return false }
        let switched = try followIfReplaced(holdingWriter: false)
        return try refreshCurrentFile(checkingDamage: checkingDamage) || switched
    }

    /// Moves to the newest commit of the file this store has open.
    @discardableResult
    func refreshCurrentFile(checkingDamage: Bool) throws -> Bool {
        let (file, formatVersion, known, header) = state.withLock {
            ($0.current.file, $0.current.formatVersion, $0.current.slot, $0.current.mapping.view(validLength: FileHeader.size))
        }
        var advanced = false
        // The slots are read through the mapping, which shows what any process last wrote (the
        // header lies inside every valid file).
        // (A slot's version field is looked at first: when neither is newer, as for a store that
        // made the last commit itself, nothing is copied or decoded.)
        let newer = FileHeader.slotOffsets.contains { ((try? header.u64($0 + 8)) ?? 0) > known.version }
        if newer, let (index, slot) = Self.newestSlot(header), slot.version > known.version,
            try adoptSlot(file, formatVersion, index, slot)
        {
            advanced = true
        }
        // Then the commits chained after the current one (format 3), but never a commit reported as
        // failed (by this store or in the lock file): its bytes may never become durable.
        let current = state.withLock { $0.current }
        guard current.formatVersion >= FileHeader.chainedCommitsVersion else {
            // No chain is read at the committed length here: a writer looks for a mark itself.
            if checkingDamage { try checkSupersededMark() }
            return advanced
        }
        let settled = try Self.settle(
            current, checkFirst: false, durable: { self.lockFile?.durableCommit() }, cache: cache,
            rejecting: { self.failedCommit() })
        if checkingDamage, !options.salvage, let broken = settled.broken, let at = settled.current,
            let damage = try Self.unreachableCommits(
                after: at, brokenAt: broken, size: try current.file.size(), durable: lockFile?.durableCommit(),
                rejecting: failedCommit())
        {
            throw damage.error.withPath(path)
        }
        if let next = settled.current, next.record.version > current.record.version {
            state.withLock { s in
                if next.record.version > s.current.record.version {
                    s.current = next
                    s.adopted = true
                }
            }
            advanced = true
        }
        // A compaction may have marked the file superseded (only while holding the word, §8): the
        // chain's last read, at the newest commit's committed length, met the mark.
        if checkingDamage && settled.endsAtMark { try checkSupersededMark() }
        return advanced
    }

    /// Moves to the commit a newer slot names, if it passes the checks recovery applies to the newest
    /// commit; a torn commit left by a crash must never be adopted.
    private func adoptSlot(_ file: SystemFile, _ formatVersion: UInt32, _ index: Int, _ slot: CommitSlot) throws -> Bool {
        let size = try file.size()
        guard slot.fileLength <= UInt64(size) else { return false }
        let mapping: FileMapping = try state.withLock { s in
            if Int(slot.fileLength) <= s.current.mapping.length { return s.current.mapping }
            return try FileMapping(file: file, length: Self.mappingLength(for: size))
        }
        let view = mapping.view(validLength: Int(slot.fileLength))
        let knownDurable = lockFile?.durableCommit().map { $0.version == slot.version && $0.recordChecksum == slot.recordChecksum } ?? false
        guard let record = try? Self.loadRecord(view, slot, formatVersion: formatVersion, cache: cache),
            knownDurable || (try? Self.verifyCommitRegion(view, record, slot)) != nil
        else {
            return false
        }
        state.withLock { s in
            if record.version > s.current.record.version {
                s.current = Current(
                    file: file, formatVersion: formatVersion, mapping: mapping, slot: slot, slotIndex: index, record: record)
                s.adopted = true
            }
        }
        return true
    }

    /// The newest slot with a valid checksum (the record is validated by the caller).
    static func readNewestSlot(_ file: SystemFile) throws -> (Int, CommitSlot)? {
        newestSlot(ByteView(copying: try file.read(at: 0, count: FileHeader.size)))
    }

    /// The newest slot with a valid checksum in `header`, the file's first 12288 bytes.
    static func newestSlot(_ header: ByteView) -> (Int, CommitSlot)? {
        var best: (Int, CommitSlot)?
        for (i, o) in FileHeader.slotOffsets.enumerated() {
            // Copied before decoding: another process may be rewriting the slot in the mapping.
            guard let b = try? header.bytes(o, FileHeader.slotSize) else { continue }
            let v = ByteView(copying: b)
            if let s = CommitSlot.decode(v), s.version > (best?.1.version ?? 0) { best = (i, s) }
        }
        return best
    }

    // MARK: Pins

    /// Pins of this kind are not published to other processes: a write transaction's base is the
    /// newest version while it holds the writer lock, so no other process could commit past it.
    static let transactionPinKind = "transaction"
    /// The version an online compaction copies: neither published nor counted as an active version
    /// (a background compaction must never make a commit fail its active-version limit).
    static let compactionPinKind = "compaction"
    /// An array, not a set: two names are searched as fast, and a fresh process's open does not
    /// pay for the first `Set<String>` (a search of every conformance in the process, ~0.1 ms).
    static let unpublishedPinKinds = [transactionPinKind, compactionPinKind]

    func pinLocked(_ s: inout State, _ version: UInt64, _ kind: String) { pinLocked(&s, CollectionOfOne(version), kind) }

    /// Pins each of `versions` for `kind`, publishing the pins to the lock file once if any is new.
    func pinLocked(_ s: inout State, _ versions: some Sequence<UInt64>, _ kind: String) {
        var added = false
        for version in versions {
            if let i = s.localPins.lastIndex(where: { $0.version == version && $0.kind == kind }) {
                s.localPins[i].count += 1
            } else {
                s.localPins.append(LocalPin(version: version, kind: kind, count: 1))
                added = true
            }
        }
        if added && !Self.unpublishedPinKinds.contains(kind) { try? lockFile?.publish(s.localPins) }
    }

    func unpin(_ version: UInt64, _ kind: String) {
        let dropped: [Bridge] = state.withLock { s in
            guard let i = s.localPins.lastIndex(where: { $0.version == version && $0.kind == kind }) else { return [] }
            if s.localPins[i].count <= 1 {
                if s.localPins.remove(at: i).isPublished { try? lockFile?.publish(s.localPins) }
                return pruneBridges(&s)
            } else {
                s.localPins[i].count -= 1
                return []
            }
        }
        // Released outside the lock: a bridge's snapshot unpins when it goes.
        withExtendedLifetime(dropped) {}
    }

    /// Logs (`.critical`, through ``Options/logger``) that reading `what` failed with `error`
    /// where the caller cannot throw and is about to stop the process; returns the message to stop
    /// with: for damage, where it is and how to list every problem.
    package func readFailed(_ error: any Error, reading what: String) -> String {
        telemetry.readFailed(error, reading: what, path: path)
        guard let e = error as? StorageError else { return "could not read \(what) from \(path): \(error)" }
        switch e.code {
        case .corrupted:
            let at = e.offset.map { " at byte \($0)" } ?? ""
            return "could not read \(what): \(path) is damaged\(at) (\(e.reason)). Nothing was written; "
                + "`realm-dump \(path) --verify` lists every problem, and a copy of the file from before the damage restores it."
        default:
            return "could not read \(what) from \(path): \(e.description)"
        }
    }

    /// Every pinned version, by whom: this store's pins and those other live stores publish in the lock file.
    public func pinnedVersions() -> [VersionPin] {
        let local = state.withLock { s in
            s.localPins.map {
                VersionPin(version: $0.version, processID: SystemFile.processID, kind: $0.kind, count: $0.count, isLocal: true)
            }
        }
        return (local + (lockFile?.otherPins() ?? [])).sorted { ($0.version, $0.kind) < ($1.version, $1.kind) }
    }

    /// The number of distinct versions pinned by anything, in any process.
    public var numberOfActiveVersions: Int {
        Set(pinnedVersions().lazy.filter { $0.kind != Self.compactionPinKind }.map(\.version)).count
    }

    /// Whether another store (in this or another process) has this file open.
    public func isOpenElsewhere() throws -> Bool { try lockFile?.isOpenElsewhere() ?? false }

    /// The processes (other than this store) that have the file open and publish a pin slot, whether
    /// or not they pin anything now: what a refusal to compact names.
    package func otherProcessIDs() -> [Int32] { lockFile?.otherProcessIDs() ?? [] }

    // MARK: Writing

    /// Starts the write transaction, waiting for any other writer (thread or process) to finish.
    /// - Throws: ``StorageError/Code/readOnly`` on a read-only store; I/O errors.
    public func beginWrite() throws -> WriteTransaction {
        guard !isReadOnly else { throw StorageError(.readOnly, "the store was opened read-only", path: path) }
        writersWaiting.add(1, ordering: .relaxed)
        defer { writersWaiting.subtract(1, ordering: .relaxed) }
        // One writer per store instance at a time (threads), then one per file (processes). The word
        // may still be held for this store's commits that wait for their sync (group commit): this
        // store then made the newest commit, and the transaction takes the word over.
        var retained = writers.wait(on: Self.transactionFree) { w -> Bool? in
            if w.transactionOpen { return nil }
            w.transactionOpen = true
            return w.holdsWord
        }
        if retained, let lock = lockFile, lock.writerWord & LockFile.wantedBit != 0 {
            // Another store waits for the word: once this store's commits are durable it gets a
            // turn (the release below sees the waiter and makes this store's next take yield).
            // A failed sync has already failed its own commits; this transaction starts afresh.
            try? flushPendingCommits()
            retained = writers.withLock { w in
                guard w.pending.isEmpty, w.holdsWord else { return w.holdsWord }
                lock.releaseWriter(upToDate: false)
                w.holdsWord = false
                return false
            }
        }
        do {
            // When this store released the writer word last, no commit was made since its own, so
            // there is nothing newer to look for (Spec/FORMAT.md §7).
            let unchanged = try retained || (lockFile?.acquireWriter() ?? false)
            if !retained, lockFile != nil { writers.withLock { $0.holdsWord = true } }
            // Before anything is written: a compaction may have switched files (an atomic load
            // when it did not).
            let switched = try followIfReplaced(holdingWriter: true)
            if !unchanged || switched { try refreshCurrentFile(checkingDamage: true) }
            if state.withLock({ $0.adopted }) {
                try abandonFailedCommit()
                state.withLock { $0.adopted = false }
            }
            let base = state.withLock { s in
                s.writerUpToDate = true
                return makeSnapshot(&s, s.current, kind: Self.transactionPinKind)
            }
            return WriteTransaction(store: self, base: base)
        } catch {
            endWrite(upToDate: false)
            throw error
        }
    }

    /// A commit is visible to refreshes between its write and its sync; if it then failed, this
    /// store may have moved to it. A write transaction must not build on it (it may never become
    /// durable, and the next commit's sync would make its cleared head durable): the store goes
    /// back to what recovery finds without it (Spec/FORMAT.md §6.2).
    func abandonFailedCommit() throws {
        guard let f = failedCommit() else { return }
        let current = state.withLock { $0.current }
        guard f.names(current.slot) else { return }
        let recovered = try Self.recover(current.file, durable: lockFile?.durableCommit(), rejecting: f)
        state.withLock { s in
            if f.names(s.current.slot) { s.current = recovered }
        }
    }

    func endWrite() {
        // After a commit that wrote but did not become current, the next writer (this store too)
        // looks at the file afresh.
        let upToDate = state.withLock { s in
            defer { s.writerUpToDate = false }
            return s.writerUpToDate
        }
        endWrite(upToDate: upToDate)
    }

    /// Ends the write transaction: releases the writer word, unless commits of this store still wait
    /// for their sync (the word is then released after the last of them, ``awaitDurable(_:)``).
    func endWrite(upToDate: Bool) {
        writers.withLock { w in
            w.transactionOpen = false
            w.releasesWordWhenDurable = upToDate
            if w.pending.isEmpty {
                if w.holdsWord { lockFile?.releaseWriter(upToDate: upToDate) }
                w.holdsWord = false
            }
        }
        // One waiting writer can take the transaction: waking the others (and the committed
        // writers waiting for their sync) would only put them back to sleep.
        writers.signal(Self.transactionFree)
    }
}

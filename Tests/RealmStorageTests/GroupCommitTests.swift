import Foundation
import RealmTestSupport
import Testing

@testable import RealmStorage

/// Group commit (Spec/FORMAT.md §6.2, format 7): commits from several threads share one
/// `fdatasync`, each acknowledged only when a sync that began after its write returned; a failed
/// sync fails its whole group; recovery tells a torn group from damage by the heads' acknowledged
/// versions (§3.4, §6.6).
@Suite struct GroupCommitTests {
    /// One commit acknowledged by a thread: its version, the `seq` it inserted, and what it read.
    struct Ack: Sendable {
        var version: UInt64
        var seq: Int64
        var digest: String
        /// Syncs logged when `commit()` returned (only with a write log).
        var syncs: Int
    }

    static func makeLogStore(_ path: String, groupOf minimum: Int = 1) throws -> Store {
        var options = Store.Options(create: true)
        options.groupCommitMinimum = minimum
        let store = try Store.open(at: path, options: options)
        if try store.snapshot().catalog.table("Log") == nil {
            try store.write { tx in
                try tx.createTable("Log", primaryKey: ColumnSchema("seq", .int))
                try tx.addColumn("Log", ColumnSchema("note", .string))
            }
        }
        return store
    }

    /// `threads` threads each make `commits` one-object commits (under `plan` when given); returns
    /// what each acknowledged commit wrote and the errors of those that failed.
    static func commitFromThreads(
        _ store: Store, threads: Int, commits: Int, plan: FaultPlan? = nil, log: WriteLog? = nil
    ) -> (acks: [Ack], errors: [String]) {
        let acks = Locked<[Ack]>([])
        let errors = Locked<[String]>([])
        let next = Locked<Int64>(1)
        let group = DispatchGroup()
        for t in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let body = {
                    for i in 0..<commits {
                        do {
                            let tx = try store.beginWrite()
                            // Under the writer word: sequence numbers follow the versions.
                            let seq = next.withLock { n in
                                defer { n += 1 }
                                return n
                            }
                            _ = try tx.insert("Log", row: [.int(seq), .string("thread \(t) commit \(i)")])
                            let s = try tx.commit()
                            let syncs = log.map { $0.events.filter { $0 == .sync }.count } ?? 0
                            let ack = Ack(version: s.version, seq: seq, digest: try DamageTests.digest(s), syncs: syncs)
                            acks.withLock { $0.append(ack) }
                        } catch {
                            errors.withLock { $0.append("\(error)") }
                        }
                    }
                }
                if let plan { FaultInjection.run(plan, body) } else { body() }
            }
        }
        group.wait()
        return (acks.withLock { $0 }.sorted { $0.version < $1.version }, errors.withLock { $0 })
    }

    /// The commit heads of the chain after the file's first commit, in file order.
    static func heads(_ path: String) throws -> [CommitHead] {
        let bytes = fileBytes(path)
        let view = ByteView(copying: bytes)
        return view.offsets(ofAlignedWord: CommitHead.magic, from: FileHeader.size).compactMap { o in
            o + CommitHead.size <= bytes.count ? (try? view.slice(o, CommitHead.size)).flatMap(CommitHead.decode) : nil
        }
    }

    @Test func threadsShareSyncsAndEveryAcknowledgedCommitIsDurable() throws {
        let dir = TempDir()
        let store = try Self.makeLogStore(dir.file(), groupOf: 4)
        let base = try store.snapshot().version
        let plan = FaultPlan()
        let (acks, errors) = Self.commitFromThreads(store, threads: 4, commits: 40, plan: plan)
        #expect(errors.isEmpty, "\(errors.prefix(3))")
        #expect(acks.count == 160)
        // Versions are distinct, consecutive after the base, and follow the sequence numbers.
        #expect(acks.map(\.version) == Array((base + 1)...(base + 160)))
        #expect(acks.map(\.seq) == Array(1...160))
        // Far fewer syncs than commits: groups of about four.
        #expect(plan.calls(.fsync) <= 60, "\(plan.calls(.fsync)) syncs for 160 commits")
        // The heads say which commit was acknowledged when each was written: in a group, an older one.
        let grouped = try Self.heads(dir.file()).filter { $0.acknowledgedVersion < $0.parentVersion }
        #expect(grouped.count >= 80)
        // A fresh open (recovery region-checks the grouped commits) reads every commit.
        let reopened = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        #expect(reopened.version == base + 160)
        #expect(try reopened.objectCount("Log") == 160)
        #expect(try DamageTests.digest(reopened) == acks.last?.digest)
        #expect(Verifier().verify(reopened).isClean)
        // The word went back once the last commit was durable: another store writes at once.
        let other = try Store.open(at: dir.file())
        try other.write { _ = try $0.insert("Log", row: [.int(1000), .string("other store")]) }
        #expect(try store.snapshot().objectCount("Log") == 161)
    }

    @Test func aFailedSyncFailsItsWholeGroupAndNothingBuildsOnIt() throws {
        let dir = TempDir()
        let store = try Self.makeLogStore(dir.file(), groupOf: 4)
        let base = try store.snapshot().version
        let plan = FaultPlan()
        plan.arm(.fsync, at: 1)
        let (acks, errors) = Self.commitFromThreads(store, threads: 4, commits: 1, plan: plan)
        // The one sync covered all four commits, and failed: all four failed.
        #expect(acks.isEmpty && errors.count == 4, "\(acks.map(\.version)) \(errors)")
        #expect(plan.calls(.fsync) == 1)
        #expect(try store.snapshot().version == base)
        #expect(try store.snapshot().objectCount("Log") == 0)
        // The group is recorded failed, here and in the lock file, from its first to its last version.
        let failed = try #require(store.lockFile?.failedCommit())
        #expect(failed.firstVersion == base + 1 && failed.version == base + 4)
        // The next commit uses neither the failed versions nor their bytes, and builds on the base.
        try store.write { _ = try $0.insert("Log", row: [.int(99), .string("after the failure")]) }
        let s = try store.snapshot()
        #expect(s.version == base + 5)
        #expect(try s.objectCount("Log") == 1)
        let reopened = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        #expect(reopened.version == base + 5)
        #expect(try reopened.objectKey("Log", primaryKey: .int(99)) != nil)
        #expect(try reopened.objectCount("Log") == 1)
        #expect(Verifier().verify(reopened).isClean)
    }

    @Test func anotherStoreNeverBuildsOnACommitThatFailedInAGroup() throws {
        // A reader that refreshed while the group was in flight adopted one of its commits (not the
        // last): the failed-commit record names the whole group, so its next write returns to the base.
        let dir = TempDir()
        let store = try Self.makeLogStore(dir.file(), groupOf: 3)
        let base = try store.snapshot().version
        let other = try Store.open(at: dir.file())
        let plan = FaultPlan()
        plan.arm(.fsync, at: 1)
        let (_, errors) = Self.commitFromThreads(store, threads: 3, commits: 1, plan: plan)
        #expect(errors.count == 3)
        let failed = try #require(other.lockFile?.failedCommit())
        for v in (base + 1)...(base + 3) {
            #expect(
                failed.names(
                    CommitSlot(version: v, record: BlockRef(offset: 0, length: 0), fileLength: 0, commitTime: 0, recordChecksum: 0))
                    == (v < base + 3))
        }
        try other.write { _ = try $0.insert("Log", row: [.int(7), .string("other")]) }
        let s = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        #expect(s.version > base + 3)
        #expect(try s.objectCount("Log") == 1)
    }

    @Test func anotherStoreWaitingForTheWordGetsATurnBetweenGroups() throws {
        // The store keeps the writer word while a commit waits for its sync; a second store (another
        // process's, here another instance) asking for the word meanwhile commits before the first
        // store's next transaction, instead of waiting for as long as that store keeps committing.
        let dir = TempDir()
        let store = try Self.makeLogStore(dir.file(), groupOf: 2)
        let other = try Store.open(at: dir.file())
        let group = DispatchGroup()
        // A commit whose sync waits (up to 50 ms) for a second one to join its group.
        group.enter()
        Thread.detachNewThread {
            defer { group.leave() }
            do { try store.write { _ = try $0.insert("Log", row: [.int(1), .string("first")]) } } catch { Issue.record("\(error)") }
        }
        #expect(waitUntil(5) { store.writers.withLock { !$0.pending.isEmpty } })
        let theirs = Locked<UInt64>(0)
        group.enter()
        Thread.detachNewThread {
            defer { group.leave() }
            do {
                let tx = try other.beginWrite()
                _ = try tx.insert("Log", row: [.int(2), .string("other store")])
                let v = try tx.commit().version
                theirs.withLock { $0 = v }
            } catch {
                Issue.record("other store: \(error)")
            }
        }
        #expect(waitUntil(5) { (store.lockFile?.writerWord ?? 0) & LockFile.wantedBit != 0 })
        let tx = try store.beginWrite()
        _ = try tx.insert("Log", row: [.int(3), .string("next")])
        let mine = try tx.commit().version
        group.wait()
        #expect(theirs.withLock { $0 } != 0 && theirs.withLock { $0 } < mine)
        #expect(try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot().objectCount("Log") == 3)
    }

    @Test func aFileOfFormat6NeverGroups() throws {
        let dir = TempDir()
        let path = try FormatVersionTests.copy("v6-column-changes.realm", dir)
        var options = Store.Options()
        options.groupCommitMinimum = 3
        let store = try Store.open(at: path, options: options)
        try store.write { tx in
            try tx.createTable("Log", primaryKey: ColumnSchema("seq", .int))
            try tx.addColumn("Log", ColumnSchema("note", .string))
        }
        let plan = FaultPlan()
        let (acks, errors) = Self.commitFromThreads(store, threads: 3, commits: 5, plan: plan)
        #expect(errors.isEmpty && acks.count == 15)
        #expect(plan.calls(.fsync) == 15)
        #expect(try Self.heads(path).allSatisfy { $0.lag == 0 })
        #expect(try store.snapshot().formatVersion == 6)
    }

    /// `commit(whileSyncing:)` runs its work once, after the commit is written and its transaction
    /// ended and before its sync (format 7); after the sync in a file of format 6; not at all when
    /// the commit is refused before it writes; and before a failed sync's error.
    @Test func theWorkOfACommitRunsBeforeItsSync() throws {
        let dir = TempDir()
        let store = try Self.makeLogStore(dir.file())
        let base = try store.snapshot().version
        /// The syncs made when the work ran, and whether the transaction had ended.
        typealias Run = (syncs: Int, ended: Bool)
        func commit(_ store: Store, _ seq: Int64, _ plan: FaultPlan, _ runs: inout [Run]) throws -> Snapshot {
            try FaultInjection.run(plan) {
                let tx = try store.beginWrite()
                _ = try tx.insert("Log", row: [.int(seq), .string("commit \(seq)")])
                return try tx.commit(whileSyncing: { runs.append((plan.calls(.fsync), tx.isFinished)) })
            }
        }
        let plan = FaultPlan()
        var runs: [Run] = []
        let s = try commit(store, 1, plan, &runs)
        #expect(runs.count == 1 && runs[0].syncs == 0 && runs[0].ended)
        #expect(plan.calls(.fsync) == 1)
        #expect(try s.version == base + 1 && s.objectCount("Log") == 1)

        // Refused before writing: the work does not run.
        let limited = try Store.open(at: dir.file(), options: .init(maximumNumberOfActiveVersions: 1))
        let pinned = try limited.snapshot()
        try store.write { _ = try $0.insert("Log", row: [.int(2), .string("moves the file on")]) }
        let tx = try limited.beginWrite()
        _ = try tx.insert("Log", row: [.int(3), .string("refused")])
        var ran = false
        expectCode(.maximumNumberOfActiveVersionsExceeded) { try tx.commit(whileSyncing: { ran = true }) }
        #expect(!ran && pinned.version == base + 1)

        // A failed sync: the work ran (the commit was written), then the commit failed.
        let failing = FaultPlan()
        failing.arm(.fsync, at: 1)
        var failedRuns: [Run] = []
        expectCode(.io) { try commit(store, 4, failing, &failedRuns) }
        #expect(failedRuns.count == 1 && failedRuns[0].syncs == 0)
        #expect(try store.snapshot().objectCount("Log") == 2)
        var nextRuns: [Run] = []
        #expect(try commit(store, 5, FaultPlan(), &nextRuns).objectCount("Log") == 3)

        // Format 6 (no group commit): the commit syncs before the work runs.
        let old = try Store.open(at: try FormatVersionTests.copy("v6-column-changes.realm", dir))
        try old.write { tx in
            try tx.createTable("Log", primaryKey: ColumnSchema("seq", .int))
            try tx.addColumn("Log", ColumnSchema("note", .string))
        }
        var oldRuns: [Run] = []
        let oldSnapshot = try commit(old, 1, FaultPlan(), &oldRuns)
        #expect(oldRuns.count == 1 && oldRuns[0].syncs == 1 && oldRuns[0].ended)
        #expect(try oldSnapshot.formatVersion == 6 && oldSnapshot.objectCount("Log") == 1)
    }

    /// Starting a write-back (before a commit's bookkeeping) is advisory: the file's bytes and
    /// size stay as written, whatever the range, on a read-only descriptor too.
    @Test func startingAWritebackChangesNothing() throws {
        let dir = TempDir()
        let file = try SystemFile.open(dir.file("w"), .createNew)
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try file.write(bytes[...], at: 0)
        file.startWriteback(at: 0, count: bytes.count)
        file.startWriteback(at: 4096, count: 100)
        file.startWriteback(at: 1 << 30, count: 4096)
        file.startWriteback(at: 0, count: 0)
        try file.syncData()
        #expect(try file.size() == bytes.count)
        #expect(try file.read(at: 0, count: bytes.count) == bytes)
        let reader = try SystemFile.open(dir.file("w"), .readOnly)
        reader.startWriteback(at: 0, count: bytes.count)
        #expect(try reader.read(at: 0, count: bytes.count) == bytes)
    }

    @Test func damageToAnAcknowledgedGroupIsReportedNotTakenForATornTail() throws {
        let dir = TempDir()
        let store = try Self.makeLogStore(dir.file(), groupOf: 2)
        let (acks, errors) = Self.commitFromThreads(store, threads: 2, commits: 6, plan: FaultPlan())
        #expect(errors.isEmpty && acks.count == 12)
        // A commit written in a group (its successor's head names an older acknowledged version),
        // followed by groups written after it was acknowledged: damage, never a torn tail.
        let heads = try Self.heads(dir.file())
        let target = try #require(
            heads.dropLast(4).first { h in heads.contains { $0.parentVersion == h.slot.version && $0.acknowledgedVersion < h.slot.version }
            })
        let history = try store.snapshot().history(since: target.parentVersion)
        let commit = try #require(history.first { $0.version == target.slot.version })
        var bytes = fileBytes(dir.file())
        let at = Int(commit.record.commitStart) + 20
        bytes[at] ^= 0xFF
        let damaged = dir.file("damaged.realm")
        _ = FileManager.default.createFile(atPath: damaged, contents: Data(bytes))
        do {
            let s = try Store.open(at: damaged, options: .init(readOnly: true)).snapshot()
            Issue.record("opened a damaged file at v\(s.version)")
        } catch let e as StorageError {
            #expect(e.code == .corrupted && e.unreachableVersion == acks.last?.version, "\(e)")
        }
    }

    @Test func theLastGroupIsNotTakenForATornOneWhileTheLockFileLasts() throws {
        // Without a later commit, damage to the last group looks like a torn group (§6.4); the
        // lock file's durable record, written after a group's sync, names its last commit.
        let dir = TempDir()
        let path = dir.file()
        var acks: [Ack] = []
        do {
            let store = try Self.makeLogStore(path, groupOf: 3)
            acks = Self.commitFromThreads(store, threads: 3, commits: 1).acks
        }
        #expect(acks.count == 3)
        let heads = try Self.heads(path).sorted { $0.slot.version < $1.slot.version }
        let first = try #require(heads.last { $0.lag == 1 })
        #expect(first.slot.version == acks[0].version)
        var bytes = fileBytes(path)
        bytes[Int(first.slot.record.offset) - 16] ^= 0xFF  // inside the first commit's region
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        // The durable record vouches for the group: the open reads its newest commit (not an older
        // one); a damaged block it still uses is a typed error when read.
        let s = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
        #expect(s.version == acks[2].version)
        do { #expect(try DamageTests.digest(s) == acks[2].digest) } catch let e as StorageError { #expect(e.code == .corrupted) }
        // Without the lock file the same bytes are a torn group: the version before it.
        try FileManager.default.removeItem(atPath: path + ".lock")
        #expect(try Store.open(at: path, options: .init(readOnly: true)).snapshot().version == first.parentVersion)
    }

    @Test func everyPowerCutDuringGroupsKeepsEveryAcknowledgedCommit() throws {
        let dir = TempDir()
        let store = try Self.makeLogStore(dir.file(), groupOf: 3)
        let base = PowerCutTests.Disk(bytes: fileBytes(store.path))
        let first = try store.snapshot()
        let log = WriteLog(path: store.path)
        let (acks, errors) = Self.commitFromThreads(store, threads: 3, commits: 8, plan: FaultPlan(log: log), log: log)
        #expect(errors.isEmpty && acks.count == 24)
        var digests: [UInt64: String] = [first.version: try DamageTests.digest(first)]
        for a in acks { digests[a.version] = a.digest }
        #expect(log.events.filter { $0 == .sync }.count < 24)
        let (failures, states) = try PowerCutTests.replay(
            log.events, from: base, digests: digests, dir: dir, seed: 28,
            mustHave: { b in acks.last { $0.syncs <= b }?.version ?? first.version })
        #expect(failures.isEmpty, "\(failures.prefix(8).joined(separator: "\n"))")
        #expect(states > 100)
    }
}

import Foundation
import Testing

@testable import RealmStorage

/// Chained commits (Spec/FORMAT.md §3.4, §6): a small commit is named by its commit head instead of
/// a header slot; recovery and refresh follow the chain, check the last commit's region, and end
/// the chain at anything that does not verify.
@Suite struct ChainedCommitTests {
    /// `n` one-object commits after `makePeopleStore`'s version 2.
    func commits(_ store: Store, _ n: Int, from first: Int = 0) throws {
        for i in first..<first + n { try store.write { try $0.insert("Person", row: person(i)) } }
    }

    func copy(_ bytes: [UInt8], _ dir: TempDir, _ name: String) -> String {
        let path = dir.file(name)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    /// The current commit's head offset and region, read through the inspector.
    func lastCommit(_ path: String) throws -> (head: Int, region: Range<Int>, version: UInt64) {
        let r = try Inspector().inspect(path: path)
        let v = try #require(r.versions.first)
        return (Int(v.commitStart) - CommitHead.size, Int(v.commitStart)..<Int(v.recordOffset), v.version)
    }

    @Test func smallCommitsAreChainedAndEveryStoreFollowsThem() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir)
        let early = try Store.open(at: dir.file(), options: .init(readOnly: true))
        #expect(try early.snapshot().version == 2)
        try commits(store, 10)
        let r = try Inspector().inspect(path: dir.file())
        #expect(r.currentVersion == 12 && r.chainedCommits == 11)
        #expect(r.slots.compactMap(\.version) == [1])  // only the new file's slot was ever written
        // A store opened before the commits refreshes along the chain; a new one recovers it.
        let s = try early.snapshot()
        #expect(s.version == 12)
        #expect(try s.objectCount("Person") == 10)
        let reopened = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        #expect(reopened.version == 12)
        #expect(try reopened.changes(since: 2).tables["Person"]?.inserted.count == 10)
        #expect(Verifier().verify(reopened).isClean)
        let map = try Inspector().inspect(path: dir.file(), blocks: true).blocks
        #expect(map.filter { $0.kind == "commit head" }.count == 11)
    }

    @Test func aSlotIsWrittenAtLeastEvery64Commits() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir)
        try commits(store, 140)
        let r = try Inspector().inspect(path: dir.file())
        let newestSlot = try #require(r.slots.compactMap(\.version).max())
        #expect(r.currentVersion == 142)
        #expect(newestSlot >= 128 && r.chainedCommits == Int(r.currentVersion - newestSlot) && r.chainedCommits < 64)
        // A large commit names itself by a slot.
        try store.write { tx in for i in 0..<30_000 { try tx.insert("Person", row: person(1000 + i)) } }
        let big = try Inspector().inspect(path: dir.file())
        #expect(big.chainedCommits == 0 && big.slots.first(where: \.isCurrent)?.version == big.currentVersion)
    }

    @Test func aTornLastCommitFallsBackToItsParentAndIsOverwritten() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir)
        try commits(store, 5)
        let good = fileBytes(dir.file())
        let last = try lastCommit(dir.file())
        // Any damage to the last commit's region reads as a commit torn by a crash.
        for at in [last.region.lowerBound, last.region.lowerBound + last.region.count / 2, last.region.upperBound - 1] {
            var bytes = good
            bytes[at] ^= 0x40
            let path = copy(bytes, dir, "torn-\(at).realm")
            let s = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
            #expect(s.version == last.version - 1, "flip at \(at)")
            #expect(try s.objectCount("Person") == 4)
            // A writer commits over the torn bytes; the file then holds the new commit.
            let writer = try Store.open(at: path)
            try writer.write { try $0.insert("Person", row: person(77)) }
            let after = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
            #expect(after.version == last.version)
            #expect(try after.objectCount("Person") == 5)
            #expect(try after.contains("Person", ObjectKey(4)) == true)
            #expect(Verifier().verify(after).isClean)
        }
        // Truncated inside the last commit: the same.
        let short = copy(Array(good[0..<last.region.upperBound - 10]), dir, "short.realm")
        #expect(try Store.open(at: short, options: .init(readOnly: true)).snapshot().version == last.version - 1)
    }

    /// A head before later commits that fails its checks is damage, not a torn tail (Spec §6.6
    /// step 5): the open fails and names the newest version it cannot reach; salvage reads the
    /// version before the break.
    @Test func aHeadThatDoesNotVerifyOrNameItsParentBeforeLaterCommitsIsDamage() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir)
        try commits(store, 6)
        let good = fileBytes(dir.file())
        let r = try Inspector().inspect(path: dir.file())
        // The head of version 5 (three commits before the last).
        let v5 = try #require(r.versions.first { $0.version == 5 })
        let at = Int(v5.commitStart) - CommitHead.size
        #expect(CommitHead.decode(ByteView(copying: Array(good[at..<at + CommitHead.size])))?.slot.version == 5)
        func expectDamage(_ path: String, _ comment: Comment) throws {
            do {
                _ = try Store.open(at: path, options: .init(readOnly: true))
                Issue.record("opened a damaged chain: \(comment)")
            } catch let e as StorageError {
                #expect(e.code == .corrupted && e.unreachableVersion == 8 && e.offset == UInt64(at), "\(comment): \(e)")
            }
            var salvage = Store.Options(readOnly: true)
            salvage.salvage = true
            #expect(try Store.open(at: path, options: salvage).snapshot().version == 4, comment)
        }
        // Torn (checksum fails).
        var bytes = good
        bytes[at + 9] ^= 1
        try expectDamage(copy(bytes, dir, "torn-head.realm"), "torn")
        // Sealed, but naming another parent, or a version not above its parent's.
        for (field, value) in [(56, UInt64(3)), (64, UInt64(12345)), (8, UInt64(4))] {
            bytes = good
            for k in 0..<8 { bytes[at + field + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(k))) }
            let sum = XXH64.hash(Array(bytes[at..<at + CommitHead.size - 8]))
            for k in 0..<8 { bytes[at + CommitHead.size - 8 + k] = UInt8(truncatingIfNeeded: sum >> (8 * UInt64(k))) }
            try expectDamage(copy(bytes, dir, "head-\(field).realm"), "field \(field)")
        }
        // The same head as the last commit's: a torn last commit, the version before it.
        let last = try #require(r.versions.first)
        let lastAt = Int(last.commitStart) - CommitHead.size
        bytes = good
        bytes[lastAt + 9] ^= 1
        #expect(try Store.open(at: copy(bytes, dir, "torn-last.realm"), options: .init(readOnly: true)).snapshot().version == 7)
    }

    @Test func damageInAnEarlierChainedCommitIsReportedNotSkipped() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 40)
        try store.write { tx in for k in 0..<40 { try tx.set("Person", ObjectKey(Int64(k)), "age", .int(7)) } }
        try commits(store, 3, from: 100)
        // The age segments the update wrote are live; the commits after it are chained past it.
        let s = try store.snapshot()
        let column = try #require(s.catalog.table("Person")?.column("age"))
        let group = try s.rowGroup(try s.rowGroups("Person")[0].block)
        let ref = try #require(group.columns[column.id])
        var bytes = fileBytes(dir.file())
        bytes[Int(ref.offset) + Int(ref.length) / 2] ^= 0x10
        let damaged = try Store.open(at: copy(bytes, dir, "damaged.realm"), options: .init(readOnly: true)).snapshot()
        #expect(damaged.version == s.version)
        expectCode(.corrupted) { try damaged.value("Person", ObjectKey(0), "age") }
        #expect(Verifier().verify(damaged).problems.contains { $0.offset == ref.offset })
    }

    @Test func aFailedChainedCommitIsUnnamedAndTheNextWritesASlot() throws {
        guard FaultInjection.isAvailable else { return }
        let dir = TempDir()
        let store = try makePeopleStore(dir)
        try commits(store, 2)
        let reader = try Store.open(at: dir.file(), options: .init(readOnly: true))
        #expect(try reader.snapshot().version == 4)
        let plan = FaultPlan()
        plan.arm(.fsync, at: 1)
        #expect(throws: StorageError.self) { try FaultInjection.run(plan) { try commits(store, 1, from: 50) } }
        // Its head was cleared: no store adopts it.
        #expect(try reader.snapshot().version == 4)
        #expect(try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot().version == 4)
        // The next commit starts after the failed one's bytes, skips its version and writes a slot.
        try commits(store, 1, from: 60)
        let r = try Inspector().inspect(path: dir.file())
        #expect(r.currentVersion == 6 && r.chainedCommits == 0)
        #expect(try reader.snapshot().version == 6)
        try commits(store, 1, from: 70)
        #expect(try Inspector().inspect(path: dir.file()).chainedCommits == 1)
    }

    /// Stores `a` and `b` on one file at v4, after `a`'s commit of v5 (object 50) failed its sync
    /// (and the second call at `alsoFailing` failed too).
    func twoStoresAfterAFailedCommit(_ dir: TempDir, alsoFailing point: FaultPoint?) throws -> (Store, Store) {
        let a = try makePeopleStore(dir)
        try commits(a, 2)  // v3, v4
        let b = try Store.open(at: dir.file())
        let plan = FaultPlan()
        plan.arm(.fsync, at: 1)
        if let point { plan.arm(point, at: 2) }
        #expect(throws: StorageError.self) { try FaultInjection.run(plan) { try commits(a, 1, from: 50) } }
        return (a, b)
    }

    /// A store whose own commit failed still follows the commits other stores chain after theirs
    /// (found in review: it skipped chains, built on an older commit and overwrote theirs).
    @Test func aStoreWhoseCommitFailedStillFollowsOtherStoresChains() throws {
        guard FaultInjection.isAvailable else { return }
        let dir = TempDir()
        let (a, b) = try twoStoresAfterAFailedCommit(dir, alsoFailing: nil)
        try commits(b, 3, from: 60)  // v6 with a slot (after the failed commit's bytes), v7 and v8 chained
        try commits(a, 1, from: 70)  // on v8
        let s = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        #expect(s.version == 9)
        #expect(try s.objectCount("Person") == 6)
        for id in [0, 1, 60, 61, 62, 70] { #expect(try s.objectKey("Person", primaryKey: .int(Int64(id))) != nil, "\(id)") }
        #expect(try s.objectKey("Person", primaryKey: .int(50)) == nil)
        #expect(Verifier().verify(s).isClean)
    }

    /// A commit is visible between its write and its sync. If it then fails, no store adopts it
    /// from then on, and a store that adopted it before goes back before its next write (found in
    /// review: the next commit built on it, and its sync made the failed commit's cleared head
    /// durable, so the next open lost both).
    @Test func aCommitThatFailedAfterOthersSawItIsNotBuiltOn() throws {
        guard FaultInjection.isAvailable else { return }
        let dir = TempDir()
        // Clearing v5's head fails too: its head and bytes stay in the file.
        let (a, b) = try twoStoresAfterAFailedCommit(dir, alsoFailing: .pwrite)
        #expect(try b.snapshot().version == 4)
        #expect(try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot().version == 4)
        // What a refresh in the window between v5's write and its sync saw: b moved to v5.
        let adopted = try Store.recover(b.state.withLock { $0.current.file })
        #expect(adopted.record.version == 5)
        b.state.withLock {
            $0.current = adopted
            $0.adopted = true  // as a refresh that moved it sets
        }
        try commits(b, 1, from: 60)  // goes back to v4 first; v6 starts after v5's bytes, with a slot
        let s = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        #expect(s.version == 6)
        #expect(try s.objectKey("Person", primaryKey: .int(50)) == nil)
        #expect(try s.objectKey("Person", primaryKey: .int(60)) != nil)
        #expect(Verifier().verify(s).isClean)
        // a's own next commit follows b's.
        try commits(a, 1, from: 70)
        #expect(try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot().objectCount("Person") == 4)
    }
}

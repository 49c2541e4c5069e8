import Foundation
import Testing

@testable import RealmStorage

/// The lock file's writer word (Spec/FORMAT.md §7): one writer at a time across stores and
/// processes, taken over from a dead holder, and a released token that spares its store a look
/// for commits it already knows.
@Suite struct WriterWordTests {
    /// Runs `body` on a thread; the returned function tells whether it has finished within
    /// `seconds` (0: now).
    func onThread(_ body: @escaping @Sendable () throws -> Void) -> @Sendable (_ seconds: Double) -> Bool {
        let group = DispatchGroup()
        group.enter()
        Thread.detachNewThread {
            defer { group.leave() }
            do { try body() } catch { Issue.record("thread: \(error)") }
        }
        return { group.wait(timeout: .now() + $0) == .success }
    }

    @Test func aStoreReleasesWithItsTokenAndAnotherStoresCommitIsSeen() throws {
        let dir = TempDir()
        let a = try makePeopleStore(dir, count: 3)
        let lock = try #require(a.lockFile)
        // Released by its last committer, which keeps its token there.
        #expect(lock.writerWord == lock.token)
        let tx = try a.beginWrite()
        #expect(lock.writerWord == lock.token | LockFile.heldBit)
        tx.cancel()
        #expect(lock.writerWord == lock.token)
        // Another store commits (chained): its token replaces A's, so A looks and sees the commit.
        let b = try Store.open(at: dir.file())
        let bLock = try #require(b.lockFile)
        #expect(bLock.token != lock.token)
        let bTx = try b.beginWrite()
        try bTx.insert("Person", row: person(3))
        let committed = try bTx.commit()
        #expect(lock.writerWord == bLock.token)
        let aTx = try a.beginWrite()
        #expect(aTx.baseVersion == committed.version)
        try aTx.insert("Person", row: person(4))
        let mine = try aTx.commit()
        #expect(mine.version == committed.version + 1)
        #expect(try mine.objectCount("Person") == 5)
        #expect(Verifier().verify(try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()).isClean)
    }

    @Test func aStoreThatReleasedLastSkipsTheLookForChainedCommits() throws {
        let dir = TempDir()
        let a = try makePeopleStore(dir, count: 3)
        let lock = try #require(a.lockFile)
        let b = try Store.open(at: dir.file())
        let bTx = try b.beginWrite()
        try bTx.insert("Person", row: person(3))
        let committed = try bTx.commit()
        // Pretend nobody took the word since A released it (a rule no writer breaks): A then does
        // not follow the chain, so it does not see B's chained commit.
        let region = try #require(lock.region)
        #expect(region.compareExchange(word: LockFile.writerWordOffset, expected: b.lockFile!.token, desired: lock.token).exchanged)
        let skipped = try a.beginWrite()
        #expect(skipped.baseVersion == committed.version - 1)
        skipped.cancel()
        // An explicit refresh always follows the chain.
        try a.refresh()
        #expect(try a.snapshot().version == committed.version)
    }

    @Test func aWriterKilledWhileHoldingTheWordLosesItToTheNextWriter() throws {
        let binary = try #require(CrashTests.writerBinary(), "StorageCrashWriter was not built")
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 10)
        let (p, line) = try startHoldingWriter(binary, dir.file(), "holdwrite")
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        #expect(line.hasPrefix("writing 2"))
        let lock = try #require(store.lockFile)
        let word = lock.writerWord
        #expect(word & LockFile.heldBit != 0 && word & 0xFFFF_FFFF_FFFF != lock.token, "held by the child")
        #expect(try lock.ownerIsAlive(word))
        // Our writer waits while the child is alive …
        let committed = Locked<UInt64>(0)
        let finished = onThread {
            let tx = try store.beginWrite()
            try tx.insert("Person", row: person(10))
            let v = try tx.commit().version
            committed.withLock { $0 = v }
        }
        usleep(300_000)
        #expect(!finished(0), "a second writer got in while the first held the word")
        // … and takes the word once the child is killed in its transaction.
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(finished(30), "the word of a dead writer was not taken over")
        #expect(committed.withLock { $0 } == 3)
        #expect(lock.writerWord == lock.token)
        #expect(Verifier().verify(try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()).isClean)
    }

    @Test func aLiveHolderIsWaitedForAndStaleHoldsAreTakenOver() throws {
        let dir = TempDir()
        let a = try makePeopleStore(dir, count: 3)
        let b = try Store.open(at: dir.file())
        let aLock = try #require(a.lockFile)
        let bLock = try #require(b.lockFile)
        let region = try #require(aLock.region)
        let offset = LockFile.writerWordOffset
        func set(_ w: UInt64) { region.write(withUnsafeBytes(of: w.littleEndian) { Array($0) }, at: offset) }
        // B holds the word in a transaction: A waits and sets the wanted bit, then gets it after B
        // commits, and sees B's commit.
        let bTx = try b.beginWrite()
        let seen = Locked<UInt64>(0)
        let finished = onThread {
            let tx = try a.beginWrite()
            seen.withLock { $0 = tx.baseVersion }
            tx.cancel()
        }
        #expect(waitUntil(10) { aLock.writerWord & LockFile.wantedBit != 0 }, "the waiter did not ask for the word")
        #expect(!finished(0))
        try bTx.insert("Person", row: person(3))
        let v = try bTx.commit().version
        #expect(finished(30))
        #expect(seen.withLock { $0 } == v)
        // Holds that name no live store are taken over: a slot nobody owns, B's slot with another
        // nonce (a dead owner's slot claimed again), no slot and nobody on the slotless byte, and
        // a hold under A's own token (no transaction of A's is open).
        let holds: [UInt64] = [
            0x1234 | UInt64(901) << 32, UInt64(bLock.nonce ^ 1) | UInt64(bLock.slot! + 1) << 32, 0x5678, aLock.token,
        ]
        for w in holds {
            set(w | LockFile.heldBit)
            #expect(try !aLock.ownerIsAlive(w | LockFile.heldBit))
            let tx = try a.beginWrite()
            try tx.insert("Person", row: person(Int(tx.baseVersion) + 100))
            try tx.commit()
            #expect(aLock.writerWord == aLock.token)
        }
        // B holding it for real is alive as seen from A.
        let again = try b.beginWrite()
        #expect(try aLock.ownerIsAlive(aLock.writerWord))
        again.cancel()
        #expect(Verifier().verify(try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()).isClean)
    }

    @Test func aWriterWithoutAPinSlotHoldsTheSlotlessByte() throws {
        let dir = TempDir()
        _ = try makePeopleStore(dir, count: 1)
        let path = dir.file() + ".lock"
        let slotless = try LockFile(path: path, mode: .writer, claimsSlot: false)
        let other = try LockFile(path: path, mode: .writer)
        #expect(slotless.slot == nil && other.slot != nil)
        #expect(try !slotless.acquireWriter(), "a store without a slot never assumes it released last")
        let word = other.writerWord
        #expect(word == slotless.token | LockFile.heldBit && (word >> 32) & 0xFFFF == 0)
        #expect(try other.ownerIsAlive(word), "the slotless byte shows the holder alive")
        let finished = onThread {
            _ = try other.acquireWriter()
            other.releaseWriter(upToDate: true)
        }
        usleep(200_000)
        #expect(!finished(0))
        slotless.releaseWriter(upToDate: true)
        #expect(finished(30))
        #expect(other.writerWord == other.token)
        // Released by the slotless store with its token and taken again by it: still no assumption.
        #expect(try !slotless.acquireWriter())
        slotless.releaseWriter(upToDate: true)
        #expect(other.writerWord == slotless.token)
        #expect(try !slotless.acquireWriter(), "a store without a slot never assumes it released last")
        slotless.releaseWriter(upToDate: true)
        #expect(try !other.ownerIsAlive(slotless.token | LockFile.heldBit), "no slotless writer holds the byte")
    }

    @Test func aReleaseThatSawAWaiterOrAFailedCommitLeavesTheWordFree() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 3)
        let lock = try #require(store.lockFile)
        let region = try #require(lock.region)
        // A waiter set the wanted bit: the holder releases with 0, not its token.
        let tx = try store.beginWrite()
        let held = lock.writerWord
        #expect(region.compareExchange(word: LockFile.writerWordOffset, expected: held, desired: held | LockFile.wantedBit).exchanged)
        tx.cancel()
        #expect(lock.writerWord == 0)
        // A commit that fails after writing (here at its fdatasync) releases with 0 too.
        if FaultInjection.isAvailable {
            let plan = FaultPlan()
            plan.arm(.fsync, at: 1)
            #expect(throws: StorageError.self) {
                try FaultInjection.run(plan) {
                    let failing = try store.beginWrite()
                    try failing.insert("Person", row: person(3))
                    try failing.commit()
                }
            }
            #expect(lock.writerWord == 0)
        }
        // A transaction that only looked releases with the token; so does a commit that landed.
        try store.beginWrite().cancel()
        #expect(lock.writerWord == lock.token)
        let ok = try store.beginWrite()
        try ok.insert("Person", row: person(4))
        try ok.commit()
        #expect(lock.writerWord == lock.token)
    }

    @Test func aForkedChildMayNotWriteWithItsParentsStore() throws {
        // Simulated: a lock file whose opener is another process refuses to take the word.
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 1)
        let lock = try #require(store.lockFile)
        #expect(throws: StorageError.self) { try lock.checkOpener(SystemFile.forkGeneration + 1) }
        try lock.checkOpener(SystemFile.forkGeneration)
        // Real: a child process forks; its child is refused, and the parent still writes.
        let binary = try #require(CrashTests.writerBinary(), "StorageCrashWriter was not built")
        let (p, line) = try startHoldingWriter(binary, dir.file(), "forkwrite")
        p.waitUntilExit()
        #expect(line == "child exit 0, parent wrote\n")
    }

    @Test func aWriterKeepsAnOlderBuildsWriterLockOut() throws {
        let dir = TempDir()
        let path = dir.file()
        do { _ = try makePeopleStore(dir, count: 1) }
        // A protocol-1 writer locks the writer byte exclusively to write: not while a writer is open.
        let oldBuild = try SystemFile.open(path + ".lock", .readWrite)
        let reader = try Store.open(at: path, options: .init(readOnly: true))
        #expect(try oldBuild.tryLock(byte: LockFile.writerByte, .exclusive), "a read-only store does not hold it")
        oldBuild.unlock(byte: LockFile.writerByte)
        do {
            let writer = try Store.open(at: path)
            #expect(try !oldBuild.tryLock(byte: LockFile.writerByte, .exclusive))
            withExtendedLifetime(writer) {}
        }
        // And a writer opening while an older build's writer holds it exclusively waits for it.
        #expect(try oldBuild.tryLock(byte: LockFile.writerByte, .exclusive))
        let opened = onThread { _ = try Store.open(at: path) }
        usleep(200_000)
        #expect(!opened(0), "a writer opened while an older build was writing")
        oldBuild.unlock(byte: LockFile.writerByte)
        #expect(opened(30))
        withExtendedLifetime(reader) {}
    }
}

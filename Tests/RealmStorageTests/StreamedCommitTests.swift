import Foundation
import Testing

@testable import RealmStorage

/// A commit larger than `Store.Options.commitFlushThreshold` writes its blocks to the file as it
/// builds them instead of holding the whole commit in memory: the file it leaves reads the same,
/// its commit head is written after the region it names, and a failed write of any piece leaves
/// the file at the previous version.
@Suite struct StreamedCommitTests {
    /// A `Person` store whose commits are written in pieces of about `threshold` bytes (a commit
    /// writes what it holds after each row group and index chunk: groups of 64 make many pieces).
    func store(_ dir: TempDir, threshold: Int) throws -> Store {
        var options = Store.Options(create: true, rowGroupCapacity: 64)
        options.commitFlushThreshold = threshold
        return try makePeopleStore(dir, options: options)
    }

    /// Inserts `count` people from id `first`, renames the first and deletes the second, in one
    /// commit; returns the first one's key.
    @discardableResult
    func bulk(_ store: Store, from first: Int, count: Int = 3000) throws -> ObjectKey {
        try store.write { tx in
            let keys = try (first..<(first + count)).map { try tx.insert("Person", row: person($0)) }
            try tx.set("Person", keys[0], "name", .string("renamed-\(first)"))
            try tx.delete("Person", keys[1])
            return keys[0]
        }
    }

    @Test func aLargeCommitIsWrittenInPiecesItsHeadLastAndReadsBackTheSame() throws {
        let (a, b) = (TempDir(), TempDir())
        let whole = try store(a, threshold: 1 << 30)
        let pieces = try store(b, threshold: 512)
        let key = try bulk(whole, from: 0)
        let start = Int(try pieces.snapshot().fileLength)
        let log = WriteLog(path: pieces.path)
        try FaultInjection.recording(log) { _ = try bulk(pieces, from: 0) }
        let end = Int(try pieces.snapshot().fileLength)
        // The commit's writes into [start, end): several pieces in ascending order, the first with
        // the head's room zeroed, and the head itself (80 bytes at `start`) last.
        let writes: [(offset: Int, bytes: [UInt8])] = log.events.compactMap {
            guard case .write(let offset, let bytes) = $0, offset >= start, offset < end else { return nil }
            return (offset, bytes)
        }
        #expect(writes.count > 4, "\(writes.count) writes")
        let head = try #require(writes.last)
        #expect(head.offset == start && head.bytes.count == CommitHead.size)
        #expect(head.bytes.prefix(4).elementsEqual([0x52, 0x48, 0x45, 0x44]), "the last write is the commit head (RHED)")
        let region = writes.dropLast()
        #expect(region.first?.offset == start && region.first?.bytes.prefix(CommitHead.size).allSatisfy { $0 == 0 } == true)
        for (p, q) in zip(region, region.dropFirst()) { #expect(p.offset + p.bytes.count == q.offset, "pieces are contiguous") }
        #expect(region.last.map { $0.offset + $0.bytes.count } == end)
        // Both files, reopened (recovery checks the last commit's region checksum), read the same.
        let x = try Store.open(at: a.file(), options: .init(readOnly: true)).snapshot()
        let y = try Store.open(at: b.file(), options: .init(readOnly: true)).snapshot()
        #expect(Verifier().verify(x).isClean)
        #expect(Verifier().verify(y).isClean)
        #expect(try DamageTests.digest(x) == DamageTests.digest(y))
        #expect(try y.objectCount("Person") == 2999)
        #expect(try y.value("Person", key, "name") == .string("renamed-0"))
        // The writing store reads its own commit the same way.
        #expect(try DamageTests.digest(pieces.snapshot()) == DamageTests.digest(y))
    }

    @Test func aFailedWriteOfAnyPieceLeavesThePreviousVersion() throws {
        let dir = TempDir()
        let s = try store(dir, threshold: 512)
        try bulk(s, from: 0, count: 200)
        let probe = FaultPlan()
        try FaultInjection.run(probe) { _ = try bulk(s, from: 1000, count: 500) }
        let n = probe.calls(.pwrite)
        #expect(n > 4, "\(n) writes")
        var failures = 0
        for k in 1...n {
            let before = try s.snapshot()
            let plan = FaultPlan()
            plan.arm(.pwrite, at: k)
            var acknowledged = false
            do {
                try FaultInjection.run(plan) { _ = try bulk(s, from: 10_000 * (k + 1), count: 500) }
                acknowledged = true
            } catch let e as StorageError {
                #expect(e.code == .io, "\(e)")
                failures += 1
            }
            let reopened = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
            #expect(reopened.version == before.version + (acknowledged ? 1 : 0), "pwrite #\(k)")
            #expect(Verifier().verify(reopened).isClean, "pwrite #\(k)")
            if !acknowledged { #expect(try DamageTests.digest(reopened) == DamageTests.digest(before)) }
            // The store keeps working, and its next commit reads back.
            let first = 10_000 * (k + 1) + 5000
            let renamed = try bulk(s, from: first, count: 500)
            let after = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
            #expect(Verifier().verify(after).isClean, "after pwrite #\(k)")
            #expect(try after.objectCount("Person") == reopened.objectCount("Person") + 499)
            #expect(try after.value("Person", renamed, "name") == .string("renamed-\(first)"))
        }
        #expect(failures >= n / 2, "\(failures) of \(n) failed writes failed the commit")
    }

    /// Whether the file's live bytes are exactly those its newest version reaches.
    func expectExactLiveBytes(_ dir: TempDir, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let fresh = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        #expect(Verifier().verify(fresh).isClean, sourceLocation: sourceLocation)
        #expect(try PagedListTests.mappedLiveBytes(dir.file()) == fresh.liveBytes, sourceLocation: sourceLocation)
    }

    /// A bulk insert writes each group it fills to the commit region before the commit (the
    /// transaction holds where the segments are, not the segments). Objects of those groups are
    /// read, set and deleted in the same transaction (their segments read back from the file); the
    /// segments they leave behind are dead bytes of the commit, and the live bytes stay exact.
    @Test func aBulkInsertWritesItsFullGroupsBeforeTheCommit() throws {
        let dir = TempDir()
        let s = try store(dir, threshold: 512)
        let committed = Int(try s.snapshot().fileLength)
        let tx = try s.beginWrite()
        let log = WriteLog(path: s.path)
        let keys = try FaultInjection.recording(log) { try (0..<3000).map { try tx.insert("Person", row: person($0)) } }
        let early = log.events.reduce(0) { n, e in
            guard case .write(let offset, let bytes) = e, offset >= committed else { return n }
            return n + bytes.count
        }
        // Most of the full groups' segments are in the file already (the rest wait in the buffer).
        #expect(early > 40_000, "\(early) bytes written before the commit")
        for i in [0, 70, 1500] {
            #expect(try tx.value("Person", keys[i], "name") == person(i)[1])
            #expect(try tx.value("Person", keys[i], "score") == person(i)[3])
        }
        try tx.set("Person", keys[70], "age", .int(-1))
        try tx.delete("Person", keys[1500])
        try tx.commit()
        let fresh = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        #expect(try fresh.objectCount("Person") == 2999)
        #expect(try fresh.value("Person", keys[70], "age") == .int(-1))
        #expect(try fresh.value("Person", keys[2999], "name") == person(2999)[1])
        #expect(try !fresh.contains("Person", keys[1500]))
        #expect(try fresh.objectKey("Person", primaryKey: .int(2000)) == keys[2000])
        try expectExactLiveBytes(dir)
    }

    /// A bulk insert that wrote full groups ahead of its commit and then was cancelled leaves the
    /// file at its version: the bytes past the committed length are written over by the next
    /// commit, which reads back.
    @Test func aCancelledBulkInsertLeavesTheFileAsItWas() throws {
        let dir = TempDir()
        let s = try store(dir, threshold: 512)
        try bulk(s, from: 0, count: 200)
        let before = try s.snapshot()
        let tx = try s.beginWrite()
        let log = WriteLog(path: s.path)
        try FaultInjection.recording(log) { for i in 1000..<4000 { _ = try tx.insert("Person", row: person(i)) } }
        // The full groups went to the file, past the committed length.
        #expect(
            log.events.contains {
                guard case .write(let offset, _) = $0 else { return false }
                return offset >= Int(before.fileLength)
            })
        tx.cancel()
        let reopened = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        #expect(reopened.version == before.version)
        #expect(try DamageTests.digest(reopened) == DamageTests.digest(before))
        let renamed = try bulk(s, from: 5000)
        let after = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        #expect(try after.objectCount("Person") == 199 + 2999)
        #expect(try after.value("Person", renamed, "name") == .string("renamed-5000"))
        try expectExactLiveBytes(dir)
    }

    /// Person `i` once the `score` column is removed.
    static func withoutScore(_ i: Int) -> [StorageValue] {
        let p = person(i)
        return [p[0], p[1], p[2], p[4]]
    }

    /// Sealed groups' segments written ahead of the commit and then left behind (a column removed,
    /// every object deleted, the table removed) are counted dead: the live bytes stay exact.
    @Test func segmentsWrittenAheadAndDroppedAreDead() throws {
        let dir = TempDir()
        let s = try store(dir, threshold: 512)
        try s.write { tx in
            for i in 0..<1000 { _ = try tx.insert("Person", row: person(i)) }
            try tx.removeColumn("Person", "score")
        }
        try expectExactLiveBytes(dir)
        try s.write { tx in
            for i in 1000..<2000 { _ = try tx.insert("Person", row: Self.withoutScore(i)) }
            try tx.deleteAll("Person")
        }
        try expectExactLiveBytes(dir)
        try s.write { tx in
            try tx.createTable("Other", primaryKey: ColumnSchema("id", .int))
            try tx.addColumn("Other", ColumnSchema("s", .string))
            for i in 0..<1000 { _ = try tx.insert("Other", row: [.int(Int64(i)), .string("other-\(i)")]) }
            for i in 2000..<3000 { _ = try tx.insert("Person", row: Self.withoutScore(i)) }
            try tx.removeTable("Other")
        }
        try expectExactLiveBytes(dir)
        let fresh = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        #expect(try fresh.objectCount("Person") == 1000)
        #expect(try fresh.objectKey("Person", primaryKey: .int(2500)) != nil)
    }
}

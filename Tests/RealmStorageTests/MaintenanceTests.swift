import Foundation
import Testing

@testable import RealmStorage

@Suite struct MaintenanceTests {
    @Test func verifierPassesOnHealthyFileAndChecksIndexes() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 5000)
        let tx = try store.beginWrite()
        for k in stride(from: 0, to: 5000, by: 7) { try tx.delete("Person", ObjectKey(Int64(k))) }
        try tx.set("Person", ObjectKey(1), "id", .int(100_000))
        try tx.commit()
        let report = try Verifier().verify(path: dir.file())
        #expect(report.isClean, "\(report.problems)")
        #expect(report.objectsChecked == 5000 - 715)
        #expect(report.versionsChecked == 3)
    }

    /// The store's caches are keyed by offsets and checksums in one file: after an in-place
    /// compaction a row group of the new file can sit at an old group's offset with the same bytes
    /// but other key segments (found by the Operations fuzzer: a set then missed its object).
    @Test func inPlaceCompactionForgetsTheCachesOfTheOldFile() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 10, options: .init(create: true, rowGroupCapacity: 2))
        for i in 10..<14 { try store.write { try $0.insert("Person", row: person(i)) } }
        // A read verifies and caches a segment.
        #expect(try store.snapshot().value("Person", ObjectKey(0), "name") == .string("name-0"))
        #expect(store.cache.inner.withLock { !$0.groups.isEmpty && !$0.verified.isEmpty && !$0.recent.isEmpty && !$0.segments.isEmpty })
        try store.compact()
        #expect(
            store.cache.inner.withLock {
                $0.groups.isEmpty && $0.verified.isEmpty && $0.segments.isEmpty && $0.chunks.isEmpty && $0.recent.isEmpty
                    && $0.chunkEntries.isEmpty
            })
        try store.write { tx in for k in 0..<14 { try tx.set("Person", ObjectKey(Int64(k)), "age", .int(Int64(k))) } }
        let s = try store.snapshot()
        #expect(try (0..<14).map { try s.value("Person", ObjectKey(Int64($0)), "age") } == (0..<14).map { .int(Int64($0)) })
        #expect(Verifier().verify(s).isClean)
    }

    /// A snapshot taken before an in-place compaction keeps reading the old file, without the
    /// store's cache (which now describes the new file): it neither reads from it nor fills it.
    @Test func snapshotsOfTheOldFileStopUsingTheCacheAfterCompaction() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 200, options: .init(create: true, rowGroupCapacity: 4))
        let old = try store.snapshot()
        #expect(old.cache != nil)
        try store.compact()
        #expect(old.cache == nil)
        let fresh = try store.snapshot()
        #expect(fresh.cache != nil)
        #expect(store.cache.inner.withLock { $0.lists.isEmpty && $0.indexes.isEmpty && $0.segments.isEmpty })
        for k in [0, 57, 199] {
            #expect(try old.value("Person", ObjectKey(Int64(k)), "name") == .string("name-\(k)"))
            #expect(try old.objectKey("Person", primaryKey: .int(Int64(k))) == ObjectKey(Int64(k)))
        }
        #expect(Verifier().verify(old).isClean)
        #expect(store.cache.inner.withLock { $0.lists.isEmpty && $0.indexes.isEmpty && $0.segments.isEmpty })
        #expect(try fresh.value("Person", ObjectKey(57), "name") == .string("name-57"))
        #expect(store.cache.inner.withLock { !$0.lists.isEmpty })
    }

    @Test func inspectorReportsSlotsTablesSegmentsAndDeadBytes() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 10_000)
        let tx = try store.beginWrite()
        for k in stride(from: 0, to: 10_000, by: 10) { try tx.set("Person", ObjectKey(Int64(k)), "age", .int(1)) }
        try tx.commit()
        let r = try Inspector().inspect(path: dir.file(), segments: true)
        #expect(r.formatVersion == FileHeader.formatVersion)
        #expect(r.currentVersion == 3)
        // Versions 2 and 3 are small commits chained after version 1, which slot 0 names.
        #expect(r.slots.filter(\.isValid).map(\.version) == [1])
        #expect(r.chainedCommits == 2 && !r.slots.contains(where: \.isCurrent))
        #expect(r.tables.first?.objects == 10_000)
        #expect(r.versions.map(\.version) == [3, 2, 1])
        #expect(r.versions[0].commitStart == r.versions[1].recordOffset + r.versions[1].recordLength + UInt64(CommitHead.size))
        #expect(r.versions.last?.recordOffset == UInt64(FileHeader.size))
        #expect(r.deadBytes > 0)
        #expect(r.segments.allSatisfy { $0.checksumOK })
        #expect(Set(r.segments.flatMap(\.encodings)).isSuperset(of: ["int-packed"]))
    }

    /// Both verifications (the automatic compaction's structure check included) catch a damaged copy.
    @Test(arguments: [Compactor.Verification.full, .structure])
    func aCopyThatFailsVerificationNeverReplacesTheFile(_ verification: Compactor.Verification) throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 2000)
        try store.write { tx in for k in stride(from: 0, to: 2000, by: 2) { try tx.set("Person", ObjectKey(Int64(k)), "age", .int(1)) } }
        let before = fileBytes(dir.file())
        var compactor = Compactor()
        compactor.verification = verification
        // Damage the copy between writing and verifying it: one byte in its last segment.
        compactor.beforeVerification = { path in
            guard let h = FileHandle(forUpdatingAtPath: path) else { return }
            let size = h.seekToEndOfFile()
            h.seek(toFileOffset: size / 2)
            let b = h.readData(ofLength: 1)
            h.seek(toFileOffset: size / 2)
            h.write(Data([b[0] ^ 0x40]))
            h.closeFile()
        }
        var phases: [Compactor.Phase] = []
        expectCode(.corrupted) { try compactor.compact(store) { if phases.last != $0.phase { phases.append($0.phase) } } }
        #expect(phases == [.copying, .verifying])
        #expect(fileBytes(dir.file()) == before)
        #expect(!FileManager.default.fileExists(atPath: dir.file() + ".compacting"))
        // Undamaged, the same compaction goes through every phase and keeps every object.
        phases = []
        let result = try Compactor().compact(store) { if phases.last != $0.phase { phases.append($0.phase) } }
        #expect(phases == [.copying, .verifying, .replacing])
        #expect(result.objectCounts == ["Person": 2000])
        #expect(try store.snapshot().objectCount("Person") == 2000)
    }

    @Test func compactionKeepsContentShrinksFileAndOtherStoresFollowIt() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 20_000)
        for round in 0..<3 {
            let tx = try store.beginWrite()
            for k in stride(from: round, to: 20_000, by: 3) { try tx.set("Person", ObjectKey(Int64(k)), "age", .int(Int64(round))) }
            try tx.commit()
        }
        let before = try store.snapshot()
        let beforeSize = fileBytes(dir.file()).count
        // Another store has the file open (as another process would): compaction goes on and the
        // other store follows it.
        let other = try Store.open(at: dir.file())
        let otherBefore = try other.snapshot()
        // The size a compaction will write is known exactly beforehand, without writing anything.
        let expectedSize = try Compactor().compactedSize(of: store)
        #expect(fileBytes(dir.file()).count == beforeSize)
        // A copy first: same content, the store untouched, verified before it is renamed into place.
        let copy = try store.compact(to: dir.file("copy.realm"))
        #expect(copy.bytesAfter < beforeSize)
        #expect(copy.bytesAfter == expectedSize && fileBytes(dir.file("copy.realm")).count == expectedSize)
        #expect(!FileManager.default.fileExists(atPath: dir.file("copy.realm") + ".compacting"))
        #expect(try Verifier().verify(path: dir.file("copy.realm")).isClean)
        let copied = try Store.open(at: dir.file("copy.realm"), options: .init(readOnly: true)).snapshot()
        #expect(try copied.objectKeys("Person") == (try before.objectKeys("Person")))
        expectCode(.fileExists) { try store.compact(to: dir.file("copy.realm")) }
        let result = try store.compact()
        #expect(result.bytesAfter == expectedSize)
        #expect(result.bytesAfter < beforeSize * 2 / 3)
        #expect(fileBytes(dir.file()).count == result.bytesAfter)
        let after = try store.snapshot()
        #expect(after.version == before.version)
        #expect(try after.objectKeys("Person") == (try before.objectKeys("Person")))
        for k in stride(from: 0, to: 20_000, by: 997) {
            #expect(try after.object("Person", ObjectKey(Int64(k))) == (try before.object("Person", ObjectKey(Int64(k)))))
        }
        #expect(try Verifier().verify(path: dir.file()).isClean)
        // The old snapshot still reads (its mapping holds the old inode).
        #expect(try before.value("Person", ObjectKey(5), "name") == .string("name-5"))
        // And writing continues on the compacted file.
        let tx = try store.beginWrite()
        try tx.insert("Person", row: person(20_000))
        let s = try tx.commit()
        #expect(s.version == before.version + 1)
        let reopened = try Store.open(at: dir.file(), options: .init(readOnly: true))
        #expect(try reopened.snapshot().objectCount("Person") == 20_001)
        // The other store: its old snapshot still reads the old file; its next snapshot is the
        // compacted file's newest version, and the changes across the switch are known.
        #expect(try otherBefore.value("Person", ObjectKey(5), "name") == .string("name-5"))
        let followed = try other.snapshot()
        #expect(followed.version == s.version && followed.fileLength == s.fileLength)
        #expect(try followed.changes(since: otherBefore.version).tables["Person"]?.inserted.contains(ObjectKey(20_000)) == true)
        let otx = try other.beginWrite()
        try otx.insert("Person", row: person(20_001))
        #expect(try otx.commit().version == s.version + 1)
        #expect(try store.snapshot().objectCount("Person") == 20_002)
        #expect(try Verifier().verify(path: dir.file()).isClean)
        #expect(store.lastCompaction?.bytesAfter == result.bytesAfter)
    }
}

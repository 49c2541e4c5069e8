import Foundation
import RealmTestSupport
import Testing

@testable import RealmStorage

/// Hostile bytes: flipped bytes and truncations must give a typed error or an older valid version,
/// never a crash; a read-only open must leave the file byte-identical.
@Suite struct CorruptionTests {
    /// A small file with several versions, indexes, strings, lists, mixed values, maps and LZ4 segments.
    static func sampleFile(_ dir: TempDir) throws -> (path: String, bytes: [UInt8], committed: Int) {
        let store = try Store.open(at: dir.file("golden.realm"), options: .init(create: true, rowGroupCapacity: 64))
        let tx = try store.beginWrite()
        try tx.createTable("Person", primaryKey: ColumnSchema("id", .int))
        try tx.addColumn("Person", ColumnSchema("name", .string, indexed: true))
        try tx.addColumn("Person", ColumnSchema("score", .double, nullable: true))
        try tx.addColumn("Person", ColumnSchema("tags", .string, list: true))
        try tx.addColumn("Person", ColumnSchema("extra", .mixed))
        try tx.addColumn("Person", ColumnSchema("attrs", .mixed, map: true))
        let mixed: [StorageValue] = [.int(7), .string("é"), .null, .double(.nan), .typedLink(table: 1, key: ObjectKey(3)), .binary([1])]
        for i in 0..<300 {
            try tx.insert(
                "Person",
                [
                    "id": .int(Int64(i)), "name": .string("person-\(i % 17)"), "score": i % 5 == 0 ? .null : .double(Double(i) / 4),
                    "tags": .list([.string("t\(i % 3)"), .string(String(repeating: "z", count: i % 40))]),
                    "extra": mixed[i % mixed.count],
                    "attrs": .map(i % 4 == 0 ? [:] : ["": mixed[i % 6], "k\(i % 3)": mixed[(i + 1) % 6], "z": .bool(true)]),
                ])
        }
        try tx.commit()
        let tx2 = try store.beginWrite()
        try tx2.set("Person", ObjectKey(10), "name", .string("renamed"))
        try tx2.delete("Person", ObjectKey(11))
        let committed = try tx2.commit().fileLength
        return (dir.file("golden.realm"), fileBytes(dir.file("golden.realm")), committed)
    }

    /// Opens read-only, reads everything, verifies; returns the version seen or nil if it threw.
    static func exercise(_ path: String) -> UInt64? {
        do {
            let store = try Store.open(at: path, options: .init(readOnly: true))
            let s = try store.snapshot()
            _ = Verifier().verify(s)
            for t in s.catalog.tables {
                for k in (try? s.objectKeys(t.name)) ?? [] { _ = try? s.object(t.name, k) }
                _ = try? s.objectKey(t.name, primaryKey: .int(5))
            }
            _ = try? Inspector().inspect(path: path, segments: true)
            return s.version
        } catch is StorageError {
            return nil
        } catch {
            Issue.record("untyped error \(error)")
            return nil
        }
    }

    @Test func flippedBytesGiveTypedErrorsOrOlderVersions() throws {
        let dir = TempDir()
        let (path, original, _) = try Self.sampleFile(dir)
        let target = dir.file("mutant.realm")
        let fixed = Array(0..<256) + FileHeader.slotOffsets.flatMap { Array($0..<($0 + FileHeader.slotSize)) }
        var rng = SplitMix(seed: 42)
        // Each flip with its own pattern, drawn before sampling, so a sampled run flips exactly as
        // the whole sweep does at the offsets it keeps (Exhaustive: all 2,384 in CI's ASan pass).
        let flips = (fixed + (0..<2000).map { _ in Int(rng.next() % UInt64(original.count)) }).map { ($0, UInt8(1 + rng.next() % 255)) }
        var typedErrors = 0
        var detected = 0
        for (o, pattern) in Exhaustive.sample(flips, count: 600, keepingFirst: fixed.count) {
            var bytes = original
            bytes[o] ^= pattern
            _ = FileManager.default.createFile(atPath: target, contents: Data(bytes))
            let v = Self.exercise(target)
            if v == nil { typedErrors += 1 }
            #expect(v == nil || v! <= 3, "flip at \(o) produced a newer version")
            if o >= FileHeader.size, let v, v == 3 {
                // The flip landed in data of the current version or in dead bytes: the verifier tells.
                if let s = try? Store.open(at: target, options: .init(readOnly: true)).snapshot(), !Verifier().verify(s).isClean {
                    detected += 1
                }
            }
            #expect(fileBytes(target) == bytes, "a read-only open modified the file")
        }
        #expect(typedErrors > 0)
        _ = path
        _ = detected
    }

    @Test func truncationsGiveTypedErrorsOrOlderVersions() throws {
        let dir = TempDir()
        let (_, original, committed) = try Self.sampleFile(dir)
        let target = dir.file("short.realm")
        var rng = SplitMix(seed: 7)
        var lengths = [
            0, 1, 7, 8, 63, 64, 100, 4095, 4096, 4160, 8191, 8192, 8256, 12287, 12288, 12289, committed - 1, committed - 8, committed,
            original.count - 1,
        ]
        while lengths.count < 220 { lengths.append(Int(rng.next() % UInt64(committed))) }
        for n in lengths {
            let bytes = Array(original.prefix(n))
            _ = FileManager.default.createFile(atPath: target, contents: Data(bytes))
            let v = Self.exercise(target)
            // Cut inside the committed bytes, the newest version can no longer be read in full.
            if n < committed { #expect(v == nil || v! < 3, "truncated to \(n) of \(committed) committed bytes still shows v3") }
            if n >= committed { #expect(v == 3, "truncated only in the growth room (\(n)) but v3 is gone") }
            #expect(fileBytes(target) == bytes)
        }
    }

    @Test func segmentDecoderRejectsGarbage() {
        var rng = SplitMix(seed: 1)
        for len in [0, 8, 16, 24, 40, 100, 1000] {
            for _ in 0..<200 {
                var bytes = (0..<len).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                if len >= 4 { bytes.replaceSubrange(0..<4, with: [0x52, 0x53, 0x45, 0x47]) }
                do { _ = try SegmentReader(block: ByteView(copying: bytes)).decodeAll() } catch is StorageError {} catch {
                    Issue.record("untyped \(error)")
                }
            }
        }
    }

    @Test func wrongFormatVersionIsReported() throws {
        let dir = TempDir()
        var (_, bytes, _) = try Self.sampleFile(dir)
        bytes[8] = 9
        let p = dir.file("future.realm")
        _ = FileManager.default.createFile(atPath: p, contents: Data(bytes))
        expectCode(.unsupportedFormatVersion) { try Store.open(at: p, options: .init(readOnly: true)) }
    }
}

@Suite struct TornCommitTests {
    @Test func aTornNewestCommitIsNeverAdoptedAndTheNextCommitReplacesIt() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 100)
        let tx = try store.beginWrite()
        try tx.set("Person", ObjectKey(1), "name", .string("torn"))
        let v3 = try tx.commit()
        let start = Int(v3.record.commitStart)
        let recordOffset = Int(store.state.withLock { $0.current.slot.record.offset })
        // Damage one byte inside v3's commit region, as a crash that lost part of the commit would.
        var bytes = fileBytes(dir.file())
        bytes[(start + recordOffset) / 2] ^= 0x40
        _ = FileManager.default.createFile(atPath: dir.file("torn.realm"), contents: Data(bytes))
        let reopened = try Store.open(at: dir.file("torn.realm"))
        #expect(reopened.currentVersion == 2)
        // refresh() (inside snapshot and beginWrite) must not adopt the torn v3.
        #expect(try reopened.snapshot().version == 2)
        #expect(try reopened.snapshot().value("Person", ObjectKey(1), "name") == .string("name-1"))
        let tx2 = try reopened.beginWrite()
        try tx2.set("Person", ObjectKey(1), "name", .string("after"))
        let s = try tx2.commit()
        #expect(s.version == 3)
        let again = try Store.open(at: dir.file("torn.realm"), options: .init(readOnly: true)).snapshot()
        #expect(again.version == 3)
        #expect(try again.value("Person", ObjectKey(1), "name") == .string("after"))
        #expect(Verifier().verify(again).isClean)
    }

    @Test func readOnlyWithCreateNeverCreatesTheDataFile() throws {
        let dir = TempDir()
        _ = FileManager.default.createFile(atPath: dir.file("x.realm.lock"), contents: Data())
        expectCode(.fileNotFound) { try Store.open(at: dir.file("x.realm"), options: .init(create: true, readOnly: true)) }
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.realm")))
    }
}

@Suite struct DurableMarkerTests {
    @Test func theDurableMarkerNamesTheLastAcknowledgedCommitOnly() throws {
        let dir = TempDir()
        // Written after commits of 64 KiB or more (a small region is cheaper to hash than to record).
        let store = try makePeopleStore(dir, count: 20_000)
        let s = try store.snapshot()
        let slot = store.state.withLock { $0.current.slot }
        let marker = try #require(store.lockFile?.durableCommit())
        #expect(marker.version == s.version && marker.recordChecksum == slot.recordChecksum)
        try store.write { try $0.set("Person", ObjectKey(0), "age", .int(1)) }
        #expect(store.lockFile?.durableCommit()?.version == s.version)
        // A commit that fails before it is durable leaves the marker at the previous commit.
        #if DEBUG
            let plan = FaultPlan()
            plan.arm(.fsync, at: 1)
            let tx = try store.beginWrite()
            for i in 0..<20_000 { try tx.insert("Person", row: person(100_000 + i)) }
            #expect(throws: StorageError.self) { try FaultInjection.run(plan) { try tx.commit() } }
            #expect(store.lockFile?.durableCommit()?.version == s.version)
        #endif
        // A damaged marker is ignored (the opener falls back to checking the region).
        var lock = fileBytes(dir.file() + ".lock")
        lock[LockFile.durableOffset + 9] ^= 0xFF
        _ = FileManager.default.createFile(atPath: dir.file("copy.realm.lock"), contents: Data(lock))
        try FileManager.default.copyItem(atPath: dir.file(), toPath: dir.file("copy.realm"))
        let copy = try Store.open(at: dir.file("copy.realm"), options: .init(readOnly: true))
        #expect(copy.lockFile?.durableCommit() == nil)
        #expect(try copy.snapshot().objectCount("Person") == 20_000)
    }
}

import Foundation
import Testing

@testable import RealmStorage

/// Format 8: a version record says which commit was acknowledged when it was written, so a valid
/// record past a damaged block is evidence that a newer commit existed, as a head is (Spec/FORMAT.md
/// §5.1, §6.6 step 5); and damage that loses nothing (a commit head recovery no longer reads) is
/// still reported by a full verification.
@Suite struct RecordEvidenceTests {
    /// Random hexadecimal text: LZ4 finds little to take out of it.
    static func noise(_ count: Int, _ rng: inout SplitMix) -> String {
        String((0..<count).map { _ in Array("0123456789abcdef")[Int(rng.next() % 16)] })
    }

    /// A `Log` table and versions 3 … 8, each inserting one object of about 8 KB, chained.
    static func makeFile(_ path: String) throws {
        var options = Store.Options(create: true)
        options.compaction = .off
        try fill(try Store.open(at: path, options: options))
    }

    /// What ``makeFile(_:)`` commits, into `store` (a new file).
    static func fill(_ store: Store) throws {
        try store.write { tx in
            try tx.createTable("Log", primaryKey: ColumnSchema("seq", .int))
            try tx.addColumn("Log", ColumnSchema("payload", .string))
        }
        var rng = SplitMix(seed: 49)
        for seq in 1...6 {
            let payload = noise(8000, &rng)
            try store.write { tx in _ = try tx.insert("Log", ["seq": .int(Int64(seq)), "payload": .string(payload)]) }
        }
    }

    /// Offsets of the 8-aligned blocks with `magic` after the header, by the version at offset 8.
    static func blocks(_ bytes: [UInt8], _ magic: UInt32) -> [UInt64: Int] {
        let view = ByteView(copying: bytes)
        var out: [UInt64: Int] = [:]
        for o in view.offsets(ofAlignedWord: magic, from: FileHeader.size) where o + 16 <= bytes.count {
            if let v = try? view.u64(o + 8) { out[v] = o }
        }
        return out
    }

    /// ``makeFile(_:)`` at `path`, then `damage` applied to its bytes (given the offsets of its
    /// heads and records by version); the lock file is removed, as if the damage was found later.
    static func makeDamaged(
        _ path: String, _ damage: (inout [UInt8], _ heads: [UInt64: Int], _ records: [UInt64: Int]) throws -> Void
    ) throws -> (heads: [UInt64: Int], records: [UInt64: Int]) {
        try makeFile(path)
        var bytes = fileBytes(path)
        let heads = blocks(bytes, CommitHead.magic)
        let records = blocks(bytes, BlockMagic.versionRecord)
        try damage(&bytes, heads, records)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try? FileManager.default.removeItem(atPath: path + ".lock")
        return (heads, records)
    }

    /// Zeroes the 4 KiB page holding version 8's commit head; returns its offset.
    static func zeroPageOfHead8(_ bytes: inout [UInt8], _ heads: [UInt64: Int]) throws -> Int {
        let page = try #require(heads[8]) / 4096 * 4096
        for i in page..<page + 4096 { bytes[i] = 0 }
        return page
    }

    /// Opening `path` with each of `options` fails with `corrupted`, naming `unreachable`.
    static func expectRefused(_ path: String, _ options: [Store.Options], unreachable: UInt64) {
        for o in options {
            do {
                _ = try Store.open(at: path, options: o)
                Issue.record("opened a file whose newest commit is only shown by its record")
            } catch let e as StorageError {
                #expect(e.code == .corrupted && e.unreachableVersion == unreachable, "\(e)")
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    /// The case of issue 49: the page holding version 7's record and version 8's head is zeroed;
    /// version 8's record, right after it, is intact. Nothing shows version 8 but that record: the
    /// file must not open at version 6 as if the two commits had never been acknowledged.
    @Test func aRecordPastAZeroedPageIsEvidence() throws {
        let dir = TempDir()
        let path = dir.file()
        let (_, records) = try Self.makeDamaged(path) { bytes, heads, records in
            let page = try Self.zeroPageOfHead8(&bytes, heads)
            #expect(try #require(records[7]) + 16 > page && records[8]! >= page + 4096, "\(records) \(page)")
        }
        Self.expectRefused(path, [Store.Options(), Store.Options(readOnly: true), Store.Options.passive], unreachable: 8)
        // A salvaging reader opens version 6 and names version 8, found by its record.
        var salvage = Store.Options.passive
        salvage.salvage = true
        let store = try Store.open(at: path, options: salvage)
        #expect(store.currentVersion == 6)
        let damage = try #require(store.damage)
        #expect(damage.newestUnreachableVersion == 8)
        #expect(damage.unreachableCommits == [ChainDamage.Commit(version: 8, offset: UInt64(records[8]!))])
        #expect(try !Verifier().verify(path: path).isClean)
    }

    /// A torn last commit whose record survived is not damage: its record says its parent was the
    /// last acknowledged commit. Nor is a group whose later record survived its first commit:
    /// each says the commit before the group.
    @Test func aTornCommitsOwnRecordIsNoEvidence() throws {
        let dir = TempDir()
        let path = dir.file()
        // Version 8's region torn (a byte of its payload lost), its record intact.
        let (_, records) = try Self.makeDamaged(path) { bytes, heads, records in bytes[(heads[8]! + records[8]!) / 2] ^= 0xFF }
        #expect(try Store.open(at: path, options: .init(readOnly: true)).currentVersion == 7)
        // Records whose lag names the settled commit: a group of two torn after version 6.
        let file = try SystemFile.open(path, .readOnly)
        let size = try file.size()
        let view = try FileMapping(file: file, length: Store.mappingLength(for: size)).view(validLength: size)
        let r8 = try #require(Store.recordEvidence(view, at: records[8]!, size: size))
        #expect(r8.acknowledged == 7 && r8.slot.version == 8)
    }

    /// Every record of a format-8 file carries its length and `lag`; a record whose length field
    /// is not its length, or whose lag names a commit after its parent, does not load.
    @Test func recordsCarryLengthAndLag() throws {
        let dir = TempDir()
        let path = dir.file()
        try Self.makeFile(path)
        let s = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
        for r in try s.ancestorRecords(downTo: 0) {
            #expect(r.lag == (r.parentRecord.isNone ? 0 : 1), "version \(r.version)")
            #expect(r.acknowledgedVersion == r.parentVersion)
        }
        var record = s.record
        record.changeset = try record.decodeChangeset()
        record.changesetView = nil
        var bytes = record.encode()
        #expect(try ByteView(copying: bytes).u64(VersionRecord.lengthOffset) == UInt64(bytes.count))
        #expect(try VersionRecord.decode(ByteView(copying: bytes), formatVersion: 8).lag == record.lag)
        // The length field off by 8.
        bytes[VersionRecord.lengthOffset] &+= 8
        expectCode(.corrupted) { try VersionRecord.decode(ByteView(copying: bytes), formatVersion: 8) }
        // A lag past the parent (lag 0 would mean the parent).
        record.lag = UInt32(record.version - record.parentVersion) - 1
        if record.lag > 0 {
            expectCode(.corrupted) { try VersionRecord.decode(ByteView(copying: record.encode()), formatVersion: 8) }
        }
    }

    /// A commit head that recovery no longer reads (its commit is before the newest slot's) is
    /// damage all the same: a full verification reports it as in dead bytes, every version reads.
    @Test func aDamagedHeadBeforeTheNewestSlotIsReportedAsDeadBytes() throws {
        let dir = TempDir()
        let path = dir.file()
        try Self.makeFile(path)
        // A large commit writes its slot (Spec §6.2), so recovery starts after the earlier heads.
        let store = try Store.open(at: path)
        var rng = SplitMix(seed: 7)
        let big = Self.noise(400_000, &rng)
        try store.write { tx in _ = try tx.insert("Log", ["seq": .int(100), "payload": .string(big)]) }
        var bytes = fileBytes(path)
        let head5 = try #require(Self.blocks(bytes, CommitHead.magic)[5])
        bytes[head5 + 20] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let reopened = try Store.open(at: path, options: .init(readOnly: true))
        #expect(reopened.currentVersion == 9 && reopened.damage == nil)
        let report = try Verifier().verify(path: path)
        #expect(report.problems.count == 1 && report.losesNothing, "\(report.problems)")
        #expect(report.problems.first?.offset == UInt64(head5))
        #expect(report.problems.first?.reason.contains("version 5") == true)
    }
}

import Foundation
import Testing

@testable import RealmStorage

/// The golden files of format 8: version records with their `lag` and length, a record that is the
/// only evidence of the newest commit, and a file a compaction replaced (Spec/FORMAT.md §5.1, §6.6,
/// §8). Write them (only them) with `REALM_WRITE_VECTORS=1 swift test --filter GoldenFileTests/v8`.
extension GoldenFileTests {
    @Test func v8Records() throws {
        if Self.writing {
            var options = Store.Options(create: true, rowGroupCapacity: 16)
            options.groupCommitMinimum = 3
            try Self.write("v8-records.realm", options: options) { store in
                try store.write { tx in
                    try tx.createTable("Log", primaryKey: ColumnSchema("seq", .int))
                    try tx.addColumn("Log", ColumnSchema("note", .string))
                }
                // One group of three commits made durable by one sync: lags 1, 2 and 3.
                let (_, errors) = GroupCommitTests.commitFromThreads(store, threads: 3, commits: 1)
                #expect(errors.isEmpty)
            }
        }
        let dir = TempDir()
        let s = try Self.open("v8-records.realm", dir)
        #expect(s.formatVersion == 8 && s.version == 5)
        #expect(try s.objectCount("Log") == 3)
        let records = try s.ancestorRecords(downTo: 0).reversed()
        #expect(records.map(\.version) == [1, 2, 3, 4, 5])
        #expect(records.map(\.lag) == [0, 1, 1, 2, 3])
        #expect(records.map(\.acknowledgedVersion) == [0, 1, 2, 2, 2])
        // Each record's length field is its length, and its head says the same lag.
        let bytes = fileBytes(dir.file("v8-records.realm"))
        let view = ByteView(copying: bytes)
        for o in view.offsets(ofAlignedWord: BlockMagic.versionRecord, from: FileHeader.size) {
            let evidence = try #require(Store.recordEvidence(view, at: o, size: bytes.count))
            #expect(evidence.slot.fileLength <= UInt64(bytes.count))
        }
        let heads = try GroupCommitTests.heads(dir.file("v8-records.realm")).sorted { $0.slot.version < $1.slot.version }
        #expect(heads.map(\.lag) == [1, 1, 2, 3])
        #expect(Verifier().verify(s).isClean)
    }

    @Test func v8DamagedRecord() throws {
        if Self.writing {
            let path = Self.vectors + "/v8-damaged-record.realm"
            try Self.write("v8-damaged-record.realm", options: .init(create: true)) { try RecordEvidenceTests.fill($0) }
            var bytes = fileBytes(path)
            _ = try RecordEvidenceTests.zeroPageOfHead8(&bytes, RecordEvidenceTests.blocks(bytes, CommitHead.magic))
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        let dir = TempDir()
        let path = dir.file("v8-damaged-record.realm")
        try FileManager.default.copyItem(atPath: Self.vectors + "/v8-damaged-record.realm", toPath: path)
        let bytes = fileBytes(path)
        let record8 = try #require(RecordEvidenceTests.blocks(bytes, BlockMagic.versionRecord)[8])
        RecordEvidenceTests.expectRefused(path, [.init(readOnly: true)], unreachable: 8)
        var salvage = Store.Options.passive
        salvage.salvage = true
        let store = try Store.open(at: path, options: salvage)
        #expect(try store.currentVersion == 6 && store.snapshot().objectCount("Log") == 4)
        #expect(store.damage?.unreachableCommits == [ChainDamage.Commit(version: 8, offset: UInt64(record8))])
    }

    @Test func v8Superseded() throws {
        if Self.writing {
            let path = Self.vectors + "/v8-superseded.realm"
            try Self.write("v8-superseded.realm") { store in
                try store.write { tx in
                    try tx.createTable("Note", primaryKey: ColumnSchema("id", .int))
                    for id in 1...3 { _ = try tx.insert("Note", ["id": .int(Int64(id))]) }
                }
            }
            // The mark a compaction leaves, naming a path that exists on every Linux system and is
            // another file: in force wherever the vector is read.
            let length = fileBytes(path).count
            let s = try Store.open(at: path, options: .passive).snapshot()
            let mark = SupersededMark(version: s.version, fileLength: UInt64(length), time: 1_764_374_400_000_000_000, path: "/dev/null")
            let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try file.seekToEnd()
            try file.write(contentsOf: Data(mark.encode()))
            try file.close()
        }
        let dir = TempDir()
        let path = dir.file("v8-superseded.realm")
        try FileManager.default.copyItem(atPath: Self.vectors + "/v8-superseded.realm", toPath: path)
        for options in [Store.Options(), Store.Options(readOnly: true)] {
            do {
                _ = try Store.open(at: path, options: options)
                Issue.record("opened a superseded file")
            } catch let e as StorageError {
                #expect(e.code == .superseded && e.supersededBy == "/dev/null", "\(e)")
            }
        }
        let passive = try Store.open(at: path, options: .passive)
        #expect(passive.superseded?.path == "/dev/null" && passive.superseded?.version == 2)
        #expect(try passive.snapshot().objectCount("Note") == 3)
    }
}

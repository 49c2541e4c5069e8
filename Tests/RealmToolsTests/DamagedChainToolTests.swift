import Foundation
import RealmStorage
import Testing

/// The tools on a file whose commit chain is damaged before later commits (Spec/FORMAT.md §6.6):
/// `realm-dump` refuses it (3) unless `--salvage` reads the newest intact version on purpose;
/// `--verify` lists every version the damage hides with its offset; `realm-compact` refuses it
/// unless `--salvage` keeps only the intact version.
@Suite struct DamagedChainToolTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Spec/vectors").path

    /// `v3-chained.realm` (versions 2–5 chained after version 1) with one byte of version 2's head
    /// flipped; returns the head's offset.
    static func damaged(_ path: String) throws -> Int {
        var bytes = fileBytes(vectors + "/v3-chained.realm")
        let r = try Inspector().inspect(path: vectors + "/v3-chained.realm")
        let v2 = try #require(r.versions.first { $0.version == 2 })
        let head = Int(v2.commitStart) - 80
        bytes[head + 20] ^= 0x01
        writeBytes(path, bytes)
        return head
    }

    @Test func realmDumpRefusesVerifiesAndSalvages() throws {
        let dir = TempDir()
        let head = try Self.damaged(dir.file("d.realm"))
        let before = fileBytes(dir.file("d.realm"))
        let summary = try Tools.dump(["d.realm"], in: dir.path)
        #expect(summary.code == 3 && summary.stderr.contains("at byte \(head)") && summary.stderr.contains("up to 5"), "\(summary.stderr)")
        let verify = try Tools.dump(["d.realm", "--verify"], in: dir.path)
        #expect(verify.code == 3, "\(verify.stderr)")
        for v in 3...5 { #expect(verify.stdout.contains("version \(v) cannot be reached"), "\(verify.stdout)") }
        let json = try Tools.dump(["d.realm", "--verify", "--json"], in: dir.path)
        #expect(json.code == 3 && json.stdout.contains("\(head)"))
        let objects = try Tools.dump(["d.realm", "--objects", "Person", "--salvage"], in: dir.path)
        #expect(objects.code == 1 && objects.stderr.contains("salvaging"), "\(objects.stderr)")  // version 1 has no Person
        let salvaged = try Tools.dump(["d.realm", "--salvage"], in: dir.path)
        #expect(salvaged.code == 3 && salvaged.stdout.contains("cannot be read"), "\(salvaged.stdout)")
        #expect(fileBytes(dir.file("d.realm")) == before)
        #expect(!FileManager.default.fileExists(atPath: dir.file("d.realm.lock")))
    }

    @Test func realmCompactRefusesUnlessToldToSalvage() throws {
        let dir = TempDir()
        _ = try Self.damaged(dir.file("d.realm"))
        let before = fileBytes(dir.file("d.realm"))
        let refused = try Tools.compact(["d.realm"], in: dir.path)
        #expect(refused.code == 3 && refused.stderr.contains("--salvage"), "\(refused.stderr)")
        #expect(fileBytes(dir.file("d.realm")) == before)
        #expect(try Tools.compact(["--help"]).stdout.contains("--salvage"))
        let salvaged = try Tools.compact(["d.realm", "--salvage"], in: dir.path)
        #expect(salvaged.code == 0, "\(salvaged.stderr)")
        #expect(salvaged.stderr.contains("salvaging"))
        // The compacted file holds version 1 and takes commits again.
        let store = try Store.open(at: dir.file("d.realm"))
        #expect(try store.snapshot().version == 1)
        let tx = try store.beginWrite()
        try tx.createTable("Fresh")
        try tx.commit()
        #expect(try Store.open(at: dir.file("d.realm"), options: .init(readOnly: true)).snapshot().version == 2)
    }
}

/// Damage that loses nothing, a file a compaction replaced, and a file with two names: what the
/// tools say of each (Spec/FORMAT.md §3.4, §8).
@Suite struct DeadBytesAndLinksToolTests {
    /// A flipped byte in the commit head of a commit before the newest slot's: every version reads,
    /// and `--verify` says the damage lies in dead bytes (exit 6), with wording that nothing is lost.
    @Test func aDamagedOldCommitHeadIsReportedAsDeadBytes() throws {
        let dir = TempDir()
        try Fixture.allTypes(dir.file("f.realm"), chains: false)
        let versions = try Inspector().inspect(path: dir.file("f.realm")).versions
        let older = try #require(versions.dropFirst().first { $0.commitStart > 12288 + 80 })
        var bytes = fileBytes(dir.file("f.realm"))
        let head = Int(older.commitStart) - 80
        bytes[head + 20] ^= 0x01
        writeBytes(dir.file("f.realm"), bytes)
        let verify = try Tools.dump(["f.realm", "--verify"], in: dir.path)
        #expect(verify.code == 6, "\(verify.stderr)")
        #expect(verify.stderr.contains("dead bytes only") && verify.stderr.contains("no data is lost"), "\(verify.stderr)")
        #expect(verify.stdout.contains("at byte \(head)") && verify.stdout.contains("version \(older.version)"), "\(verify.stdout)")
        let json = try Tools.dump(["f.realm", "--verify", "--json"], in: dir.path)
        #expect(json.code == 6 && json.stdout.contains("\"deadBytesOnly\": true"), "\(json.stdout)")
        #expect(try Tools.dump(["f.realm", "--objects", "Person"], in: dir.path).code == 0)
    }

    /// `realm-dump` reads a superseded file (the golden file's mark names /dev/null) and says what
    /// it is; `realm-compact` refuses a file with two names and changes nothing.
    @Test func supersededAndHardLinkedFiles() throws {
        let dir = TempDir()
        try FileManager.default.copyItem(
            atPath: DamagedChainToolTests.vectors + "/v8-superseded.realm", toPath: dir.file("old.realm"))
        let dump = try Tools.dump(["old.realm"], in: dir.path)
        #expect(dump.code == 0 && dump.stderr.contains("replaced by a compacted copy at /dev/null"), "\(dump.stderr)")
        try Fixture.allTypes(dir.file("f.realm"), chains: false)
        try FileManager.default.linkItem(atPath: dir.file("f.realm"), toPath: dir.file("g.realm"))
        let before = fileBytes(dir.file("f.realm"))
        let compact = try Tools.compact(["f.realm"], in: dir.path)
        #expect(compact.code == 5 && compact.stderr.contains("hard links"), "\(compact.stderr)")
        #expect(fileBytes(dir.file("g.realm")) == before)
        // A copy to another path is not affected.
        #expect(try Tools.compact(["f.realm", "--output", "copy.realm"], in: dir.path).code == 0)
    }
}

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

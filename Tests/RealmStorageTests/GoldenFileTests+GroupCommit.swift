import Foundation
import Testing

@testable import RealmStorage

/// The golden file of format 7: commits of three threads made durable in groups of three, one
/// `fdatasync` each (Spec/FORMAT.md §3.4, §6.2). Write it (only it) with
/// `REALM_WRITE_VECTORS=1 swift test --filter v7GroupCommit`.
extension GoldenFileTests {
    @Test func v7GroupCommit() throws {
        if Self.writing {
            var options = Store.Options(create: true, rowGroupCapacity: 16)
            options.groupCommitMinimum = 3
            try Self.write("v7-group-commit.realm", options: options) { store in
                try store.write { tx in
                    try tx.createTable("Log", primaryKey: ColumnSchema("seq", .int))
                    try tx.addColumn("Log", ColumnSchema("note", .string))
                }
                // Three threads, two commits each: every thread waits for its commit's sync before
                // its next one, so each sync covers one commit of every thread.
                let (_, errors) = GroupCommitTests.commitFromThreads(store, threads: 3, commits: 2)
                #expect(errors.isEmpty)
            }
        }
        let dir = TempDir()
        let s = try Self.open("v7-group-commit.realm", dir)
        #expect(s.formatVersion == 7 && s.version == 8)
        #expect(try s.objectCount("Log") == 6)
        for seq in 1...6 { #expect(try s.objectKey("Log", primaryKey: .int(Int64(seq))) != nil) }
        // Versions 2 to 8 are chained; 3–5 and 6–8 are groups: the second and third commit of each
        // name the commit before the group as acknowledged.
        let heads = try GroupCommitTests.heads(dir.file("v7-group-commit.realm")).sorted { $0.slot.version < $1.slot.version }
        #expect(heads.map(\.slot.version) == Array(2...8))
        #expect(heads.map(\.lag) == [1, 1, 2, 3, 1, 2, 3])
        #expect(heads.map(\.acknowledgedVersion) == [1, 2, 2, 2, 5, 5, 5])
        #expect(Verifier().verify(s).isClean)
    }
}

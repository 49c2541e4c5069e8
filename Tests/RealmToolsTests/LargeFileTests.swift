import Foundation
import RealmStorage
import Testing

/// Writes the large file on which `realm-compact`'s peak memory is measured (Tools/Benchmarks/results/NOTES.md, "The tools' memory"):
/// `REALM_TOOLS_LARGE_FILE=/tmp/large.realm swift test --filter LargeFileTests`, then
/// `/usr/bin/time -v realm-compact /tmp/large.realm`. `REALM_TOOLS_LARGE_FILE_NOTE=640` (bytes
/// per note, default 96) makes it about 1 GB instead of 200 MB. Not run unless the variable is set:
/// it is a fixture generator for a measurement, not a test.
@Suite struct LargeFileTests {
    static let path = ProcessInfo.processInfo.environment["REALM_TOOLS_LARGE_FILE"]

    /// One million people with a 96-byte note each (by default), then every second note rewritten:
    /// about 100 MB live and 100 MB dead.
    @Test(.enabled(if: path != nil)) func writeLargeFileWithDeadBytes() throws {
        let path = try #require(Self.path)
        for p in [path, path + ".lock"] { try? FileManager.default.removeItem(atPath: p) }
        let count = 1_000_000
        let note = Int(ProcessInfo.processInfo.environment["REALM_TOOLS_LARGE_FILE_NOTE"] ?? "") ?? 96
        try Fixture.people(path, count: count, rounds: 0, payload: note)
        let store = try Store.open(at: path)
        let tx = try store.beginWrite()
        for k in stride(from: 0, to: count, by: 2) {
            try tx.set("Person", ObjectKey(Int64(k)), "note", .string(String(repeating: "n", count: 64) + "\(k)"))
        }
        try tx.commit()
        let report = try Inspector().inspect(path: path)
        print("wrote \(path): \(report.fileSize) bytes, \(report.liveBytes) live, \(report.deadBytes) dead")
    }
}

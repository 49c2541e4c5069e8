import Foundation
import RealmTestSupport
import Testing

@testable import RealmStorage

/// Kills a real writer process with SIGKILL at random moments; after every kill the file must open,
/// verify clean and hold every commit the writer acknowledged.
@Suite struct CrashTests {
    static func writerBinary() -> String? {
        BuiltExecutable.path("StorageCrashWriter")
    }

    @Test func sigkillAtRandomMomentsNeverLosesAcknowledgedCommits() throws {
        try killRepeatedly(arguments: ["100000"], kills: 200)
    }

    /// Four threads share syncs (group commit, format 7): a kill leaves any of a group's commits in
    /// the page cache, none of them acknowledged; every acknowledged one must survive.
    @Test func sigkillDuringGroupCommitsNeverLosesAcknowledgedCommits() throws {
        try killRepeatedly(arguments: ["100000", "4"], kills: 80)
    }

    /// Starts the writer with `arguments` after the file name and kills it `kills` times; after each
    /// kill the file must open, verify and hold every commit acknowledged so far. With threads, acks
    /// of one group may print out of version order: only the newest counts.
    func killRepeatedly(arguments: [String], kills total: Int) throws {
        let binary = try #require(Self.writerBinary(), "StorageCrashWriter was not built")
        let dir = TempDir()
        let path = dir.file()
        var rng = SystemRandomNumberGenerator()
        var acknowledged: (version: UInt64, seq: Int64) = (0, 0)
        var kills = 0
        var lateAcks = 0
        let threaded = arguments.count > 1
        while kills < total {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: binary)
            p.arguments = [path] + arguments
            let out = Pipe()
            p.standardOutput = out
            p.standardError = FileHandle.nullDevice
            try p.run()
            var text = ""
            if kills % 2 == 1 {
                // Every other run first waits for the writer's first acknowledged commit, so the
                // writer gets going however slow the machine is (a loaded CI host, a sanitizer);
                // the others are killed from the start, creation included.
                while !text.contains("ack ") {
                    let d = out.fileHandleForReading.availableData
                    if d.isEmpty { break }
                    text += String(decoding: d, as: UTF8.self)
                }
            }
            // Let it run between 1 and 40 ms, then kill it mid-flight.
            usleep(UInt32.random(in: 1_000...40_000, using: &rng))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            kills += 1
            text += String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ")
                guard parts.count == 3, parts[0] == "ack", let v = UInt64(parts[1]), let s = Int64(parts[2]) else { continue }
                if v > acknowledged.version { acknowledged = (v, s) } else { lateAcks += 1 }
            }
            // The file must open, verify, and contain every acknowledged commit.
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let store: Store
            do { store = try Store.open(at: path, options: .init(readOnly: true)) } catch {
                // Killed before the very first commit finished creating the file is fine only if nothing was acknowledged.
                #expect(acknowledged.version == 0, "open failed after kill \(kills): \(error)")
                continue
            }
            let s = try store.snapshot()
            #expect(s.version >= acknowledged.version, "lost commits: file at v\(s.version), acknowledged v\(acknowledged.version)")
            if s.catalog.table("Log") != nil {
                let count = try s.objectCount("Log")
                #expect(count >= Int(acknowledged.seq), "file holds \(count) log entries; \(acknowledged.seq) were acknowledged")
                #expect(try s.objectKey("Log", primaryKey: .int(acknowledged.seq)) != nil || acknowledged.seq == 0)
            }
            if kills % 20 == 0 {
                let report = Verifier().verify(s)
                #expect(report.isClean, "after kill \(kills): \(report.problems.prefix(3))")
            }
        }
        #expect(acknowledged.version > 10, "the writer never got going")
        #expect(lateAcks == 0 || threaded)
        let final = try Verifier().verify(path: path)
        #expect(final.isClean, "\(final.problems.prefix(3))")
    }
}

@Suite struct CrossProcessPinTests {
    @Test func pinsOfAnotherProcessAreVisibleAndReleasedWhenItDies() throws {
        let binary = try #require(CrashTests.writerBinary())
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 10)
        let (p, line) = try startHoldingWriter(binary, dir.file(), "hold")
        #expect(line.hasPrefix("holding 2"))
        let pins = store.pinnedVersions()
        #expect(pins.contains { $0.processID == p.processIdentifier && $0.version == 2 && $0.kind == "frozen" && !$0.isLocal })
        #expect(store.numberOfActiveVersions >= 1)
        // The other process keeps the file in use; compaction goes on meanwhile, and the other
        // process's pin stays (its frozen snapshot reads the old file).
        #expect(try store.isOpenElsewhere())
        #expect(try Compactor().compact(store).version == 2)
        #expect(store.pinnedVersions().contains { $0.processID == p.processIdentifier && $0.version == 2 })
        // Its pin counts against the limit too.
        let limited = try Store.open(at: dir.file(), options: .init(maximumNumberOfActiveVersions: 1))
        let tx = try limited.beginWrite()
        try tx.insert("Person", row: person(11))
        expectCode(.maximumNumberOfActiveVersionsExceeded) { try tx.commit() }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(!store.pinnedVersions().contains { $0.processID == p.processIdentifier })
        #expect(try store.isOpenElsewhere())  // `limited` still has it open
        withExtendedLifetime(limited) {}
        let tx2 = try limited.beginWrite()
        try tx2.insert("Person", row: person(11))
        #expect(try tx2.commit().version == 3)
    }
}

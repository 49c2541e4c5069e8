import Foundation
import RealmStorage
import Testing

@testable import RealmTools

/// `realm-compact` run as a child process.
@Suite struct RealmCompactTests {
    /// Every object survives (the JSON Lines export is identical before and after), the file shrinks,
    /// and the output (text and JSON) matches its golden files.
    @Test func compactionKeepsEveryObjectAndShrinksTheFile() throws {
        let dir = TempDir()
        let out = TempDir()
        try Fixture.people(dir.file("people.realm"), count: 3000, rounds: 6)
        try Fixture.allTypes(dir.file("fixture.realm"))
        for name in ["people.realm", "fixture.realm"] {
            let before = try Tools.dump([name, "--export", "jsonl", "--output", out.path + "/before-" + name], in: dir.path)
            #expect(before.code == 0)
            let dry = try Tools.compact([name, "--dry-run"], in: dir.path)
            #expect(dry.code == 0 && dry.stdout.contains("expected size"))
            let dryJSON = try Tools.compact([name, "--dry-run", "--json"], in: dir.path)
            let size = fileBytes(dir.file(name)).count
            let run = try Tools.compact([name], in: dir.path)
            #expect(run.code == 0, "\(run.stderr)")
            #expect(run.stderr.contains("verifying"))
            let after = fileBytes(dir.file(name)).count
            #expect(after < size)
            #expect(run.stdout.contains("before          \(ByteCount.describe(size))"))
            #expect(run.stdout.contains("after           \(ByteCount.describe(after))"))
            // The dry run's expected size is exact.
            #expect(dry.stdout.contains("expected size   \(ByteCount.describe(after)) "), "\(dry.stdout)")
            #expect(dryJSON.stdout.contains("\"expectedSize\": \(after),"), "\(dryJSON.stdout)")
            if name == "people.realm" {
                Golden.check("compact-dry-run.txt", dry.stdout)
                Golden.check("compact-dry-run.json", dryJSON.stdout)
                Golden.check("compact.txt", run.stdout)
                // Compacting again (nothing dead now) works and prints JSON.
                let again = try Tools.compact([name, "--json"], in: dir.path)
                #expect(again.code == 0)
                Golden.check("compact-again.json", again.stdout)
            }
            let exported = try Tools.dump([name, "--export", "jsonl", "--output", out.path + "/after-" + name], in: dir.path)
            #expect(exported.code == 0)
            for file in try FileManager.default.contentsOfDirectory(atPath: out.path + "/before-" + name) {
                #expect(
                    fileBytes(out.path + "/before-\(name)/\(file)") == fileBytes(out.path + "/after-\(name)/\(file)"),
                    "\(name): \(file) differs after compaction")
            }
            #expect(try Tools.dump([name, "--verify"], in: dir.path).code == 0)
            let report = try Inspector().inspect(path: dir.file(name))
            #expect(report.deadBytes == 0 && report.versions.count == 1)
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("people.realm.compacting")))
    }

    @Test func outputLeavesTheOriginalUntouched() throws {
        let dir = TempDir()
        let out = TempDir()
        try Fixture.people(dir.file("people.realm"), count: 500, rounds: 3)
        let before = try directoryState(dir.path)
        let run = try Tools.compact(["people.realm", "--output", out.file("copy.realm")], in: dir.path)
        #expect(run.code == 0, "\(run.stderr)")
        #expect(try directoryState(dir.path) == before)
        #expect(try Verifier().verify(path: out.file("copy.realm")).isClean)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out.path)) == ["copy.realm"])
        // The output must not exist yet.
        let again = try Tools.compact(["people.realm", "--output", out.file("copy.realm")], in: dir.path)
        #expect(again.code == 1 && again.stderr.contains("exists"))
    }

    @Test func exitCodesOfTheRealExecutable() throws {
        let dir = TempDir()
        try Fixture.people(dir.file("people.realm"), count: 100, rounds: 1)
        #expect(try Tools.compact(["--help"]).code == 0)
        for args in [["--bogus"], [], ["missing.realm"], ["people.realm", "extra"]] {
            let run = try Tools.compact(args, in: dir.path)
            #expect(run.code == 1, "\(args): \(run.code) \(run.stderr)")
        }
        writeBytes(dir.file("junk.realm"), [UInt8](repeating: 65, count: 20_000))
        #expect(try Tools.compact(["junk.realm"], in: dir.path).code == 2)
        #expect(try Tools.compact(["junk.realm", "--dry-run"], in: dir.path).code == 2)
        // A damaged segment: the copy (byte-for-byte) would carry the damage; the source read fails
        // its checksum, so nothing is replaced (3).
        let report = try Inspector().inspect(path: dir.file("people.realm"), segments: true)
        let segment = try #require(report.segments.last { $0.column == "note" })
        var bytes = fileBytes(dir.file("people.realm"))
        bytes[Int(segment.offset) + 20] ^= 0x5A
        writeBytes(dir.file("damaged.realm"), bytes)
        let damaged = try Tools.compact(["damaged.realm"], in: dir.path)
        #expect(damaged.code == 3, "\(damaged.stderr)")
        #expect(damaged.stderr.contains("at byte"))
        #expect(fileBytes(dir.file("damaged.realm")) == bytes)
        #expect(try Tools.compact(["people.realm"], in: dir.path).code == 0)
    }

    /// While another process has the file open, in-place compaction goes on; only another
    /// compaction running makes it refuse with 4.
    @Test func compactsWhileAnotherProcessHasTheFileOpen() throws {
        let dir = TempDir()
        try Fixture.people(dir.file("people.realm"), count: 200, rounds: 2)
        let holder = try Tools.holder(dir.file("people.realm"))
        let run = try Tools.compact(["people.realm"], in: dir.path)
        #expect(run.code == 0, "\(run.stderr)")
        #expect(try Verifier().verify(path: dir.file("people.realm")).isClean)
        // A compaction in progress (held here at a step) makes another one refuse.
        let store = try Store.open(at: dir.file("people.realm"))
        let reached = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        var paused = Compactor()
        paused.atStep = { step in
            if step == .verified {
                reached.signal()
                proceed.wait()
            }
        }
        let compactor = paused
        let finished = DispatchSemaphore(value: 0)
        let background = Thread {
            _ = try? compactor.compact(store)
            finished.signal()
        }
        background.start()
        reached.wait()
        let busy = try Tools.compact(["people.realm"], in: dir.path)
        #expect(busy.code == 4 && busy.stderr.contains("another process is compacting"), "\(busy.stderr)")
        let json = try Tools.compact(["people.realm", "--json"], in: dir.path)
        #expect(json.code == 4 && json.stdout.contains("\"exitCode\": 4"))
        // A copy is allowed meanwhile (it only reads).
        #expect(try Tools.compact(["people.realm", "--output", dir.file("copy.realm")], in: dir.path).code == 0)
        proceed.signal()
        // Waits for the compaction call to return (its report is set before it lets go of the
        // file: waiting for the report alone raced with the next compaction on a loaded machine).
        finished.wait()
        #expect(store.lastCompaction != nil)
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        let last = try Tools.compact(["people.realm"], in: dir.path)
        #expect(last.code == 0, "\(last.stderr)")
    }

    /// SIGKILL at random moments: the file is always the original, byte for byte; the original
    /// with the superseded mark compaction writes after its data just before the rename (killed
    /// between the two: a few bytes differ, none before them); or the complete compacted file. It
    /// opens, verifies and holds every object.
    @Test func killedAtRandomMomentsLeavesTheFileIntact() throws {
        let dir = TempDir()
        let out = TempDir()
        try Fixture.people(dir.file("people.realm"), count: 40_000, rounds: 4, payload: 48)
        let original = fileBytes(dir.file("people.realm"))
        #expect(try Tools.dump(["people.realm", "--export", "jsonl", "--output", out.path + "/original"], in: dir.path).code == 0)
        let expected = fileBytes(out.path + "/original/Person.jsonl")
        // How long a whole compaction takes, on a copy.
        try FileManager.default.copyItem(atPath: dir.file("people.realm"), toPath: out.file("timing.realm"))
        let started = Date()
        #expect(try Tools.compact([out.file("timing.realm")]).code == 0)
        let duration = Date().timeIntervalSince(started)
        var rng = SplitMix(seed: 99)
        var outcomes = (original: 0, marked: 0, compacted: 0)
        for round in 0..<20 {
            let (p, _, _) = try Tools.start("realm-compact", ["people.realm"], in: dir.path)
            usleep(UInt32(Double(rng.next() % 1000) / 1000 * duration * 1.1 * 1_000_000))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            let now = fileBytes(dir.file("people.realm"))
            if now == original {
                outcomes.original += 1
            } else if now.count >= original.count {
                outcomes.marked += 1
                let first = (0..<original.count).first { now[$0] != original[$0] } ?? original.count
                #expect(now.count - first <= 4096, "round \(round): \(now.count - first) bytes from \(first) changed")
            } else {
                outcomes.compacted += 1
                #expect(now.count < original.count)
            }
            let export = try Tools.dump(["people.realm", "--export", "jsonl", "--output", out.path + "/\(round)"], in: dir.path)
            #expect(export.code == 0, "round \(round): \(export.stderr)")
            #expect(fileBytes(out.path + "/\(round)/Person.jsonl") == expected, "round \(round): objects differ")
            #expect(try Verifier().verify(path: dir.file("people.realm")).isClean)
            let left = Set(try FileManager.default.contentsOfDirectory(atPath: dir.path))
            #expect(left.isSubset(of: ["people.realm", "people.realm.lock", "people.realm.compacting"]), "\(left)")
            if now != original {
                // Start again from the original for the next round.
                writeBytes(dir.file("people.realm"), original)
            }
        }
        #expect(outcomes.original > 0, "never killed before the rename: \(outcomes)")
    }
}

import Foundation
import RealmStorage
import Testing

@testable import RealmTools

/// `realm-dump` run as a child process on fixture files made by the engine.
@Suite struct RealmDumpTests {
    /// Every mode, as text and as JSON, against golden files; the file and its directory are
    /// byte-identical afterwards.
    @Test func everyModeMatchesItsGoldenOutputAndChangesNothing() throws {
        let dir = TempDir()
        let out = TempDir()
        try Fixture.allTypes(dir.file("fixture.realm"))
        let before = try directoryState(dir.path)
        #expect(Array(before.keys) == ["fixture.realm"])
        let modes: [(String, [String])] = [
            ("summary", []),
            ("schema", ["--schema"]),
            ("versions", ["--versions"]),
            ("segments", ["--segments"]),
            ("segments-dog", ["--segments", "Dog"]),
            ("objects", ["--objects", "Person"]),
            (
                "objects-where",
                ["--objects", "Person", "--where", "age > 10 AND name BEGINSWITH[c] 'g' OR ANY tags CONTAINS 't1'", "--limit", "5"]
            ),
            ("verify", ["--verify"]),
            ("slot0", ["--slot", "0"]),
            ("export-csv", ["--export", "csv", "--output", out.path + "/csv"]),
            ("export-jsonl", ["--export", "jsonl", "--output", out.path + "/jsonl"]),
            ("map", ["--map", out.path + "/map.svg"]),
        ]
        for (name, args) in modes {
            for json in [false, true] {
                let run = try Tools.dump(["fixture.realm"] + args + (json ? ["--json"] : []), in: dir.path)
                #expect(run.code == 0, "\(name): \(run.stderr)")
                #expect(run.stderr.isEmpty, "\(name): \(run.stderr)")
                Golden.check("dump-\(name)\(json ? ".json" : ".txt")", Golden.normalize(run.stdout, replacing: [out.path: "<out>"]))
                #expect(try directoryState(dir.path) == before, "realm-dump \(args) changed the directory")
            }
        }
        for table in ["Dog", "Person"] {
            Golden.check("export-\(table).csv", String(decoding: fileBytes(out.path + "/csv/\(table).csv"), as: UTF8.self))
            Golden.check("export-\(table).jsonl", String(decoding: fileBytes(out.path + "/jsonl/\(table).jsonl"), as: UTF8.self))
        }
        let svg = String(decoding: fileBytes(out.path + "/map.svg"), as: UTF8.self)
        #expect(svg.hasPrefix("<svg") && svg.hasSuffix("</svg>\n"))
        #expect(svg.contains("segment at") && svg.contains(", dead</title>") && svg.contains(", live</title>"))
    }

    @Test func exportedCSVFollowsRFC4180() throws {
        let dir = TempDir()
        let out = TempDir()
        try Fixture.allTypes(dir.file("fixture.realm"))
        let run = try Tools.dump(["fixture.realm", "--export", "csv", "--output", out.path], in: dir.path)
        #expect(run.code == 0)
        let csv = String(decoding: fileBytes(out.path + "/Person.csv"), as: UTF8.self)
        let records = parseCSV(csv)
        #expect(records.count == 1 + 9)  // header + 10 people − 1 deleted
        #expect(records[0].first == "_key" && records[0].count == 18)
        let names = records.dropFirst().map { $0[2] }
        #expect(names.contains("Grace, \"Amazing\""))
        #expect(names.contains("Line\nbreak"))
        #expect(names.contains(" padded ") == false)  // key 4 was deleted
        #expect(csv.contains("\"\""))  // the empty name is quoted, unlike a null
        #expect(records.allSatisfy { $0.count == 18 })
    }

    @Test func exitCodesOfTheRealExecutable() throws {
        let dir = TempDir()
        let out = TempDir()
        try Fixture.allTypes(dir.file("fixture.realm"))
        // 0 and 1
        #expect(try Tools.dump(["fixture.realm"], in: dir.path).code == 0)
        #expect(try Tools.dump(["--help"], in: dir.path).code == 0)
        // Collection operators and subqueries run through RealmQuery's evaluator.
        #expect(try Tools.dump(["fixture.realm", "--objects", "Person", "--where", "dogs.@count >= 0"], in: dir.path).code == 0)
        for args in [
            ["fixture.realm", "--bogus"], [], ["fixture.realm", "--schema", "--versions"], ["fixture.realm", "--slot", "2"],
            ["fixture.realm", "--export", "xml", "--output", out.path], ["fixture.realm", "--export", "csv"], ["fixture.realm", "Person"],
            ["fixture.realm", "--where", "age > 1"], ["missing.realm"], ["fixture.realm", "--objects", "Cat"],
            ["fixture.realm", "--objects", "Person", "--where", "age >"],
            ["fixture.realm", "--segments", "Cat"], ["fixture.realm", "--map", dir.file("fixture.realm")],
            ["fixture.realm", "--map", dir.file("fixture.realm.lock")], ["fixture.realm", "--map", dir.path + "/./fixture.realm"],
            ["fixture.realm", "--export", "csv", "--output", dir.file("fixture.realm")],
        ] {
            let run = try Tools.dump(args, in: dir.path)
            #expect(run.code == 1, "\(args): \(run.code) \(run.stderr)")
            #expect(!run.stderr.isEmpty)
        }
        // Outputs beside the file are allowed (only the file and its sidecars are refused).
        #expect(try Tools.dump(["fixture.realm", "--map", dir.file("map.svg")], in: dir.path).code == 0)
        #expect(FileManager.default.fileExists(atPath: dir.file("map.svg")))
        #expect(try Tools.dump(["fixture.realm", "--export", "csv", "--output", dir.path + "/sub"], in: dir.path).code == 0)
        #expect(FileManager.default.fileExists(atPath: dir.path + "/sub/Person.csv"))
        // 2: not a Realm file, an unsupported format version.
        writeBytes(dir.file("junk.realm"), Array("this is not a realm file, just text\n".utf8) + [UInt8](repeating: 0, count: 20_000))
        var bytes = fileBytes(dir.file("fixture.realm"))
        bytes[8] = 99
        writeBytes(dir.file("future.realm"), bytes)
        for name in ["junk.realm", "future.realm"] {
            for json in [false, true] {
                let run = try Tools.dump([name] + (json ? ["--json"] : []), in: dir.path)
                #expect(run.code == 2, "\(name): \(run.stderr)")
                if json { #expect(run.stdout.contains("\"exitCode\": 2")) }
            }
        }
        // 3 is covered by the damaged-file tests; 0 after all of this, and nothing was created but
        // the outputs asked for.
        #expect(try Tools.dump(["fixture.realm", "--verify"], in: dir.path).code == 0)
        #expect(
            Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)) == [
                "fixture.realm", "junk.realm", "future.realm", "map.svg", "sub",
            ])
    }

    /// Flipped bytes anywhere past the header: `--verify` finds the damage and names its offset,
    /// exit 3; other modes print what they could read and exit 0 or 3, never crash.
    @Test func damagedFilesExitThreeWithAnOffset() throws {
        let dir = TempDir()
        try Fixture.allTypes(dir.file("fixture.realm"), chains: false)
        let good = fileBytes(dir.file("fixture.realm"))
        // Damage to the newest commit reads as a commit torn by a crash (recovery falls back to the
        // version before it, Spec/FORMAT.md §6.6): flip bytes of the commits before it.
        let newest = try #require(try Inspector().inspect(path: dir.file("fixture.realm")).versions.first?.commitStart)
        var rng = SplitMix(seed: 7)
        var found = 0
        for round in 0..<12 {
            var bytes = good
            let at = 12288 + Int(rng.next() % (newest - 12288))
            bytes[at] ^= UInt8(1 + rng.next() % 255)
            let name = "damaged-\(round).realm"
            writeBytes(dir.file(name), bytes)
            let verify = try Tools.dump([name, "--verify"], in: dir.path)
            // 6: the flip hit a commit head that recovery no longer reads (dead bytes).
            #expect([0, 3, 6].contains(verify.code), "flip at \(at): \(verify.code) \(verify.stderr)")
            if verify.code == 3 {
                found += 1
                #expect(verify.stderr.contains("at byte "), "\(verify.stderr)")
                #expect(verify.stdout.contains("at byte ") || verify.stdout.contains("problems"), "\(verify.stdout)")
            }
            for args in [[], ["--versions"], ["--segments"], ["--objects", "Person"], ["--json"]] {
                let run = try Tools.dump([name] + args, in: dir.path)
                #expect([0, 3].contains(run.code), "\(args) on a flip at \(at): \(run.code) \(run.stderr)")
                if run.code == 3 { #expect(run.stderr.contains("at byte"), "\(run.stderr)") }
            }
        }
        // Bytes of dead versions can change unnoticed, but most flips land in something read.
        #expect(found >= 4)
    }

    @Test func truncatedAndHeaderDamagedFilesPrintTheHeaderThenTheProblem() throws {
        let dir = TempDir()
        try Fixture.allTypes(dir.file("fixture.realm"), chains: false)
        let good = fileBytes(dir.file("fixture.realm"))
        let committed = try Inspector().inspect(path: dir.file("fixture.realm")).committedLength
        // Truncated inside the newest commit: the older slot still opens, but the newer is gone.
        writeBytes(dir.file("short.realm"), Array(good[0..<(committed - 100)]))
        var run = try Tools.dump(["short.realm"], in: dir.path)
        #expect([0, 3].contains(run.code))
        // Truncated far below both commits: nothing opens; the header is printed, then the problem.
        writeBytes(dir.file("stub.realm"), Array(good[0..<13_000]))
        run = try Tools.dump(["stub.realm"], in: dir.path)
        #expect(run.code == 3, "\(run.stderr)")
        #expect(run.stdout.contains("header slot 0") && run.stdout.contains("problems"))
        #expect(run.stderr.contains("at byte "))
        run = try Tools.dump(["stub.realm", "--json"], in: dir.path)
        #expect(run.code == 3)
        #expect(run.stdout.contains("\"header\"") && run.stdout.contains("\"offset\""))
        // Both slots damaged.
        var bytes = good
        bytes[4096 + 10] ^= 0xFF
        bytes[8192 + 10] ^= 0xFF
        writeBytes(dir.file("slots.realm"), bytes)
        run = try Tools.dump(["slots.realm"], in: dir.path)
        #expect(run.code == 3)
        #expect(run.stdout.contains("empty or damaged") && run.stderr.contains("at byte 4096"))
        // A damaged static header checksum is corruption (3); wrong magic is "not a Realm file" (2).
        bytes = good
        bytes[30] ^= 1
        writeBytes(dir.file("static.realm"), bytes)
        run = try Tools.dump(["static.realm"], in: dir.path)
        #expect(run.code == 3 && run.stderr.contains("at byte 56"), "\(run.stderr)")
    }

    @Test func slotOptionReadsTheOlderCommit() throws {
        let dir = TempDir()
        try Fixture.allTypes(dir.file("fixture.realm"), chains: false)
        let newest = try Tools.dump(["fixture.realm", "--objects", "Person"], in: dir.path)
        let report = try Inspector().inspect(path: dir.file("fixture.realm"))
        let other = try #require(report.slots.first { !$0.isCurrent }?.index)
        let older = try Tools.dump(["fixture.realm", "--slot", "\(other)", "--objects", "Person"], in: dir.path)
        #expect(older.code == 0)
        #expect(newest.stdout.split(separator: "\n").count == 9)
        #expect(older.stdout.split(separator: "\n").count == 10)  // before the delete
        let summary = try Tools.dump(["fixture.realm", "--slot", "\(other)"], in: dir.path)
        #expect(summary.stdout.contains("read from header slot \(other)"))
    }

    /// A pin held by another process shows with its pid and kind; a file a process is busy writing
    /// shows one consistent version each time.
    @Test func pinsOfOtherProcessesAndAFileBeingWritten() throws {
        let dir = TempDir()
        try Fixture.allTypes(dir.file("fixture.realm"))
        let holder = try Tools.holder(dir.file("fixture.realm"))
        defer {
            kill(holder.processIdentifier, SIGKILL)
            holder.waitUntilExit()
        }
        let lock = fileBytes(dir.file("fixture.realm.lock"))
        let run = try Tools.dump(["fixture.realm"], in: dir.path)
        #expect(run.code == 0)
        let pinLine = run.stdout.split(separator: "\n").first { $0.contains(" \(holder.processIdentifier) ") }
        #expect(pinLine?.split(separator: " ").map(String.init) == ["4", "\(holder.processIdentifier)", "frozen", "1"], "\(run.stdout)")
        let json = try Tools.dump(["fixture.realm", "--json"], in: dir.path)
        #expect(json.stdout.contains("\"pid\": \(holder.processIdentifier)"))
        #expect(fileBytes(dir.file("fixture.realm.lock")) == lock, "realm-dump wrote to the lock file")

        let busy = TempDir()
        let (writer, _, _) = try Tools.start("StorageCrashWriter", [busy.file("log.realm"), "100000"])
        defer {
            kill(writer.processIdentifier, SIGKILL)
            writer.waitUntilExit()
        }
        // Bounded: a writer that died before making the file must fail the test, not hang it.
        let deadline = Date() + 300
        while !FileManager.default.fileExists(atPath: busy.file("log.realm")) {
            try #require(writer.isRunning && Date() < deadline, "the writer never made its file")
            usleep(5_000)
        }
        usleep(100_000)
        var versions: [UInt64] = []
        for _ in 0..<6 {
            let v = try Tools.dump(["log.realm", "--verify", "--json"], in: busy.path)
            #expect(v.code == 0, "\(v.stdout) \(v.stderr)")
            let o = try Tools.dump(["log.realm", "--objects", "Log"], in: busy.path)
            #expect(o.code == 0, "\(o.stderr)")
            let seqs = o.stdout.split(separator: "\n").count
            #expect(seqs > 0)
            if let r = try? Inspector().inspect(path: busy.file("log.realm")) { versions.append(r.currentVersion) }
        }
        #expect(versions.last! > versions.first!, "the writer made no progress: \(versions)")
    }

    @Test func readOnlyOpenCreatesNoLockFile() throws {
        let dir = TempDir()
        try Fixture.allTypes(dir.file("fixture.realm"))
        let before = try directoryState(dir.path)
        // Every mode, a directory without a lock file: none appears.
        for args in [[], ["--verify"], ["--segments"], ["--objects", "Dog"], ["--versions"], ["--schema"]] {
            _ = try Tools.dump(["fixture.realm"] + args, in: dir.path)
            #expect(try directoryState(dir.path) == before)
        }
    }

    /// Parses RFC 4180 text (CRLF records, quoted fields with doubled quotes).
    func parseCSV(_ text: String) -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var chars = Array(text.unicodeScalars)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" {
                    if chars.first == "\"" {
                        field.unicodeScalars.append("\"")
                        chars.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    field.unicodeScalars.append(c)
                }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                record.append(field)
                field = ""
            } else if c == "\r" && chars.first == "\n" {
                chars.removeFirst()
                record.append(field)
                records.append(record)
                record = []
                field = ""
            } else {
                field.unicodeScalars.append(c)
            }
        }
        return records
    }
}

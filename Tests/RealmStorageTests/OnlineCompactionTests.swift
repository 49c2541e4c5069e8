import Foundation
import Testing

@testable import RealmStorage

/// Online compaction (Spec/FORMAT.md §8): killed at every step and at random moments, with other
/// processes reading, pinning and writing throughout, and failing at every system call.
@Suite struct OnlineCompactionTests {
    /// Starts the crash writer with `arguments`, its standard output piped.
    static func launch(_ arguments: [String]) throws -> (process: Process, out: Pipe) {
        let binary = try #require(CrashTests.writerBinary(), "StorageCrashWriter was not built")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        // Into the same pipe: a child that dies of an error says which in what the test reports.
        p.standardError = out
        try p.run()
        return (p, out)
    }

    /// Runs the crash writer with `arguments` to its end (or its death) and returns what it printed.
    static func run(_ arguments: [String]) throws -> (text: String, status: Int32, reason: Process.TerminationReason) {
        let (p, out) = try launch(arguments)
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (String(decoding: data, as: UTF8.self), p.terminationStatus, p.terminationReason)
    }

    /// The sequence numbers a writer acknowledged ("ack VERSION SEQ" lines).
    static func acknowledged(_ text: String) -> [Int64] {
        text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            return parts.count == 3 && parts[0] == "ack" ? Int64(parts[2]) : nil
        }
    }

    /// Every `Log` sequence number in the newest version.
    static func sequences(_ s: Snapshot) throws -> [Int64] {
        try s.objectKeys("Log").map { k in
            guard case .int(let v) = try s.value("Log", k, "seq") else { return -1 }
            return v
        }
    }

    /// Store options that never compact by themselves (the tests compact when they mean to).
    static var manual: Store.Options {
        var options = Store.Options()
        options.compaction = .off
        return options
    }

    /// A file with a `Log` table of some hundreds of objects and dead bytes to give back.
    static func makeLog(_ path: String) throws {
        var options = Self.manual
        options.create = true
        let store = try Store.open(at: path, options: options)
        let tx = try store.beginWrite()
        try tx.createTable("Log", primaryKey: ColumnSchema("seq", .int))
        try tx.addColumn("Log", ColumnSchema("payload", .string))
        try tx.addColumn("Log", ColumnSchema("total", .int))
        try tx.commit()
        for seq in 0..<300 {
            let tx = try store.beginWrite()
            try tx.insert("Log", ["seq": .int(Int64(seq)), "payload": .string("p\(seq)"), "total": .int(Int64(seq))])
            try tx.commit()
        }
    }

    /// Killed at each named step: the file opens with every acknowledged commit (those made during
    /// the copy included), verifies clean, a store that had it open before goes on reading and
    /// writing, and the next compaction succeeds and leaves no stray file.
    @Test(arguments: Compactor.Step.allCases)
    func killedAtEachStep(_ step: Compactor.Step) throws {
        let dir = TempDir()
        let path = dir.file()
        try Self.makeLog(path)
        let bystander = try Store.open(at: path, options: Self.manual)
        let pinned = try bystander.snapshot(kind: "frozen")
        let r = try Self.run([path, "compactat", step.rawValue])
        #expect(r.reason == .uncaughtSignal, "the child was not killed at \(step): \(r.text)")
        #expect(r.text.contains("at \(step.rawValue)"), "\(r.text)")
        let acks = Self.acknowledged(r.text)
        #expect(acks.count == 3)
        // Another process opening now sees everything acknowledged.
        let fresh = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
        #expect(Set(try Self.sequences(fresh)) == Set(0..<300).union(acks))
        #expect(Verifier().verify(fresh).isClean)
        // The bystander follows whichever file is current, reads everything, and writes.
        let seen = try bystander.snapshot()
        #expect(Set(try Self.sequences(seen)) == Set(0..<300).union(acks))
        #expect(try pinned.objectCount("Log") == 300)
        let tx = try bystander.beginWrite()
        try tx.insert("Log", ["seq": .int(5000), "payload": .string("after"), "total": .int(0)])
        try tx.commit()
        #expect(try Store.open(at: path, options: .init(readOnly: true)).snapshot().objectCount("Log") == 304)
        // The next compaction works (it removes a crashed one's stray copy) and leaves nothing behind.
        let result = try Compactor().compact(bystander)
        #expect(result.objectCounts["Log"] == 304)
        #expect(!FileManager.default.fileExists(atPath: path + ".compacting"))
        #expect(try Verifier().verify(path: path).isClean)
    }

    /// A process that commits in a loop while its store compacts by itself after almost every
    /// commit, killed at random moments: every acknowledged commit survives every kill.
    @Test func killedAtRandomMomentsWhileCompactingByItself() throws {
        let dir = TempDir()
        let path = dir.file()
        try Self.makeLog(path)
        var all = Set<Int64>(0..<300)
        var compactions = 0
        for round in 0..<30 {
            let inodeBefore = SystemFile.inode(atPath: path)
            let (p, out) = try Self.launch([path, "compactloop", "100000"])
            var text = ""
            while !text.contains("ack ") {
                let d = out.fileHandleForReading.availableData
                if d.isEmpty { break }
                text += String(decoding: d, as: UTF8.self)
            }
            usleep(UInt32.random(in: 5_000...60_000))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            text += String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            all.formUnion(Self.acknowledged(text))
            if SystemFile.inode(atPath: path) != inodeBefore { compactions += 1 }
            let s = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
            let stored = Set(try Self.sequences(s))
            #expect(all.isSubset(of: stored), "round \(round): lost \(all.subtracting(stored).sorted().prefix(5))")
            if round % 10 == 9 { #expect(Verifier().verify(s).isClean) }
        }
        #expect(compactions > 0, "no compaction ever switched files")
        #expect(try Compactor().compact(try Store.open(at: path, options: Self.manual)).objectCounts["Log"] ?? 0 >= all.count)
        #expect(!FileManager.default.fileExists(atPath: path + ".compacting"))
    }

    /// One process writes and compacts; another reads, pins and writes throughout. Nothing is lost
    /// or duplicated: the file ends with exactly the sequence numbers both acknowledged.
    @Test func twoProcessesWriteWhileOneCompacts() throws {
        let dir = TempDir()
        let path = dir.file()
        try Self.makeLog(path)
        let store = try Store.open(at: path, options: Self.manual)
        let (p, out) = try Self.launch([path, "follow", "400"])
        // What the child printed so far, and whether the reader met the end of its output. The
        // end can come late: another test's child spawned meanwhile may inherit this pipe's write
        // end and hold it open; so the test waits for the child's last line, not for the end (it
        // waited for the end of a dead child's output before, and a CI run hung there).
        let childText = Locked((text: "", ended: false))
        let reader = Thread {
            let handle = out.fileHandleForReading
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                childText.withLock { $0.text += String(decoding: data, as: UTF8.self) }
            }
            childText.withLock { $0.ended = true }
        }
        reader.start()
        var mine = Set<Int64>(0..<300)
        var seq: Int64 = 300
        var compactions = 0
        while p.isRunning || compactions < 3 {
            for _ in 0..<20 {
                let tx = try store.beginWrite()
                try tx.insert("Log", ["seq": .int(seq), "payload": .string("parent"), "total": .int(seq)])
                try tx.commit()
                mine.insert(seq)
                seq += 1
            }
            let before = try store.snapshot()
            let r = try Compactor().compact(store)
            compactions += 1
            #expect(r.version >= before.version)
            if compactions > 200 { break }
        }
        p.waitUntilExit()
        let deadline = Date() + 120
        while childText.withLock({ !$0.ended && !$0.text.contains("done") }) && Date() < deadline { usleep(1000) }
        let text = childText.withLock { $0.text }
        #expect(p.terminationStatus == 0 && text.contains("done"), "status \(p.terminationStatus): \(text.suffix(4000))")
        let theirs = Self.acknowledged(text)
        #expect(theirs.count == 400)
        let final = try store.snapshot()
        let stored = try Self.sequences(final)
        #expect(stored.count == Set(stored).count, "a sequence number is stored twice")
        #expect(Set(stored) == mine.union(theirs))
        #expect(compactions >= 3)
        #expect(Verifier().verify(final).isClean)
    }

    /// Every system call of a compaction made to fail, one at a time: the compaction throws (or
    /// succeeds when the call was not essential), and the file, and a store that follows it, still
    /// hold every commit; the next compaction succeeds.
    @Test func failingEverySystemCallLosesNothing() throws {
        guard FaultInjection.isAvailable else { return }
        let dir = TempDir()
        let path = dir.file()
        try Self.makeLog(path)
        let options = Self.manual
        var expected = 300
        for point in FaultPoint.allCases {
            // Count the calls at this point in one clean compaction (with a commit to catch up).
            let counting = FaultPlan()
            let store = try Store.open(at: path, options: options)
            var withCommit = Compactor()
            withCommit.atStep = { step in
                if step == .copied {
                    let tx = try? store.beginWrite()
                    _ = try? tx?.insert("Log", ["seq": .int(Int64(100_000)), "payload": .string("x"), "total": .int(0)])
                    _ = try? tx?.commit()
                }
            }
            _ = try? FaultInjection.run(counting) { try withCommit.compact(store) }
            expected = try store.snapshot().objectCount("Log")
            let calls = counting.calls(point)
            for n in 1...max(1, calls) {
                let plan = FaultPlan()
                plan.arm(point, at: n)
                let s = try Store.open(at: path, options: options)
                let other = try Store.open(at: path, options: options)
                var c = Compactor()
                let next = Int64(200_000 + n) + Int64(FaultPoint.allCases.firstIndex(of: point)!) * 1000
                c.atStep = { step in
                    if step == .copied {
                        if let tx = try? other.beginWrite() {
                            _ = try? tx.insert("Log", ["seq": .int(next), "payload": .string("x"), "total": .int(0)])
                            _ = try? tx.commit()
                        }
                    }
                }
                _ = try? FaultInjection.run(plan) { try c.compact(s) }
                // Whatever happened, every store (and a fresh one) sees every acknowledged commit.
                let fromOther = try other.snapshot().objectCount("Log")
                let fromFresh = try Store.open(at: path, options: .init(readOnly: true)).snapshot().objectCount("Log")
                #expect(fromOther == fromFresh, "\(point) #\(n): \(fromOther) vs \(fromFresh)")
                #expect(fromFresh >= expected, "\(point) #\(n): \(fromFresh) < \(expected)")
                expected = fromFresh
                #expect(try Verifier().verify(path: path).isClean, "\(point) #\(n)")
            }
        }
        let store = try Store.open(at: path, options: options)
        #expect(try Compactor().compact(store).objectCounts["Log"] == expected)
        #expect(!FileManager.default.fileExists(atPath: path + ".compacting"))
    }
}

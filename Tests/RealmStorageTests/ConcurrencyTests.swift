import Foundation
import Synchronization
import Testing

@testable import RealmStorage

/// 4 reader threads check an invariant (the sum of balances stays constant) while a writer thread
/// moves amounts between rows and a second process commits to the same file.
@Suite struct ConcurrencyTests {
    @Test func readersSeeConsistentSnapshotsWhileTwoProcessesWrite() throws {
        let binary = try #require(CrashTests.writerBinary(), "StorageCrashWriter was not built")
        let dir = TempDir()
        let path = dir.file()
        let store = try Store.open(at: path, options: .init(create: true, rowGroupCapacity: 32))
        let accounts = 200
        do {
            let tx = try store.beginWrite()
            try tx.createTable("Account")
            try tx.addColumn("Account", ColumnSchema("balance", .int))
            for _ in 0..<accounts { try tx.insert("Account", ["balance": .int(1000)]) }
            try tx.commit()
        }
        let total = Int64(accounts * 1000)
        let other = Process()
        other.executableURL = URL(fileURLWithPath: binary)
        other.arguments = [path, "400"]
        other.standardOutput = FileHandle.nullDevice
        let otherErrors = Pipe()
        other.standardError = otherErrors
        try other.run()

        let stop = Atomic<Bool>(false)
        let reads = Atomic<Int>(0)
        let failures = Locked<[String]>([])
        let group = DispatchGroup()
        for r in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                while !stop.load(ordering: .relaxed) {
                    do {
                        let s = try store.snapshot()
                        var sum: Int64 = 0
                        try s.forEachRowGroup("Account", columns: ["balance"]) { _, segs in
                            for i in 0..<segs[0]!.rowCount {
                                if case .int(let v) = try segs[0]!.value(i) { sum += v }
                            }
                        }
                        if sum != total {
                            failures.withLock { if $0.count < 10 { $0.append("reader \(r): v\(s.version) sums to \(sum)") } }
                        }
                        reads.add(1, ordering: .relaxed)
                    } catch {
                        failures.withLock { if $0.count < 10 { $0.append("reader \(r): \(error)") } }
                    }
                }
            }
        }
        var rng = SplitMix(seed: 9)
        for _ in 0..<300 {
            let tx = try store.beginWrite()
            for _ in 0..<5 {
                let a = ObjectKey(Int64(rng.next() % UInt64(accounts)))
                let b = ObjectKey(Int64(rng.next() % UInt64(accounts)))
                let amount = Int64(rng.next() % 50)
                guard a != b, case .int(let va) = try tx.value("Account", a, "balance"),
                    case .int(let vb) = try tx.value("Account", b, "balance")
                else { continue }
                try tx.set("Account", a, "balance", .int(va - amount))
                try tx.set("Account", b, "balance", .int(vb + amount))
            }
            try tx.commit()
        }
        other.waitUntilExit()
        stop.store(true, ordering: .relaxed)
        #expect(group.wait(timeout: .now() + 60) == .success, "readers did not finish: deadlock?")
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(3))")
        #expect(reads.load(ordering: .relaxed) > 10)
        #expect(
            other.terminationStatus == 0,
            "\(String(decoding: otherErrors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).suffix(2000))")
        let final = try store.snapshot()
        #expect(try final.objectCount("Log") >= 400)
        #expect(Verifier().verify(final).isClean)
    }
}

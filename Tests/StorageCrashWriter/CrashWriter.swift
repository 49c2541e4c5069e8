import Foundation
import RealmStorage

/// A child process for the crash test: commits in a loop and prints each acknowledged commit
/// ("ack VERSION SEQ") after `commit()` returns, so the parent knows what must survive a SIGKILL.
@main
struct CrashWriter {
    static func main() throws {
        let args = CommandLine.arguments
        guard args.count >= 3,
            let rounds = Int(args[2])
                ?? (["hold", "holdwrite", "forkwrite", "compactat", "compactloop", "follow"].contains(args[2]) ? 0 : nil)
        else {
            if args.count >= 3, args[2] == "open" || args[2] == "openreadonly" {
                // Open (never create), say what happened: "opened VERSION" or "error CODE".
                do {
                    let s = try Store.open(at: args[1], options: .init(readOnly: args[2] == "openreadonly")).snapshot()
                    print("opened \(s.version)")
                } catch let e as StorageError {
                    print("error \(e.code) \(e)")
                }
                exit(0)
            }
            FileHandle.standardError.write(
                "usage: StorageCrashWriter FILE ROUNDS [THREADS]|hold|holdwrite|forkwrite|open|openreadonly|compactat STEP|compactloop ROUNDS|follow ROUNDS\n"
                    .data(using: .utf8)!)
            exit(1)
        }
        if args[2] == "compactat" || args[2] == "compactloop" || args[2] == "follow" {
            try Compaction.main(args)
            exit(0)
        }
        let store = try Store.open(at: args[1], options: .init(create: true))
        if args[2] == "holdwrite" {
            // Begin a write transaction (so hold the writer word), say so, and wait to be killed.
            let tx = try store.beginWrite()
            print("writing \(tx.baseVersion)")
            fflush(nil)
            while true { sleep(1) }
        }
        if args[2] == "forkwrite" {
            // Fork: the child tries to write with the store its parent opened (it must be refused),
            // then the parent writes with it; print what each saw.
            let child = fork()
            if child == 0 {
                do {
                    _ = try store.beginWrite()
                    _exit(1)
                } catch let e as StorageError where e.code == .invalidTransactionState {
                    _exit(0)
                } catch {
                    _exit(2)
                }
            }
            var status: Int32 = 0
            waitpid(child, &status, 0)
            // In a scope of its own: `exit` never returns, so a transaction still in scope when it
            // runs is never released (and LeakSanitizer reports it).
            do {
                let tx = try store.beginWrite()
                tx.cancel()
            }
            print("child exit \((status >> 8) & 0xFF), parent wrote")
            fflush(nil)
            exit(0)
        }
        if args[2] == "hold" {
            // Pin the current version as "frozen", say so, and wait to be killed.
            let pinned = try store.snapshot(kind: "frozen")
            print("holding \(pinned.version)")
            fflush(nil)
            while true { sleep(1) }
        }
        do {
            let tx = try store.beginWrite()
            if try store.snapshot().catalog.table("Log") == nil {
                try tx.createTable("Log", primaryKey: ColumnSchema("seq", .int))
                try tx.addColumn("Log", ColumnSchema("payload", .string))
                try tx.addColumn("Log", ColumnSchema("total", .int))
                try tx.createTable("Counter")
                try tx.addColumn("Counter", ColumnSchema("value", .int))
                try tx.insert("Counter", ["value": .int(0)])
                try tx.commit()
            } else {
                tx.cancel()
            }
        }
        var seq = Int64(try store.snapshot().objectCount("Log"))
        if args.count > 3, let threads = Int(args[3]) {
            try Groups.run(store, rounds: rounds, threads: threads, seq: seq)
            return
        }
        for i in 0..<rounds {
            let tx = try store.beginWrite()
            // Vary the commit shape: single inserts, batches, updates and deletes.
            let batch = i % 7 == 0 ? 50 : 1
            for _ in 0..<batch {
                seq += 1
                try tx.insert(
                    "Log", ["seq": .int(seq), "payload": .string(String(repeating: "x", count: Int(seq % 97))), "total": .int(seq)])
            }
            if i % 5 == 0 { try tx.set("Counter", ObjectKey(0), "value", .int(seq)) }
            if i % 11 == 0, let k = try tx.objectKey("Log", primaryKey: .int(seq - 3)) {
                try tx.set("Log", k, "payload", .string("updated-\(seq)"))
            }
            let snap = try tx.commit()
            print("ack \(snap.version) \(seq)")
            fflush(nil)
        }
    }
}

/// `StorageCrashWriter FILE ROUNDS THREADS`: THREADS threads commit ROUNDS times each, so that
/// commits share syncs (group commit, format 7); each prints "ack VERSION SEQ" once `commit()`
/// returned. Sequence numbers are taken under the writer word, so they follow the versions.
enum Groups {
    static func run(_ store: Store, rounds: Int, threads: Int, seq start: Int64) throws {
        // Read and written only by the thread holding the writer word.
        let seq = Compaction.Counter(start)
        let printing = NSLock()
        let group = DispatchGroup()
        for t in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for i in 0..<rounds {
                    do {
                        let tx = try store.beginWrite()
                        let batch = (i + t) % 9 == 0 ? 20 : 1
                        for _ in 0..<batch {
                            seq.value += 1
                            try tx.insert(
                                "Log",
                                [
                                    "seq": .int(seq.value), "payload": .string(String(repeating: "g", count: Int(seq.value % 89))),
                                    "total": .int(seq.value),
                                ])
                        }
                        let last = seq.value
                        let snap = try tx.commit()
                        printing.lock()
                        print("ack \(snap.version) \(last)")
                        fflush(nil)
                        printing.unlock()
                    } catch {
                        FileHandle.standardError.write(Data("error \(error)\n".utf8))
                        exit(2)
                    }
                }
            }
        }
        group.wait()
    }
}

/// The online-compaction modes of the crash and two-process tests. Every commit inserts one `Log`
/// object with the next sequence number of its writer and is announced as "ack VERSION SEQ" once
/// `commit()` returned.
enum Compaction {
    static func main(_ args: [String]) throws {
        let path = args[1]
        var options = Store.Options(create: true)
        options.compaction = .off
        switch args[2] {
        case "compactat":
            // Compacts once, commits three times while the copy is made (so the compaction has
            // commits to catch up), and is killed at the named step. With a fifth argument, it
            // makes a hard link of that name to the file once the file is marked superseded (a
            // link made after the compaction's last check, before its rename).
            let target = args.count > 3 ? args[3] : ""
            let linkName = args.count > 4 ? args[4] : nil
            let store = try Store.open(at: path, options: options)
            try prepare(store)
            let next = Counter(try nextSeq(store, base: 0))
            var compactor = Compactor()
            compactor.atStep = { step in
                if step == .copied { for _ in 0..<3 { try? commitOne(store, next) } }
                if step == .marked, let linkName, link(path, linkName) != 0 {
                    print("error link \(errno)")
                    exit(4)
                }
                if step.rawValue == target {
                    print("at \(step.rawValue)")
                    fflush(nil)
                    kill(getpid(), SIGKILL)
                }
            }
            let r = try compactor.compact(store)
            print("compacted \(r.version)")
        case "compactloop":
            // Commits in a loop while its store compacts by itself after almost every commit.
            options.compaction = .automatic(minimumDeadBytes: 0, deadToLiveRatio: 0.2)
            let store = try Store.open(at: path, options: options)
            try prepare(store)
            let next = Counter(try nextSeq(store, base: 0))
            for _ in 0..<(Int(args.count > 3 ? args[3] : "") ?? 100) { try commitOne(store, next) }
        default:
            // "follow": the other process of the two-process test. It never compacts; it pins a
            // frozen snapshot across each commit (checking it still reads what it read), reads the
            // newest version, and commits sequence numbers from 10,000,000.
            let store = try Store.open(at: path, options: options)
            try prepare(store)
            let next = Counter(try nextSeq(store, base: 10_000_000))
            for i in 0..<(Int(args.count > 3 ? args[3] : "") ?? 100) {
                let pinned = try store.snapshot(kind: "frozen")
                let count = try pinned.objectCount("Log")
                try commitOne(store, next)
                guard try pinned.objectCount("Log") == count, try store.snapshot().objectCount("Log") > count else {
                    print("error: a pinned snapshot changed")
                    exit(3)
                }
                if i % 10 == 0 { usleep(2000) }
            }
            print("done")
        }
        fflush(nil)
    }

    final class Counter: @unchecked Sendable {
        // Used by one thread at a time (the compactor's step hook runs on the caller's thread).
        var value: Int64
        init(_ v: Int64) { value = v }
    }

    static func prepare(_ store: Store) throws {
        let tx = try store.beginWrite()
        if try store.snapshot().catalog.table("Log") == nil {
            try tx.createTable("Log", primaryKey: ColumnSchema("seq", .int))
            try tx.addColumn("Log", ColumnSchema("payload", .string))
            try tx.addColumn("Log", ColumnSchema("total", .int))
            try tx.commit()
        } else {
            tx.cancel()
        }
    }

    /// One past the largest sequence number at or above `base` (and below base + 10,000,000).
    static func nextSeq(_ store: Store, base: Int64) throws -> Int64 {
        let s = try store.snapshot()
        var best = base
        for k in try s.objectKeys("Log") {
            if case .int(let v) = try s.value("Log", k, "seq"), v >= base, v < base + 10_000_000 { best = max(best, v + 1) }
        }
        return best
    }

    static func commitOne(_ store: Store, _ next: Counter) throws {
        let seq = next.value
        next.value += 1
        let tx = try store.beginWrite()
        try tx.insert("Log", ["seq": .int(seq), "payload": .string(String(repeating: "y", count: Int(seq % 300))), "total": .int(seq)])
        let snap = try tx.commit()
        print("ack \(snap.version) \(seq)")
        fflush(nil)
    }
}

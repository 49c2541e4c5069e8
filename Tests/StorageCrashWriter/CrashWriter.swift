import Foundation
import RealmStorage

/// A child process for the crash test: commits in a loop and prints each acknowledged commit
/// ("ack VERSION SEQ") after `commit()` returns, so the parent knows what must survive a SIGKILL.
@main
struct CrashWriter {
    static func main() throws {
        let args = CommandLine.arguments
        guard args.count >= 3, let rounds = Int(args[2]) ?? (["hold", "holdwrite", "forkwrite"].contains(args[2]) ? 0 : nil) else {
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
                "usage: StorageCrashWriter FILE ROUNDS|hold|holdwrite|forkwrite|open|openreadonly\n".data(using: .utf8)!)
            exit(1)
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
            let tx = try store.beginWrite()
            tx.cancel()
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

import Foundation
import GRDB

/// SQLite through GRDB: WAL mode (a `DatabasePool`), `synchronous` FULL unless told NORMAL.
final class SQLiteSystem: BenchSystem {
    let name: String
    let path: String
    let pool: DatabasePool

    init(path: String, synchronous: String = "FULL") throws {
        self.path = path
        self.name = "SQLite WAL \(synchronous)"
        pool = try DatabasePool(path: path)
        // GRDB opens WAL pools with synchronous NORMAL; set the writer connection's level after.
        let level = try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            return try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
        }
        guard level == (synchronous == "FULL" ? 2 : 1) else { fatalError("PRAGMA synchronous = \(synchronous) did not take (\(level))") }
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS person (
                        id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER NOT NULL,
                        score REAL NOT NULL, active INTEGER NOT NULL)
                    """)
        }
    }

    private static func insert(_ db: Database, _ i: Int) throws {
        let statement = try db.cachedStatement(sql: "INSERT INTO person (id, name, age, score, active) VALUES (?, ?, ?, ?, ?)")
        try statement.execute(arguments: [i, Data6.name(i), Data6.age(i), Data6.score(i), Data6.active(i)])
    }

    func w1Insert(_ n: Int) throws {
        try pool.write { db in for i in 0..<n { try Self.insert(db, i) } }
    }

    func w2Count() throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM person WHERE age > 50") ?? -1 }
    }

    func w3Count() throws -> Int {
        try pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM person WHERE age BETWEEN 20 AND 30 AND name GLOB 'name-1*'") ?? -1
        }
    }

    func w4Aggregates() throws -> Aggregates {
        try pool.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT SUM(score), AVG(age), MIN(age), MAX(score) FROM person")!
            return Aggregates(sumScore: row[0], averageAge: row[1], minAge: row[2], maxScore: row[3])
        }
    }

    func w5Top100() throws -> Int {
        try pool.read { db in
            try Int.fetchAll(db, sql: "SELECT id FROM person ORDER BY score DESC, id LIMIT 100").reduce(0, +)
        }
    }

    func w6Lookups(_ keys: [Int]) throws -> Int {
        try pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT name FROM person WHERE id = ?")
            var bytes = 0
            for k in keys {
                if let name = try String.fetchOne(statement, arguments: [k]) { bytes += name.utf8.count }
            }
            return bytes
        }
    }

    func w7Commits(start: Int, count: Int) throws {
        for i in start..<(start + count) { try pool.write { db in try Self.insert(db, i) } }
    }

    func w7cCommits(start: Int, threads: Int, perThread: Int) throws {
        // Four writers through GRDB's pool (it serializes them on its one writer connection).
        let pool = self.pool
        try onThreads(threads) { t in
            let first = start + t * perThread
            for i in first..<(first + perThread) { try pool.write { db in try Self.insert(db, i) } }
        }
    }

    func removeObjects(from start: Int) throws {
        try pool.write { db in try db.execute(sql: "DELETE FROM person WHERE id >= ?", arguments: [start]) }
    }

    func w8Update(_ n: Int) throws {
        try pool.write { db in try db.execute(sql: "UPDATE person SET age = age + 1 WHERE id % 10 = 0 AND id < ?", arguments: [n]) }
    }

    func w10Iterate() throws -> (Int, Int) {
        try pool.read { db in
            var count = 0
            var ages = 0
            let rows = try Row.fetchCursor(db, sql: "SELECT name, age FROM person")
            while let row = try rows.next() {
                let name: String = row[0]
                let age: Int = row[1]
                count += name.utf8.isEmpty ? 0 : 1
                ages += age
            }
            return (count, ages)
        }
    }

    func fileSize() throws -> Int { sizeOnDisk([path, path + "-wal", path + "-shm"]) }

    func compactedSize() throws -> Int {
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "VACUUM")
            try db.checkpoint(.truncate)
        }
        return sizeOnDisk([path, path + "-wal"])
    }

    /// W9 in a fresh process: open the file and count the rows.
    static func openAndCount(_ path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        return try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM person") ?? -1 }
    }

    static func remove(_ path: String) {
        for p in [path, path + "-wal", path + "-shm"] { try? FileManager.default.removeItem(atPath: p) }
    }
}

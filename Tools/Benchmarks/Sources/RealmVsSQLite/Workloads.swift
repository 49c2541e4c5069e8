import Foundation

/// The data of Tools/Benchmarks/results/NOTES.md, "Workloads": `Person` number `i`.
enum Data6 {
    static func name(_ i: Int) -> String { "name-\(i % 10_000)" }
    static func age(_ i: Int) -> Int { (i * 7) % 100 }
    static func score(_ i: Int) -> Double { Double(i % 1000) / 10 }
    static func active(_ i: Int) -> Bool { i % 3 == 0 }

    /// The primary keys W6 looks up (the same sequence for both systems).
    static func lookupKeys(_ count: Int, n: Int) -> [Int] {
        var rng = UInt64(42)
        return (0..<count).map { _ in
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(rng >> 33) % n
        }
    }
}

/// W4's four aggregates.
struct Aggregates: Equatable, Codable, CustomStringConvertible {
    var sumScore: Double
    var averageAge: Double
    var minAge: Int
    var maxScore: Double

    /// Equal up to floating-point summation order.
    func matches(_ o: Aggregates) -> Bool {
        abs(sumScore - o.sumScore) <= 1e-6 * max(1, abs(sumScore)) && abs(averageAge - o.averageAge) <= 1e-9 && minAge == o.minAge
            && maxScore == o.maxScore
    }

    var description: String {
        String(format: "%.0f / %.1f / %d / %.1f", sumScore, averageAge, minAge, maxScore)
    }
}

/// One system under test: the workloads of Tools/Benchmarks/results/NOTES.md, "Workloads" on one database file.
protocol BenchSystem {
    /// The system's name in the report.
    var name: String { get }
    /// W1: inserts `n` objects in one durable write transaction.
    func w1Insert(_ n: Int) throws
    /// W2: counts `age > 50`.
    func w2Count() throws -> Int
    /// W3: counts `age BETWEEN {20, 30} AND name BEGINSWITH 'name-1'`.
    func w3Count() throws -> Int
    /// W4: sum(score), average(age), min(age), max(score).
    func w4Aggregates() throws -> Aggregates
    /// W5: the sum of the first 100 ids by score descending (ties by id).
    func w5Top100() throws -> Int
    /// W6: looks up `keys` by primary key, reading `name`; returns the bytes read.
    func w6Lookups(_ keys: [Int]) throws -> Int
    /// W7: `count` write transactions of one insert each (ids from `start`), each durable.
    func w7Commits(start: Int, count: Int) throws
    /// W7c: `threads` threads each make `perThread` write transactions of one insert (ids from
    /// `start`), each durable, all at once.
    func w7cCommits(start: Int, threads: Int, perThread: Int) throws
    /// Deletes the objects whose id is `start` or more (what W7c added).
    func removeObjects(from start: Int) throws
    /// W8: one transaction: `age += 1` on every 10th object of `n`.
    func w8Update(_ n: Int) throws
    /// W10: iterates every object reading `name` and `age`; returns (objects, sum of ages).
    func w10Iterate() throws -> (Int, Int)
    /// The bytes the database occupies on disk now.
    func fileSize() throws -> Int
    /// The size of a compacted copy of the database.
    func compactedSize() throws -> Int
}

/// Bytes of the files at `paths` that exist.
func sizeOnDisk(_ paths: [String]) -> Int {
    paths.reduce(0) { total, p in
        total + ((try? FileManager.default.attributesOfItem(atPath: p)[.size] as? Int) ?? 0)
    }
}

/// Runs `body(t)` on `threads` threads at once and waits for all; rethrows the first error.
func onThreads(_ threads: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
    let group = DispatchGroup()
    let failure = NSLock()
    nonisolated(unsafe) var first: (any Error)?
    for t in 0..<threads {
        group.enter()
        Thread.detachNewThread {
            defer { group.leave() }
            do { try body(t) } catch {
                failure.lock()
                if first == nil { first = error }
                failure.unlock()
            }
        }
    }
    group.wait()
    if let first { throw first }
}

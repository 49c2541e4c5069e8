import Foundation
import RealmQuery
import RealmStorage
import RealmTestSupport
import Testing

/// `sortedPrefix(ofAll:by:limit:)` (top-k from the first sort column's lanes) returns exactly what
/// sorting every object does, over random data full of ties, NaN, -0.0 and infinities, small row
/// groups, deleted objects and a column added after the first rows.
@Suite struct SortedPrefixTests {
    static func makeStore(_ dir: TempDir, seed: UInt64) throws -> Store {
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 37))
        let tx = try store.beginWrite()
        try tx.createTable("T")
        try tx.addColumn("T", ColumnSchema("i", .int))
        try tx.addColumn("T", ColumnSchema("b", .bool))
        try tx.addColumn("T", ColumnSchema("d", .double))
        try tx.addColumn("T", ColumnSchema("f", .float))
        try tx.addColumn("T", ColumnSchema("s", .string))
        try tx.addColumn("T", ColumnSchema("oi", .int, nullable: true))
        var rng = SplitMix(seed: seed)
        let doubles: [Double] = [.nan, -0.0, 0.0, .infinity, -.infinity, 1.5, -2.25, 1e300, -1e-300]
        func row() -> [String: StorageValue] {
            let d = doubles[Int(rng.next() % UInt64(doubles.count))]
            return [
                "i": .int(Int64(rng.next() % 7) - 3 + (rng.next() % 50 == 0 ? Int64.min / 2 : 0)), "b": .bool(rng.next() % 2 == 0),
                "d": .double(d), "f": .float(Float(doubles[Int(rng.next() % UInt64(doubles.count))])),
                "s": .string("s\(rng.next() % 5)"), "oi": rng.next() % 3 == 0 ? .null : .int(Int64(rng.next() % 4)),
            ]
        }
        for _ in 0..<300 { try tx.insert("T", row()) }
        try tx.commit()
        // Rows written before a column exists hold its default.
        let tx2 = try store.beginWrite()
        try tx2.addColumn("T", ColumnSchema("late", .double))
        for k in stride(from: 0, to: 300, by: 7) { try tx2.delete("T", ObjectKey(Int64(k))) }
        for _ in 0..<200 {
            var r = row()
            r["late"] = .double(doubles[Int(rng.next() % UInt64(doubles.count))])
            try tx2.insert("T", r)
        }
        try tx2.commit()
        return store
    }

    /// The store of ``makeStore(_:seed:)``, its snapshot and every key of `T`.
    static func fixture(_ dir: TempDir, seed: UInt64) throws -> (Store, Snapshot, [ObjectKey]) {
        let store = try makeStore(dir, seed: seed)
        let snapshot = try store.snapshot()
        return (store, snapshot, try snapshot.objectKeys("T"))
    }

    /// Column `name` of `T` as a key path.
    static func path(_ name: String, _ snapshot: Snapshot) throws -> BoundKeyPath {
        try BoundKeyPath.bind(name, table: snapshot.catalog.table("T")!, catalog: snapshot.catalog)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func agreesWithSortingEverything(seed: UInt64) throws {
        let dir = TempDir()
        let (store, snapshot, all) = try Self.fixture(dir, seed: seed)
        func path(_ name: String) throws -> BoundKeyPath { try Self.path(name, snapshot) }
        let evaluator = QueryEvaluator(snapshot)
        var rng = SplitMix(seed: seed &* 77)
        let firsts = ["i", "b", "d", "f", "late"]
        let seconds = ["i", "b", "d", "f", "s", "late", "oi"]
        for _ in 0..<60 {
            var keys = [SortKey(path: try path(firsts[Int(rng.next() % 5)]), ascending: rng.next() % 2 == 0)]
            if rng.next() % 2 == 0 { keys.append(SortKey(path: try path(seconds[Int(rng.next() % 7)]), ascending: rng.next() % 2 == 0)) }
            for limit in [1, 2, 10, 100, all.count, all.count + 5] {
                let want = try evaluator.sort("T", all, by: keys, limit: limit)
                let got = try #require(try evaluator.sortedPrefix(ofAll: "T", by: keys, limit: limit))
                #expect(got == want, "\(keys.map { "\($0.path)\($0.ascending ? "" : " desc")" }) limit \(limit)")
            }
        }
        // Not applicable: a first key of another type or a nullable column; a write transaction.
        #expect(try evaluator.sortedPrefix(ofAll: "T", by: [SortKey(path: try path("s"), ascending: true)], limit: 3) == nil)
        #expect(try evaluator.sortedPrefix(ofAll: "T", by: [SortKey(path: try path("oi"), ascending: true)], limit: 3) == nil)
        let tx = try store.beginWrite()
        #expect(try QueryEvaluator(tx).sortedPrefix(ofAll: "T", by: [SortKey(path: try path("i"), ascending: true)], limit: 3) == nil)
        tx.cancel()
    }

    /// Sorting some objects of a snapshot (its typed path: values read in place for a few objects
    /// of a group, the group decoded for many) agrees with sorting them through a write
    /// transaction (the boxed path), for scattered and dense subsets in ascending and in random
    /// key order; a key the table lacks is an error; a count without a predicate is the table's.
    @Test(arguments: [4, 5] as [UInt64])
    func sortingSomeObjectsAgreesWithTheBoxedSort(seed: UInt64) throws {
        let dir = TempDir()
        let (store, snapshot, all) = try Self.fixture(dir, seed: seed)
        func path(_ name: String) throws -> BoundKeyPath { try Self.path(name, snapshot) }
        let tx = try store.beginWrite()
        defer { tx.cancel() }
        let typed = QueryEvaluator(snapshot)
        let boxed = QueryEvaluator(tx)
        var rng = SplitMix(seed: seed)
        let names = ["i", "b", "d", "f", "late"]
        for round in 0..<80 {
            // From a handful of objects (one or two per group: read in place) to most of them.
            let size = [1, 3, 8, 20, all.count / 2, all.count][round % 6]
            var subset = Array(Set((0..<size).map { _ in all[Int(rng.next() % UInt64(all.count))] }))
            if rng.next() % 2 == 0 { subset.sort() }
            var keys: [SortKey] = []
            for _ in 0..<(1 + Int(rng.next() % 2)) {
                keys.append(SortKey(path: try path(names[Int(rng.next() % UInt64(names.count))]), ascending: rng.next() % 2 == 0))
            }
            #expect(try typed.sort("T", subset, by: keys) == boxed.sort("T", subset, by: keys), "round \(round)")
        }
        let missing = ObjectKey(7)  // deleted when the store was made
        #expect(try !snapshot.contains("T", missing))
        #expect(throws: StorageError.self) { try typed.sort("T", [all[0], missing], by: [SortKey(path: try path("i"), ascending: true)]) }
        #expect(try typed.count("T", nil) == snapshot.objectCount("T"))
        try tx.delete("T", all[0])
        _ = try tx.insert("T", ["i": .int(1)])
        _ = try tx.insert("T", ["i": .int(2)])
        #expect(try boxed.count("T", nil) == all.count + 1)
    }
}

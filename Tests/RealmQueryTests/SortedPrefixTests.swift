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

    @Test(arguments: [1, 2, 3] as [UInt64])
    func agreesWithSortingEverything(seed: UInt64) throws {
        let dir = TempDir()
        let store = try Self.makeStore(dir, seed: seed)
        let snapshot = try store.snapshot()
        let table = snapshot.catalog.table("T")!
        func path(_ name: String) throws -> BoundKeyPath { try BoundKeyPath.bind(name, table: table, catalog: snapshot.catalog) }
        let evaluator = QueryEvaluator(snapshot)
        let all = try snapshot.objectKeys("T")
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
}

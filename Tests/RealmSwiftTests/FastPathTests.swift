import Foundation
import RealmSwift
import RealmTestSupport
import Testing

/// The fast paths (in-place int counts, column-scan aggregates, top-k prefixes) give exactly what
/// the general paths give.
@Suite struct FastPathTests {
    func seeded() throws -> (Realm, TempDir) {
        let (realm, dir) = try makeRealm()
        var rng = SplitMix(seed: 31)
        try realm.write {
            for i in 0..<5000 {
                let t = AllTypes()
                t.id = i
                t.int64 = Int64(rng.next() % 200) - 100
                t.double = Double(rng.next() % 1000) / 7
                t.float = Float(rng.next() % 1000) / 3
                if rng.next() % 3 != 0 { t.optInt = Int(rng.next() % 50) }
                if rng.next() % 4 != 0 { t.optDouble = Double(rng.next() % 100) / 4 }
                realm.add(t)
            }
        }
        return (realm, dir)
    }

    @Test func intCountsMatchFiltering() throws {
        let (realm, _) = try seeded()
        let all = realm.objects(AllTypes.self)
        for column in ["int64", "optInt", "id"] {
            for q in ["== 7", "!= 7", "< 10", "<= 10", "> -3", ">= 40", "BETWEEN {-20, 20}", "== nil", "!= nil"] {
                let text = "\(column) \(q)"
                guard let filtered = try? all.filter(checking: text) else { continue }
                #expect(filtered.count == Array(filtered).count, "\(text)")
            }
        }
    }

    @Test func wholeTableAggregatesMatchKeyedOnes() throws {
        let (realm, _) = try seeded()
        let all = realm.objects(AllTypes.self)
        let keyed = all.filter("TRUEPREDICATE")
        #expect(all.sum(ofProperty: "int64") as Int64 == keyed.sum(ofProperty: "int64") as Int64)
        #expect(all.min(ofProperty: "int64") as Int64? == keyed.min(ofProperty: "int64") as Int64?)
        #expect(all.max(ofProperty: "int64") as Int64? == keyed.max(ofProperty: "int64") as Int64?)
        #expect(all.average(ofProperty: "int64") as Double? == keyed.average(ofProperty: "int64") as Double?)
        #expect(all.sum(ofProperty: "double") as Double == keyed.sum(ofProperty: "double") as Double)
        #expect(all.max(ofProperty: "double") as Double? == keyed.max(ofProperty: "double") as Double?)
        #expect(all.min(ofProperty: "float") as Float? == keyed.min(ofProperty: "float") as Float?)
        #expect(all.sum(ofProperty: "float") as Double == keyed.sum(ofProperty: "float") as Double)
        #expect(all.sum(ofProperty: "optInt") as Int == keyed.sum(ofProperty: "optInt") as Int)
        #expect(all.average(ofProperty: "optDouble") as Double? == keyed.average(ofProperty: "optDouble") as Double?)
        #expect(all.min(ofProperty: "optDouble") as Double? == keyed.min(ofProperty: "optDouble") as Double?)
        // Inside a write transaction the aggregates see its changes.
        try realm.beginWrite()
        realm.add(AllTypes(value: ["id": 99_999, "int64": 1_000_000]))
        #expect(all.max(ofProperty: "int64") as Int64? == 1_000_000)
        realm.cancelWrite()
        #expect(all.max(ofProperty: "int64") as Int64? == keyed.max(ofProperty: "int64") as Int64?)
    }

    @Test func sortedPrefixIsTheTopK() throws {
        let (realm, _) = try seeded()
        let sorted = realm.objects(AllTypes.self).filter("optInt != nil").sorted(by: [
            SortDescriptor(keyPath: "double", ascending: false), SortDescriptor(keyPath: "id"),
        ])
        for k in [0, 1, 10, 100, 10_000] {
            let top = sorted.prefix(k).map(\.id)
            #expect(top == Array(Array(sorted).prefix(k)).map(\.id), "k = \(k)")
        }
        // Evaluated results answer from their cache.
        _ = sorted.count
        #expect(sorted.prefix(5).map(\.id) == Array(sorted)[0..<5].map(\.id))
    }

    /// Sorting by plain number columns (unboxed) orders as the evaluator's rules say: numerically,
    /// NaN before every number, ties by the earlier order; bools false first.
    @Test func typedSortsMatchASwiftModel() throws {
        let (realm, _) = try makeRealm()
        var rng = SplitMix(seed: 8)
        var model: [(id: Int, d: Double, b: Bool, i: Int64)] = []
        try realm.write {
            for id in 0..<3000 {
                let d = rng.next() % 10 == 0 ? Double.nan : Double(Int(rng.next() % 200) - 100) / 4
                let b = rng.next() % 2 == 0
                let i = Int64(rng.next() % 30)
                model.append((id, d, b, i))
                realm.add(AllTypes(value: ["id": id, "double": d, "bool": b, "int64": i]))
            }
        }
        func dOrder(_ a: Double, _ b: Double) -> Int {
            if a.isNaN { return b.isNaN ? 0 : -1 }
            if b.isNaN { return 1 }
            return a < b ? -1 : a > b ? 1 : 0
        }
        let all = realm.objects(AllTypes.self)
        let byDouble = all.sorted(by: [SortDescriptor(keyPath: "double"), SortDescriptor(keyPath: "bool", ascending: false)]).map(\.id)
        let expected = model.sorted { x, y in
            let o = dOrder(x.d, y.d)
            if o != 0 { return o < 0 }
            if x.b != y.b { return x.b }
            return x.id < y.id
        }.map(\.id)
        #expect(byDouble == expected)
        let top = all.sorted(by: [SortDescriptor(keyPath: "int64", ascending: false), SortDescriptor(keyPath: "double")]).prefix(50).map(
            \.id)
        let expectedTop = model.sorted { x, y in
            if x.i != y.i { return x.i > y.i }
            let o = dOrder(x.d, y.d)
            if o != 0 { return o < 0 }
            return x.id < y.id
        }.prefix(50).map(\.id)
        #expect(top == Array(expectedTop))
    }
}

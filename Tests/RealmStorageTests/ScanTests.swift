import Foundation
import Testing

@testable import RealmStorage

/// The typed scan loops agree with a plain model for every encoding and comparison.
@Suite struct ScanTests {
    @Test(arguments: [0, 1, 2, 4, 8, 16, 32, 64])
    func countMatchesTheModel(bits: Int) throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 333))
        let tx = try store.beginWrite()
        try tx.createTable("T")
        try tx.addColumn("T", ColumnSchema("v", .int))
        try tx.addColumn("T", ColumnSchema("o", .int, nullable: true))
        var rng = SplitMix(seed: UInt64(bits))
        var values: [Int64] = []
        var optionals: [Int64?] = []
        let base: Int64 = bits == 64 ? 0 : -1_000
        for _ in 0..<2_000 {
            let r = rng.next()
            let v: Int64 = bits == 64 ? Int64(bitPattern: r) : base + (bits == 0 ? 0 : Int64(r % (UInt64(1) << UInt64(bits))))
            let o: Int64? = r % 7 == 0 ? nil : v
            values.append(v)
            optionals.append(o)
            try tx.insert("T", ["v": .int(v), "o": o.map { .int($0) } ?? .null])
        }
        let s = try tx.commit()
        let probes: [Int64] = [.min, .max, 0, base, base + 1, -1, 1, 7, values[0], values[1], values[2] &+ 1]
        var comparisons: [IntComparison] = []
        for p in probes {
            comparisons += [
                .equal(p), .notEqual(p), .less(p), .lessOrEqual(p), .greater(p), .greaterOrEqual(p), .between(p, p &+ 100),
                .between(p, p &- 5),
            ]
        }
        for c in comparisons {
            let got = try s.count("T", whereInt: "v", c)
            let want = values.filter { c.matches($0) }.count
            #expect(got == want, "\(c) over \(bits)-bit values: \(got) vs \(want)")
            let gotOptional = try s.count("T", whereInt: "o", c)
            let wantOptional = optionals.compactMap { $0 }.filter { c.matches($0) }.count
            #expect(gotOptional == wantOptional, "\(c) over optional \(bits)-bit values: \(gotOptional) vs \(wantOptional)")
        }
    }

    @Test func countRejectsNonIntegerColumns() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 10)
        expectCode(.typeMismatch) { try store.snapshot().count("Person", whereInt: "name", .equal(1)) }
        expectCode(.notFound) { try store.snapshot().count("Nope", whereInt: "age", .equal(1)) }
        #expect(try store.snapshot().count("Person", whereInt: "active", .equal(1)) == 4)
    }
}

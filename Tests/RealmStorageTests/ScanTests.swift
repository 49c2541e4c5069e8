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

    /// Each row group's lane summary (sum, min, max) equals the plain computation, for every
    /// packed width, negative references and sequences (linear encoding).
    @Test(arguments: [0, 1, 3, 8, 13, 16, 32, 40, 64])
    func laneSummariesMatchTheModel(bits: Int) throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 700))
        let tx = try store.beginWrite()
        try tx.createTable("T")
        try tx.addColumn("T", ColumnSchema("v", .int))
        try tx.addColumn("T", ColumnSchema("seq", .int))
        var rng = SplitMix(seed: UInt64(bits) + 99)
        var values: [Int64] = []
        let base: Int64 = bits == 64 ? 0 : -123_456_789
        for i in 0..<2_000 {
            let r = rng.next()
            let v: Int64 = bits == 64 ? Int64(bitPattern: r) : base + (bits == 0 ? 0 : Int64(r % (UInt64(1) << UInt64(bits))))
            values.append(v)
            try tx.insert("T", ["v": .int(v), "seq": .int(Int64(i) * 3 - 1_000)])
        }
        let s = try tx.commit()
        let reader = try TableReader(s, "T")
        var row = 0
        for g in 0..<reader.groupCount {
            let n = reader.rowCount(group: g)
            let chunk = values[row..<row + n]
            let lane = try #require(try reader.scan(group: g, column: reader.columnIndex("v")!).integers)
            let got = try #require(lane.summary())
            #expect(got.sum == chunk.reduce(Int128(0)) { $0 + Int128($1) }, "\(bits) bits, group \(g)")
            #expect(got.min == chunk.min() && got.max == chunk.max(), "\(bits) bits, group \(g)")
            // Range masks read in place agree with the plain test, wrapping ranges included.
            for (lo, span) in [(Int64.min, UInt64.max), (chunk.first!, 0), (base, 5), (base &+ 3, 1 << 20), (-1, 2), (.max, 7)]
                as [(Int64, UInt64)]
            {
                var words = [UInt64](repeating: 0, count: (n + 63) / 64)
                lane.rangeMask(lo: lo, span: span, into: &words)
                for (r, v) in chunk.enumerated() {
                    let want = UInt64(bitPattern: v &- lo) <= span
                    #expect((words[r >> 6] >> UInt64(r & 63)) & 1 == (want ? 1 : 0), "\(bits) bits, \(lo)+\(span), row \(r)")
                }
            }
            let seqLane = try #require(try reader.scan(group: g, column: reader.columnIndex("seq")!).integers)
            var seqWords = [UInt64](repeating: 0, count: (n + 63) / 64)
            seqLane.rangeMask(lo: Int64(row) * 3 - 1_000, span: 30, into: &seqWords)
            #expect(seqWords.reduce(0) { $0 + $1.nonzeroBitCount } == min(11, n))
            let seq = try #require(try reader.scan(group: g, column: reader.columnIndex("seq")!).integers?.summary())
            let first = Int64(row) * 3 - 1_000
            let last = Int64(row + n - 1) * 3 - 1_000
            #expect(seq.min == first && seq.max == last && seq.sum == (Int128(first) + Int128(last)) * Int128(n) / 2)
            row += n
        }
    }

    /// Sums and extremes of float and double groups read in place agree with adding the rows in
    /// order, NaN ignored by min and max (all NaN gives NaN), -0.0 and infinities kept.
    @Test func floatingFoldsMatchTheModel() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 64))
        let tx = try store.beginWrite()
        try tx.createTable("T")
        try tx.addColumn("T", ColumnSchema("d", .double))
        try tx.addColumn("T", ColumnSchema("f", .float))
        try tx.addColumn("T", ColumnSchema("i", .int))
        var rng = SplitMix(seed: 5)
        var rows: [(Double, Float)] = []
        for i in 0..<300 {
            let special: [Double] = [.nan, -0.0, .infinity, -.infinity, 1e308, -1e-308]
            let d =
                i >= 64 && i < 128
                ? Double.nan : (i % 17 == 0 ? special[i % special.count] : Double(Int64(bitPattern: rng.next() % 2_000_000)) / 7)
            let f = Float(d)
            rows.append((d, f))
            try tx.insert("T", ["d": .double(d), "f": .float(f), "i": .int(Int64(i))])
        }
        let s = try tx.commit()
        let reader = try TableReader(s, "T")
        var row = 0
        var sum = 0.0
        var fsum = 0.0
        for g in 0..<reader.groupCount {
            let n = reader.rowCount(group: g)
            let doubles = rows[row..<row + n].map(\.0)
            let floats = rows[row..<row + n].map { Double($0.1) }
            let d = try reader.scan(group: g, column: reader.columnIndex("d")!)
            let f = try reader.scan(group: g, column: reader.columnIndex("f")!)
            let modelSum = doubles.reduce(sum, +)
            let gotSum = try d.sumDoubles(startingAt: sum)
            #expect(gotSum.bitPattern == modelSum.bitPattern || (gotSum.isNaN && modelSum.isNaN))
            sum = gotSum
            let modelFloatSum = floats.reduce(fsum, +)
            fsum = try f.sumDoubles(startingAt: fsum)
            #expect(fsum.bitPattern == modelFloatSum.bitPattern || (fsum.isNaN && modelFloatSum.isNaN))
            let numbers = doubles.filter { !$0.isNaN }
            let low = try d.extremeDouble(smallest: true)
            let high = try d.extremeDouble(smallest: false)
            if numbers.isEmpty {
                #expect(low.isNaN && high.isNaN, "group \(g) is all NaN")
            } else {
                #expect(low == numbers.min() && high == numbers.max(), "group \(g)")
            }
            let floatNumbers = floats.filter { !$0.isNaN }
            let floatLow = try f.extremeDouble(smallest: true)
            #expect(floatNumbers.isEmpty ? floatLow.isNaN : floatLow == floatNumbers.min())
            row += n
        }
        // An int column is not a floating lane.
        let ints = try TableReader(s, "T")
        expectCode(.typeMismatch) { try ints.scan(group: 0, column: ints.columnIndex("i")!).sumDoubles(startingAt: 0) }
        expectCode(.typeMismatch) { try ints.scan(group: 0, column: ints.columnIndex("i")!).extremeDouble(smallest: true) }
    }

    @Test func countRejectsNonIntegerColumns() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 10)
        expectCode(.typeMismatch) { try store.snapshot().count("Person", whereInt: "name", .equal(1)) }
        expectCode(.notFound) { try store.snapshot().count("Nope", whereInt: "age", .equal(1)) }
        #expect(try store.snapshot().count("Person", whereInt: "active", .equal(1)) == 4)
    }
}

import Foundation
import Testing

@testable import RealmStorage

/// Random operation sequences (insert, set, delete, commit, cancel, reopen, freeze, compact) on a table
/// of scalar, list, mixed, map and set columns, checked against a plain in-memory model after every commit, and frozen snapshots checked against the
/// model state they were taken at.
@Suite struct ModelTests {
    typealias Row = [String: StorageValue]
    struct Model: Equatable {
        var rows: [Int64: Row] = [:]
        var nextKey: Int64 = 0
    }

    static let columns: [ColumnSchema] = [
        ColumnSchema("n", .int), ColumnSchema("s", .string, nullable: true, indexed: true), ColumnSchema("d", .double),
        ColumnSchema("b", .binary, nullable: true), ColumnSchema("l", .int, nullable: true, list: true),
        ColumnSchema("t", .timestamp, nullable: true), ColumnSchema("m", .mixed), ColumnSchema("mp", .string, nullable: true, map: true),
        ColumnSchema("st", .int, set: true),
    ]

    /// Map keys, among them some whose byte order and Swift `String` order differ.
    static let mapKeys = ["", "a", "b", "é", "e\u{301}x", "éa", "k1", "k2", "🚀"]

    static func randomValue(_ c: ColumnSchema, _ rng: inout SplitMix) -> StorageValue {
        if c.isNullable && !c.isList && !c.isMap && rng.next() % 5 == 0 { return .null }
        switch (c.name, c.isList) {
        case ("n", _): return .int(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 64))
        case ("s", _):
            let r = rng.next() % 4
            return .string(r == 0 ? "" : r == 1 ? "k\(rng.next() % 20)" : String(repeating: "é", count: Int(rng.next() % 300)))
        case ("d", _): return .double([Double.nan, -0.0, 1.5, .infinity, Double(rng.next() % 1000) / 7][Int(rng.next() % 5)])
        case ("b", _): return .binary((0..<Int(rng.next() % 40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        case ("l", _): return .list((0..<Int(rng.next() % 5)).map { _ in rng.next() % 4 == 0 ? .null : .int(Int64(rng.next() % 100)) })
        case ("m", _):
            let v = rng.next()
            switch v % 9 {
            case 0: return .int(Int64(bitPattern: rng.next()))
            case 1: return .bool(v & 16 != 0)
            case 2: return .double([Double.nan, -0.0, 2.5][Int(v % 3)])
            case 3: return .string(v % 2 == 0 ? "" : "s\(rng.next() % 50)")
            case 4: return .binary((0..<Int(rng.next() % 20)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
            case 5: return .timestamp(seconds: Int64(v % 1000), nanoseconds: 7)
            case 6: return .typedLink(table: 1, key: ObjectKey(Int64(rng.next() % 100)))
            case 7: return .decimal128(low: v, high: 0x3040_0000_0000_0000)
            default: return .objectId((0..<12).map { UInt8(truncatingIfNeeded: v >> UInt64($0)) })
            }
        case ("mp", _):
            var m: [String: StorageValue] = [:]
            for _ in 0..<Int(rng.next() % 5) {
                m[Self.mapKeys[Int(rng.next() % UInt64(Self.mapKeys.count))]] = rng.next() % 3 == 0 ? .null : .string("v\(rng.next() % 9)")
            }
            return .map(m)
        case ("st", _):
            var seen = Set<Int64>()
            var elements: [StorageValue] = []
            for _ in 0..<Int(rng.next() % 6) {
                let x = Int64(rng.next() % 8)
                if seen.insert(x).inserted { elements.append(.int(x)) }
            }
            return .list(elements)
        default: return .timestamp(seconds: Int64(rng.next() % 1_000_000) - 500_000, nanoseconds: Int32(rng.next() % 1_000_000_000))
        }
    }

    static func check(_ s: Snapshot, _ m: Model, _ context: String) throws {
        #expect(try s.objectCount("T") == m.rows.count, "\(context): count")
        #expect(try s.objectKeys("T").map(\.rawValue) == m.rows.keys.sorted(), "\(context): keys")
        for (k, row) in m.rows {
            let o = try s.object("T", ObjectKey(k))
            for (name, v) in row where !(o[name]?.bitwiseEquals(v) ?? false) {
                Issue.record("\(context): object \(k).\(name) is \(o[name] ?? .null), model \(v)")
            }
            #expect(try s.objectKey("T", primaryKey: row["id"]!) == ObjectKey(k), "\(context): pk lookup \(k)")
        }
    }

    /// Bulk transactions (tens of inserts into groups of 16, so the groups they fill are kept
    /// encoded until the commit: ``LoadedGroup/seal()``), then sets, deletes and reads of their
    /// objects in the same transaction, checked against the model after every commit; every
    /// transaction seals at least one group. Some objects are deleted as soon as they are inserted,
    /// so some sealed groups' keys are not consecutive.
    @Test(arguments: [4, 5])
    func bulkTransactionsMatchTheModel(seed: UInt64) throws {
        let dir = TempDir()
        var rng = SplitMix(seed: seed)
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 16))
        try store.write { tx in
            try tx.createTable("T", primaryKey: ColumnSchema("id", .int))
            for c in Self.columns { try tx.addColumn("T", c) }
        }
        var committed = Model()
        var nextId: Int64 = 0
        var sealedWithRange = 0
        var sealedWithKeys = 0
        for round in 0..<24 {
            let tx = try store.beginWrite()
            var working = committed
            var fresh: [Int64] = []
            for _ in 0..<(33 + Int(rng.next() % 40)) {
                var row: Row = ["id": .int(nextId)]
                nextId += 1
                for c in Self.columns { row[c.name] = Self.randomValue(c, &rng) }
                let k = try tx.insert("T", row)
                working.nextKey += 1
                working.rows[k.rawValue] = row
                fresh.append(k.rawValue)
                // Now and then deleted at once, from the tail: the group it was in is sealed with
                // keys that are not consecutive.
                if rng.next() % 24 == 0 {
                    try tx.delete("T", k)
                    working.rows[k.rawValue] = nil
                }
            }
            let sealed = try tx.working("T").groups.loadedGroups.filter(\.isSealed)
            #expect(!sealed.isEmpty, "round \(round): no group was sealed")
            sealedWithRange += sealed.filter { $0.keyRange != nil }.count
            sealedWithKeys += sealed.filter { $0.keyRange == nil }.count
            // Sealed groups answer for their keys without decoding.
            #expect(try tx.objectKeys("T").map(\.rawValue) == working.rows.keys.sorted(), "round \(round)")
            #expect(try tx.objectCount("T") == working.rows.count)
            for _ in 0..<Int(rng.next() % 12) {
                let live = fresh.filter { working.rows[$0] != nil }
                guard !live.isEmpty else { break }
                let k = live[Int(rng.next() % UInt64(live.count))]
                switch rng.next() % 3 {
                case 0:
                    let c = Self.columns[Int(rng.next() % UInt64(Self.columns.count))]
                    let v = Self.randomValue(c, &rng)
                    try tx.set("T", ObjectKey(k), c.name, v)
                    working.rows[k]![c.name] = v
                case 1:
                    try tx.delete("T", ObjectKey(k))
                    working.rows[k] = nil
                default:
                    #expect(try tx.contains("T", ObjectKey(k)))
                    #expect(try !tx.contains("T", ObjectKey(working.nextKey + 5)))
                    for c in Self.columns {
                        #expect(
                            try tx.value("T", ObjectKey(k), c.name).bitwiseEquals(working.rows[k]![c.name]!),
                            "round \(round): \(k).\(c.name)")
                    }
                    #expect(try tx.objectKey("T", primaryKey: working.rows[k]!["id"]!) == ObjectKey(k))
                }
            }
            if rng.next() % 8 == 0 {
                tx.cancel()
                continue
            }
            let s = try tx.commit()
            committed = working
            try Self.check(s, committed, "seed \(seed) round \(round)")
        }
        #expect(Verifier().verify(try store.snapshot()).isClean)
        try Self.check(try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot(), committed, "reopened")
        // Both kinds of sealed group were made: consecutive keys held as a range, others as keys.
        #expect(sealedWithRange > 0 && sealedWithKeys > 0, "\(sealedWithRange) \(sealedWithKeys)")
    }

    /// A column added or removed while a transaction holds sealed groups: the sealed groups take
    /// the new column's default and drop the removed one's segment.
    @Test func columnsChangeOverSealedGroups() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 16))
        try store.write { tx in
            try tx.createTable("T", primaryKey: ColumnSchema("id", .int))
            try tx.addColumn("T", ColumnSchema("n", .int))
            try tx.addColumn("T", ColumnSchema("s", .string))
        }
        let keys = try store.write { tx in
            let keys = try (0..<50).map { try tx.insert("T", ["id": .int(Int64($0)), "n": .int(Int64($0 * 3)), "s": .string("s\($0)")]) }
            #expect(try tx.working("T").groups.loadedGroups.filter(\.isSealed).count == 3)
            try tx.addColumn("T", ColumnSchema("extra", .int))
            try tx.removeColumn("T", "s")
            try tx.set("T", keys[5], "extra", .int(7))
            try tx.insert("T", ["id": .int(50), "n": .int(150), "extra": .int(1)])
            return keys
        }
        let s = try store.snapshot()
        #expect(try s.objectCount("T") == 51)
        for (i, k) in keys.enumerated() {
            #expect(try s.value("T", k, "n") == .int(Int64(i * 3)))
            #expect(try s.value("T", k, "extra") == .int(i == 5 ? 7 : 0))
        }
        #expect(Verifier().verify(s).isClean)
    }

    @Test(arguments: [1, 2, 3])
    func randomOperationsMatchTheModel(seed: UInt64) throws {
        let dir = TempDir()
        var rng = SplitMix(seed: seed)
        var store: Store? = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 16))
        do {
            let tx = try store!.beginWrite()
            try tx.createTable("T", primaryKey: ColumnSchema("id", .int))
            for c in Self.columns { try tx.addColumn("T", c) }
            try tx.commit()
        }
        var committed = Model()
        var frozen: [(Snapshot, Model)] = []
        var nextId: Int64 = 0
        var ops = 0
        var commits = 0
        while ops < 3400 {
            let tx = try store!.beginWrite()
            var working = committed
            let steps = Int(rng.next() % 12) + 1
            for _ in 0..<steps {
                ops += 1
                let r = rng.next() % 10
                if r < 4 || working.rows.isEmpty {
                    var row: Row = ["id": .int(nextId)]
                    nextId += 1
                    for c in Self.columns { row[c.name] = Self.randomValue(c, &rng) }
                    let k = try tx.insert("T", row)
                    #expect(k.rawValue == working.nextKey)
                    working.nextKey += 1
                    working.rows[k.rawValue] = row
                } else if r < 7 {
                    let k = working.rows.keys.sorted()[Int(rng.next() % UInt64(working.rows.count))]
                    let c = Self.columns[Int(rng.next() % UInt64(Self.columns.count))]
                    let v = Self.randomValue(c, &rng)
                    try tx.set("T", ObjectKey(k), c.name, v)
                    working.rows[k]![c.name] = v
                } else if r < 9 {
                    let k = working.rows.keys.sorted()[Int(rng.next() % UInt64(working.rows.count))]
                    try tx.delete("T", ObjectKey(k))
                    working.rows[k] = nil
                } else {
                    // Read-your-writes inside the transaction.
                    let k = working.rows.keys.sorted()[Int(rng.next() % UInt64(working.rows.count))]
                    #expect(try tx.value("T", ObjectKey(k), "n") == working.rows[k]!["n"]!)
                    #expect(try tx.objectKey("T", primaryKey: working.rows[k]!["id"]!) == ObjectKey(k))
                }
            }
            let action = rng.next() % 20
            if action == 0 {
                tx.cancel()
            } else {
                let s = try tx.commit()
                commits += 1
                committed = working
                try Self.check(s, committed, "seed \(seed) commit \(commits)")
                if action == 1 { frozen.append((s.retained(kind: "frozen"), committed)) }
            }
            if action == 2 {
                store = nil
                store = try Store.open(at: dir.file())
                try Self.check(try store!.snapshot(), committed, "after reopen")
            }
            if action == 3 && frozen.isEmpty {
                try Compactor().compact(store!)
                try Self.check(try store!.snapshot(), committed, "after compaction")
            }
            if frozen.count > 3 {
                let (s, m) = frozen.removeFirst()
                try Self.check(s, m, "frozen v\(s.version)")
            }
        }
        for (s, m) in frozen { try Self.check(s, m, "frozen v\(s.version)") }
        #expect(Verifier().verify(try store!.snapshot()).isClean)
        #expect(commits > 200)
    }
}

import Foundation
import Testing

@testable import RealmStorage

/// Map columns (Spec/FORMAT.md §4.2, §5.2): string-keyed dictionaries stored as counts, keys sorted by
/// bytes, and elements; damaged keys are `.corrupted`, never a crash.
@Suite struct MapColumnTests {
    static func roundTrip(_ type: ColumnType, nullable: Bool = false, _ maps: [[String: StorageValue]]) throws -> SegmentReader {
        var b = ColumnBuffer(type: type, nullable: nullable, isList: false, isMap: true)
        for m in maps {
            try b.validate(.map(m), column: "m")
            b.append(.map(m))
        }
        let bytes = SegmentEncoder.encode(b)
        let r = try SegmentReader(block: ByteView(copying: bytes))
        #expect(r.isMap && !r.isList && r.rowCount == maps.count && r.nullCount == 0)
        for (i, m) in maps.enumerated() {
            let got = try r.value(i)
            #expect(got.bitwiseEquals(.map(m)), "row \(i): \(got) != \(m)")
        }
        let decoded = try r.decodeAll()
        #expect(decoded.isMap && decoded.count == maps.count)
        for (i, m) in maps.enumerated() { #expect(decoded.value(i).bitwiseEquals(.map(m))) }
        return r
    }

    /// Keys whose byte order differs from Swift's `String` order (which compares normalized text).
    static let awkwardKeys = ["", "a", "ab", "b", "é", "e\u{301}x", "éa", "z", "\u{10FFFF}", "\u{0}", "ÿ", "🚀", " "]

    @Test func mapsRoundTripThroughSegments() throws {
        _ = try Self.roundTrip(.int, [])
        _ = try Self.roundTrip(.int, [[:], ["": .int(1)], ["b": .int(2), "a": .int(.min)], [:]])
        _ = try Self.roundTrip(.int, [Dictionary(uniqueKeysWithValues: Self.awkwardKeys.enumerated().map { ($1, .int(Int64($0))) })])
        let many = try Self.roundTrip(
            .int, (0..<3).map { r in Dictionary(uniqueKeysWithValues: (0..<2000).map { ("key-\($0 * 7919 % 2000)", .int(Int64($0 + r))) }) }
        )
        #expect(many.encodings.contains(.lz4))
        let repeated = try Self.roundTrip(.string, (0..<500).map { ["color": .string("red"), "size": .string("s\($0 % 3)")] })
        #expect(repeated.encodings.contains(.bytesDictionary))
        _ = try Self.roundTrip(.string, nullable: true, [["": .null, "a": .string(""), "b": .string("ünï")], [:], ["x": .null]])
        _ = try Self.roundTrip(.double, [["nan": .double(.nan), "neg": .double(-0.0)]])
        _ = try Self.roundTrip(.link, nullable: true, [["a": .link(ObjectKey(3)), "none": .null]])
        let mixed = Dictionary(uniqueKeysWithValues: (MixedValueTests.samples + [.null]).enumerated().map { ("k\($0)", $1) })
        _ = try Self.roundTrip(.mixed, nullable: true, [mixed, [:], ["": .typedLink(table: 7, key: ObjectKey(1))]])
    }

    /// The map example of Spec/FORMAT.md §4.6, byte for byte.
    @Test func theSpecExampleIsExact() throws {
        var b = ColumnBuffer(type: .string, nullable: true, isList: false, isMap: true)
        b.append(.map(["b": .string("x"), "": .null, "a": .string("y")]))
        b.append(.map([:]))
        let hex =
            "52534547050500000200000000000000020200000200000010000000000000000000000000000000030000000000000004000000"
            + "03000000180000000000000000000000000000000100000002000000616200000000000007000000030000000800000000000000"
            + "060000000000000004000000030000001800000000000000000000000000000001000000020000007978000000000000813b034a"
            + "a5eea296"
        #expect(SegmentEncoder.encode(b).map { String(format: "%02x", $0) }.joined() == hex)
    }

    /// An int map segment with one row `entries`, its key blob replaced by `keys` (same length).
    static func patched(_ entries: [String: StorageValue], keys: [UInt8]) throws -> SegmentReader {
        var b = ColumnBuffer(type: .int, nullable: false, isList: false, isMap: true)
        b.append(.map(entries))
        var bytes = SegmentEncoder.encode(b)
        let blob = entries.keys.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }.flatMap { $0 }
        let at = try #require((0...(bytes.count - blob.count)).first { Array(bytes[$0..<$0 + blob.count]) == blob })
        bytes.replaceSubrange(at..<at + keys.count, with: keys)
        return try SegmentReader(block: ByteView(copying: bytes, origin: 70_000))
    }

    @Test func unsortedRepeatedOrInvalidKeysAreCorrupted() throws {
        let two: [String: StorageValue] = ["ab": .int(1), "cd": .int(2)]
        #expect(try Self.patched(two, keys: Array("abcd".utf8)).value(0) == .map(two))
        for keys in [Array("cdab".utf8), Array("abab".utf8), [0xFF, 0xFE] + Array("cd".utf8), Array("ab".utf8) + [0xC3, 0x28]] {
            let seg = try Self.patched(two, keys: keys)
            do {
                _ = try seg.value(0)
                Issue.record("keys \(keys) were accepted")
            } catch let e as StorageError {
                #expect(e.code == .corrupted && (e.offset ?? 0) >= 70_000, "\(e)")
            }
            expectCode(.corrupted) { try seg.decodeAll() }
        }
        // A proper prefix sorts first; the reverse order is corruption.
        let prefix: [String: StorageValue] = ["a": .int(1), "ab": .int(2)]
        #expect(try Self.patched(prefix, keys: Array("aab".utf8)).value(0) == .map(prefix))
        expectCode(.corrupted) { try Self.patched(["ab": .int(1), "b": .int(2)], keys: Array("aba".utf8)).value(0) }
        // Byte-distinct but canonically equivalent keys ("e" + U+0301 and "é") cannot both be a Swift key.
        let equivalent = try Self.patched(["abc": .int(1), "zz": .int(2)], keys: [0x65, 0xCC, 0x81, 0xC3, 0xA9])
        expectCode(.corrupted) { try equivalent.value(0) }
    }

    @Test func malformedMapSegmentsAreCorrupted() throws {
        var b = ColumnBuffer(type: .int, nullable: true, isList: false, isMap: true)
        b.append(.map(["a": .int(1), "b": .null]))
        let good = SegmentEncoder.encode(b)
        #expect(try SegmentReader(block: ByteView(copying: good)).value(0) == .map(["a": .int(1), "b": .null]))
        var listAndMap = good
        listAndMap[5] = 1 | 2 | 4
        expectCode(.corrupted) { try SegmentReader(block: ByteView(copying: listAndMap)) }
        var nulls = good
        nulls[12] = 1
        expectCode(.corrupted) { try SegmentReader(block: ByteView(copying: nulls)) }
        var unknown = good
        unknown[5] = 8 | 4
        expectCode(.corrupted) { try SegmentReader(block: ByteView(copying: unknown)) }
        // Every truncation and every single-byte change of the arrays: a typed error or a value, no trap.
        for n in stride(from: 16, to: good.count, by: 1) {
            do { _ = try SegmentReader(block: ByteView(copying: Array(good.prefix(n)))).decodeAll() } catch is StorageError {}
        }
        for i in 16..<(good.count - 8) {
            for x: UInt8 in [0x01, 0x80, 0xFF] {
                var bytes = good
                bytes[i] ^= x
                do { _ = try SegmentReader(block: ByteView(copying: bytes)).decodeAll() } catch is StorageError {}
            }
        }
    }

    @Test func onlyMapsOfTheColumnsTypeFit() throws {
        let ints = ColumnBuffer(type: .int, nullable: false, isList: false, isMap: true)
        try ints.validate(.map([:]), column: "m")
        for v: StorageValue in [.int(1), .null, .list([]), .map(["a": .null]), .map(["a": .string("x")]), .map(["a": .map([:])])] {
            expectCode(.typeMismatch) { try ints.validate(v, column: "m") }
        }
        let list = ColumnBuffer(type: .int, nullable: false, isList: true)
        expectCode(.typeMismatch) { try list.validate(.map([:]), column: "l") }
        let single = ColumnBuffer(type: .int, nullable: true, isList: false)
        expectCode(.typeMismatch) { try single.validate(.map([:]), column: "s") }
        let mixed = ColumnBuffer(type: .mixed, nullable: true, isList: false)
        expectCode(.typeMismatch) { try mixed.validate(.map([:]), column: "x") }
    }

    static let columns = [
        ColumnSchema("ints", .int, map: true), ColumnSchema("strings", .string, nullable: true, map: true),
        ColumnSchema("anys", .mixed, map: true), ColumnSchema("links", .link, map: true, linkTarget: "T"),
    ]

    static func row(_ i: Int) -> [String: StorageValue] {
        let many = Dictionary(uniqueKeysWithValues: (0..<(i == 3 ? 1000 : i)).map { ("k\($0)", StorageValue.int(Int64($0 * i))) })
        let strings: [String: StorageValue] = i % 2 == 0 ? [:] : ["": .string("empty key"), "null": .null, "s": .string("\(i)")]
        let anys = Dictionary(
            uniqueKeysWithValues: Self.awkwardKeys.enumerated().map { n, k in (k, MixedValueTests.samples[(n + i) % 10]) })
        let links: [String: StorageValue] = ["self": .link(ObjectKey(Int64(i))), "gone": .null]
        return [
            "ints": .map(many), "strings": .map(strings), "anys": .map(i == 5 ? ["t": .typedLink(table: 1, key: ObjectKey(0))] : anys),
            "links": .map(links),
        ]
    }

    @Test func mapsRoundTripThroughCommitReopenAndCompaction() throws {
        let dir = TempDir()
        var store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 4))
        try store.write { tx in
            try tx.createTable("T")
            try tx.insert("T", [:])  // predates the map columns
            for c in Self.columns { try tx.addColumn("T", c) }
            #expect(tx.catalog.table("T")?.column("links")?.isNullable == true)  // a map's links are optional
            for i in 1..<12 { try tx.insert("T", Self.row(i)) }
        }
        let empty = Self.columns.reduce(into: [String: StorageValue]()) { $0[$1.name] = .map([:]) }
        var expected: [Int64: [String: StorageValue]] = [0: empty]
        for i in 1..<12 { expected[Int64(i)] = Self.row(i) }
        func check(_ s: Snapshot, _ context: String) throws {
            #expect(try s.objectKeys("T").map(\.rawValue) == expected.keys.sorted(), "\(context)")
            for (k, r) in expected {
                for (name, v) in r { #expect(try s.value("T", ObjectKey(k), name).bitwiseEquals(v), "\(context): \(k).\(name)") }
            }
            #expect(Verifier().verify(s).isClean, "\(context)")
        }
        try check(try store.snapshot(), "committed")
        store = try Store.open(at: dir.file())
        try check(try store.snapshot(), "reopened")
        try store.write { tx in
            try tx.set("T", ObjectKey(2), "ints", .map(["new": .int(-1)]))
            try tx.set("T", ObjectKey(0), "strings", .map(["": .null]))
            try tx.delete("T", ObjectKey(7))
            expectCode(.notFound) { try tx.set("T", ObjectKey(1), "anys", .map(["t": .typedLink(table: 42, key: ObjectKey(0))])) }
            expectCode(.typeMismatch) { try tx.set("T", ObjectKey(1), "ints", .map(["x": .null])) }
            expectCode(.typeMismatch) { try tx.insert("T", ["links": .list([])]) }
            #expect(try tx.value("T", ObjectKey(2), "ints") == .map(["new": .int(-1)]))
        }
        expected[2]?["ints"] = .map(["new": .int(-1)])
        expected[0]?["strings"] = .map(["": .null])
        expected[7] = nil
        try check(try store.snapshot(), "updated")
        expectCode(.typeMismatch) { try store.snapshot().count("T", whereInt: "ints", .greater(0)) }
        try store.compact()
        try check(try store.snapshot(), "compacted")
        let report = try Inspector().inspect(path: dir.file(), segments: true)
        #expect(report.formatVersion == FileHeader.formatVersion && report.segments.allSatisfy { $0.checksumOK })
    }

    @Test func schemaRules() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true))
        try store.write { tx in
            try tx.createTable("T")
            expectCode(.invalidSchema) { try tx.addColumn("T", ColumnSchema("both", .int, list: true, map: true)) }
            expectCode(.invalidSchema) { try tx.addColumn("T", ColumnSchema("both", .int, set: true, map: true)) }
            expectCode(.invalidSchema) { try tx.addColumn("T", ColumnSchema("indexed", .string, map: true, indexed: true)) }
            expectCode(.invalidSchema) { try tx.createTable("P", primaryKey: ColumnSchema("id", .string, map: true)) }
            expectCode(.invalidSchema) { try tx.addColumn("T", ColumnSchema("links", .link, map: true)) }  // no target
            try tx.addColumn("T", ColumnSchema("m", .int, map: true))
        }
        var cat = Catalog()
        var t = TableSchema(id: 1, name: "T")
        var c = ColumnSchema("m", .int, map: true)
        c.id = 1
        t.columns = [c]
        t.nextColumnId = 2
        cat.tables = [t]
        cat.nextTableId = 2
        func decode(formatVersion: UInt32, flags: UInt8? = nil, primaryKey: Bool = false) throws -> Catalog {
            var copy = cat
            if primaryKey { copy.tables[0].primaryKey = "m" }
            var w = ByteWriter()
            copy.encode(into: &w)
            var bytes = w.bytes
            if let flags { bytes[bytes.count - 5] = flags }  // the column's flags, before its u32 link target
            var r = BlockReader(ByteView(copying: bytes))
            return try Catalog.decode(&r, formatVersion: formatVersion)
        }
        #expect(try decode(formatVersion: 2) == cat)
        #expect(try decode(formatVersion: 2, flags: 16 | 1).table("T")?.column("m")?.isNullable == true)
        expectCode(.corrupted) { try decode(formatVersion: 1) }
        expectCode(.corrupted) { try decode(formatVersion: 2, flags: 16 | 2) }
        expectCode(.corrupted) { try decode(formatVersion: 2, flags: 16 | 4) }
        expectCode(.corrupted) { try decode(formatVersion: 2, flags: 32) }
        expectCode(.corrupted) { try decode(formatVersion: 2, primaryKey: true) }
    }
}

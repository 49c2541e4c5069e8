import Foundation
import Testing

@testable import RealmStorage

/// Set columns (Spec/FORMAT.md §5.2): list columns whose lists hold no two equal elements, equality
/// being the stored form's (floats by bit pattern, strings by UTF-8 bytes).
@Suite struct SetColumnTests {
    @Test func duplicatesAreRejectedByTheStoredFormsEquality() throws {
        func check(_ type: ColumnType, nullable: Bool = false, _ elements: [StorageValue], unique: Bool) {
            let b = ColumnBuffer(type: type, nullable: nullable, isList: true, isSet: true)
            if unique {
                #expect(throws: Never.self, "\(elements)") { try b.validate(.list(elements), column: "s") }
            } else {
                expectCode(.typeMismatch) { try b.validate(.list(elements), column: "s") }
            }
            // A plain list takes duplicates.
            let l = ColumnBuffer(type: type, nullable: nullable, isList: true)
            #expect(throws: Never.self) { try l.validate(.list(elements), column: "l") }
        }
        check(.int, [], unique: true)
        check(.int, [.int(1), .int(2), .int(.min)], unique: true)
        check(.int, [.int(1), .int(2), .int(1)], unique: false)
        check(.int, nullable: true, [.null, .int(0)], unique: true)
        check(.int, nullable: true, [.null, .int(0), .null], unique: false)
        check(.double, [.double(0), .double(-0.0)], unique: true)
        check(.double, [.double(.nan), .double(.nan)], unique: false)
        check(.double, [.double(.nan), .double(Double(bitPattern: Double.nan.bitPattern | 1))], unique: true)
        check(.float, [.float(.nan), .float(1), .float(.nan)], unique: false)
        check(.string, [.string("é"), .string("e\u{301}")], unique: true)  // canonically equivalent, other bytes
        check(.string, [.string(""), .string("a"), .string("")], unique: false)
        check(.binary, [.binary([]), .binary([0])], unique: true)
        check(.timestamp, [.timestamp(seconds: 1, nanoseconds: 2), .timestamp(seconds: 1, nanoseconds: 2)], unique: false)
        check(.link, [.link(ObjectKey(1)), .link(ObjectKey(1))], unique: false)
        check(.mixed, nullable: true, [.int(1), .double(1), .string("1"), .bool(true), .null], unique: true)
        check(.mixed, nullable: true, [.double(.nan), .float(.nan), .double(.nan)], unique: false)
        check(
            .mixed, nullable: true, [.typedLink(table: 1, key: ObjectKey(2)), .typedLink(table: 2, key: ObjectKey(2))],
            unique: true)
        check(.mixed, nullable: true, [.typedLink(table: 1, key: ObjectKey(2)), .typedLink(table: 1, key: ObjectKey(2))], unique: false)
    }

    @Test func aSetIsAListInTheCatalogAndTheSegments() throws {
        let c = ColumnSchema("s", .int, set: true)
        #expect(c.isList && c.isSet)
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true))
        try store.write { tx in
            try tx.createTable("T")
            try tx.addColumn("T", c)
            try tx.addColumn("T", ColumnSchema("l", .int, list: true))
            var notAList = ColumnSchema("bad", .int)
            notAList.isSet = true
            expectCode(.invalidSchema) { try tx.addColumn("T", notAList) }
            expectCode(.invalidSchema) { try tx.addColumn("T", ColumnSchema("idx", .string, set: true, indexed: true)) }
            try tx.insert("T", ["s": .list([.int(3), .int(1)])])
        }
        let s = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        #expect(s.catalog.table("T")?.column("s")?.isSet == true)
        #expect(s.catalog.table("T")?.column("l")?.isSet == false)
        let group = try s.rowGroup(try s.rowGroups("T")[0].block)
        let id = try #require(s.catalog.table("T")?.column("s")?.id)
        let segment = try s.segment(try #require(group.columns[id]))
        #expect(segment.isList)
        #expect(try s.value("T", ObjectKey(0), "s") == .list([.int(3), .int(1)]))
    }

    @Test func setsRoundTripThroughCommitReopenAndCompaction() throws {
        let dir = TempDir()
        var store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 4))
        let columns = [
            ColumnSchema("ints", .int, set: true), ColumnSchema("strings", .string, nullable: true, set: true),
            ColumnSchema("doubles", .double, set: true), ColumnSchema("anys", .mixed, set: true),
            ColumnSchema("links", .link, set: true, linkTarget: "T"),
        ]
        func row(_ i: Int) -> [String: StorageValue] {
            let ints: [StorageValue] = (0..<i).map { .int(Int64($0 * 7 % 20)) }
            let strings: [StorageValue] = [.null, .string(""), .string("é"), .string("e\u{301}"), .string("s\(i)")]
            let doubles: [StorageValue] = [.double(.nan), .double(0), .double(-0.0), .double(Double(i) + 1)]
            let anys: [StorageValue] = [.int(1), .double(1), .null, .string("x\(i)"), .typedLink(table: 1, key: ObjectKey(Int64(i)))]
            let links: [StorageValue] = [.link(ObjectKey(Int64(i) + 1)), .link(ObjectKey(0))]
            return [
                "ints": .list(ints), "strings": .list(i % 3 == 0 ? [] : strings), "doubles": .list(Array(doubles.prefix(i % 5))),
                "anys": .list(anys), "links": .list(Array(links.prefix(i == 0 ? 1 : 2))),
            ]
        }
        let rows = (0..<20).map(row)
        try store.write { tx in
            try tx.createTable("T")
            for c in columns { try tx.addColumn("T", c) }
            for r in rows { try tx.insert("T", r) }
        }
        func check(_ s: Snapshot, _ context: String) throws {
            for (i, r) in rows.enumerated() {
                for (name, v) in r { #expect(try s.value("T", ObjectKey(Int64(i)), name).bitwiseEquals(v), "\(context): \(i).\(name)") }
            }
            #expect(Verifier().verify(s).isClean, "\(context)")
        }
        try check(try store.snapshot(), "committed")
        store = try Store.open(at: dir.file())
        try check(try store.snapshot(), "reopened")
        // Duplicates are refused on stored rows too (the column is decoded as a set).
        try store.write { tx in
            expectCode(.typeMismatch) { try tx.set("T", ObjectKey(5), "ints", .list([.int(1), .int(1)])) }
            expectCode(.typeMismatch) { try tx.set("T", ObjectKey(5), "doubles", .list([.double(.nan), .double(.nan)])) }
            expectCode(.typeMismatch) { try tx.insert("T", ["anys": .list([.string("a"), .string("a")])]) }
            try tx.set("T", ObjectKey(5), "ints", .list([.int(2), .int(1)]))
            try tx.delete("T", ObjectKey(6))
        }
        var expected = rows
        expected[5]["ints"] = .list([.int(2), .int(1)])
        try store.compact()
        let s = try store.snapshot()
        #expect(try s.value("T", ObjectKey(5), "ints") == .list([.int(2), .int(1)]))
        #expect(try s.contains("T", ObjectKey(6)) == false)
        for (i, r) in expected.enumerated() where i != 6 {
            for (name, v) in r { #expect(try s.value("T", ObjectKey(Int64(i)), name).bitwiseEquals(v), "compacted: \(i).\(name)") }
        }
        #expect(Verifier().verify(s).isClean)
    }

    @Test func readersRejectBadSetFlagsAndTheVerifierDuplicates() throws {
        var cat = Catalog()
        var t = TableSchema(id: 1, name: "T")
        var c = ColumnSchema("s", .int, set: true)
        c.id = 1
        t.columns = [c]
        t.nextColumnId = 2
        cat.tables = [t]
        cat.nextTableId = 2
        func decode(formatVersion: UInt32, flags: UInt8? = nil) throws -> Catalog {
            var w = ByteWriter()
            cat.encode(into: &w)
            var bytes = w.bytes
            // The column's flags byte: after its name "s" and its type byte.
            if let flags { bytes[bytes.count - 5] = flags }
            var r = BlockReader(ByteView(copying: bytes))
            return try Catalog.decode(&r, formatVersion: formatVersion)
        }
        #expect(try decode(formatVersion: 2) == cat)
        expectCode(.corrupted) { try decode(formatVersion: 1) }
        expectCode(.corrupted) { try decode(formatVersion: 2, flags: 8) }
        expectCode(.corrupted) { try decode(formatVersion: 2, flags: 16 | 8 | 2) }
        #expect(try decode(formatVersion: 2, flags: 2).table("T")?.column("s")?.isSet == false)
        expectCode(.corrupted) { try Verifier().checkValue(.list([.int(1), .int(2), .int(1)]), c, cat, at: 0) }
        try Verifier().checkValue(.list([.int(1), .int(2)]), c, cat, at: 0)
    }
}

import Foundation
import Testing

@testable import RealmStorage

/// Mixed columns (Spec/FORMAT.md §4.7): every tag round-trips through segments, commits, reopening
/// and compaction; a damaged item is `.corrupted`, never a crash.
@Suite struct MixedValueTests {
    /// At least one value per tag, with the edges of each.
    static let samples: [StorageValue] = [
        .int(0), .int(.min), .int(.max), .bool(false), .bool(true),
        .float(.nan), .float(-0.0), .float(.infinity), .float(.leastNonzeroMagnitude),
        .double(.nan), .double(-0.0), .double(-.greatestFiniteMagnitude), .double(Double(bitPattern: 0x7FF0_0000_0000_0001)),
        .string(""), .string("grüße ✓ 🚀"), .string(String(repeating: "long ", count: 2000)),
        .binary([]), .binary([0]), .binary([UInt8](repeating: 0xAB, count: 5000)),
        .timestamp(seconds: .min, nanoseconds: -999_999_999), .timestamp(seconds: .max, nanoseconds: 999_999_999),
        .timestamp(seconds: 0, nanoseconds: 0),
        .objectId([UInt8](repeating: 0, count: 12)), .objectId(Array(100..<112)),
        .uuid(UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!),
        .decimal128(low: 0, high: 0x3040_0000_0000_0000), .decimal128(low: .max, high: .max),
        .typedLink(table: 1, key: ObjectKey(0)), .typedLink(table: .max, key: ObjectKey(.max)),
    ]

    @Test func everyTagRoundTripsThroughASegment() throws {
        _ = try SegmentEncodingTests.roundTrip(.mixed, nullable: true, Self.samples + [.null] + Self.samples.reversed())
        _ = try SegmentEncodingTests.roundTrip(.mixed, nullable: true, [])
        _ = try SegmentEncodingTests.roundTrip(.mixed, nullable: true, Array(repeating: .null, count: 70))
        // Repeated values take the dictionary; long repetitive ones LZ4.
        let dict = try SegmentEncodingTests.roundTrip(.mixed, nullable: true, (0..<3000).map { Self.samples[$0 % 4] })
        #expect(dict.encodings.contains(.bytesDictionary))
        let compressed = try SegmentEncodingTests.roundTrip(.mixed, nullable: true, (0..<3000).map { .string("item-\($0 % 1500)") })
        #expect(compressed.encodings.contains(.lz4))
        _ = try SegmentEncodingTests.roundTrip(
            .mixed, nullable: true, list: true, [.list(Self.samples + [.null]), .list([]), .list([.null, .int(1), .double(1)])])
    }

    /// The example of Spec/FORMAT.md §4.7, byte for byte.
    @Test func theSpecExampleIsExact() throws {
        var b = ColumnBuffer(type: .mixed, nullable: true, isList: false)
        for v: StorageValue in [.int(7), .null, .string("hé"), .typedLink(table: 3, key: ObjectKey(5))] { b.append(v) }
        let hex =
            "525345470c0100000400000001000000070000000400000008000000000000000d000000000000000400000004000000"
            + "38000000000000000000000009000000090000000d0000001a000000000000000107000000000000000568c3a90b030000"
            + "00050000000000000000000000000045cd14997014b928"
        #expect(SegmentEncoder.encode(b).map { String(format: "%02x", $0) }.joined() == hex)
    }

    /// A segment whose (binary) items are `items`, relabelled as a mixed segment.
    static func mixedSegment(_ items: [[UInt8]], list: Bool = false) throws -> SegmentReader {
        var b = ColumnBuffer(type: .binary, nullable: true, isList: list)
        b.append(list ? .list(items.map { .binary($0) }) : .binary(items[0]))
        for item in items.dropFirst() where !list { b.append(.binary(item)) }
        var bytes = SegmentEncoder.encode(b)
        bytes[4] = ColumnType.mixed.rawValue
        return try SegmentReader(block: ByteView(copying: bytes, origin: 50_000))
    }

    @Test func damagedItemsAreCorrupted() throws {
        let bad: [[UInt8]] = [
            [], [0], [12], [255], [1, 0, 0], [1] + [UInt8](repeating: 0, count: 9), [2], [2, 2], [2, 1, 0], [3, 0, 0, 0],
            [4] + [UInt8](repeating: 0, count: 7), [5, 0xFF, 0xFE], [5, 0x61, 0xC3], [5, 0xED, 0xA0, 0x80],
            [7] + [UInt8](repeating: 0, count: 11), [8] + [UInt8](repeating: 0, count: 13), [9] + [UInt8](repeating: 0, count: 15),
            [10] + [UInt8](repeating: 0, count: 17), [11] + [UInt8](repeating: 0, count: 11),
        ]
        for item in bad {
            let good = MixedValue.encode(.int(1))
            let seg = try Self.mixedSegment([good, item, good])
            #expect(try seg.value(0) == .int(1))
            do {
                _ = try seg.value(1)
                Issue.record("item \(item) was accepted")
            } catch let e as StorageError {
                #expect(e.code == .corrupted, "\(item): \(e)")
                #expect((e.offset ?? 0) >= 50_000, "\(item): \(e)")
            }
            expectCode(.corrupted) { try seg.decodeAll() }
            let list = try Self.mixedSegment([good, item], list: true)
            expectCode(.corrupted) { try list.value(0) }
        }
        // The edges that are valid: an empty string and an empty binary.
        let edges = try Self.mixedSegment([[5], [6], [2, 0], [5, 0xC3, 0xA9]])
        #expect(try edges.decodeAll().count == 4)
        #expect(try edges.value(0) == .string("") && edges.value(1) == .binary([]) && edges.value(3) == .string("é"))
    }

    @Test func onlyScalarsAndTypedLinksFitAMixedColumn() throws {
        let b = ColumnBuffer(type: .mixed, nullable: true, isList: false)
        for v in Self.samples + [.null] { try b.validate(v, column: "m") }
        for v: StorageValue in [.link(ObjectKey(1)), .list([.int(1)]), .objectId([1, 2, 3])] {
            #expect(throws: StorageError.self) { try b.validate(v, column: "m") }
        }
        let ints = ColumnBuffer(type: .int, nullable: true, isList: false)
        #expect(throws: StorageError.self) { try ints.validate(.typedLink(table: 1, key: ObjectKey(0)), column: "i") }
        let links = ColumnBuffer(type: .link, nullable: true, isList: false)
        #expect(throws: StorageError.self) { try links.validate(.typedLink(table: 1, key: ObjectKey(0)), column: "l") }
        let list = ColumnBuffer(type: .mixed, nullable: true, isList: true)
        try list.validate(.list(Self.samples + [.null]), column: "ml")
        #expect(throws: StorageError.self) { try list.validate(.list([.list([])]), column: "ml") }
    }

    /// Creates `Target` and `M` (a mixed column `any` and a list of mixed `anys`) in a new store.
    static func makeStore(_ dir: TempDir) throws -> Store {
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 8))
        let tx = try store.beginWrite()
        try tx.createTable("Target")
        try tx.createTable("M", primaryKey: ColumnSchema("id", .int))
        try tx.addColumn("M", ColumnSchema("any", .mixed))
        try tx.addColumn("M", ColumnSchema("anys", .mixed, list: true))
        try tx.commit()
        return store
    }

    /// Regression (Operations fuzzer): links and typed links with a negative key were written, and
    /// the Verifier then reported the committed file as corrupted.
    @Test func negativeLinkKeysAreRefused() throws {
        let dir = TempDir()
        let store = try Self.makeStore(dir)
        let target = try store.snapshot().catalog.table("Target")!.id
        try store.write { tx in
            try tx.addColumn("M", ColumnSchema("link", .link, nullable: true, linkTarget: "Target"))
            try tx.addColumn("M", ColumnSchema("links", .link, list: true, linkTarget: "Target"))
            expectCode(.notFound) { try tx.insert("M", ["id": .int(1), "any": .typedLink(table: target, key: ObjectKey(-12))]) }
            expectCode(.notFound) {
                try tx.insert("M", ["id": .int(2), "anys": .list([.int(1), .typedLink(table: target, key: ObjectKey(-1))])])
            }
            expectCode(.notFound) { try tx.insert("M", ["id": .int(3), "link": .link(ObjectKey(-3))]) }
            expectCode(.notFound) { try tx.insert("M", ["id": .int(4), "links": .list([.link(ObjectKey(-4))])]) }
            let key = try tx.insert("M", ["id": .int(5), "any": .typedLink(table: target, key: ObjectKey(0))])
            expectCode(.notFound) { try tx.set("M", key, "any", .typedLink(table: target, key: ObjectKey(-5))) }
            #expect(try tx.objectCount("M") == 1)
        }
        #expect(Verifier().verify(try store.snapshot()).isClean)
    }

    @Test func mixedColumnsRoundTripThroughCommitReopenAndCompaction() throws {
        let dir = TempDir()
        var store = try Self.makeStore(dir)
        let target = try #require(try store.snapshot().catalog.table("Target")?.id)
        // Typed links must name a table of the store.
        let scalars = Self.samples.filter { if case .typedLink = $0 { false } else { true } }
        let values = scalars + [.null, .typedLink(table: target, key: ObjectKey(3)), .typedLink(table: target, key: ObjectKey(.max))]
        let old = try store.write { tx in
            for (i, v) in values.enumerated() {
                try tx.insert("M", ["id": .int(Int64(i)), "any": v, "anys": .list(Array(values[i...].prefix(3)))])
            }
            let old = try tx.insert("M", ["id": .int(-1)])
            try tx.set("M", old, "any", .string("set later"))
            return old
        }
        let check = { (s: Snapshot, context: String) in
            for (i, v) in values.enumerated() {
                let k = try #require(try s.objectKey("M", primaryKey: .int(Int64(i))))
                #expect(try s.value("M", k, "any").bitwiseEquals(v), "\(context): row \(i)")
                #expect(try s.value("M", k, "anys").bitwiseEquals(.list(Array(values[i...].prefix(3)))), "\(context): list \(i)")
            }
            #expect(try s.value("M", old, "any") == .string("set later"), "\(context)")
            #expect(try s.value("M", old, "anys") == .list([]), "\(context)")
            #expect(Verifier().verify(s).isClean, "\(context)")
        }
        try check(try store.snapshot(), "committed")
        store = try Store.open(at: dir.file())
        try check(try store.snapshot(), "reopened")
        try store.compact()
        try check(try store.snapshot(), "compacted")
        let inspected = try Inspector().inspect(path: dir.file(), segments: true)
        #expect(inspected.segments.allSatisfy { $0.checksumOK })
        #expect(inspected.catalog.table("M")?.column("any")?.type == .mixed)
    }

    @Test func schemaRules() throws {
        let dir = TempDir()
        let store = try Self.makeStore(dir)
        let tx = try store.beginWrite()
        // Always nullable, never indexed, never a primary key.
        #expect(tx.catalog.table("M")?.column("any")?.isNullable == true)
        expectCode(.invalidSchema) { try tx.addColumn("M", ColumnSchema("indexed", .mixed, indexed: true)) }
        expectCode(.invalidSchema) { try tx.createTable("P", primaryKey: ColumnSchema("id", .mixed)) }
        // Typed links name existing tables; plain links and collections are no mixed values.
        expectCode(.notFound) { try tx.insert("M", ["id": .int(1), "any": .typedLink(table: 99, key: ObjectKey(0))]) }
        expectCode(.notFound) { try tx.insert("M", ["id": .int(1), "anys": .list([.typedLink(table: 99, key: ObjectKey(0))])]) }
        expectCode(.typeMismatch) { try tx.insert("M", ["id": .int(1), "any": .link(ObjectKey(0))]) }
        let k = try tx.insert("M", ["id": .int(1)])
        expectCode(.notFound) { try tx.set("M", k, "any", .typedLink(table: 99, key: ObjectKey(0))) }
        expectCode(.typeMismatch) { try tx.set("M", k, "any", .list([])) }
        #expect(try tx.value("M", k, "any") == .null)
    }

    @Test func catalogRulesAreCheckedByReaders() throws {
        var cat = Catalog()
        var t = TableSchema(id: 1, name: "T")
        var c = ColumnSchema("m", .mixed, nullable: true)
        c.id = 1
        t.columns = [c]
        t.nextColumnId = 2
        cat.tables = [t]
        cat.nextTableId = 2
        func decode(_ cat: Catalog, formatVersion: UInt32, patch: ((inout [UInt8]) -> Void)? = nil) throws -> Catalog {
            var w = ByteWriter()
            cat.encode(into: &w)
            var bytes = w.bytes
            patch?(&bytes)
            var r = BlockReader(ByteView(copying: bytes))
            return try Catalog.decode(&r, formatVersion: formatVersion)
        }
        #expect(try decode(cat, formatVersion: 2) == cat)
        expectCode(.corrupted) { try decode(cat, formatVersion: 1) }
        // The flags byte of the only column follows its type byte (type 12 is unique in these bytes).
        let flagsAt = { (b: [UInt8]) in b.firstIndex(of: ColumnType.mixed.rawValue)! + 1 }
        expectCode(.corrupted) { try decode(cat, formatVersion: 2) { $0[flagsAt($0)] = 0 } }
        expectCode(.corrupted) { try decode(cat, formatVersion: 2) { $0[flagsAt($0)] = 1 | 4 } }
        cat.tables[0].primaryKey = "m"
        expectCode(.corrupted) { try decode(cat, formatVersion: 2) }
    }

    /// A damaged item in a committed file: reads and the verifier report it, nothing traps.
    @Test func aDamagedItemInAFileIsReported() throws {
        let dir = TempDir()
        let store = try Self.makeStore(dir)
        let tx = try store.beginWrite()
        let k = try tx.insert("M", ["id": .int(0), "any": .string("MARKER-MARKER")])
        try tx.commit()
        // A later commit, so the damaged segment is not in the newest commit's region.
        let tx2 = try store.beginWrite()
        try tx2.insert("Target", [:])
        try tx2.commit()
        let s = try store.snapshot()
        let group = try s.rowGroup(try s.rowGroups("M")[0].block)
        let column = try #require(s.catalog.table("M")?.column("any"))
        let ref = try #require(group.columns[column.id])
        let bytes = fileBytes(dir.file())
        let segment = Int(ref.offset)..<Int(ref.offset + ref.length)
        let marker = Array("MARKER-MARKER".utf8)
        let at = try #require(
            (segment.lowerBound..<segment.upperBound - marker.count).first { Array(bytes[$0..<$0 + marker.count]) == marker })
        for (tag, payload) in [(UInt8(99), nil), (MixedValue.Tag.int.rawValue, nil), (MixedValue.Tag.string.rawValue, UInt8(0xFF))] {
            var damaged = bytes
            damaged[at - 1] = tag
            if let payload { damaged[at] = payload }
            // Re-seal the segment so only the item's own validation can catch the damage.
            let sum = XXH64.hash(Array(damaged[segment.lowerBound..<segment.upperBound - 8]))
            for i in 0..<8 { damaged[segment.upperBound - 8 + i] = UInt8(truncatingIfNeeded: sum >> (8 * UInt64(i))) }
            let path = dir.file("damaged-\(tag).realm")
            _ = FileManager.default.createFile(atPath: path, contents: Data(damaged))
            let snapshot = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
            expectCode(.corrupted) { try snapshot.value("M", k, "any") }
            let report = Verifier().verify(snapshot)
            #expect(report.problems.contains { $0.offset.map { segment.contains(Int($0)) } ?? false }, "\(report.problems)")
        }
    }
}

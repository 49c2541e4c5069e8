import Foundation
import Testing

@testable import RealmStorage

@Suite struct SegmentEncodingTests {
    static func roundTrip(_ type: ColumnType, nullable: Bool = false, list: Bool = false, _ values: [StorageValue]) throws -> SegmentReader
    {
        var b = ColumnBuffer(type: type, nullable: nullable, isList: list)
        for v in values {
            try b.validate(v, column: "c")
            b.append(v)
        }
        let bytes = SegmentEncoder.encode(b)
        #expect(bytes.count % 8 == 0)
        let view = ByteView(copying: bytes)
        #expect(try view.checksum(0, bytes.count - 8) == view.u64(bytes.count - 8))
        let r = try SegmentReader(block: view)
        #expect(r.rowCount == values.count)
        for (i, v) in values.enumerated() {
            let got = try r.value(i)
            #expect(got.bitwiseEquals(v), "row \(i): \(got) != \(v)")
        }
        let decoded = try r.decodeAll()
        #expect(decoded.count == values.count)
        if !list { try checkTypedReads(r, type, values) }
        return r
    }

    /// The typed reads of the accessors' fast path agree with ``SegmentReader/value(_:)`` row by
    /// row, and refuse a lane of another type.
    static func checkTypedReads(_ r: SegmentReader, _ type: ColumnType, _ values: [StorageValue]) throws {
        for (i, v) in values.enumerated() {
            switch (type, v) {
            case (.int, .int(let x)): #expect(try r.int(i) == x)
            case (.bool, .bool(let x)): #expect(try r.int(i) == (x ? 1 : 0))
            case (.double, .double(let x)): #expect(try r.double(i)?.bitPattern == x.bitPattern)
            case (.float, .float(let x)): #expect(try r.float(i)?.bitPattern == x.bitPattern)
            case (.string, .string(let x)): #expect(try r.string(i) == x)
            case (.int, .null), (.bool, .null): #expect(try r.int(i) == nil)
            case (.double, .null): #expect(try r.double(i) == nil)
            case (.float, .null): #expect(try r.float(i) == nil)
            case (.string, .null): #expect(try r.string(i) == nil)
            default: break
            }
        }
        // The owner-free cursor answers the same, or nil (null rows, other lanes, out of range).
        let c = r.cursor
        for (i, v) in values.enumerated() {
            switch (type, v) {
            case (.int, .int(let x)): #expect(c.int(i) == x)
            case (.bool, .bool(let x)): #expect(c.int(i) == (x ? 1 : 0))
            case (.double, .double(let x)): #expect(c.double(i)?.bitPattern == x.bitPattern)
            case (.float, .float(let x)): #expect(c.float(i)?.bitPattern == x.bitPattern)
            case (.string, .string(let x)): #expect(c.string(i) == x)
            case (_, .null): #expect(c.int(i) == nil && c.double(i) == nil && c.float(i) == nil && c.string(i) == nil)
            default: break
            }
            if type != .string { #expect(c.string(i) == nil) }
            if type != .double { #expect(c.double(i) == nil) }
            if type != .float { #expect(c.float(i) == nil) }
        }
        for row in [-1, values.count, Int.max] {
            #expect(c.int(row) == nil && c.double(row) == nil && c.float(row) == nil && c.string(row) == nil)
        }
        guard !values.isEmpty else { return }
        if type != .string { expectCode(.typeMismatch) { _ = try r.string(0) } }
        if type != .double { expectCode(.typeMismatch) { _ = try r.double(0) } }
        if type != .float { expectCode(.typeMismatch) { _ = try r.float(0) } }
        if [.string, .binary, .double, .float, .decimal128, .uuid, .objectId, .timestamp].contains(type) {
            expectCode(.typeMismatch) { _ = try r.int(0) }
        }
        expectCode(.notFound) { _ = try r.int(values.count) }
        expectCode(.notFound) { _ = try r.string(-1) }
    }

    /// A string segment whose offsets were damaged behind its checksum: the typed read (in place)
    /// throws `.corrupted` like the checked path, never reads outside the blob.
    @Test func damagedStringOffsetsThrow() throws {
        var b = ColumnBuffer(type: .string, nullable: false, isList: false)
        for v in ["abc", "de", "f"] { b.append(.string(v)) }
        var bytes = SegmentEncoder.encode(b)
        // Segment header (16 bytes), array header (16), then the offsets 0, 3, 5, 6.
        #expect(bytes[32..<48].elementsEqual([0, 0, 0, 0, 3, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0]))
        #expect(try SegmentReader(block: ByteView(copying: bytes)).string(1) == "de")
        bytes[36] = 200
        let r = try SegmentReader(block: ByteView(copying: bytes))
        expectCode(.corrupted) { try r.string(0) }
        expectCode(.corrupted) { try r.string(1) }
        #expect(try r.string(2) == "f")
    }

    /// Every single-byte damage to an int, double or string segment (plain, packed, offsets,
    /// dictionary) that still parses: each typed read and its cursor either agree with the checked
    /// read of the row or decline (the cursor with nil, the typed read by throwing) — none traps or
    /// reads outside the segment.
    @Test func typedReadsOfDamagedSegmentsAgreeOrDecline() throws {
        let columns: [(ColumnType, Bool, [StorageValue])] = [
            (.int, false, (0..<40).map { .int(Int64($0 % 5) * 3) }),
            (.int, true, (0..<40).map { $0 % 4 == 0 ? .null : .int(Int64($0) - 20) }),
            (.double, true, (0..<20).map { $0 % 3 == 0 ? .null : .double(Double($0) / 3) }),
            (.string, false, (0..<40).map { .string("c\($0 % 3)") }),
            (.string, true, (0..<12).map { $0 % 5 == 0 ? .null : .string("s\($0 * 31)") }),
        ]
        for (type, nullable, values) in columns {
            var b = ColumnBuffer(type: type, nullable: nullable, isList: false)
            for v in values { b.append(v) }
            let bytes = SegmentEncoder.encode(b)
            for at in 0..<(bytes.count - 8) {
                for flip: UInt8 in [0x01, 0x80, 0xFF] {
                    var damaged = bytes
                    damaged[at] ^= flip
                    guard let r = try? SegmentReader(block: ByteView(copying: damaged)) else { continue }
                    let c = r.cursor
                    for row in 0..<r.rowCount {
                        let checked = try? r.value(row)
                        switch type {
                        case .int:
                            if let v = c.int(row) { #expect(checked == .int(v)) }
                            if let v = try? r.int(row) as Int64?? { #expect(checked == (v.map { .int($0) } ?? .null)) }
                        case .double:
                            if let v = c.double(row) { #expect(checked?.bitwiseEquals(.double(v)) == true) }
                        default:
                            if let v = c.string(row) { #expect(checked == .string(v)) }
                            if let v = try? r.string(row) as String?? { #expect(checked == (v.map { .string($0) } ?? .null)) }
                        }
                    }
                }
            }
        }
    }

    /// The lane cursors' searches (row-group keys, index hashes) agree with a linear scan, with
    /// and without gaps, with repeated values and at the extremes (their first guess must never
    /// stand in for the search's answer when it is wrong).
    @Test func laneSearchesMatchALinearScan() throws {
        let lanes: [[Int64]] = [
            [], [5], Array(0..<300), Array(10..<20) + Array(25..<40), [.min, -5, -4, 0, 7, 8, 9, .max],
            [1, 2, 2, 2, 5, 6, 6], (0..<200).map { $0 * 3 },
        ]
        for lane in lanes {
            let r = try Self.roundTrip(.int, lane.map { .int($0) })
            let c = lane.isEmpty ? LaneCursor.empty : r.integers!.cursor
            var probes: [Int64] = [.min, .min + 1, -1, 0, 1, 2, 3, 6, 7, 12, 21, 300, .max - 1, .max]
            probes += lane
            for v in probes {
                if Set(lane).count == lane.count { #expect(c.sortedIndex(of: v) == lane.firstIndex(of: v)) }
                let h = UInt64(bitPattern: v)
                let sortedUnsigned = lane.allSatisfy { $0 >= 0 } || lane.allSatisfy { $0 < 0 }
                if sortedUnsigned { #expect(c.unsignedLowerBound(h) == (lane.firstIndex { UInt64(bitPattern: $0) >= h } ?? lane.count)) }
            }
        }
    }

    @Test func integersAtTheEdges() throws {
        _ = try Self.roundTrip(.int, [])
        _ = try Self.roundTrip(.int, [.int(42)])
        let extremes = try Self.roundTrip(.int, [.int(.min), .int(.max), .int(0), .int(-1)])
        #expect(extremes.encodings == [.intPlain])
        let constant = try Self.roundTrip(.int, Array(repeating: .int(7), count: 1000))
        #expect(constant.encodings == [.intPacked])
        var rng = SplitMix(seed: 3)
        for width in [1, 2, 4, 8, 16, 32] {
            let top = UInt64(1) << UInt64(width) - 1
            // Random values spanning exactly `width` bits (first 0, last top) so no linear fit helps.
            let middle = (0..<298).map { _ in StorageValue.int(Int64.min + 5 + Int64(rng.next() % (top + 1))) }
            let r = try Self.roundTrip(.int, [.int(Int64.min + 5 + Int64(top))] + middle + [.int(Int64.min + 5)])
            #expect(r.encodings == [.intPacked], "width \(width)")
        }
        let sequence = try Self.roundTrip(.int, (0..<4096).map { .int(1_000_000 + Int64($0)) })
        #expect(sequence.encodings == [.intLinear])
        _ = try Self.roundTrip(.int, (0..<500).map { .int(-7 * Int64($0) + Int64($0 % 3)) })
        _ = try Self.roundTrip(.int, [.int(.min), .int(0), .int(.max)])
        _ = try Self.roundTrip(.int, (0..<100).map { .int(Int64.max - Int64($0) * (Int64.max / 100)) })
        _ = try Self.roundTrip(.int, nullable: true, [.null, .null, .null])
        _ = try Self.roundTrip(.bool, nullable: true, [.bool(true), .null, .bool(false)])
        _ = try Self.roundTrip(.link, nullable: true, [.link(ObjectKey(3)), .null])
    }

    /// A lane decoded whole (a segment loaded into a column buffer) holds what reading it one value
    /// at a time gives: at every width (the byte-aligned ones have loops of their own), across
    /// word boundaries, with and without a line, and for plain lanes.
    @Test func lanesDecodedWholeMatchReadingOneByOne() throws {
        var rng = SplitMix(seed: 29)
        for width in 0...64 {
            for count in [0, 1, 2, 3, 7, 63, 64, 65, 200, 4097] {
                let top = width == 64 ? UInt64.max : (UInt64(1) << UInt64(width)) - 1
                let raw = (0..<count).map { _ in rng.next() & top }
                var words = [UInt64](repeating: 0, count: PackedIntArray.wordCount(count: count, width: width))
                for (i, v) in raw.enumerated() where width > 0 {
                    let bit = i * width
                    words[bit / 64] |= v << UInt64(bit % 64)
                    if bit % 64 + width > 64 { words[bit / 64 + 1] |= v >> UInt64(64 - bit % 64) }
                }
                let bytes = words.flatMap { w in (0..<8).map { UInt8(truncatingIfNeeded: w >> UInt64(8 * $0)) } }
                let view = ByteView(copying: bytes)
                let lines: [(reference: Int64, slope: Int64)] = [(0, 0), (-41, 3), (.min, 1), (.max, -7)]
                for line in lines {
                    let lane = IntegerLane.packed(
                        try view.packedArray(0, count: count, width: width, reference: line.reference, slope: line.slope))
                    let expected = raw.enumerated().map { i, v in line.reference &+ Int64(i) &* line.slope &+ Int64(bitPattern: v) }
                    #expect(lane.array == expected, "width \(width), count \(count), line \(line)")
                    #expect(lane.array == (0..<count).map { lane[$0] }, "width \(width), count \(count), line \(line)")
                }
                if width == 64 {
                    let plain = IntegerLane.plain(try view.int64Array(0, count: count))
                    #expect(plain.array == raw.map { Int64(bitPattern: $0) }, "plain, count \(count)")
                }
            }
        }
    }

    /// Short arrays are written in place (packed words one by one, floats and doubles without an
    /// array of their own): the bytes are those of the array-building path, at every width and length.
    @Test func inPlaceShortArraysMatchTheArrayPath() throws {
        var rng = SplitMix(seed: 11)
        for width in [0, 1, 2, 4, 8, 16, 32] {
            for count in [1, 2, 3, 5, 31, 32, 33, 64, 65, 200, 1000] {
                let top = width == 0 ? 0 : UInt64(1) << UInt64(width) - 1
                let a = (0..<count).map { _ in Int64(-40 + Int64(rng.next() % (top + 1))) }
                for slope: Int64 in [0, 3] {
                    let words = PackedIntArray.wordCount(count: count, width: width)
                    var inPlace = ByteWriter()
                    SegmentEncoder.appendPacked(&inPlace, a, reference: -41, slope: slope, width: width, words: words)
                    var viaArray = ByteWriter()
                    viaArray.int64s(SegmentEncoder.pack(a, reference: -41, slope: slope, width: width, words: words))
                    #expect(inPlace.bytes == viaArray.bytes, "width \(width), count \(count), slope \(slope)")
                }
            }
        }
        for count in 0..<40 {
            let a = (0..<count).map { _ in Double(bitPattern: rng.next()) }
            var b = ColumnBuffer(type: .double, nullable: false, isList: false)
            for d in a { b.append(.double(d)) }
            var raw = ByteWriter()
            raw.doubles(a)
            var expected = ByteWriter()
            SegmentEncoder.appendMaybeCompressed(&expected, SegmentEncoder.fixedArray(raw.bytes, width: 8, count: count))
            var written = ByteWriter()
            SegmentEncoder.appendValues(&written, b)
            #expect(written.bytes == expected.bytes, "\(count) doubles")
        }
        for count in 0..<70 {
            let a = (0..<count).map { _ in Float(bitPattern: UInt32(truncatingIfNeeded: rng.next())) }
            var b = ColumnBuffer(type: .float, nullable: false, isList: false)
            for f in a { b.append(.float(f)) }
            var raw = ByteWriter()
            for f in a { raw.u32(f.bitPattern) }
            var expected = ByteWriter()
            SegmentEncoder.appendMaybeCompressed(&expected, SegmentEncoder.fixedArray(raw.bytes, width: 4, count: count))
            var written = ByteWriter()
            SegmentEncoder.appendValues(&written, b)
            #expect(written.bytes == expected.bytes, "\(count) floats")
        }
    }

    /// A block built in place after other bytes (a commit's buffer) pads and hashes from its own
    /// start: its bytes are those it has on its own.
    @Test func blocksBuiltInPlaceMatchBlocksOnTheirOwn() throws {
        var b = ColumnBuffer(type: .string, nullable: true, isList: false)
        for v: StorageValue in [.string("a"), .null, .string("Grüße"), .string("")] { b.append(v) }
        var commit = ByteWriter()
        commit.zeros(13)
        let start = commit.beginBlock()
        SegmentEncoder.encode(b, into: &commit)
        #expect(Array(commit.bytes[start...]) == SegmentEncoder.encode(b))
        let entries = (0..<5).map {
            RowGroupEntry(firstKey: Int64($0) * 10, lastKey: Int64($0) * 10 + 9, rowCount: 10, block: BlockRef(offset: 64, length: 8))
        }
        let next = commit.beginBlock()
        RowGroupEntry.encodeList(entries[1...], into: &commit)
        #expect(Array(commit.bytes[next...]) == RowGroupEntry.encodeList(Array(entries[1...])))
        #expect(blockTrailer(commit.bytes) == XXH64.hash(Array(commit.bytes[next..<(commit.count - 8)]), seed: 0))
        let view = ByteView(copying: Array(commit.bytes[next...]))
        #expect(try RowGroupEntry.decodeList(view) == Array(entries[1...]))
    }

    @Test func floatingPointSpecialValues() throws {
        _ = try Self.roundTrip(
            .double,
            [
                .double(.nan), .double(-0.0), .double(0.0), .double(.infinity), .double(-.greatestFiniteMagnitude),
                .double(.leastNonzeroMagnitude),
            ])
        _ = try Self.roundTrip(.float, nullable: true, [.float(.nan), .float(-0.0), .null, .float(.infinity)])
        let repetitive = try Self.roundTrip(.double, (0..<4096).map { .double(Double($0 % 10) / 10) })
        #expect(repetitive.encodings == [.lz4, .fixedPlain])
    }

    @Test func stringsAndBlobs() throws {
        let edge = try Self.roundTrip(
            .string, nullable: true,
            [.string(""), .null, .string("ünïcödé ✓ 🚀"), .string(String(repeating: "long", count: 100_000)), .string("")])
        #expect(edge.nullCount == 1)
        let dict = try Self.roundTrip(.string, (0..<5000).map { .string("category-\($0 % 7)") })
        #expect(dict.encodings.contains(.bytesDictionary))
        let unique = try Self.roundTrip(.string, (0..<300).map { .string("u\($0 * 7919)") })
        #expect(unique.encodings.last == .bytesOffsets)
        let compressible = try Self.roundTrip(.string, (0..<2000).map { .string("prefix-prefix-prefix-\($0)") })
        #expect(compressible.encodings.first == .lz4)
        _ = try Self.roundTrip(
            .binary, nullable: true, [.binary([]), .null, .binary([UInt8](repeating: 0xAB, count: 1 << 20)), .binary([0])])
        _ = try Self.roundTrip(.string, nullable: true, Array(repeating: .null, count: 50))
    }

    /// A string segment decompressed from LZ4 keeps its short ASCII rows ready to read in one load
    /// (``ShortStringTable``), made the first time the accessors' cursor is asked for (once: later
    /// asks get the same table), never for the scans' cursor; its cursor still answers every row as
    /// the checked read does (null, empty, long and non-ASCII rows included). Segments read in
    /// place, or of mostly long strings, get no table.
    @Test func decompressedShortStrings() throws {
        let values: [StorageValue] = (0..<4096).map { i in
            switch i % 97 {
            case 0: .null
            case 1: .string("")
            case 2: .string("ünï-\(i)")
            case 3: .string("a longer string than fifteen bytes \(i)")
            case 4: .string("exactly15bytes!")
            default: .string("name-\(i % 10_000)")
            }
        }
        let r = try Self.roundTrip(.string, nullable: true, values)
        #expect(r.encodings.suffix(2) == [.lz4, .bytesOffsets])
        #expect(r.cursor.shorts == nil)
        let table = try #require(r.rowCursor.shorts)
        #expect(r.rowCursor.shorts === table)
        #expect(r.cursor.shorts == nil)
        #expect(table.count == 4096)
        #expect(r.decodedSize >= table.size)
        let c = table
        for (i, v) in values.enumerated() {
            guard case .string(let s) = v, s.utf8.count <= 15, s.utf8.allSatisfy({ $0 < 0x80 }) else {
                #expect(c.string(i) == nil || values[i] == .null)
                continue
            }
            #expect(c.string(i) == s)
        }
        #expect(c.string(-1) == nil && c.string(4096) == nil)
        let long = try Self.roundTrip(.string, (0..<2000).map { .string("prefix-prefix-prefix-\($0)") })
        #expect(long.encodings.first == .lz4 && long.rowCursor.shorts == nil)
        let inPlace = try Self.roundTrip(.string, (0..<300).map { .string("u\($0 * 7919)") })
        #expect(inPlace.encodings == [.bytesOffsets] && inPlace.rowCursor.shorts == nil)
    }

    @Test func fixedWidthTypes() throws {
        _ = try Self.roundTrip(
            .timestamp, nullable: true,
            [.timestamp(seconds: .min, nanoseconds: -999_999_999), .null, .timestamp(seconds: .max, nanoseconds: 999_999_999)])
        _ = try Self.roundTrip(.objectId, [.objectId([UInt8](repeating: 0xFF, count: 12)), .objectId(Array(0..<12))])
        _ = try Self.roundTrip(.uuid, nullable: true, [.uuid(UUID()), .null])
        _ = try Self.roundTrip(.decimal128, [.decimal128(low: .max, high: .max), .decimal128(low: 0, high: 0)])
    }

    @Test func lists() throws {
        _ = try Self.roundTrip(.int, list: true, [.list([]), .list([.int(1), .int(.min)]), .list([])])
        _ = try Self.roundTrip(.string, nullable: true, list: true, [.list([.string(""), .null, .string("x")]), .list([])])
        _ = try Self.roundTrip(.double, list: true, [.list((0..<1000).map { .double(Double($0)) })])
        _ = try Self.roundTrip(.link, list: true, [.list([.link(ObjectKey(1)), .link(ObjectKey(1))])])
    }

    @Test func wrongTypesAreRejected() {
        let b = ColumnBuffer(type: .int, nullable: false, isList: false)
        #expect(throws: StorageError.self) { try b.validate(.string("x"), column: "c") }
        #expect(throws: StorageError.self) { try b.validate(.null, column: "c") }
        #expect(throws: StorageError.self) { try b.validate(.list([.int(1)]), column: "c") }
        let o = ColumnBuffer(type: .objectId, nullable: false, isList: false)
        #expect(throws: StorageError.self) { try o.validate(.objectId([1, 2, 3]), column: "c") }
        let l = ColumnBuffer(type: .int, nullable: false, isList: true)
        #expect(throws: StorageError.self) { try l.validate(.list([.null]), column: "c") }
        #expect(throws: StorageError.self) { try l.validate(.int(1), column: "c") }
    }

    /// Regression (SegmentDecode fuzzer): an LZ4 array that does not decode to its stated length
    /// threw from inside `OwnedBytes.init`, which then freed its memory twice.
    @Test func damagedLZ4ArraysThrow() throws {
        var b = ColumnBuffer(type: .string, nullable: false, isList: false)
        for i in 0..<400 { b.append(.string("value \(i % 7) with some padding to compress")) }
        var bytes = SegmentEncoder.encode(b)
        #expect(bytes[16] == ArrayEncoding.lz4.rawValue)
        let stated = UInt32(bytes[28]) | UInt32(bytes[29]) << 8 | UInt32(bytes[30]) << 16 | UInt32(bytes[31]) << 24
        for k in 0..<4 { bytes[28 + k] = UInt8(truncatingIfNeeded: (stated + 8) >> UInt32(8 * k)) }
        #expect(throws: StorageError.self) { try SegmentReader(block: ByteView(copying: bytes)) }
        #expect(throws: StorageError.self) {
            try OwnedBytes(count: 16) { _ in throw StorageError.corrupted("fill failed", at: 0) }
        }
        // Regression (SegmentDecode fuzzer): a compressed length past Int.max trapped.
        for k in 32..<40 { bytes[k] = 0xFF }
        #expect(throws: StorageError.self) { try SegmentReader(block: ByteView(copying: bytes)) }
    }
}

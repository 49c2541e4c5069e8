/// A decoded, read-only view of one segment (Spec/FORMAT.md §4). Plain and packed arrays are read
/// straight from the mapping; LZ4 arrays are decompressed once (the caller caches the reader).
/// Every offset, count and length inside the segment is validated while the reader is built or when
/// a value is read, so a damaged segment throws ``StorageError/Code/corrupted`` rather than trapping.
package final class SegmentReader: Sendable {
    package let type: ColumnType
    package let nullable: Bool
    package let isList: Bool
    /// Whether rows are maps (Spec/FORMAT.md §4.2): per row a run of (key, element) entries.
    package let isMap: Bool
    package let rowCount: Int
    package let nullCount: Int
    /// Encodings used, outermost first (for the inspector).
    package let encodings: [ArrayEncoding]
    /// Bytes the arrays take once decoded.
    package let decodedSize: Int

    let validity: Bitmap?
    let values: Values
    /// The single-value rows, read without retaining anything (without the short-string table:
    /// see ``rowCursor``).
    package let cursor: SegmentCursor
    /// For a string segment decoded from LZ4: ``cursor`` with the segment's short-string table,
    /// made on first use (nil inside until then). Scans read the bytes and never need the table,
    /// which costs a `String` a row to make: a query over a column read for the first time (W3's
    /// first run) no longer pays it.
    private let shortStringCursor: Locked<SegmentCursor?>?

    /// The single-value rows for the object accessors: ``cursor``, and for a string segment
    /// decoded from LZ4 whose values are mostly short, each row's string ready to read in one load
    /// (see ``ShortStringTable``; the cursor keeps it), made the first time it is asked for.
    package var rowCursor: SegmentCursor {
        guard let shortStringCursor else { return cursor }
        return shortStringCursor.withLock { made in
            if let made { return made }
            let c = cursor.items.flatMap(ShortStringTable.init).map(cursor.with(shorts:)) ?? cursor
            made = c
            return c
        }
    }
    /// For lists and maps: element start index per row, rowCount + 1 entries.
    let listStarts: [Int]
    /// For maps: the key of each element (a bytes array, read and checked per row).
    let mapKeys: Values?

    enum Values: Sendable {
        case integers(IntegerLane)
        case fixed(ByteView, width: Int, count: Int)
        case offsets(Offsets)
        case dictionary(Offsets, indices: IntegerLane)
    }

    struct Offsets: Sendable {
        let offsets: ByteView
        let blob: ByteView
        let count: Int
        func item(_ i: Int) throws -> (Int, Int) {
            guard i >= 0, i < count else { throw StorageError.corrupted("string index \(i) out of \(count)", at: offsets.origin) }
            let a = Int(try offsets.u32(i * 4))
            let b = Int(try offsets.u32(i * 4 + 4))
            guard a <= b, b <= blob.count else {
                throw StorageError.corrupted("string offsets \(a)..\(b) outside a \(blob.count)-byte blob", at: offsets.origin + i * 4)
            }
            return (a, b - a)
        }
    }

    struct Bitmap: Sendable {
        let view: ByteView
        let count: Int
        func isSet(_ i: Int) throws -> Bool {
            let word = try view.u64((i >> 6) * 8)
            return word & (UInt64(1) << UInt64(i & 63)) != 0
        }
    }

    /// The most rows a segment (and so a row group) may hold.
    package static let maximumRows = 1 << 20
    /// The most elements the lists (or maps) of one segment may hold together.
    static let maximumListElements = 1 << 26

    /// Parses the segment block `block` (checksum already verified by the caller).
    package init(block: ByteView) throws {
        guard block.count >= 24 else { throw StorageError.corrupted("segment shorter than its header", at: block.origin) }
        guard try block.u32(0) == SegmentEncoder.magic else { throw StorageError.corrupted("segment magic missing", at: block.origin) }
        guard let t = ColumnType(rawValue: try block.u8(4)) else {
            throw StorageError.corrupted("unknown column type \(try block.u8(4))", at: block.origin + 4)
        }
        let flags = try block.u8(5)
        guard flags & ~7 == 0, flags & 6 != 6 else {
            throw StorageError.corrupted("unknown segment flags \(flags)", at: block.origin + 5)
        }
        type = t
        nullable = flags & 1 != 0
        isList = flags & 2 != 0
        isMap = flags & 4 != 0
        rowCount = Int(try block.u32(8))
        nullCount = Int(try block.u32(12))
        guard rowCount <= Self.maximumRows, nullCount <= rowCount else {
            throw StorageError.corrupted("segment claims \(rowCount) rows and \(nullCount) nulls", at: block.origin + 8)
        }
        var cursor = ArrayCursor(view: try block.slice(16, block.count - 24, "segment arrays"))
        var encs: [ArrayEncoding] = []
        var decoded = 0
        if isList || isMap {
            // A list or map is never null (its elements may be): the count is 0 (Spec §4.5).
            guard nullCount == 0 else {
                throw StorageError.corrupted("a \(isMap ? "map" : "list") segment claims \(nullCount) nulls", at: block.origin + 12)
            }
            let counts = try cursor.next(&encs, &decoded)
            let countValues = try Self.intValues(counts, expected: rowCount)
            var starts = [Int](repeating: 0, count: rowCount + 1)
            for i in 0..<rowCount {
                let c = Int(countValues[i])
                guard c >= 0, c <= Self.maximumListElements - starts[i] else {
                    throw StorageError.corrupted("bad \(isMap ? "map" : "list") length \(c)", at: block.origin)
                }
                starts[i + 1] = starts[i] + c
            }
            listStarts = starts
            let total = starts[rowCount]
            mapKeys = isMap ? try Self.values(try cursor.next(&encs, &decoded), type: .string, expected: total) : nil
            validity = nullable ? try Self.bitmap(try cursor.next(&encs, &decoded), expected: total) : nil
            values = try Self.values(try cursor.next(&encs, &decoded), type: t, expected: total)
        } else {
            listStarts = []
            mapKeys = nil
            validity = nullable ? try Self.bitmap(try cursor.next(&encs, &decoded), expected: rowCount) : nil
            values = try Self.values(try cursor.next(&encs, &decoded), type: t, expected: rowCount)
            // Scans trust the null count to skip the bitmap, so it must agree with the bitmap.
            if let validity {
                var present = 0
                for w in 0..<((rowCount + 63) / 64) {
                    var word = try validity.view.u64(w * 8)
                    if w == rowCount / 64 && rowCount % 64 != 0 { word &= (UInt64(1) << UInt64(rowCount % 64)) - 1 }
                    present += word.nonzeroBitCount
                }
                guard rowCount - present == nullCount else {
                    throw StorageError.corrupted(
                        "segment says \(nullCount) nulls; its bitmap has \(rowCount - present)", at: block.origin + 12)
                }
            } else if nullCount != 0 {
                throw StorageError.corrupted("a non-nullable segment claims \(nullCount) nulls", at: block.origin + 12)
            }
        }
        encodings = encs
        var ints: LaneCursor?
        var fixed: FixedCursor?
        var items: ItemsCursor?
        var indices: LaneCursor?
        var wantsShorts = false
        if !isList && !isMap {
            switch values {
            case .integers(let lane): ints = lane.cursor
            case .fixed(let v, _, _): fixed = v.fixedCursor
            case .offsets(let o) where t == .string:
                let cursor = try o.offsets.itemsCursor(count: o.count, blob: o.blob)
                items = cursor
                // Strings decompressed into memory anyway (the values array is the LZ4 one's
                // content) get the one-load table; those read in place from the mapping do not.
                // Counted here as if made (the most it takes), so the cache's budget holds.
                if encs.count >= 2, encs[encs.count - 2] == .lz4 {
                    wantsShorts = true
                    decoded += ShortStringTable.size(count: cursor.count)
                }
            case .dictionary(let d, let lane) where t == .string:
                items = try d.offsets.itemsCursor(count: d.count, blob: d.blob)
                indices = lane.cursor
            default: break
            }
        }
        decodedSize = decoded
        self.cursor = SegmentCursor(
            rows: isList || isMap ? 0 : rowCount, type: t, ints: ints, fixed: fixed, items: items, indices: indices,
            shorts: nil, validity: nullCount > 0 && !isList && !isMap ? validity?.view.fixedCursor : nil)
        shortStringCursor = wantsShorts ? Locked(nil) : nil
    }

    /// One parsed array: encoding, params, body.
    struct RawArray {
        let encoding: ArrayEncoding
        let param: Int
        let count: Int
        let param2: Int
        let body: ByteView
    }

    /// Walks the arrays of a segment, unwrapping LZ4.
    struct ArrayCursor {
        var view: ByteView
        var offset = 0

        mutating func next(_ encs: inout [ArrayEncoding], _ decoded: inout Int) throws -> RawArray {
            let (a, used) = try Self.parse(view, at: offset)
            offset += used
            encs.append(a.encoding)
            if a.encoding == .lz4 {
                // A stated length past Int.max trapped in Int(_:) (found by the SegmentDecode fuzzer).
                guard let clen = Int(exactly: try a.body.u64(0)) else {
                    throw StorageError.corrupted("implausible LZ4 compressed length", at: a.body.origin)
                }
                let owned = try LZ4.decompress(a.body, offset: 8, compressedLength: clen, decodedLength: a.param2)
                let inner = owned.view(origin: a.body.origin)
                let (ia, iused) = try Self.parse(inner, at: 0)
                guard iused == inner.count, ia.encoding != .lz4 else {
                    throw StorageError.corrupted("LZ4 array does not hold exactly one array", at: a.body.origin)
                }
                encs.append(ia.encoding)
                decoded += inner.count
                return ia
            }
            decoded += used
            return a
        }

        static func parse(_ v: ByteView, at o: Int) throws -> (RawArray, Int) {
            guard let enc = ArrayEncoding(rawValue: try v.u8(o)) else {
                throw StorageError.corrupted("unknown array encoding \(try v.u8(o))", at: v.origin + o)
            }
            let bodyLength = Int(try v.u32(o + 8))
            let body = try v.slice(o + 16, bodyLength, "array body")
            return (
                RawArray(
                    encoding: enc, param: Int(try v.u8(o + 1)), count: Int(try v.u32(o + 4)), param2: Int(try v.u32(o + 12)), body: body),
                16 + bodyLength
            )
        }
    }

    static func intValues(_ a: RawArray, expected: Int) throws -> IntegerLane {
        guard a.count == expected else {
            throw StorageError.corrupted("array holds \(a.count) values, expected \(expected)", at: a.body.origin)
        }
        switch a.encoding {
        case .intPlain: return .plain(try a.body.int64Array(0, count: a.count))
        case .intPacked:
            guard ArrayEncoding.packedWidths.contains(a.param) else {
                throw StorageError.corrupted("bad packed width \(a.param)", at: a.body.origin)
            }
            return .packed(try a.body.packedArray(8, count: a.count, width: a.param, reference: try a.body.i64(0)))
        case .intLinear:
            guard ArrayEncoding.packedWidths.contains(a.param) else {
                throw StorageError.corrupted("bad packed width \(a.param)", at: a.body.origin)
            }
            return .packed(
                try a.body.packedArray(16, count: a.count, width: a.param, reference: try a.body.i64(0), slope: try a.body.i64(8)))
        default: throw StorageError.corrupted("expected an integer array, found \(a.encoding)", at: a.body.origin)
        }
    }

    static func bitmap(_ a: RawArray, expected: Int) throws -> Bitmap {
        guard a.encoding == .bitmap, a.count == expected, a.body.count >= (expected + 63) / 64 * 8 else {
            throw StorageError.corrupted("bad validity bitmap", at: a.body.origin)
        }
        return Bitmap(view: a.body, count: a.count)
    }

    static func offsets(_ a: RawArray) throws -> Offsets {
        guard a.encoding == .bytesOffsets else { throw StorageError.corrupted("expected offsets, found \(a.encoding)", at: a.body.origin) }
        let olen = (a.count + 1) * 4
        let ov = try a.body.slice(0, olen, "offsets")
        let blobStart = (olen + 7) / 8 * 8
        guard try ov.u32(0) == 0 else {
            throw StorageError.corrupted("the first offset of a bytes array is \(try ov.u32(0)), not 0", at: ov.origin)
        }
        let blobLen = Int(try ov.u32(a.count * 4))
        let blob = try a.body.slice(blobStart, blobLen, "string blob")
        return Offsets(offsets: ov, blob: blob, count: a.count)
    }

    static func values(_ a: RawArray, type: ColumnType, expected: Int) throws -> Values {
        guard a.count == expected else {
            throw StorageError.corrupted("array holds \(a.count) values, expected \(expected)", at: a.body.origin)
        }
        switch type.lane {
        case .integer:
            return .integers(try intValues(a, expected: expected))
        case .fixed(let width):
            guard a.encoding == .fixedPlain, a.param2 == width else {
                throw StorageError.corrupted("expected fixed-width(\(width)) array, found \(a.encoding)", at: a.body.origin)
            }
            return .fixed(try a.body.slice(0, width * a.count, "fixed array"), width: width, count: a.count)
        case .bytes:
            switch a.encoding {
            case .bytesOffsets: return .offsets(try offsets(a))
            case .bytesDictionary:
                let (dictRaw, used) = try ArrayCursor.parse(a.body, at: 0)
                guard dictRaw.count == a.param2 else { throw StorageError.corrupted("dictionary size mismatch", at: a.body.origin) }
                let dict = try offsets(dictRaw)
                let (idxRaw, _) = try ArrayCursor.parse(a.body, at: used)
                return .dictionary(dict, indices: try intValues(idxRaw, expected: expected))
            default: throw StorageError.corrupted("expected a bytes array, found \(a.encoding)", at: a.body.origin)
            }
        }
    }

    // MARK: Reading

    /// The value of row `row`.
    package func value(_ row: Int) throws -> StorageValue {
        guard row >= 0, row < rowCount else { throw StorageError(.notFound, "row \(row) out of \(rowCount)") }
        if isList {
            let a = listStarts[row]
            let b = listStarts[row + 1]
            var out: [StorageValue] = []
            out.reserveCapacity(b - a)
            for i in a..<b { out.append(try element(i)) }
            return .list(out)
        }
        if isMap { return .map(try map(listStarts[row]..<listStarts[row + 1])) }
        return try element(row)
    }

    /// The entries `range` of a map segment as one map, checking that the keys are valid UTF-8 and
    /// strictly ascending by bytes (so none repeats).
    func map(_ range: Range<Int>) throws -> [String: StorageValue] {
        guard let mapKeys else { return [:] }
        var out: [String: StorageValue] = [:]
        out.reserveCapacity(range.count)
        var previous: [UInt8]?
        for i in range {
            let (blob, s, n) = try Self.item(mapKeys, i)
            let key = try blob.bytes(s, n)
            if let previous, !previous.lexicographicallyPrecedes(key) {
                throw StorageError.corrupted("map keys are not strictly ascending by bytes", at: blob.origin + s)
            }
            guard let string = String(validating: key, as: UTF8.self) else {
                throw StorageError.corrupted("map key is not valid UTF-8", at: blob.origin + s)
            }
            // Distinct bytes can still be one Swift string (canonical equivalence): the map could not hold both.
            guard out.updateValue(try element(i), forKey: string) == nil else {
                throw StorageError.corrupted(
                    "map key \"\(string)\" is canonically equivalent to another key of its map", at: blob.origin + s)
            }
            previous = key
        }
        return out
    }

    /// The blob, start and length of item `i` of a bytes-lane array (offsets or dictionary).
    static func item(_ values: Values, _ i: Int) throws -> (ByteView, Int, Int) {
        switch values {
        case .offsets(let o):
            let (s, n) = try o.item(i)
            return (o.blob, s, n)
        case .dictionary(let d, let indices):
            let (s, n) = try d.item(Int(indices[i]))
            return (d.blob, s, n)
        // Unreachable: bytes-lane values and map keys are parsed as offsets or dictionary arrays.
        case .integers, .fixed: throw StorageError.corrupted("expected a bytes array", at: 0)
        }
    }

    func element(_ i: Int) throws -> StorageValue {
        if let validity, !(try validity.isSet(i)) { return .null }
        switch values {
        case .integers(let lane): return ColumnBuffer.decodeInt(lane[i], type)
        case .fixed(let v, let width, _):
            let bytes = try v.bytes(i * width, width)
            switch type {
            case .float:
                return .float(Float(bitPattern: UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24))
            case .double: return .double(Double(bitPattern: try v.u64(i * 8)))
            default: return ColumnBuffer.decodeFixed(bytes, type)
            }
        case .offsets, .dictionary:
            let (blob, s, n) = try Self.item(values, i)
            switch type {
            case .string: return .string(try blob.string(s, n))
            case .mixed: return try MixedValue.decode(blob, s, n)
            default: return .binary(try blob.bytes(s, n))
            }
        }
    }

    /// Typed reads of one row of a single-value segment, for the object accessors' fast path (no
    /// ``StorageValue`` in between): nil when the row is null. Each throws, as ``value(_:)`` does,
    /// for a row out of range or a segment whose lane holds another type.
    package func int(_ row: Int) throws -> Int64? {
        if let v = cursor.int(row) { return v }
        try checkSingle(row)
        guard case .integers(let lane) = values else { throw wrongLane("an integer") }
        if try isNull(row) { return nil }
        return lane[row]
    }

    /// Row `row` of a `double` segment (see ``int(_:)``).
    package func double(_ row: Int) throws -> Double? {
        if let v = cursor.double(row) { return v }
        try checkSingle(row)
        guard type == .double, case .fixed(let v, _, _) = values else { throw wrongLane("a double") }
        if try isNull(row) { return nil }
        return Double(bitPattern: try v.u64(row &* 8))
    }

    /// Row `row` of a `float` segment (see ``int(_:)``).
    package func float(_ row: Int) throws -> Float? {
        if let v = cursor.float(row) { return v }
        try checkSingle(row)
        guard type == .float, case .fixed(let v, _, _) = values else { throw wrongLane("a float") }
        if try isNull(row) { return nil }
        return Float(bitPattern: try v.u32(row &* 4))
    }

    /// Row `row` of a `string` segment (see ``int(_:)``).
    package func string(_ row: Int) throws -> String? {
        if let v = cursor.string(row) { return v }
        try checkSingle(row)
        guard type == .string else { throw wrongLane("a string") }
        if try isNull(row) { return nil }
        // Damaged offsets or a dictionary index out of range: the checked path says where.
        let (blob, s, n) = try Self.item(values, row)
        return try blob.string(s, n)
    }

    @inline(__always)
    private func checkSingle(_ row: Int) throws {
        guard row >= 0, row < rowCount else { throw StorageError(.notFound, "row \(row) out of \(rowCount)") }
        guard !isList, !isMap else { throw wrongLane("a single value") }
    }

    private func wrongLane(_ what: String) -> StorageError {
        StorageError(.typeMismatch, "a \(type) segment does not hold \(what)")
    }

    /// Zero-copy integer access for scans: the raw lane values of a single-value int/bool/link
    /// segment, or nil when the segment is not an integer lane or holds collections.
    package var integers: IntegerLane? {
        guard !isList, !isMap, case .integers(let lane) = values else { return nil }
        return lane
    }

    /// Whether row `row` is null (single-value columns).
    package func isNull(_ row: Int) throws -> Bool {
        guard let validity else { return false }
        return !(try validity.isSet(row))
    }

    /// Decodes the whole segment into a mutable buffer; `isSet` marks a list segment of a set column
    /// (segments do not record it, Spec/FORMAT.md §5.2).
    package func decodeAll(isSet: Bool = false) throws -> ColumnBuffer {
        var valid: [Bool]?
        if nullable && !isList && !isMap {
            var v = [Bool](repeating: true, count: rowCount)
            if nullCount > 0 { for i in 0..<rowCount { v[i] = !(try isNull(i)) } }
            valid = v
        }
        // Typed bulk paths for the common lanes; everything else value by value.
        if !isList && !isMap {
            switch values {
            case .integers(let lane):
                return .make(type: type, nullable: nullable, isList: false, storage: .ints(lane.array), valid: valid, count: rowCount)
            case .fixed(let v, let width, let n) where type != .float && type != .double:
                return .make(
                    type: type, nullable: nullable, isList: false, storage: .fixed(width: width, try v.bytes(0, width * n)), valid: valid,
                    count: rowCount)
            case .offsets(let o) where type == .string:
                var strings: [String] = []
                strings.reserveCapacity(rowCount)
                for i in 0..<rowCount {
                    let (s, n) = try o.item(i)
                    strings.append(try o.blob.string(s, n))
                }
                return .make(type: type, nullable: nullable, isList: false, storage: .strings(strings), valid: valid, count: rowCount)
            default: break
            }
        }
        var b = ColumnBuffer(type: type, nullable: nullable, isList: isList, isSet: isSet && isList, isMap: isMap, capacity: rowCount)
        for i in 0..<rowCount { b.append(try value(i)) }
        return b
    }
}

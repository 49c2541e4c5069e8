import RealmStorage

extension FuzzHarness {
    /// `SegmentDecode`: the bytes choose one of three ways to build a segment block and hand it to
    /// the engine's decoder (``SegmentReader``), which must either decode it or throw a
    /// ``StorageError`` — never trap, never throw anything else:
    /// - raw: header fields from the input, then the input's bytes as the arrays;
    /// - assembled: a column type and shape (single values, list or map; nullable or not), then one
    ///   array per slot with an encoding, parameters, counts and bodies the input selects (plain,
    ///   packed, linear, fixed, offsets, dictionary, bitmap, each optionally LZ4-wrapped), mostly
    ///   consistent so that the decoder gets deep;
    /// - round trip: a column of values from the input, encoded by ``SegmentEncoder``; decoding must
    ///   give back exactly those values (a mismatch traps: that is a finding too).
    /// Every decoded segment is read row by row, through its integer lane and with `decodeAll`.
    public static func segmentDecode(_ data: [UInt8]) {
        var input = FuzzInput(data)
        switch input.u8() % 3 {
        case 0: readSegment(rawSegment(&input))
        case 1: readSegment(assembledSegment(&input))
        default: roundTrip(&input)
        }
    }

    /// Decodes `block` and reads all of it; a thrown error must be a `StorageError`.
    static func readSegment(_ block: [UInt8]) {
        do {
            let reader = try SegmentReader(block: ByteView(copying: block, origin: 4096))
            let cursor = reader.cursor
            for row in 0..<min(reader.rowCount, 4096) {
                _ = try? reader.isNull(row)
                let checked = try? reader.value(row)
                // The accessors' typed reads and owner-free cursor: an answer must be the checked one.
                if let v = cursor.int(row) {
                    require(
                        checked == .int(v) || checked == .bool(v != 0) || checked == .link(ObjectKey(v)),
                        "SegmentDecode: cursor int \(v) != \(String(describing: checked))")
                }
                if let v = cursor.double(row) { require(checked?.bitwiseEquals(.double(v)) == true, "SegmentDecode: cursor double") }
                if let v = cursor.float(row) { require(checked?.bitwiseEquals(.float(v)) == true, "SegmentDecode: cursor float") }
                if let v = cursor.string(row) { require(checked == .string(v), "SegmentDecode: cursor string") }
                _ = try? reader.int(row)
                _ = try? reader.double(row)
                _ = try? reader.float(row)
                _ = try? reader.string(row)
            }
            for row in [-1, reader.rowCount, Int.max] {
                require(cursor.int(row) == nil && cursor.string(row) == nil, "SegmentDecode: cursor read outside the rows")
            }
            if let lane = reader.integers { _ = lane.prefix(4096).reduce(0, &+) }
            if reader.rowCount <= 1 << 16 { _ = try reader.decodeAll(isSet: reader.isList && block.count % 2 == 0) }
        } catch is StorageError {
        } catch {
            fatalError("SegmentDecode: the decoder threw \(type(of: error)), not a StorageError: \(error)")
        }
    }

    /// The segment header (Spec/FORMAT.md §4) followed by `arrays` and the 8-byte checksum trailer
    /// (the decoder's caller checks the checksum, so it is left zero).
    static func segmentBlock(type: UInt8, flags: UInt8, rows: UInt32, nulls: UInt32, arrays: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 32 + arrays.count)
        w.u32(0x4745_5352)  // "RSEG"
        w.u8(type)
        w.u8(flags)
        w.u16(0)
        w.u32(rows)
        w.u32(nulls)
        w.append(arrays)
        w.u64(0)
        return w.bytes
    }

    static func rawSegment(_ input: inout FuzzInput) -> [UInt8] {
        let type = input.u8()
        let flags = input.u8()
        let rows = input.bool() ? UInt32(input.u16()) : input.u32()
        let nulls = UInt32(input.u8())
        return segmentBlock(type: type, flags: flags, rows: rows, nulls: nulls, arrays: input.bytes(input.bytes.count))
    }

    static func assembledSegment(_ input: inout FuzzInput) -> [UInt8] {
        let type = ColumnType.allCases[input.below(ColumnType.allCases.count)]
        let shape = input.below(3)  // single values, list, map
        let nullable = input.bool()
        let rows = input.below(4) == 0 ? Int(input.u16()) : input.below(40)
        let nulls = input.below(4) == 0 ? Int(input.u8()) : 0
        var arrays = ByteWriter()
        if shape == 0 {
            if nullable { arrays.append(array(&input, 7, count: rows, type: type)) }
            arrays.append(array(&input, nil, count: rows, type: type))
        } else {
            let counts = (0..<rows).map { _ in Int64(input.below(5)) }
            let total = Int(counts.reduce(0, +))
            arrays.append(input.below(8) == 0 ? array(&input, nil, count: rows, type: .int) : intArray(&input, counts))
            if shape == 2 { arrays.append(array(&input, nil, count: total, type: .string)) }
            if nullable { arrays.append(array(&input, 7, count: total, type: type)) }
            arrays.append(array(&input, nil, count: total, type: type))
        }
        let flags = UInt8(nullable ? 1 : 0) | (shape == 1 ? 2 : 0) | (shape == 2 ? 4 : 0)
        return segmentBlock(type: type.rawValue, flags: flags, rows: UInt32(rows), nulls: UInt32(nulls), arrays: arrays.bytes)
    }

    /// One array header (Spec/FORMAT.md §4.3) and its body, padded to 8 bytes.
    static func arrayBytes(_ encoding: UInt8, param: UInt8 = 0, count: Int, param2: Int = 0, body: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 16 + body.count + 8)
        w.u8(encoding)
        w.u8(param)
        w.u16(0)
        w.u32(UInt32(truncatingIfNeeded: count))
        w.u32(UInt32((body.count + 7) / 8 * 8))
        w.u32(UInt32(truncatingIfNeeded: param2))
        w.append(body)
        w.pad()
        return w.bytes
    }

    /// An array meant for a slot of `count` values of `type`: usually the encoding that type uses
    /// (`preferred` when given), sometimes any; counts and lengths usually right, sometimes off.
    static func array(_ input: inout FuzzInput, _ preferred: UInt8?, count: Int, type: ColumnType) -> [UInt8] {
        let n = input.below(8) == 0 ? input.below(70) : count
        var encoding = preferred ?? 0
        if encoding == 0 || input.below(8) == 0 {
            switch type {
            case .int, .bool, .link: encoding = [1, 2, 8][input.below(3)]
            case .string, .binary, .mixed: encoding = [4, 5][input.below(2)]
            default: encoding = 3
            }
            if input.below(8) == 0 { encoding = input.u8() % 10 }
        }
        var inner: [UInt8]
        switch encoding {
        case 1: inner = arrayBytes(1, count: n, body: input.bytes(n * 8) + [UInt8](repeating: 0, count: n * 8))
        case 2, 8:
            let width = input.below(4) == 0 ? Int(input.u8()) : [0, 1, 2, 4, 8, 16, 32][input.below(7)]
            let words = (n * min(width, 64) + 63) / 64 + (input.below(8) == 0 ? -1 : 0)
            let header = encoding == 2 ? 8 : 16
            let body = input.bytes(header + max(0, words) * 8)
            inner = arrayBytes(
                encoding, param: UInt8(truncatingIfNeeded: width), count: n,
                body: body + [UInt8](repeating: 0, count: max(0, header + words * 8 - body.count)))
        case 3:
            let width: Int
            switch type {
            case .float: width = 4
            case .double: width = 8
            case .timestamp, .objectId: width = 12
            default: width = 16
            }
            let w2 = input.below(8) == 0 ? Int(input.u8()) : width
            inner = arrayBytes(3, count: n, param2: w2, body: input.bytes(n * w2) + [UInt8](repeating: 0, count: n * w2))
        case 4: inner = offsetsArray(&input, count: n)
        case 5:
            let distinct = max(1, input.below(6))
            var body = offsetsArray(&input, count: distinct)
            body += intArray(&input, (0..<n).map { _ in Int64(input.below(4) == 0 ? input.below(256) - 8 : input.below(distinct)) })
            inner = arrayBytes(5, count: n, param2: input.below(8) == 0 ? input.below(9) : distinct, body: body)
        case 7: inner = arrayBytes(7, count: n, body: input.bytes((n + 63) / 64 * 8) + [UInt8](repeating: 0, count: (n + 63) / 64 * 8))
        default: inner = arrayBytes(encoding, param: input.u8(), count: n, param2: Int(input.u8()), body: input.bytes(input.below(64)))
        }
        if input.below(5) == 0, let compressed = LZ4.compress(inner) {
            var body = ByteWriter(capacity: compressed.count + 8)
            body.u64(UInt64(input.below(8) == 0 ? compressed.count + input.below(16) - 8 : compressed.count))
            body.append(compressed)
            let decoded = input.below(8) == 0 ? inner.count + input.below(64) - 32 : inner.count
            inner = arrayBytes(6, count: 0, param2: max(0, decoded), body: body.bytes)
        }
        return inner
    }

    /// An offsets array of `count` byte strings from the input; now and then one offset is wrong.
    static func offsetsArray(_ input: inout FuzzInput, count: Int) -> [UInt8] {
        var items: [[UInt8]] = []
        for _ in 0..<count {
            if input.below(3) == 0 {
                var mixed = ByteWriter()
                mixed.u8(input.below(4) == 0 ? input.u8() : UInt8(1 + input.below(13)))
                mixed.append(input.bytes(input.below(20)))
                items.append(mixed.bytes)
            } else {
                items.append(Array(input.string().utf8))
            }
        }
        var body = ByteWriter()
        var total: UInt32 = 0
        body.u32(0)
        for it in items {
            total += UInt32(it.count)
            body.u32(total)
        }
        if input.below(8) == 0, count > 0 {
            let v = input.u32() % 64
            body.overwrite((0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * UInt32($0))) }, at: 4 * (1 + input.below(count)))
        }
        body.pad()
        for it in items { body.append(it) }
        return arrayBytes(4, count: count, body: body.bytes)
    }

    /// A packed integer array holding `values`.
    static func intArray(_ input: inout FuzzInput, _ values: [Int64]) -> [UInt8] {
        let lo = values.min() ?? 0
        let span = UInt64(bitPattern: (values.max() ?? 0) &- lo)
        let width = [0, 1, 2, 4, 8, 16, 32].first { $0 == 0 ? span == 0 : span >> UInt64($0) == 0 }
        guard let width, input.below(4) != 0 else {
            var plain = ByteWriter()
            plain.int64s(values)
            return arrayBytes(1, count: values.count, body: plain.bytes)
        }
        var words = [Int64](repeating: 0, count: (values.count * width + 63) / 64)
        if width > 0 {
            for (i, v) in values.enumerated() {
                words[i / (64 / width)] |= Int64(bitPattern: UInt64(bitPattern: v &- lo) << UInt64((i % (64 / width)) * width))
            }
        }
        var body = ByteWriter()
        body.i64(lo)
        body.int64s(words)
        return arrayBytes(2, param: UInt8(width), count: values.count, body: body.bytes)
    }

    /// Values from the input in a column buffer, encoded and decoded again: every value must come back.
    static func roundTrip(_ input: inout FuzzInput) {
        let type = ColumnType.allCases[input.below(ColumnType.allCases.count)]
        let shape = input.below(4)  // single values, list, set, map
        let nullable = input.bool()
        var column = ColumnBuffer(type: type, nullable: nullable, isList: shape == 1 || shape == 2, isSet: shape == 2, isMap: shape == 3)
        var originals: [StorageValue] = []
        let rows = input.below(6) == 0 ? Int(input.u16() % 3000) : input.below(24)
        let repeats = input.bool()
        for _ in 0..<rows {
            if input.isAtEnd && !repeats { break }
            func element() -> StorageValue { nullable && input.below(5) == 0 ? .null : input.value(type) }
            let value: StorageValue
            switch shape {
            case 0: value = repeats && !originals.isEmpty && input.bool() ? originals[input.below(originals.count)] : element()
            case 1, 2: value = .list((0..<input.below(5)).map { _ in element() })
            default:
                value = .map(Dictionary((0..<input.below(5)).map { _ in (input.string(), element()) }, uniquingKeysWith: { a, _ in a }))
            }
            guard (try? column.validate(value, column: "c")) != nil else { continue }
            // Typed links and mixed values are stored as they are; the table ids are not checked here.
            column.append(value)
            originals.append(value)
        }
        let block = SegmentEncoder.encode(column)
        do {
            let reader = try SegmentReader(block: ByteView(copying: block))
            require(reader.rowCount == originals.count, "SegmentDecode: \(reader.rowCount) rows decoded, \(originals.count) encoded")
            for (row, expected) in originals.enumerated() {
                let got = try reader.value(row)
                require(
                    got.bitwiseEquals(expected), "SegmentDecode: row \(row) of a \(type) column decoded as \(got), encoded \(expected)")
            }
            let all = try reader.decodeAll(isSet: shape == 2)
            for (row, expected) in originals.enumerated() {
                require(
                    all.value(row).bitwiseEquals(expected), "SegmentDecode: decodeAll row \(row) is \(all.value(row)), encoded \(expected)")
            }
        } catch {
            fatalError("SegmentDecode: a segment the encoder wrote does not decode: \(error)")
        }
    }
}

/// Array encodings inside a segment (Spec/FORMAT.md §4.3). Raw values are stored in the file.
package enum ArrayEncoding: UInt8, Sendable, CustomStringConvertible {
    case intPlain = 1
    case intPacked = 2
    case fixedPlain = 3
    case bytesOffsets = 4
    case bytesDictionary = 5
    case lz4 = 6
    case bitmap = 7
    case intLinear = 8

    package var description: String {
        switch self {
        case .intPlain: "int-plain"
        case .intPacked: "int-packed"
        case .fixedPlain: "fixed-plain"
        case .bytesOffsets: "bytes-offsets"
        case .bytesDictionary: "bytes-dictionary"
        case .lz4: "lz4"
        case .bitmap: "bitmap"
        case .intLinear: "int-linear"
        }
    }

    /// The bit widths a packed array may use (values never straddle a 64-bit word).
    static let packedWidths = [0, 1, 2, 4, 8, 16, 32]
}

/// Encodes a ``ColumnBuffer`` into a segment block (Spec/FORMAT.md §4) choosing, per array, the
/// smallest of the candidate encodings; LZ4 is applied only when it saves at least a quarter.
package enum SegmentEncoder {
    static let magic: UInt32 = 0x4745_5352  // "RSEG"
    static let lz4MinimumSaving = 0.25

    /// The encoded block, checksum trailer included.
    /// With `compressing` false no array is LZ4-wrapped: a segment built in memory to be read
    /// at once (a patch applied by a reader) need not pay to compress and decompress it.
    package static func encode(_ column: ColumnBuffer, compressing: Bool = true) -> [UInt8] {
        var w = ByteWriter(capacity: 128 + column.count * 16)
        encode(column, into: &w, compressing: compressing)
        return w.bytes
    }

    /// Appends the encoded block to `w`, which has begun it (``ByteWriter/beginBlock()``): a commit
    /// encodes its segments in place in its own buffer.
    static func encode(_ column: ColumnBuffer, into w: inout ByteWriter, compressing: Bool = true) {
        w.u32(magic)
        w.u8(column.type.rawValue)
        w.u8((column.nullable ? 1 : 0) | (column.isList ? 2 : 0) | (column.isMap ? 4 : 0))
        w.u16(0)
        w.u32(UInt32(column.count))
        let nullCount = column.valid.map { $0.reduce(0) { $0 + ($1 ? 0 : 1) } } ?? 0
        w.u32(UInt32(nullCount))
        if column.isList {
            guard case .lists(let lists) = column.storage else { preconditionFailure() }
            appendIntArray(&w, lists.map { Int64($0.count) })
            var elements = ColumnBuffer(type: column.type, nullable: column.nullable, isList: false)
            for l in lists { for e in l { elements.append(e) } }
            if column.nullable { appendBitmap(&w, elements.valid ?? []) }
            appendValues(&w, elements, compressing: compressing)
        } else if column.isMap {
            guard case .maps(let maps) = column.storage else { preconditionFailure() }
            // Each map's entries ascend by key bytes (Spec/FORMAT.md §4.2).
            let sorted = maps.map { m in
                m.map { (key: Array($0.key.utf8), value: $0.value) }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
            }
            appendIntArray(&w, sorted.map { Int64($0.count) })
            appendBytesArray(&w, sorted.flatMap { $0.map(\.key) }, compressing: compressing)
            var elements = ColumnBuffer(type: column.type, nullable: column.nullable, isList: false)
            for m in sorted { for e in m { elements.append(e.value) } }
            if column.nullable { appendBitmap(&w, elements.valid ?? []) }
            appendValues(&w, elements, compressing: compressing)
        } else {
            if let valid = column.valid { appendBitmap(&w, valid) }
            appendValues(&w, column, compressing: compressing)
        }
        w.pad()
        w.u64(w.checksum())
    }

    static func appendValues(_ w: inout ByteWriter, _ c: ColumnBuffer, compressing: Bool = true) {
        switch c.storage {
        case .ints(let a): appendIntArray(&w, a)
        case .floats(let a):
            appendFixedArray(&w, width: 4, count: a.count, compressing: compressing) { for f in a { $0.u32(f.bitPattern) } }
        case .doubles(let a): appendFixedArray(&w, width: 8, count: a.count, compressing: compressing) { $0.doubles(a) }
        case .fixed(let width, let bytes): appendFixedArray(&w, width: width, count: c.count, compressing: compressing) { $0.append(bytes) }
        case .strings(let a): appendBytesArray(&w, a.map(\.utf8), compressing: compressing)
        case .blobs(let a): appendBytesArray(&w, a, compressing: compressing)
        case .values(let a): appendBytesArray(&w, a.map(MixedValue.encode), compressing: compressing)
        case .lists, .maps: preconditionFailure("nested collections are not stored")
        }
    }

    static func header(_ w: inout ByteWriter, _ enc: ArrayEncoding, param: UInt8 = 0, count: Int, bodyLength: Int, param2: UInt32 = 0) {
        w.u8(enc.rawValue)
        w.u8(param)
        w.u16(0)
        w.u32(UInt32(count))
        w.u32(UInt32(bodyLength))
        w.u32(param2)
    }

    /// Chooses plain or frame-of-reference bit-packing for an integer array.
    static func appendIntArray(_ w: inout ByteWriter, _ a: [Int64]) {
        var lo = Int64.max
        var hi = Int64.min
        for v in a {
            lo = min(lo, v)
            hi = max(hi, v)
        }
        if a.isEmpty { lo = 0; hi = 0 }
        let (diff, overflow) = hi.subtractingReportingOverflow(lo)
        let span = UInt64(bitPattern: diff)
        let forWidth = overflow ? nil : packedWidth(span)
        // Linear frame of reference: value = reference + i·slope + residual (sequences pack to nothing).
        if a.count >= 3, forWidth != 0 {
            let slope = (a[a.count - 1] &- a[0]) / Int64(a.count - 1)
            if slope != 0 {
                var rlo = Int64.max
                var rhi = Int64.min
                for (i, v) in a.enumerated() {
                    let r = v &- Int64(i) &* slope
                    rlo = min(rlo, r)
                    rhi = max(rhi, r)
                }
                let (rdiff, roverflow) = rhi.subtractingReportingOverflow(rlo)
                if !roverflow, let width = packedWidth(UInt64(bitPattern: rdiff)), width < (forWidth ?? 64) {
                    let words = PackedIntArray.wordCount(count: a.count, width: width)
                    header(&w, .intLinear, param: UInt8(width), count: a.count, bodyLength: 16 + words * 8)
                    w.i64(rlo)
                    w.i64(slope)
                    appendPacked(&w, a, reference: rlo, slope: slope, width: width, words: words)
                    return
                }
            }
        }
        if let width = forWidth {
            let words = PackedIntArray.wordCount(count: a.count, width: width)
            header(&w, .intPacked, param: UInt8(width), count: a.count, bodyLength: 8 + words * 8)
            w.i64(lo)
            appendPacked(&w, a, reference: lo, width: width, words: words)
        } else {
            header(&w, .intPlain, count: a.count, bodyLength: a.count * 8)
            w.int64s(a)
        }
    }

    static func packedWidth(_ span: UInt64) -> Int? {
        ArrayEncoding.packedWidths.first { $0 == 0 ? span == 0 : span >> UInt64($0) == 0 }
    }

    /// Appends ``pack(_:reference:slope:width:words:)``'s words to `w`: a short array (a small
    /// commit's) word by word, without an array of its own; a long one packed first and copied at once.
    static func appendPacked(_ w: inout ByteWriter, _ a: [Int64], reference: Int64, slope: Int64 = 0, width: Int, words: Int) {
        if words <= 16 {
            packWords(a, reference: reference, slope: slope, width: width) { w.u64($0) }
        } else {
            w.int64s(pack(a, reference: reference, slope: slope, width: width, words: words))
        }
    }

    /// Packs `a[i] - i·slope - reference` into `width`-bit fields, `64 / width` to a word from the
    /// low bits up.
    static func pack(_ a: [Int64], reference: Int64, slope: Int64 = 0, width: Int, words: Int) -> [Int64] {
        var packed: [Int64] = []
        packed.reserveCapacity(words)
        packWords(a, reference: reference, slope: slope, width: width) { packed.append(Int64(bitPattern: $0)) }
        return packed
    }

    /// Hands ``pack(_:reference:slope:width:words:)``'s words to `emit` in order (none for width 0;
    /// `PackedIntArray.wordCount(count:width:)` of them for a width that divides 64). Fields are
    /// placed by a running shift, not by dividing each index.
    @inline(__always)
    private static func packWords(_ a: [Int64], reference: Int64, slope: Int64, width: Int, _ emit: (UInt64) -> Void) {
        guard width > 0 else { return }
        let perWord = 64 / width
        var inWord = 0
        var bits: UInt64 = 0
        for (i, v) in a.enumerated() {
            bits |= UInt64(bitPattern: v &- Int64(i) &* slope &- reference) &<< UInt64(inWord * width)
            inWord += 1
            if inWord == perWord {
                emit(bits)
                inWord = 0
                bits = 0
            }
        }
        if inWord > 0 { emit(bits) }
    }

    static func appendBitmap(_ w: inout ByteWriter, _ bits: [Bool]) {
        let words = (bits.count + 63) / 64
        header(&w, .bitmap, count: bits.count, bodyLength: words * 8)
        var out = filledArray(Int64(0), count: words)
        for (i, b) in bits.enumerated() where b { out[i >> 6] |= Int64(bitPattern: UInt64(1) << UInt64(i & 63)) }
        w.int64s(out)
    }

    /// Appends a fixed-width array of `count` values whose bytes (`width` each) `values` appends:
    /// in place when it is too short for LZ4 to be tried (a small commit's), else built apart
    /// (``fixedArray(_:width:count:)``) and LZ4-wrapped when that pays. The bytes are the same.
    static func appendFixedArray(
        _ w: inout ByteWriter, width: Int, count: Int, compressing: Bool = true, _ values: (inout ByteWriter) -> Void
    ) {
        let body = (width * count + 7) / 8 * 8
        guard !compressing || 16 + body < lz4MinimumInput else {
            var raw = ByteWriter(capacity: width * count)
            values(&raw)
            appendMaybeCompressed(&w, fixedArray(raw.bytes, width: width, count: count))
            return
        }
        header(&w, .fixedPlain, count: count, bodyLength: body, param2: UInt32(width))
        values(&w)
        w.zeros(body - width * count)
    }

    static func fixedArray(_ bytes: [UInt8], width: Int, count: Int) -> [UInt8] {
        var w = ByteWriter(capacity: bytes.count + 16)
        header(&w, .fixedPlain, count: count, bodyLength: (bytes.count + 7) / 8 * 8, param2: UInt32(width))
        w.append(bytes)
        w.pad()
        return w.bytes
    }

    static func offsetsArray<C: Collection>(_ items: [C], total: Int? = nil) -> [UInt8] where C.Element == UInt8 {
        let total = total ?? items.reduce(0) { $0 + $1.count }
        var w = ByteWriter(capacity: 16 + offsetsBodyLength(count: items.count, total: total))
        appendOffsetsArray(&w, items, total: total)
        return w.bytes
    }

    /// The body length of a bytes-offsets array of `count` values of `total` bytes.
    static func offsetsBodyLength(count: Int, total: Int) -> Int { (4 * (count + 1) + 7) / 8 * 8 + (total + 7) / 8 * 8 }

    /// Writes a complete bytes-offsets array of `items` (`total` bytes in all) to `w`.
    static func appendOffsetsArray<C: Collection>(_ w: inout ByteWriter, _ items: [C], total: Int) where C.Element == UInt8 {
        header(&w, .bytesOffsets, count: items.count, bodyLength: offsetsBodyLength(count: items.count, total: total))
        var end: UInt32 = 0
        w.u32(0)
        for it in items {
            end += UInt32(it.count)
            w.u32(end)
        }
        // Padding counts from the array's start, wherever it lies in `w`.
        for _ in 0..<(8 - 4 * (items.count + 1) % 8) % 8 { w.u8(0) }
        for it in items { w.append(contentsOf: it) }
        for _ in 0..<(8 - total % 8) % 8 { w.u8(0) }
    }

    /// Arrays of fewer values are never dictionary-encoded.
    static let minimumDictionaryCount = 8

    /// Offsets or dictionary, whichever is smaller, then LZ4 if it pays. The dictionary is tried
    /// only when a sample of the values repeats, and not for a handful of values (its headers
    /// outweigh what it saves; small commits encode such arrays all the time).
    static func appendBytesArray<C: Collection>(_ w: inout ByteWriter, _ values: [C], compressing: Bool = true)
    where C.Element == UInt8 {
        let total = values.reduce(0) { $0 + $1.count }
        guard values.count >= minimumDictionaryCount else {
            // Too short for LZ4 too: written in place.
            if 16 + offsetsBodyLength(count: values.count, total: total) < lz4MinimumInput {
                appendOffsetsArray(&w, values, total: total)
            } else {
                appendMaybeCompressed(&w, offsetsArray(values, total: total), compressing: compressing)
            }
            return
        }
        let plain = offsetsArray(values, total: total)
        var best = plain
        let sample = values.prefix(64).map { Array($0) }
        guard Set(sample).count <= sample.count / 2 else {
            appendMaybeCompressed(&w, best, compressing: compressing)
            return
        }
        let items = values.map { Array($0) }
        var ids: [[UInt8]: Int] = [:]
        var dict: [[UInt8]] = []
        var indices: [Int64] = []
        indices.reserveCapacity(items.count)
        var abandoned = false
        for it in items {
            if let id = ids[it] {
                indices.append(Int64(id))
            } else {
                if dict.count > items.count / 2 {
                    abandoned = true
                    break
                }
                ids[it] = dict.count
                indices.append(Int64(dict.count))
                dict.append(it)
            }
        }
        if !abandoned && items.count > 1 {
            var inner = ByteWriter(capacity: plain.count)
            inner.append(offsetsArray(dict))
            appendIntArray(&inner, indices)
            var d = ByteWriter(capacity: inner.count + 16)
            header(&d, .bytesDictionary, count: items.count, bodyLength: inner.count, param2: UInt32(dict.count))
            d.append(inner.bytes)
            if d.count < best.count { best = d.bytes }
        }
        appendMaybeCompressed(&w, best, compressing: compressing)
    }

    /// Arrays shorter than this (in bytes, header included) are never LZ4-wrapped.
    static let lz4MinimumInput = 256

    /// Wraps a complete array in an LZ4 array when that saves at least `lz4MinimumSaving`.
    static func appendMaybeCompressed(_ w: inout ByteWriter, _ array: [UInt8], compressing: Bool = true) {
        if compressing, array.count >= lz4MinimumInput, let c = LZ4.compress(array),
            Double(c.count + 16) <= Double(array.count) * (1 - lz4MinimumSaving)
        {
            let padded = (c.count + 7) / 8 * 8
            header(&w, .lz4, count: 0, bodyLength: 8 + padded, param2: UInt32(array.count))
            w.u64(UInt64(c.count))
            w.append(c)
            w.pad()
        } else {
            w.append(array)
        }
    }
}

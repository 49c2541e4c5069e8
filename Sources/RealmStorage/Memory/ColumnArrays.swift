/// Zero-copy, read-only arrays over mapped (or owned) memory. Each keeps its memory's owner alive and
/// hides its pointer; the byte range was bounds-checked by ``ByteView`` when the array was made.
///
/// Sendable: the memory they read is immutable once published.
package struct Int64Array: RandomAccessCollection, @unchecked Sendable {
    private let owner: AnyObject?
    fileprivate let base: UnsafeRawPointer?
    package let count: Int
    init(owner: AnyObject?, base: UnsafeRawPointer?, count: Int) {
        self.owner = owner
        self.base = base
        self.count = count
    }
    package var startIndex: Int { 0 }
    package var endIndex: Int { count }
    @inline(__always)
    package subscript(i: Int) -> Int64 {
        precondition(i >= 0 && i < count, "Int64Array index out of range")
        return Int64(littleEndian: base!.loadUnaligned(fromByteOffset: i &* 8, as: Int64.self))
    }
    /// Counts values in `lo...hi` in one branch-free loop.
    package func countInRange(_ lo: Int64, _ hi: Int64) -> Int {
        guard let base, lo <= hi else { return 0 }
        // Plain arrays are 8-byte aligned in the file (Spec/FORMAT.md §4.3), so they can be read as
        // a typed buffer; compare in the unsigned domain so the loop vectorizes.
        return countLanes(base, count, UInt64(bitPattern: lo), UInt64(bitPattern: hi &- lo))
    }
}

/// A bit-packed, frame-of-reference integer array: value = reference + i·slope + (bits as unsigned);
/// the slope is 0 except for the linear encoding.
package struct PackedIntArray: RandomAccessCollection, @unchecked Sendable {
    private let owner: AnyObject?
    fileprivate let base: UnsafeRawPointer?
    package let count: Int
    package let width: Int
    package let reference: Int64
    package let slope: Int64
    let mask: UInt64

    init(owner: AnyObject?, base: UnsafeRawPointer?, count: Int, width: Int, reference: Int64, slope: Int64 = 0) {
        self.owner = owner
        self.base = base
        self.count = count
        self.width = width
        self.reference = reference
        self.slope = slope
        self.mask = width == 64 ? ~0 : (UInt64(1) << UInt64(width)) &- 1
    }

    /// Number of 64-bit words holding `count` values of `width` bits.
    package static func wordCount(count: Int, width: Int) -> Int { (count * width + 63) / 64 }

    package var startIndex: Int { 0 }
    package var endIndex: Int { count }

    @inline(__always)
    package subscript(i: Int) -> Int64 { cursor[i] }

    /// Counts values in `lo...hi`, translated into the packed domain and scanned with a loop
    /// specialized for the bit width (byte-aligned widths load directly).
    package func countInRange(_ lo: Int64, _ hi: Int64) -> Int {
        guard lo <= hi, count > 0 else { return 0 }
        if slope != 0 {
            var n = 0
            for i in 0..<count { n &+= (self[i] >= lo && self[i] <= hi) ? 1 : 0 }
            return n
        }
        // Translate to offsets from the reference (exactly, in 128 bits), clamped to [0, mask].
        let maxStored = UInt64(mask)
        let lo128 = Int128(lo) - Int128(reference)
        let hi128 = Int128(hi) - Int128(reference)
        if hi128 < 0 || lo128 > Int128(maxStored) { return 0 }
        let a = UInt64(Swift.max(lo128, 0))
        let b = UInt64(Swift.min(hi128, Int128(maxStored)))
        if a == 0 && b == maxStored { return count }
        guard let base else { return 0 }
        let span = b &- a
        var n = 0
        switch width {
        case 8: return countByteLanes(base, count, UInt8(a), UInt8(span))
        case 16: return countLanes(base, count, UInt16(a), UInt16(span))
        case 32: return countLanes(base, count, UInt32(a), UInt32(span))
        default:
            let perWord = 64 / width
            for i in 0..<count {
                let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: (i / perWord) &* 8, as: UInt64.self))
                let v = (w >> UInt64((i % perWord) &* width)) & mask
                n &+= v &- a <= span ? 1 : 0
            }
        }
        return n
    }
}

extension PackedIntArray {
    /// The exact sum, the smallest and the largest value, computed on the stored offsets from the
    /// reference (their sum fits 64 bits for widths up to 32 and at most 2^20 values) with loops
    /// that vectorize for byte-aligned widths; nil when empty or when that does not apply (a
    /// linear encoding, a wider lane, more values), for the general loop.
    func summary() -> (sum: Int128, min: Int64, max: Int64)? {
        guard count > 0, slope == 0, width <= 32, count <= 1 << 20 else { return nil }
        guard width > 0, let base else { return (Int128(reference) * Int128(count), reference, reference) }
        let raw: (sum: UInt64, min: UInt64, max: UInt64)
        switch width {
        case 8: raw = summarizeLanes(base, count, UInt8.self)
        case 16: raw = summarizeLanes(base, count, UInt16.self)
        case 32: raw = summarizeLanes(base, count, UInt32.self)
        default:
            var sum: UInt64 = 0
            var lo = UInt64.max
            var hi: UInt64 = 0
            let perWord = 64 / width
            for i in 0..<count {
                let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: (i / perWord) &* 8, as: UInt64.self))
                let v = (w >> UInt64((i % perWord) &* width)) & mask
                sum &+= v
                lo = Swift.min(lo, v)
                hi = Swift.max(hi, v)
            }
            raw = (sum, lo, hi)
        }
        // reference + an offset of the lane is a stored value, so it fits Int64.
        return (
            Int128(reference) * Int128(count) + Int128(raw.sum), reference &+ Int64(bitPattern: raw.min),
            reference &+ Int64(bitPattern: raw.max)
        )
    }
}

extension IntegerLane {
    /// Sets bit `i % 64` of `words[i / 64]` for every value `v` at `i` with `v &- lo` (as unsigned)
    /// at most `span`: the values in `lo...lo + span`, wrapping like the caller's range test. Other
    /// bits are left as they are (`words` holds at least `(count + 63) / 64` zeroed words). Read in
    /// place; byte-aligned packed lanes compare their stored offsets directly.
    package func rangeMask(lo: Int64, span: UInt64, into words: inout [UInt64]) {
        switch self {
        case .plain(let p):
            Self.fillMask(count: p.count, into: &words) { UInt64(bitPattern: p[$0] &- lo) <= span }
        case .packed(let p):
            // v − lo = raw − (lo − reference), modulo 2^64, so the stored offsets are compared
            // without adding the reference back.
            let a = UInt64(bitPattern: lo &- p.reference)
            if p.slope == 0, let lanes = p.byteAlignedLanes {
                switch lanes {
                case .u8(let l): Self.fillMask(count: p.count, into: &words) { UInt64(l[$0]) &- a <= span }
                case .u16(let l): Self.fillMask(count: p.count, into: &words) { UInt64(UInt16(littleEndian: l[$0])) &- a <= span }
                case .u32(let l): Self.fillMask(count: p.count, into: &words) { UInt64(UInt32(littleEndian: l[$0])) &- a <= span }
                }
            } else {
                Self.fillMask(count: p.count, into: &words) { UInt64(bitPattern: p[$0] &- lo) <= span }
            }
        }
    }

    @inline(__always)
    private static func fillMask(count n: Int, into words: inout [UInt64], _ hit: (Int) -> Bool) {
        var base = 0
        while base < n {
            let end = Swift.min(base &+ 64, n)
            var word: UInt64 = 0
            for i in base..<end where hit(i) { word |= UInt64(1) << UInt64(i &- base) }
            words[base >> 6] |= word
            base = end
        }
    }
}

extension PackedIntArray {
    /// The stored offsets of a lane of 8, 16 or 32 bits, as typed buffers over the mapping.
    enum ByteAlignedLanes {
        case u8(UnsafeBufferPointer<UInt8>)
        case u16(UnsafeBufferPointer<UInt16>)
        case u32(UnsafeBufferPointer<UInt32>)
    }

    /// The lanes when the width is 8, 16 or 32 bits (packed arrays are 8-byte aligned in the file).
    var byteAlignedLanes: ByteAlignedLanes? {
        guard let base else { return nil }
        switch width {
        case 8: return .u8(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: count))
        case 16: return .u16(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt16.self), count: count))
        case 32: return .u32(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt32.self), count: count))
        default: return nil
        }
    }
}

/// Sum, minimum and maximum of `n` little-endian unsigned lanes at `base` (n ≤ 2^20, lanes ≤ 32
/// bits, so the sum fits 64 bits); branch-free so it vectorizes.
@inline(__always)
private func summarizeLanes<T: FixedWidthInteger & UnsignedInteger>(_ base: UnsafeRawPointer, _ n: Int, _: T.Type) -> (
    sum: UInt64, min: UInt64, max: UInt64
) {
    let lanes = UnsafeBufferPointer(start: base.assumingMemoryBound(to: T.self), count: n)
    var sum: UInt64 = 0
    var lo = T.max
    var hi = T.min
    var i = 0
    // Lanes of 8 and 16 bits sum in 32-bit chunks (65,536 values cannot overflow them), so the
    // vectorized accumulator stays narrow.
    let chunk = T.bitWidth <= 16 ? 65_536 : n
    while i < n {
        let end = Swift.min(n, i &+ chunk)
        var part: UInt32 = 0
        var wide: UInt64 = 0
        while i < end {
            let x = T(littleEndian: lanes[i])
            if T.bitWidth <= 16 { part &+= UInt32(truncatingIfNeeded: x) } else { wide &+= UInt64(truncatingIfNeeded: x) }
            lo = x < lo ? x : lo
            hi = x > hi ? x : hi
            i &+= 1
        }
        sum &+= UInt64(part) &+ wide
    }
    return (sum, UInt64(lo), UInt64(hi))
}

/// Counts the `n` little-endian unsigned lanes at `base` whose value minus `a` is at most `span`
/// (unsigned wrap-around makes that one comparison a range test).
@inline(__always)
private func countLanes<T: FixedWidthInteger & UnsignedInteger>(_ base: UnsafeRawPointer, _ n: Int, _ a: T, _ span: T) -> Int {
    let lanes = UnsafeBufferPointer(start: base.assumingMemoryBound(to: T.self), count: n)
    var c = 0
    for v in lanes { c &+= (T(littleEndian: v) &- a) <= span ? 1 : 0 }
    return c
}

/// The byte-lane case, branch-free so it vectorizes: for d = v − a, `span − d` computed in 16 bits
/// has its top bit set exactly when d > span.
private func countByteLanes(_ base: UnsafeRawPointer, _ n: Int, _ a: UInt8, _ span: UInt8) -> Int {
    let lanes = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: n)
    var misses = 0
    var i = 0
    while i < n {
        // Sum in 32-bit chunks so the vectorized accumulator stays narrow.
        let end = min(n, i &+ 65_536)
        var chunk: UInt32 = 0
        for j in i..<end {
            let d = UInt16(lanes[j] &- a)
            chunk &+= UInt32((UInt16(span) &- d) >> 15)
        }
        misses &+= Int(chunk)
        i = end
    }
    return n &- misses
}

/// An integer array as a segment stores it: plain, or bit-packed (frame of reference, possibly
/// linear). Both forms read in place.
package enum IntegerLane: RandomAccessCollection, Sendable {
    case plain(Int64Array)
    case packed(PackedIntArray)

    package var startIndex: Int { 0 }
    package var endIndex: Int {
        switch self {
        case .plain(let p): p.count
        case .packed(let p): p.count
        }
    }

    @inline(__always)
    package subscript(i: Int) -> Int64 {
        switch self {
        case .plain(let p): p[i]
        case .packed(let p): p[i]
        }
    }

    /// Counts values in `lo...hi` with the loop specialized for the encoding.
    package func countInRange(_ lo: Int64, _ hi: Int64) -> Int {
        switch self {
        case .plain(let p): p.countInRange(lo, hi)
        case .packed(let p): p.countInRange(lo, hi)
        }
    }

    /// The exact sum, the smallest and the largest value (nil when empty), read in place without
    /// copying the lane.
    package func summary() -> (sum: Int128, min: Int64, max: Int64)? {
        switch self {
        case .plain(let p): Self.summarize(p)
        case .packed(let p): p.summary() ?? Self.summarize(p)
        }
    }

    @inline(__always)
    private static func summarize<C: RandomAccessCollection>(_ c: C) -> (sum: Int128, min: Int64, max: Int64)?
    where C.Element == Int64, C.Index == Int {
        guard !c.isEmpty else { return nil }
        var lo = c[0]
        var hi = c[0]
        var sum: Int128 = 0
        for i in 0..<c.count {
            let x = c[i]
            sum &+= Int128(x)
            lo = Swift.min(lo, x)
            hi = Swift.max(hi, x)
        }
        return (sum, lo, hi)
    }
}

// MARK: Owner-free cursors
//
// The object accessors read one row at a time; copying a view that holds its memory's owner costs
// a retain and a release per read, more than the read. A cursor holds the same pointer and bounds
// without the owner: it is valid only while the array it was taken from is alive, which its holder
// guarantees (a ``SegmentReader`` keeps its arrays, and whoever holds a cursor keeps the reader).
// Every read is still bounds-checked. They do not leave this module: the object accessors read
// through ``CursorSlots``, which keeps each cursor with its segment reader.

/// An integer lane (plain or packed) without its owner; a plain lane reads as a packed one of width
/// 64 from reference 0.
package struct LaneCursor: @unchecked Sendable {
    let base: UnsafeRawPointer?
    let count: Int
    let width: Int
    let reference: Int64
    let slope: Int64
    let mask: UInt64

    @inline(__always)
    init(base: UnsafeRawPointer?, count: Int, width: Int, reference: Int64, slope: Int64, mask: UInt64) {
        self.base = base
        self.count = count
        self.width = width
        self.reference = reference
        self.slope = slope
        self.mask = mask
    }

    /// A cursor over no values.
    package static let empty = LaneCursor(base: nil, count: 0, width: 64, reference: 0, slope: 0, mask: ~0)

    /// The number of values.
    package var valueCount: Int { count }

    @inline(__always)
    package subscript(i: Int) -> Int64 {
        precondition(i >= 0 && i < count, "LaneCursor index out of range")
        let start = reference &+ Int64(i) &* slope
        if width == 0 { return start }
        let bit = i &* width
        let w = bit >> 6
        let shift = UInt64(bit & 63)
        var v = UInt64(littleEndian: base!.loadUnaligned(fromByteOffset: w &* 8, as: UInt64.self)) >> shift
        if Int(shift) + width > 64 {
            v |= UInt64(littleEndian: base!.loadUnaligned(fromByteOffset: (w &+ 1) &* 8, as: UInt64.self)) << (64 &- shift)
        }
        return start &+ Int64(bitPattern: v & mask)
    }
}

extension LaneCursor {
    /// The position of `value` in an ascending lane, or nil (binary search, after one guess: in a
    /// lane without gaps — a row group's keys, mostly — `value` sits `value - first` places in).
    func sortedIndex(of value: Int64) -> Int? {
        if count > 0 {
            let (guess, overflow) = value.subtractingReportingOverflow(self[0])
            if !overflow, guess >= 0, guess < count, self[Int(guess)] == value { return Int(guess) }
        }
        var lo = 0
        var hi = count
        while lo < hi {
            let mid = (lo &+ hi) >> 1
            if self[mid] < value { lo = mid &+ 1 } else { hi = mid }
        }
        return lo < count && self[lo] == value ? lo : nil
    }

    /// The first position whose value, read as unsigned, is not below `h`, in a lane ascending
    /// as unsigned values (binary search).
    func unsignedLowerBound(_ h: UInt64) -> Int {
        // One guess first, as in `sortedIndex(of:)`: an index of ascending integers is dense.
        if count > 0 {
            let first = UInt64(bitPattern: self[0])
            if h >= first, h - first < UInt64(count) {
                let g = Int(h - first)
                if UInt64(bitPattern: self[g]) == h && (g == 0 || UInt64(bitPattern: self[g - 1]) < h) { return g }
            }
        }
        var lo = 0
        var hi = count
        while lo < hi {
            let mid = (lo &+ hi) >> 1
            if UInt64(bitPattern: self[mid]) < h { lo = mid &+ 1 } else { hi = mid }
        }
        return lo
    }
}

extension LaneCursor {
    /// Every value in order, decoded in one pass: what reading them one at a time gives, with each
    /// value's word and shift carried from the one before rather than worked out anew, and a loop
    /// of its own for the byte-aligned widths (a segment decoded whole into a column buffer).
    func decodedValues() -> [Int64] {
        guard count > 0 else { return [] }
        return [Int64](unsafeUninitializedCapacity: count) { out, initialized in
            precondition(out.count >= count, "LaneCursor decode buffer too small")
            guard width > 0, let base else {
                // Width 0: the line alone (a packed lane of width 0 holds no words).
                var v = reference
                for i in 0..<count {
                    out[i] = v
                    v &+= slope
                }
                initialized = count
                return
            }
            let n = count
            switch width {
            case 8: decodeWholeLanes(base, out, n, reference, slope, as: UInt8.self)
            case 16: decodeWholeLanes(base, out, n, reference, slope, as: UInt16.self)
            case 32: decodeWholeLanes(base, out, n, reference, slope, as: UInt32.self)
            case 64: decodeWholeLanes(base, out, n, reference, slope, as: UInt64.self)
            default:
                // Bits `bit..<bit + width` of the little-endian words: a value that crosses a word
                // boundary takes its high bits from the next word, which the lane holds (it holds
                // every word up to the last value's last bit).
                let width = self.width
                let mask = self.mask
                var start = reference
                var bit = 0
                for i in 0..<n {
                    let w = bit >> 6
                    let shift = bit & 63
                    var v = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: w &* 8, as: UInt64.self)) >> UInt64(shift)
                    if shift &+ width > 64 {
                        v |= UInt64(littleEndian: base.loadUnaligned(fromByteOffset: (w &+ 1) &* 8, as: UInt64.self)) << UInt64(64 &- shift)
                    }
                    out[i] = start &+ Int64(bitPattern: v & mask)
                    start &+= slope
                    bit &+= width
                }
            }
            initialized = n
        }
    }
}

/// Lanes of whole bytes (`T` wide, unsigned, little-endian) copied out, each added to its point
/// on the line `reference + i·slope` (``LaneCursor/decodedValues()``).
private func decodeWholeLanes<T: FixedWidthInteger & UnsignedInteger>(
    _ base: UnsafeRawPointer, _ out: UnsafeMutableBufferPointer<Int64>, _ n: Int, _ reference: Int64, _ slope: Int64, as: T.Type
) {
    var start = reference
    for i in 0..<n {
        let raw = T(littleEndian: base.loadUnaligned(fromByteOffset: i &* MemoryLayout<T>.size, as: T.self))
        out[i] = start &+ Int64(truncatingIfNeeded: raw)
        start &+= slope
    }
}

extension Int64Array {
    var cursor: LaneCursor { LaneCursor(base: base, count: count, width: 64, reference: 0, slope: 0, mask: ~0) }
}

extension PackedIntArray {
    @inline(__always)
    var cursor: LaneCursor { LaneCursor(base: base, count: count, width: width, reference: reference, slope: slope, mask: mask) }
}

extension IntegerLane {
    /// The lane's owner-free cursor: it reads bytes it does not own, so whoever uses it keeps the
    /// lane (or what holds it) alive meanwhile.
    package var cursor: LaneCursor {
        switch self {
        case .plain(let p): p.cursor
        case .packed(let p): p.cursor
        }
    }

    /// The position of `value` in an ascending lane, or nil: the cursor's search, with the lane,
    /// and so the bytes the cursor reads, kept alive until it is done (a lane read from a
    /// temporary segment may otherwise be released before the search reads its bytes).
    package func sortedIndex(of value: Int64) -> Int? {
        withExtendedLifetime(self) { cursor.sortedIndex(of: value) }
    }
}

/// The items of a bytes array (offsets into a blob) without their owners.
package struct ItemsCursor: @unchecked Sendable {
    let offsets: UnsafeRawPointer?
    let blob: UnsafeRawPointer?
    let blobCount: Int
    let count: Int

    init(offsets: UnsafeRawPointer?, blob: UnsafeRawPointer?, blobCount: Int, count: Int) {
        self.offsets = offsets
        self.blob = blob
        self.blobCount = blobCount
        self.count = count
    }

    /// Item `i` decoded as UTF-8 (invalid sequences repaired); nil when `i` is out of range or its
    /// offsets are out of order or leave the blob (a damaged segment).
    @inline(__always)
    package func string(_ i: Int) -> String? {
        guard let (a, b) = itemBounds(i) else { return nil }
        guard a < b, let blob else { return "" }
        return decodeUTF8(blob + a, count: b &- a)
    }

    /// Where item `i` lies in the blob (`a..<b`); nil when `i` is out of range or its offsets are
    /// out of order or leave the blob.
    @inline(__always)
    func itemBounds(_ i: Int) -> (Int, Int)? {
        guard i >= 0, i < count else { return nil }
        let a = Int(UInt32(littleEndian: offsets!.loadUnaligned(fromByteOffset: i &* 4, as: UInt32.self)))
        let b = Int(UInt32(littleEndian: offsets!.loadUnaligned(fromByteOffset: i &* 4 &+ 4, as: UInt32.self)))
        guard a <= b, b <= blobCount else { return nil }
        return (a, b)
    }
}

/// Bytes an item is compared with by ``ItemsCursor/matches(_:_:whole:atEnd:)``, with their first
/// word ready for a one-load comparison.
package struct ItemPattern: Sendable {
    let bytes: [UInt8]
    /// The first (up to) 8 bytes, little-endian, and the mask of those that count.
    let first: UInt64
    let mask: UInt64

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
        var first: UInt64 = 0
        for (j, byte) in bytes.prefix(8).enumerated() { first |= UInt64(byte) << UInt64(j * 8) }
        self.first = first
        mask = bytes.count >= 8 ? ~0 : (1 << UInt64(bytes.count * 8)) - 1
    }
}

extension ItemsCursor {
    /// Whether item `i` is `pattern` (`whole`), or starts (or, `atEnd`, ends) with it; nil when `i`
    /// is out of range or its offsets are out of order or leave the blob. A pattern of up to 8
    /// bytes is compared with one word load where the blob has room for it.
    @inline(__always)
    func matches(_ i: Int, _ pattern: ItemPattern, whole: Bool, atEnd: Bool) -> Bool? {
        guard let (a, b) = itemBounds(i) else { return nil }
        let n = pattern.bytes.count
        if whole ? b &- a != n : b &- a < n { return false }
        guard n > 0, let blob else { return true }
        let start = atEnd ? b &- n : a
        if n <= 8, blobCount &- start >= 8 {
            return UInt64(littleEndian: blob.loadUnaligned(fromByteOffset: start, as: UInt64.self)) & pattern.mask == pattern.first
        }
        for j in 0..<n where blob.load(fromByteOffset: start &+ j, as: UInt8.self) != pattern.bytes[j] { return false }
        return true
    }
}

/// A fixed-width array's bytes, or a validity bitmap's words, without their owner.
package struct FixedCursor: @unchecked Sendable {
    let base: UnsafeRawPointer?
    let count: Int

    init(_ view: ByteView) {
        base = view.baseAddress
        count = view.count
    }

    /// The little-endian 8-byte value at `offset`; nil past the end.
    @inline(__always)
    package func u64(_ offset: Int) -> UInt64? {
        guard offset >= 0, offset <= count &- 8, let base else { return nil }
        return UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The little-endian 4-byte value at `offset`; nil past the end.
    @inline(__always)
    package func u32(_ offset: Int) -> UInt32? {
        guard offset >= 0, offset <= count &- 4, let base else { return nil }
        return UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    /// Bit `i` of a bitmap (nil past the end).
    @inline(__always)
    package func bit(_ i: Int) -> Bool? {
        guard i >= 0, let word = u64((i >> 6) &* 8) else { return nil }
        return word & (UInt64(1) << UInt64(i & 63)) != 0
    }
}

extension ByteView {
    /// The view's owner-free cursor.
    package var fixedCursor: FixedCursor { FixedCursor(self) }
}

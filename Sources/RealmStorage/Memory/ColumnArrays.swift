/// Zero-copy, read-only arrays over mapped (or owned) memory. Each keeps its memory's owner alive and
/// hides its pointer; the byte range was bounds-checked by ``ByteView`` when the array was made.
///
/// Sendable: the memory they read is immutable once published.
package struct Int64Array: RandomAccessCollection, @unchecked Sendable {
    private let owner: AnyObject?
    private let base: UnsafeRawPointer?
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
    /// Counts values for which `predicate` holds, in one tight loop.
    @inline(__always)
    package func count(where predicate: (Int64) -> Bool) -> Int {
        guard let base else { return 0 }
        var n = 0
        for i in 0..<count where predicate(Int64(littleEndian: base.loadUnaligned(fromByteOffset: i &* 8, as: Int64.self))) {
            n &+= 1
        }
        return n
    }
}

/// A bit-packed, frame-of-reference integer array: value = reference + (bits as unsigned).
package struct PackedIntArray: RandomAccessCollection, @unchecked Sendable {
    private let owner: AnyObject?
    private let base: UnsafeRawPointer?
    package let count: Int
    package let width: Int
    package let reference: Int64
    private let mask: UInt64

    init(owner: AnyObject?, base: UnsafeRawPointer?, count: Int, width: Int, reference: Int64) {
        self.owner = owner
        self.base = base
        self.count = count
        self.width = width
        self.reference = reference
        self.mask = width == 64 ? ~0 : (UInt64(1) << UInt64(width)) &- 1
    }

    /// Number of 64-bit words holding `count` values of `width` bits.
    package static func wordCount(count: Int, width: Int) -> Int { (count * width + 63) / 64 }

    package var startIndex: Int { 0 }
    package var endIndex: Int { count }

    @inline(__always)
    private func word(_ w: Int) -> UInt64 {
        UInt64(littleEndian: base!.loadUnaligned(fromByteOffset: w &* 8, as: UInt64.self))
    }

    @inline(__always)
    package subscript(i: Int) -> Int64 {
        precondition(i >= 0 && i < count, "PackedIntArray index out of range")
        if width == 0 { return reference }
        let bit = i &* width
        let w = bit >> 6
        let shift = UInt64(bit & 63)
        var v = word(w) >> shift
        if Int(shift) + width > 64 { v |= word(w + 1) << (64 &- shift) }
        return reference &+ Int64(bitPattern: v & mask)
    }

    /// Counts values for which `predicate` holds.
    @inline(__always)
    package func count(where predicate: (Int64) -> Bool) -> Int {
        var n = 0
        for i in 0..<count where predicate(self[i]) { n &+= 1 }
        return n
    }
}

/// A zero-copy array of little-endian Double values.
package struct DoubleArray: RandomAccessCollection, @unchecked Sendable {
    private let owner: AnyObject?
    private let base: UnsafeRawPointer?
    package let count: Int
    init(owner: AnyObject?, base: UnsafeRawPointer?, count: Int) {
        self.owner = owner
        self.base = base
        self.count = count
    }
    package var startIndex: Int { 0 }
    package var endIndex: Int { count }
    @inline(__always)
    package subscript(i: Int) -> Double {
        precondition(i >= 0 && i < count, "DoubleArray index out of range")
        return Double(bitPattern: UInt64(littleEndian: base!.loadUnaligned(fromByteOffset: i &* 8, as: UInt64.self)))
    }
}

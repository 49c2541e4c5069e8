/// UTF-8 bytes read in place as a `String`, short ASCII ones without the standard library's
/// generic path.
///
/// `String(decoding:as:)` spends ~170 instructions on a 9-byte ASCII name (it checks for ASCII,
/// repairs, then copies byte by byte into its inline form), more than the rest of a property read.
/// A string of at most 15 ASCII bytes is a "small" string: its two words are the bytes themselves
/// (little-endian, first word first) with the count and the flags immortal, ASCII and small in the
/// top byte (`0xE0 | count`), the layout of Swift's ABI-stable `String` on 64-bit platforms. Such
/// a string is built here from two word loads. Everything else (longer, non-ASCII, or too close to
/// the end of its memory to load 16 bytes) takes the standard path, which also repairs invalid
/// UTF-8. `ShortStringTests` checks both against `String(decoding:as:)`.
@inlinable @inline(__always)
func decodeUTF8(_ start: UnsafeRawPointer, count: Int, readable: Int) -> String {
    #if _pointerBitWidth(_64) && _endian(little)
        if let words = smallASCIIWords(start, count: count, readable: readable) { return unsafeBitCast(words, to: String.self) }
    #endif
    return String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
}

/// The two words of the small `String` holding the `count` bytes at `start` (see
/// ``decodeUTF8(_:count:readable:)``), read with two word loads; nil when they are more than 15,
/// not all ASCII, or fewer than 16 bytes are `readable` there.
@inlinable @inline(__always)
func smallASCIIWords(_ start: UnsafeRawPointer, count: Int, readable: Int) -> (UInt64, UInt64)? {
    #if _pointerBitWidth(_64) && _endian(little)
        guard count <= 15, readable >= 16 else { return nil }
        var first = start.loadUnaligned(as: UInt64.self)
        var second = start.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        if count < 8 {
            first &= (1 &<< UInt64(count &* 8)) &- 1
            second = 0
        } else {
            second &= (1 &<< UInt64((count &- 8) &* 8)) &- 1
        }
        guard (first | second) & 0x8080_8080_8080_8080 == 0 else { return nil }
        return (first, second | (0xE0 | UInt64(count)) &<< 56)
    #else
        return nil
    #endif
}

/// The items of a decoded string array kept a second time, each in the two words of Swift's small
/// `String` form (see ``decodeUTF8(_:count:readable:)``), 16 bytes per item: a read of a short
/// ASCII item is then one load from one place, where the offsets and the blob are two dependent
/// loads from two (two cache misses on a random row). An item that is longer, not ASCII or damaged
/// has two zero words there (a real small string's second word never is zero: its top byte holds
/// the count and the flags) and is read from the offsets.
///
/// Made only for arrays already decoded into memory (LZ4), where it costs memory but no mapping.
package final class ShortStringTable: @unchecked Sendable {
    private let base: UnsafeMutableRawPointer
    /// The number of items.
    package let count: Int
    /// The bytes the table takes.
    package var size: Int { count * 16 }

    /// The table of `items`, or nil when fewer than half of them are short ASCII strings (the
    /// table would not pay for its memory).
    package init?(_ items: ItemsCursor) {
        let n = items.count
        guard n > 0, n <= Int.max / 16 else { return nil }
        let memory = UnsafeMutableRawPointer.allocate(byteCount: n * 16, alignment: 16)
        var short = 0
        for i in 0..<n {
            let (first, second) = items.smallStringWords(i) ?? (0, 0)
            if second != 0 { short += 1 }
            memory.storeBytes(of: first, toByteOffset: i * 16, as: UInt64.self)
            memory.storeBytes(of: second, toByteOffset: i * 16 + 8, as: UInt64.self)
        }
        // Decided before the stored properties are set: failing later would run `deinit` too.
        guard short * 2 >= n else {
            memory.deallocate()
            return nil
        }
        base = memory
        count = n
    }

    deinit { base.deallocate() }

    /// The table's owner-free cursor (valid while the table is alive).
    package var cursor: ShortStringCursor { ShortStringCursor(base: UnsafeRawPointer(base), count: count) }
}

/// A ``ShortStringTable`` without its owner.
public struct ShortStringCursor: @unchecked Sendable {
    @usableFromInline let base: UnsafeRawPointer
    @usableFromInline let count: Int

    init(base: UnsafeRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    /// Item `i` when it is a short ASCII string; nil otherwise (the caller reads the offsets).
    @inlinable @inline(__always)
    public func string(_ i: Int) -> String? {
        guard i >= 0, i < count else { return nil }
        let second = base.load(fromByteOffset: i &* 16 &+ 8, as: UInt64.self)
        guard second != 0 else { return nil }
        #if _pointerBitWidth(_64) && _endian(little)
            return unsafeBitCast((base.load(fromByteOffset: i &* 16, as: UInt64.self), second), to: String.self)
        #else
            return nil
        #endif
    }
}

extension ItemsCursor {
    /// The two words of item `i` as a small ASCII `String` (see ``decodeUTF8(_:count:readable:)``),
    /// or nil when it is longer than 15 bytes, not ASCII, or its offsets are damaged. Reads byte by
    /// byte, so an item at the very end of the blob is covered too.
    func smallStringWords(_ i: Int) -> (UInt64, UInt64)? {
        #if _pointerBitWidth(_64) && _endian(little)
            guard let (a, b) = itemBounds(i), b - a <= 15 else { return nil }
            if b - a > 0, let words = smallASCIIWords(blob! + a, count: b - a, readable: blobCount - a) { return words }
            // Too near the blob's end for two word loads (or empty): byte by byte.
            var words: (UInt64, UInt64) = (0, 0)
            for j in 0..<(b - a) {
                let byte = blob!.load(fromByteOffset: a + j, as: UInt8.self)
                guard byte < 0x80 else { return nil }
                if j < 8 {
                    words.0 |= UInt64(byte) << UInt64(j * 8)
                } else {
                    words.1 |= UInt64(byte) << UInt64((j - 8) * 8)
                }
            }
            words.1 |= (0xE0 | UInt64(b - a)) << 56
            return words
        #else
            return nil
        #endif
    }
}

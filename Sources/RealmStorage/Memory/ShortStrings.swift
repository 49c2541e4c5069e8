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
        if count <= 15, readable >= 16 {
            var first = start.loadUnaligned(as: UInt64.self)
            var second = start.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            if count < 8 {
                first &= (1 &<< UInt64(count &* 8)) &- 1
                second = 0
            } else {
                second &= (1 &<< UInt64((count &- 8) &* 8)) &- 1
            }
            if (first | second) & 0x8080_8080_8080_8080 == 0 {
                return unsafeBitCast((first, second | (0xE0 | UInt64(count)) &<< 56), to: String.self)
            }
        }
    #endif
    return String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
}

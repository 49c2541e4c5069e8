/// UTF-8 bytes read in place as a `String` (invalid UTF-8 is repaired, as `String(decoding:as:)`
/// does).
@inlinable @inline(__always)
func decodeUTF8(_ start: UnsafeRawPointer, count: Int) -> String {
    String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
}

/// The items of a decoded string array kept a second time as ready `String`s, for the items of at
/// most 15 ASCII bytes (each a small string: held in the array's 16 bytes, no allocation): a read
/// of such an item is then one load from one place, where the offsets and the blob are two
/// dependent loads from two (two cache misses on a random row), plus the decoding. Other items
/// are nil there and are read from the offsets.
///
/// Made only for arrays already decoded into memory (LZ4), where it costs memory but no mapping.
/// Immutable once made.
package final class ShortStringTable: Sendable {
    private let strings: [String?]
    /// The number of items.
    package var count: Int { strings.count }
    /// The bytes the table takes.
    package var size: Int { Self.size(count: strings.count) }

    /// The bytes a table of `count` items takes.
    package static func size(count: Int) -> Int { count * MemoryLayout<String?>.stride }

    /// The table of `items`, or nil when fewer than half of them are short ASCII strings (the
    /// table would not pay for its memory).
    package init?(_ items: ItemsCursor) {
        let n = items.count
        guard n > 0 else { return nil }
        var strings: [String?] = []
        strings.reserveCapacity(n)
        var short = 0
        for i in 0..<n {
            let s = items.shortASCIIString(i)
            if s != nil { short += 1 }
            strings.append(s)
        }
        guard short * 2 >= n else { return nil }
        self.strings = strings
    }

    /// Item `i` when it is a short ASCII string; nil otherwise (the caller reads the offsets).
    @inline(__always)
    package func string(_ i: Int) -> String? {
        guard i >= 0, i < strings.count else { return nil }
        return strings[i]
    }
}

extension ItemsCursor {
    /// Item `i` as a `String` when it is at most 15 bytes, all ASCII (nil otherwise, or when its
    /// offsets are damaged).
    func shortASCIIString(_ i: Int) -> String? {
        guard let (a, b) = itemBounds(i), b - a <= 15, let blob else { return nil }
        let bytes = UnsafeRawBufferPointer(start: blob + a, count: b - a)
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}

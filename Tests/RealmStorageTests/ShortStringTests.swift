import RealmTestSupport
import Testing

@testable import RealmStorage

/// Strings read in place (``ItemsCursor``, ``ByteView``) equal `String(decoding:as:)` of their
/// bytes, whichever way they are built: short ASCII ones from two words, the rest by the
/// standard library.
@Suite struct ShortStringTests {
    /// The offsets (little-endian u32, one more than the items) and the blob of `items`.
    static func offsetsArray(_ items: [[UInt8]]) -> (offsets: [UInt8], blob: [UInt8]) {
        var offsets: [UInt8] = []
        var blob: [UInt8] = []
        for item in items {
            offsets += withUnsafeBytes(of: UInt32(blob.count).littleEndian, Array.init)
            blob += item
        }
        offsets += withUnsafeBytes(of: UInt32(blob.count).littleEndian, Array.init)
        return (offsets, blob)
    }

    /// Items of every length from 0 to 40, ASCII or not, some with invalid UTF-8, placed so that
    /// some end right at the blob's end (no 16 bytes to load there).
    @Test func itemsMatchTheStandardDecoding() throws {
        var rng = SplitMix(seed: 7)
        var items: [[UInt8]] = []
        for length in 0...40 {
            for kind in 0..<4 {
                var bytes = (0..<length).map { _ in UInt8(0x20 + rng.next() % 0x5F) }
                if kind == 1, length > 0 { bytes[Int(rng.next() % UInt64(length))] = 0xC3 }  // a lone lead byte
                if kind == 2, length >= 2 { bytes.replaceSubrange(0..<2, with: [0xC3, 0xA9]) }  // "é"
                if kind == 3, length > 0 { bytes[length - 1] = 0x7F }
                items.append(bytes)
            }
        }
        items += [[0x80], Array("name-1234".utf8), Array("exactly15bytes!".utf8), Array("sixteen bytes ok".utf8)]
        for tail in 0..<items.count {
            // The item `tail` last: it ends at the blob's end.
            // (Led by short items, so that most are short and the one-load table is made.)
            var order = (0..<100).map { Array("p\($0)".utf8) } + items
            order.append(order.remove(at: 100 + tail))
            let (offsets, blob) = Self.offsetsArray(order)
            let offsetView = ByteView(copying: offsets)
            let blobView = ByteView(copying: blob)
            let cursor = try offsetView.itemsCursor(count: order.count, blob: blobView)
            // The one-load table has every short ASCII item, and only those.
            let owner = try #require(ShortStringTable(cursor))
            let table = owner
            for (i, item) in order.enumerated() {
                let expected = String(decoding: item, as: UTF8.self)
                if item.count <= 15 && item.allSatisfy({ $0 < 0x80 }) {
                    let fromTable = try #require(table.string(i))
                    #expect(fromTable == expected && Array(fromTable.utf8) == item)
                    #expect(fromTable.hashValue == expected.hashValue)
                } else {
                    #expect(table.string(i) == nil)
                }
                let read = try #require(cursor.string(i))
                #expect(read == expected)
                #expect(Array(read.utf8) == Array(expected.utf8))
                #expect(read.count == expected.count && read.hashValue == expected.hashValue)
                let start = blob.count - order[i...].reduce(0) { $0 + $1.count }
                #expect(try blobView.string(start, item.count) == expected || item.isEmpty)
            }
            withExtendedLifetime((owner, offsetView, blobView)) {}
        }
    }

    /// ``ItemsCursor/matches(_:_:whole:atEnd:)`` (the scans' `==`, BEGINSWITH and ENDSWITH on
    /// bytes) agrees with comparing the bytes for needles of every length from 0 to 20, at every
    /// place in the blob (the last item included: no word to load past it), and declines damaged
    /// offsets and rows out of range.
    @Test func itemMatchesAgreeWithComparingBytes() throws {
        var rng = SplitMix(seed: 3)
        let items: [[UInt8]] = (0..<300).map { i in (0..<(i % 23)).map { _ in UInt8(0x61 + rng.next() % 3) } }
        let (offsets, blob) = Self.offsetsArray(items)
        let offsetView = ByteView(copying: offsets)
        let blobView = ByteView(copying: blob)
        let cursor = try offsetView.itemsCursor(count: items.count, blob: blobView)
        for length in 0...20 {
            for _ in 0..<6 {
                let needle = (0..<length).map { _ in UInt8(0x61 + rng.next() % 3) }
                let pattern = ItemPattern(needle)
                for (i, item) in items.enumerated() {
                    #expect(cursor.matches(i, pattern, whole: true, atEnd: false) == (item == needle))
                    #expect(cursor.matches(i, pattern, whole: false, atEnd: false) == item.starts(with: needle))
                    #expect(cursor.matches(i, pattern, whole: false, atEnd: true) == item.reversed().starts(with: needle.reversed()))
                }
            }
        }
        #expect(cursor.matches(-1, ItemPattern([]), whole: false, atEnd: false) == nil)
        #expect(cursor.matches(items.count, ItemPattern([]), whole: false, atEnd: false) == nil)
        var damaged = offsets
        damaged[4 * 5 + 1] = 0xFF  // item 4 ends (and item 5 starts) past the blob
        let damagedView = ByteView(copying: damaged)
        let damagedCursor = try damagedView.itemsCursor(count: items.count, blob: blobView)
        #expect(damagedCursor.matches(4, ItemPattern([0x61]), whole: false, atEnd: false) == nil)
        #expect(damagedCursor.matches(5, ItemPattern([0x61]), whole: false, atEnd: false) == nil)
        withExtendedLifetime((offsetView, blobView, damagedView)) {}
    }

    /// A table is made only when at least half the items are short ASCII strings.
    @Test func tablesOfMostlyLongItemsAreNotMade() throws {
        for (short, long) in [(1, 2), (0, 5), (2, 1), (3, 3)] {
            let items = Array(repeating: Array("ab".utf8), count: short) + Array(repeating: Array("é-sixteen-bytes!".utf8), count: long)
            let (offsets, blob) = Self.offsetsArray(items)
            // (The views stay alive while their owner-free cursor is read.)
            let offsetView = ByteView(copying: offsets)
            let blobView = ByteView(copying: blob)
            let cursor = try offsetView.itemsCursor(count: items.count, blob: blobView)
            #expect((ShortStringTable(cursor) != nil) == (short * 2 >= items.count))
            withExtendedLifetime((offsetView, blobView)) {}
        }
    }

    /// A short string built from words behaves as any other: it appends, compares, hashes and
    /// survives being stored and copied.
    @Test func builtStringsBehave() throws {
        let blob = ByteView(copying: Array("name-1234 and some padding past sixteen bytes".utf8))
        let s = try blob.string(0, 9)
        #expect(s == "name-1234")
        #expect(s + "!" == "name-1234!")
        #expect(s.hasPrefix("name-1"))
        #expect(Set([s, "name-1234"]).count == 1)
        #expect(s.utf8.count == 9 && s.unicodeScalars.count == 9)
        var copies = Array(repeating: s, count: 3)
        copies[1] += "x"
        #expect(copies == ["name-1234", "name-1234x", "name-1234"])
        #expect(try blob.string(0, 15) == "name-1234 and s")
        #expect(try blob.string(0, 1) == "n")
    }
}

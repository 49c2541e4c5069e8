import RealmTestSupport
import Testing

@testable import RealmStorage

/// The helpers that build byte arrays and arrays for the commit path give what their plain
/// standard-library equivalents give, at every size they switch strategy at.
@Suite struct ByteBuildingTests {
    @Test func newBytesKeepsWhatTheFillerWrote() {
        for count in [0, 1, 7, 80, 1 << 14, (1 << 14) + 1, 100_000] {
            for written in Set([0, count / 2, count]) {
                let bytes = newBytes(count: count) { buffer in
                    #expect(buffer.count >= count)
                    for i in 0..<written { buffer[i] = UInt8(truncatingIfNeeded: i &* 31 &+ 5) }
                    return written
                }
                #expect(bytes == (0..<written).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) })
            }
        }
    }

    @Test func filledArrayAndPrefixCopyMatchTheStandardOnes() {
        for count in [0, 1, 33, 1000] {
            #expect(filledArray(Int64(-3), count: count) == [Int64](repeating: -3, count: count))
            #expect(filledArray(false, count: count) == [Bool](repeating: false, count: count))
            let source = (0..<count).map { Int64($0) * 7 }
            for prefix in Set([0, count / 3, count]) {
                let copy = prefixCopy(source, prefix, capacity: count + 10)
                #expect(copy == Array(source.prefix(prefix)))
                #expect(copy.capacity >= count + 10)
            }
        }
    }

    /// The commit buffer: room for a head written last, a checksum of what follows it.
    @Test func writerOverwritesAndHashesFromAnOffset() {
        var w = ByteWriter(capacity: 4)
        w.zeros(16)
        w.u64(0x0102_0304_0506_0708)
        w.u32(9)
        #expect(w.count == 28)
        #expect(w.bytes.prefix(16).allSatisfy { $0 == 0 })
        #expect(w.checksum(from: 16) == XXH64.hash(Array(w.bytes[16...])))
        #expect(w.checksum(from: 28) == XXH64.hash([]))
        w.overwrite([0xAA, 0xBB], at: 3)
        #expect(Array(w.bytes[2..<6]) == [0, 0xAA, 0xBB, 0])
        #expect(w.checksum(from: 0) == w.checksum())
    }
}

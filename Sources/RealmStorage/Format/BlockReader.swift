/// A sequential, bounds-checked reader over a block's bytes; every read throws
/// ``StorageError/Code/corrupted`` (with the absolute offset) instead of running past the block.
struct BlockReader {
    let view: ByteView
    var offset: Int

    init(_ view: ByteView, at offset: Int = 0) {
        self.view = view
        self.offset = offset
    }

    mutating func u8() throws -> UInt8 { defer { offset += 1 }; return try view.u8(offset) }
    mutating func u16() throws -> UInt16 { defer { offset += 2 }; return try view.u16(offset) }
    mutating func u32() throws -> UInt32 { defer { offset += 4 }; return try view.u32(offset) }
    mutating func u64() throws -> UInt64 { defer { offset += 8 }; return try view.u64(offset) }
    mutating func i64() throws -> Int64 { defer { offset += 8 }; return try view.i64(offset) }

    mutating func string() throws -> String {
        let n = Int(try u32())
        defer { offset += n }
        return try view.string(offset, n)
    }

    /// A u32 count, checked against `max` and against the bytes that remain (each item ≥ 1 byte).
    mutating func count(max: Int, _ what: String) throws -> Int {
        let n = Int(try u32())
        guard n <= max, n <= view.count - offset else { throw corrupted("\(what) \(n) is implausible") }
        return n
    }

    /// An unsigned LEB128 value of at most 10 bytes (Spec/FORMAT.md §2.1).
    mutating func uleb128() throws -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<10 {
            let b = try u8()
            guard i < 9 || b <= 1 else { throw corrupted("ULEB128 value longer than 64 bits") }
            value |= UInt64(b & 0x7F) << (7 * UInt64(i))
            if b < 0x80 { return value }
        }
        throw corrupted("ULEB128 value longer than 10 bytes")
    }

    mutating func ref() throws -> BlockRef {
        BlockRef(offset: try u64(), length: try u64())
    }

    func corrupted(_ reason: String) -> StorageError { StorageError.corrupted(reason, at: view.origin + offset) }
}

/// Where a block lives: its absolute offset and length (trailing checksum included).
package struct BlockRef: Hashable, Sendable, BitwiseCopyable, CustomStringConvertible {
    package var offset: UInt64
    package var length: UInt64
    package static let none = BlockRef(offset: 0, length: 0)
    package var isNone: Bool { length == 0 }
    package var description: String { isNone ? "none" : "@\(offset)+\(length)" }
}

extension ByteWriter {
    mutating func ref(_ r: BlockRef) {
        u64(r.offset)
        u64(r.length)
    }

    /// Pads to 8 bytes and appends the XXH64 checksum of everything written (Spec/FORMAT.md §2.3).
    mutating func sealBlock() {
        pad()
        u64(checksum())
    }
}

/// The checksum trailer of an encoded block: its last 8 bytes, little-endian (§2.3); read from
/// the bytes in hand, without copying them into a view.
func blockTrailer(_ bytes: [UInt8]) -> UInt64 {
    var v: UInt64 = 0
    for i in 0..<8 { v |= UInt64(bytes[bytes.count - 8 + i]) << UInt64(8 * i) }
    return v
}

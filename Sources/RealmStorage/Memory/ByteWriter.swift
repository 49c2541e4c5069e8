/// A growable little-endian byte buffer used to build blocks before they are written.
package struct ByteWriter: Sendable {
    package private(set) var bytes: [UInt8]
    /// Where the block being written starts: padding and ``checksum(seed:)`` count from here, so a
    /// block can be built in place at the end of a larger buffer (a commit's) instead of in an
    /// array of its own that is then copied.
    package private(set) var blockStart = 0

    package init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    package var count: Int { bytes.count }

    @inline(__always) package mutating func u8(_ v: UInt8) { bytes.append(v) }
    @inline(__always) package mutating func u16(_ v: UInt16) { appendLE(v) }
    @inline(__always) package mutating func u32(_ v: UInt32) { appendLE(v) }
    @inline(__always) package mutating func u64(_ v: UInt64) { appendLE(v) }
    @inline(__always) package mutating func i64(_ v: Int64) { appendLE(UInt64(bitPattern: v)) }
    @inline(__always) package mutating func i32(_ v: Int32) { appendLE(UInt32(bitPattern: v)) }
    /// An unsigned LEB128 value (Spec/FORMAT.md §2.1).
    package mutating func uleb128(_ v: UInt64) { appendULEB128(v, to: &bytes) }
    package mutating func append(_ b: [UInt8]) { bytes.append(contentsOf: b) }
    /// Appends a sequence's bytes, copied in one step when they are contiguous (a native string's
    /// UTF-8 view, an array).
    package mutating func append<S: Sequence>(contentsOf s: S) where S.Element == UInt8 {
        if s.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil { bytes.append(contentsOf: s) }
    }

    /// A u32 length followed by the UTF-8 bytes.
    package mutating func string(_ s: String) {
        let u = Array(s.utf8)
        u32(UInt32(u.count))
        append(u)
    }

    /// Appends zero bytes up to a multiple of `alignment` from ``blockStart``.
    package mutating func pad(to alignment: Int = 8) {
        while (bytes.count - blockStart) % alignment != 0 { bytes.append(0) }
    }

    /// Starts a block at the current end (see ``blockStart``) and returns where it starts.
    package mutating func beginBlock() -> Int {
        blockStart = bytes.count
        return blockStart
    }

    /// Appends Int64 values in bulk.
    package mutating func int64s(_ values: [Int64]) { bulk(values) { $0.appendLE($1) } }

    /// Appends UInt64 words in bulk (fixed-size records built as words, then copied at once).
    package mutating func u64s(_ values: [UInt64]) { bulk(values) { $0.appendLE($1) } }

    /// Appends Double values in bulk (their bit patterns, little-endian).
    package mutating func doubles(_ values: [Double]) { bulk(values) { $0.appendLE($1.bitPattern) } }

    /// Appends `values`' little-endian bytes: on a little-endian machine that is their memory,
    /// copied at once into the new room; elsewhere `appendLE` writes each.
    private mutating func bulk<T: BitwiseCopyable>(_ values: [T], appendLE: (inout ByteWriter, T) -> Void) {
        #if _endian(little)
            let n = values.count * MemoryLayout<T>.size
            guard n > 0 else { return }
            bytes.append(addingCapacity: n) { out in
                out.withUnsafeMutableBufferPointer { buf, initialized in
                    values.withUnsafeBytes { UnsafeMutableRawBufferPointer(buf).copyMemory(from: $0) }
                    initialized = n
                }
            }
        #else
            for v in values { appendLE(&self, v) }
        #endif
    }

    /// XXH64 of everything written since ``blockStart``.
    package func checksum(seed: UInt64 = 0) -> UInt64 { checksum(from: blockStart, seed: seed) }

    /// XXH64 of the bytes written from `offset` on.
    package func checksum(from offset: Int, seed: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { XXH64.hash(UnsafeRawBufferPointer(rebasing: $0[offset...]), seed: seed) }
    }

    /// Drops the bytes from `offset` on, keeping the buffer's capacity (a commit's buffer, once its
    /// blocks are in the file, is filled again).
    package mutating func removeAll(from offset: Int) {
        bytes.removeSubrange(offset...)
        blockStart = min(blockStart, offset)
    }

    /// Appends `count` zero bytes.
    package mutating func zeros(_ count: Int) { bytes.append(contentsOf: repeatElement(0, count: count)) }

    /// Overwrites bytes already written, from `offset`.
    package mutating func overwrite(_ b: [UInt8], at offset: Int) {
        precondition(offset >= 0 && offset + b.count <= bytes.count, "overwrite past the end")
        bytes.replaceSubrange(offset..<(offset + b.count), with: b)
    }

    /// Byte by byte: single-byte appends inline to a capacity check and a store, where appending
    /// the value's bytes as a buffer went through the generic `append(contentsOf:)` (most of the
    /// time of encoding a row-group list or an index directory), and appending them through an
    /// output span took a closure call each.
    @inline(__always)
    private mutating func appendLE<T: FixedWidthInteger>(_ v: T) {
        var x = v
        for _ in 0..<MemoryLayout<T>.size {
            bytes.append(UInt8(truncatingIfNeeded: x))
            x >>= 8
        }
    }
}

/// Appends `value` as unsigned LEB128: seven bits per byte, least significant first, the high bit
/// set on every byte but the last.
package func appendULEB128(_ value: UInt64, to out: inout [UInt8]) {
    var v = value
    while v >= 0x80 {
        out.append(UInt8(v & 0x7F) | 0x80)
        v >>= 7
    }
    out.append(UInt8(v))
}

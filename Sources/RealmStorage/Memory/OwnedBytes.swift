/// Heap memory owned by one object and freed when it goes away: the backing of decoded (for example
/// LZ4-decompressed) segments, and of byte views built from arrays.
///
/// Immutable after initialization, so it is `Sendable`: the pointer is written only in `init`.
package final class OwnedBytes: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    package let count: Int

    /// Allocates `count` bytes (8-byte aligned) and lets `fill` write them once.
    package init(count: Int, fill: (inout ByteFiller) throws -> Void) rethrows {
        self.count = count
        self.base = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
        var filler = ByteFiller(base: base, count: count)
        // `self` is fully initialized here, so a throw releases it and `deinit` frees `base`:
        // freeing it here as well was a double free (found by the SegmentDecode fuzzer).
        try fill(&filler)
    }

    /// Copies `bytes`.
    package convenience init(_ bytes: [UInt8]) {
        self.init(count: bytes.count) { $0.copy(bytes, at: 0) }
    }

    deinit { base.deallocate() }

    /// A bounded view of all bytes; `origin` is the file offset the bytes stand for (for error messages).
    package func view(origin: Int = 0) -> ByteView {
        ByteView(owner: self, base: UnsafeRawPointer(base), count: count, origin: origin)
    }
}

/// The write access handed to ``OwnedBytes/init(count:fill:)``; cannot outlive the closure's purpose
/// because it only offers bounds-checked copies.
package struct ByteFiller {
    fileprivate let base: UnsafeMutableRawPointer
    package let count: Int

    /// Copies `bytes` to `offset`; precondition: they fit.
    package mutating func copy(_ bytes: [UInt8], at offset: Int) {
        precondition(offset >= 0 && offset + bytes.count <= count, "ByteFiller overflow")
        bytes.withUnsafeBytes { src in
            if let s = src.baseAddress { (base + offset).copyMemory(from: s, byteCount: src.count) }
        }
    }

    /// Lets a C routine (the LZ4 decoder) write the whole buffer; returns its result.
    package mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeMutableRawBufferPointer(start: base, count: count))
    }
}

/// A bounded, read-only window onto bytes that live in a file mapping or in ``OwnedBytes``.
///
/// Every read is checked against the window and throws ``StorageError/Code/corrupted`` with the
/// absolute file offset when it would leave it, so hostile lengths and offsets never reach memory.
/// The raw pointer never leaves this type; `owner` keeps the memory alive for as long as the view.
/// Sendable because the bytes it reads are immutable once published (append-only file, or owned
/// buffers that are never written after construction).
package struct ByteView: @unchecked Sendable {
    private let owner: AnyObject?
    private let base: UnsafeRawPointer?
    /// For the owner-free cursors of this layer only.
    var baseAddress: UnsafeRawPointer? { base }
    /// Number of bytes in the window.
    package let count: Int
    /// The file offset of the first byte (used in error messages).
    package let origin: Int

    init(owner: AnyObject?, base: UnsafeRawPointer?, count: Int, origin: Int) {
        self.owner = owner
        self.base = base
        self.count = count
        self.origin = origin
    }

    /// An empty view.
    package static let empty = ByteView(owner: nil, base: nil, count: 0, origin: 0)

    /// A view over a copy of `bytes`.
    package init(copying bytes: [UInt8], origin: Int = 0) {
        self = OwnedBytes(bytes).view(origin: origin)
    }

    @inline(__always)
    private func check(_ offset: Int, _ length: Int, _ what: @autoclosure () -> String) throws {
        guard offset >= 0, length >= 0, offset <= count, length <= count - offset else {
            throw StorageError.corrupted(
                "\(what()) of \(length) bytes at +\(offset) runs past the end of a \(count)-byte structure",
                at: origin + max(0, offset))
        }
    }

    /// When the view lies in a file mapping: lets the kernel drop the mapping's resident pages up to
    /// the end of this view (they are read back from the file on the next access), so a pass over
    /// a large file keeps its resident memory bounded. Other views stay valid.
    package func releaseResidentPages() {
        (owner as? FileMapping)?.releaseResidentPages(upTo: origin + count)
    }

    /// A sub-window; throws if it does not fit.
    package func slice(_ offset: Int, _ length: Int, _ what: @autoclosure () -> String = "slice") throws -> ByteView {
        try check(offset, length, what())
        return ByteView(owner: owner, base: base.map { $0 + offset }, count: length, origin: origin + offset)
    }

    package func u8(_ offset: Int) throws -> UInt8 {
        try check(offset, 1, "byte")
        return base!.load(fromByteOffset: offset, as: UInt8.self)
    }
    package func u16(_ offset: Int) throws -> UInt16 {
        try check(offset, 2, "u16")
        return UInt16(littleEndian: base!.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    package func u32(_ offset: Int) throws -> UInt32 {
        try check(offset, 4, "u32")
        return UInt32(littleEndian: base!.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    package func u64(_ offset: Int) throws -> UInt64 {
        try check(offset, 8, "u64")
        return UInt64(littleEndian: base!.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
    package func i64(_ offset: Int) throws -> Int64 { Int64(bitPattern: try u64(offset)) }
    package func i32(_ offset: Int) throws -> Int32 { Int32(bitPattern: try u32(offset)) }

    /// The last 8 bytes as a little-endian u64 (a block's checksum trailer); 0 for shorter views.
    package var lastWord: UInt64 { count >= 8 ? ((try? u64(count - 8)) ?? 0) : 0 }

    /// Copies `length` bytes out.
    package func bytes(_ offset: Int, _ length: Int) throws -> [UInt8] {
        try check(offset, length, "byte run")
        guard length > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: base! + offset, count: length))
    }

    /// All bytes, copied.
    package func allBytes() -> [UInt8] { (try? bytes(0, count)) ?? [] }

    /// Decodes `length` bytes at `offset` as UTF-8, repairing invalid sequences.
    package func string(_ offset: Int, _ length: Int) throws -> String {
        try check(offset, length, "string")
        guard length > 0 else { return "" }
        return decodeUTF8(base! + offset, count: length)
    }

    /// Decodes `length` bytes at `offset` as UTF-8; nil when they are not valid UTF-8.
    package func validatedString(_ offset: Int, _ length: Int) throws -> String? {
        try check(offset, length, "string")
        guard length > 0 else { return "" }
        return String(validating: UnsafeRawBufferPointer(start: base! + offset, count: length), as: UTF8.self)
    }

    /// XXH64 of `length` bytes at `offset`.
    package func checksum(_ offset: Int, _ length: Int, seed: UInt64 = 0) throws -> UInt64 {
        try check(offset, length, "checksummed range")
        return XXH64.hash(UnsafeRawBufferPointer(start: base.map { $0 + offset }, count: length), seed: seed)
    }

    /// XXH64 of a long range, hashed in pieces of `piece` bytes; on a file mapping each piece's
    /// pages leave resident memory once hashed, so checking a commit of any size stays bounded.
    package func checksumInPieces(_ offset: Int, _ length: Int, piece: Int = 8 << 20) throws -> UInt64 {
        try check(offset, length, "checksummed range")
        guard length > piece else { return try checksum(offset, length) }
        var h = XXH64.Streaming()
        var o = offset
        while o < offset + length {
            let n = min(piece, offset + length - o)
            h.update(try bytes(o, n))
            o += n
            releaseResidentPages()
        }
        return h.finalize()
    }

    /// The offsets `o` in `[from, count - 4]` with `o % 8 == 0` (relative to the view) at which the
    /// little-endian u32 `word` stands: where a block with that magic may start. Recovery's search
    /// for commit heads past a broken chain (Spec/FORMAT.md §6.6) over a file's whole tail.
    package func offsets(ofAlignedWord word: UInt32, from: Int) -> [Int] {
        guard let base, count >= 4 else { return [] }
        var found: [Int] = []
        var o = max(0, (from + 7) & ~7)
        let target = UInt32(littleEndian: word)
        while o <= count - 4 {
            if base.loadUnaligned(fromByteOffset: o, as: UInt32.self) == target { found.append(o) }
            o += 8
        }
        return found
    }

    /// Gives a C routine (the LZ4 decoder) read access to `length` bytes at `offset`.
    package func withUnsafeBytes<R>(_ offset: Int, _ length: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try check(offset, length, "byte run")
        return try body(UnsafeRawBufferPointer(start: base.map { $0 + offset }, count: length))
    }

    /// The items of an offsets-encoded bytes array read in place: `count + 1` little-endian u32
    /// offsets in this view, item `i` being `blob[offsets[i]..<offsets[i + 1]]`. The cursor holds
    /// neither view's owner: valid while the caller keeps them (see ``ItemsCursor``).
    package func itemsCursor(count n: Int, blob: ByteView) throws -> ItemsCursor {
        guard n >= 0, n < Int.max / 4 else { throw StorageError.corrupted("bad item count \(n)", at: origin) }
        try check(0, (n + 1) * 4, "offsets")
        return ItemsCursor(offsets: base, blob: blob.base, blobCount: blob.count, count: n)
    }

    /// A zero-copy view of `count` little-endian Int64 values at `offset` (must be 8-byte aligned in memory).
    package func int64Array(_ offset: Int, count n: Int) throws -> Int64Array {
        guard n >= 0, n <= Int.max / 8 else { throw StorageError.corrupted("bad element count \(n)", at: origin + offset) }
        try check(offset, n * 8, "int64 array")
        return Int64Array(owner: owner, base: base.map { $0 + offset }, count: n)
    }

    /// A zero-copy view of a bit-packed array (`width` bits per value, added to `reference`).
    package func packedArray(_ offset: Int, count n: Int, width: Int, reference: Int64, slope: Int64 = 0) throws -> PackedIntArray {
        guard n >= 0, (0...64).contains(width) else {
            throw StorageError.corrupted("bad packed array (count \(n), width \(width))", at: origin + offset)
        }
        let words = PackedIntArray.wordCount(count: n, width: width)
        try check(offset, words * 8, "packed array")
        return PackedIntArray(owner: owner, base: base.map { $0 + offset }, count: n, width: width, reference: reference, slope: slope)
    }
}

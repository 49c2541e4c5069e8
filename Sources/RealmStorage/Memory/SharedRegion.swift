import Synchronization

/// A read-write shared mapping of the start of a small coordination file (the lock file, Spec/FORMAT.md
/// §7): a write lands in the page cache every process of the file reads, with no system call.
///
/// Every access is bounds-checked against the mapped length, and the owner keeps the file at least
/// that long (it only ever grows). Concurrent readers may see a write half done — as with `pread`
/// racing a `pwrite` — so what is kept here carries its own checksum and readers retry or ignore it.
///
/// A few aligned 64-bit words are used as atomics instead (``load(word:)``,
/// ``compareExchange(word:expected:desired:)``): every process maps the same page, so these are
/// atomic across processes too.
///
/// Sendable: the base and length never change; the bytes are shared on purpose (see above).
package final class SharedRegion: @unchecked Sendable {
    private let base: UnsafeMutableRawPointer
    /// The mapped length.
    package let length: Int

    /// Maps the first `length` bytes of `file`, which must be at least that long and writable.
    package init(file: SystemFile, length: Int) throws {
        self.base = try file.mapReadWrite(length: length)
        self.length = length
    }

    deinit { SystemFile.unmap(UnsafeRawPointer(base), length: length) }

    /// Copies `bytes` to `offset`; precondition: they fit.
    package func write(_ bytes: [UInt8], at offset: Int) {
        precondition(offset >= 0 && offset <= length && bytes.count <= length - offset, "shared region overflow")
        bytes.withUnsafeBytes { src in
            guard let from = src.baseAddress else { return }
            (base + offset).copyMemory(from: from, byteCount: src.count)
        }
    }

    /// A copy of `count` bytes at `offset`; precondition: they lie inside the region.
    package func read(at offset: Int, count: Int) -> [UInt8] {
        precondition(offset >= 0 && count >= 0 && offset <= length && count <= length - offset, "shared region overread")
        return newBytes(count: count) { buffer in
            if let to = buffer.baseAddress { to.copyMemory(from: base + offset, byteCount: count) }
            return count
        }
    }

    /// The 8-aligned little-endian u64 at `offset` as an atomic; precondition: it lies inside the region.
    private func word(_ offset: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        precondition(offset >= 0 && offset % 8 == 0 && offset <= length - 8, "shared word out of range")
        return (base + offset).assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    /// Atomically reads the u64 at `offset` (acquiring).
    package func load(word offset: Int) -> UInt64 {
        UInt64(littleEndian: word(offset).pointee.load(ordering: .acquiring))
    }

    /// Atomically replaces the u64 at `offset` with `desired` if it equals `expected`; returns
    /// whether it did and the value it found.
    package func compareExchange(word offset: Int, expected: UInt64, desired: UInt64) -> (exchanged: Bool, original: UInt64) {
        let r = word(offset).pointee.compareExchange(
            expected: expected.littleEndian, desired: desired.littleEndian, ordering: .acquiringAndReleasing)
        return (r.exchanged, UInt64(littleEndian: r.original))
    }
}

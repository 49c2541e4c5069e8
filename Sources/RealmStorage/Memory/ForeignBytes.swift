/// Bytes handed over by C code as a bare pointer and a length — libFuzzer's
/// `LLVMFuzzerTestOneInput(const uint8_t *, size_t)` — copied into an array at once, so that the fuzz
/// targets (Fuzz/) hold no pointer code (CONTRIBUTING.md, "Unsafe code").
package enum ForeignBytes {
    /// A copy of the `count` bytes at `pointer` (empty for a null pointer or a count ≤ 0).
    package static func copy(_ pointer: OpaquePointer?, count: Int) -> [UInt8] {
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: UnsafePointer<UInt8>(pointer), count: count))
    }
}

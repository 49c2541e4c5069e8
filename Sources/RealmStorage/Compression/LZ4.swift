import CLZ4

/// LZ4 block compression with validated sizes; the only importer of `CLZ4`.
package enum LZ4 {
    /// Compresses `input`; returns nil when the input is empty or too large for LZ4.
    package static func compress(_ input: [UInt8]) -> [UInt8]? {
        guard !input.isEmpty, input.count <= Int(LZ4_MAX_INPUT_SIZE) else { return nil }
        let bound = Int(LZ4_compressBound(Int32(input.count)))
        let out = input.withUnsafeBytes { src in
            newBytes(count: bound) { dst in
                let n = LZ4_compress_default(
                    src.baseAddress!.assumingMemoryBound(to: CChar.self), dst.baseAddress!.assumingMemoryBound(to: CChar.self),
                    Int32(input.count), Int32(bound))
                return n > 0 ? Int(n) : 0  // 0: it did not fit
            }
        }
        return out.isEmpty ? nil : out
    }

    /// Decompresses `compressedLength` bytes at `offset` of `view` into exactly `decodedLength` bytes.
    /// Throws ``StorageError/Code/corrupted`` unless the input decodes to exactly that many bytes.
    package static func decompress(_ view: ByteView, offset: Int, compressedLength: Int, decodedLength: Int) throws -> OwnedBytes {
        guard decodedLength >= 0, decodedLength <= 1 << 30, compressedLength >= 0, compressedLength <= Int(Int32.max) else {
            throw StorageError.corrupted("implausible LZ4 sizes (\(compressedLength) → \(decodedLength))", at: view.origin + offset)
        }
        return try view.withUnsafeBytes(offset, compressedLength) { src in
            try OwnedBytes(count: decodedLength) { filler in
                let n = filler.withUnsafeMutableBytes { dst in
                    LZ4_decompress_safe(
                        src.baseAddress?.assumingMemoryBound(to: CChar.self),
                        dst.baseAddress!.assumingMemoryBound(to: CChar.self),
                        Int32(compressedLength), Int32(decodedLength))
                }
                guard Int(n) == decodedLength else {
                    throw StorageError.corrupted("LZ4 block does not decode to its stated \(decodedLength) bytes", at: view.origin + offset)
                }
            }
        }
    }
}

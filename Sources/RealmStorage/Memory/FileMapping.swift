/// A read-only shared mapping of a data file. Reserved larger than the file so that the file can grow
/// underneath without moving the base; readers only touch bytes below a committed length.
/// Unmapped when the last snapshot or view using it goes away.
///
/// Sendable: the base and length never change; the mapped bytes below any committed length are
/// immutable (the file is append-only).
package final class FileMapping: @unchecked Sendable {
    private let base: UnsafeRawPointer
    /// The reserved window length.
    package let length: Int

    package init(file: SystemFile, length: Int) throws {
        self.base = try file.mapReadOnly(length: length)
        self.length = length
    }

    deinit { SystemFile.unmap(base, length: length) }

    /// Drops the resident pages of `[0, length)` from this process (the mapping is shared and
    /// read-only, so they are read again from the file when touched).
    package func releaseResidentPages(upTo length: Int) {
        SystemFile.adviseDontNeed(base, length: min(length, self.length))
    }

    /// A bounded view of `[0, validLength)`; the caller guarantees the file is at least that long.
    package func view(validLength: Int) -> ByteView {
        precondition(validLength <= length, "view past the mapping window")
        return ByteView(owner: self, base: base, count: validLength, origin: 0)
    }
}

extension Store {
    /// Writes the newest version, with only its live data, to a new file at `path` (which must not
    /// exist). The copy is written to `path.compacting`, made durable, read back and verified (its
    /// commit checksum, every block, the object count of every table, a full ``Verifier`` pass),
    /// and only then renamed to `path`. The store itself is unchanged.
    /// - Throws: `.fileExists`, `.io`, `.corrupted` if the source cannot be read or the copy fails
    ///   verification (nothing is left at `path` then).
    @discardableResult
    public func compact(to path: String) throws -> Compactor.Result {
        try Compactor().writeVerifiedCopy(of: self, to: path)
    }

    /// Rewrites this store's file to its live data, online (Spec/FORMAT.md §8): the copy is made
    /// without the writer lock, then the commits made meanwhile are appended and the copy renamed
    /// over the file while holding it. Other stores, in this or other processes, may keep the file
    /// open, read and write throughout; they follow the new file. Snapshots taken before keep
    /// reading the old bytes until they are released. The copy is fully verified first.
    /// - Throws: `.compactionInProgress` while another store (in any process) compacts the file;
    ///   `.readOnly`; `.io`, `.corrupted` (the original file is then unchanged, or, when only syncing
    ///   the directory or opening the copy failed after the rename, replaced by the copy, which every
    ///   store then follows).
    @discardableResult
    public func compact() throws -> Compactor.Result {
        try Compactor().compact(self)
    }
}

import Foundation

/// Rewrites the newest version of a file to only its live data, streaming block by block so memory
/// stays bounded. In place: temporary file, fsync, verification, rename over the original, fsync of
/// the directory (Spec/FORMAT.md §8).
///
/// ```swift
/// let result = try Compactor().compact(store)
/// print(result.bytesBefore, "→", result.bytesAfter)
/// ```
///
/// `Sendable`; it holds no state but an optional test hook.
public struct Compactor: Sendable {
    /// The outcome of a compaction or copy.
    public struct Result: Sendable {
        /// The version copied (the copy keeps its number and commit time).
        public var version: UInt64
        /// The size of the source file.
        public var bytesBefore: Int
        /// The size of the copy.
        public var bytesAfter: Int
        /// Objects per table in the copy, equal to the source's.
        public var objectCounts: [String: Int]
    }

    /// What a compaction is doing.
    public enum Phase: Sendable, Equatable {
        /// Writing the copy: ``Progress/bytesWritten`` of about ``Progress/bytesExpected``.
        case copying
        /// Reading the whole copy back: checksums, object counts and a full ``Verifier`` pass.
        case verifying
        /// Renaming the verified copy into place and syncing the directory.
        case replacing
    }

    /// A progress report, given to the `progress` closure of ``writeCopy(of:to:progress:)`` and
    /// ``compact(_:progress:)`` as the work goes on.
    public struct Progress: Sendable {
        public var phase: Phase
        /// Bytes of the copy written so far.
        public var bytesWritten: Int
        /// The source version's live bytes: about the size the copy will have.
        public var bytesExpected: Int

        package init(phase: Phase, bytesWritten: Int, bytesExpected: Int) {
            self.phase = phase
            self.bytesWritten = bytesWritten
            self.bytesExpected = bytesExpected
        }
    }

    /// Called with the temporary copy's path after it is written and before it is verified (tests
    /// damage the copy here to show that verification stops the replacement).
    package var beforeVerification: (@Sendable (String) -> Void)?

    public init() {}

    /// Writes the newest version of `store` to a new file at `destination` (which must not exist).
    /// The copy is made durable but not verified (``Store/compact(to:)`` and
    /// ``writeVerifiedCopy(of:to:replacing:syncingDirectory:progress:renamed:)`` verify it); a failure
    /// removes it.
    /// - Throws: `.fileExists`, `.io`, `.corrupted` if the source cannot be read.
    @discardableResult
    public func writeCopy(of store: Store, to destination: String, progress: ((Progress) -> Void)? = nil) throws -> Result {
        let s = try store.snapshot(kind: "other")
        let out = try SystemFile.open(destination, .createNew)
        do {
            var w = StreamingWriter(file: out, offset: FileHeader.size)
            let laidOut = try Self.layOut(s, into: &w, progress: progress)
            try w.flush()
            var header = FileHeader.encodeStatic()
            header += [UInt8](repeating: 0, count: FileHeader.size - header.count)
            let slot = CommitSlot(
                version: s.version, record: laidOut.recordRef, fileLength: UInt64(w.offset), commitTime: s.record.commitTime,
                recordChecksum: blockTrailer(laidOut.recordBytes))
            let sb = slot.encode()
            header.replaceSubrange(FileHeader.slotOffsets[0]..<FileHeader.slotOffsets[0] + sb.count, with: sb)
            try out.write(header, at: 0)
            try out.syncAll()
            progress?(Progress(phase: .copying, bytesWritten: w.offset, bytesExpected: Int(s.liveBytes)))
            return Result(
                version: s.version, bytesBefore: try store.state.withLock { try $0.current.file.size() }, bytesAfter: w.offset,
                objectCounts: laidOut.counts)
        } catch {
            SystemFile.unlink(destination)
            throw error
        }
    }

    /// The exact size, in bytes, of the file that compacting `store`'s newest version writes (its
    /// live data and one version record). Reads only the row-group and index structure, never a
    /// segment's payload, and writes nothing.
    /// - Throws: `.corrupted` if the structure cannot be read.
    public func compactedSize(of store: Store) throws -> Int {
        try compactedSize(of: try store.snapshot(kind: "other"))
    }

    /// ``compactedSize(of:)-(Store)`` of one snapshot's version.
    package func compactedSize(of s: Snapshot) throws -> Int {
        var w = StreamingWriter(file: nil, offset: FileHeader.size)
        _ = try Self.layOut(s, into: &w, progress: nil)
        return w.offset
    }

    /// Appends every live block of `s` to `w` (row groups, their segments, row-group lists and
    /// indexes, then one version record without history); a counting writer only adds lengths.
    private static func layOut(
        _ s: Snapshot, into w: inout StreamingWriter, progress: ((Progress) -> Void)?
    ) throws -> (recordRef: BlockRef, recordBytes: [UInt8], counts: [String: Int]) {
        let expected = Int(s.liveBytes)
        var states: [UInt32: TableState] = [:]
        var counts: [String: Int] = [:]
        var released = 0
        for t in s.catalog.tables {
            var st = try s.tableState(t.name)
            var entries: [RowGroupEntry] = []
            var rows = 0
            for e in try s.rowGroups(st) {
                let g = try s.rowGroup(e.block)
                var ng = RowGroupBlock(rowCount: g.rowCount, keys: try w.copy(g.keys, BlockMagic.segment, from: s), columns: [:])
                for c in t.columns {
                    if let ref = g.columns[c.id] { ng.columns[c.id] = try w.copy(ref, BlockMagic.segment, from: s) }
                }
                entries.append(
                    RowGroupEntry(firstKey: e.firstKey, lastKey: e.lastKey, rowCount: e.rowCount, block: try w.append(ng.encode())))
                rows += g.rowCount
                if w.offset - released >= Self.releaseInterval {
                    // Pages of the source already copied need not stay resident: memory stays bounded.
                    s.releaseResidentPages()
                    released = w.offset
                }
                progress?(Progress(phase: .copying, bytesWritten: w.offset, bytesExpected: expected))
            }
            guard rows == Int(st.objectCount) else {
                throw StorageError.corrupted(
                    "table '\(t.name)' counts \(st.objectCount) objects but its row groups hold \(rows)",
                    at: Int(st.rowGroups.offset))
            }
            counts[t.name] = rows
            st.rowGroups = entries.isEmpty ? .none : try Self.appendList(entries, into: &w)
            for (col, ref) in st.indexes {
                var dir = try s.indexDirectory(ref)
                for i in dir.chunks.indices { dir.chunks[i].block = try w.copy(dir.chunks[i].block, BlockMagic.indexChunk, from: s) }
                st.indexes[col] = try Self.appendDirectory(dir, into: &w)
            }
            states[t.id] = st
        }
        s.releaseResidentPages()
        var record = VersionRecord(
            version: s.version, parentVersion: 0, parentRecord: .none, commitStart: UInt64(FileHeader.size),
            commitChecksum: w.hasher.finalize(), commitTime: s.record.commitTime, liveBytes: 0, catalog: s.catalog,
            tables: states, changeset: Changeset())
        let recordLength = UInt64(record.encode().count)
        record.liveBytes = UInt64(w.offset) + recordLength
        let bytes = record.encode()
        return (try w.append(bytes), bytes, counts)
    }

    /// A row-group list as a new file (format 4) holds it: one block, or pages and their table (Spec §5.4).
    private static func appendList(_ entries: [RowGroupEntry], into w: inout StreamingWriter) throws -> BlockRef {
        try Pages.write(
            entries, paged: true, base: nil, block: { slice, _ in try w.append(RowGroupEntry.encodeList(Array(slice))) },
            table: { try w.append(RowGroupEntry.encodeListPages($0)) }
        ).top
    }

    /// An index directory as a new file holds it: one block, or pages and their table (Spec §5.7).
    private static func appendDirectory(_ dir: IndexDirectory, into w: inout StreamingWriter) throws -> BlockRef {
        try Pages.write(
            dir.chunks, paged: true, base: nil,
            block: { slice, _ in try w.append(IndexDirectory(columnId: dir.columnId, chunks: Array(slice)).encode()) },
            table: { try w.append(IndexDirectory.encodePages(columnId: dir.columnId, $0)) }
        ).top
    }

    /// How many bytes the copy writes between releases of the source's resident pages.
    static let releaseInterval = 8 << 20

    /// Writes a verified copy of `store`'s newest version to `destination`: into
    /// `destination.compacting` first, made durable, read back and checked (the commit checksum,
    /// every block checksum, the object count of every table against the source, a full
    /// ``Verifier`` pass), then renamed over `destination` and the directory synced. Nothing is at
    /// `destination` until the copy has passed; a failure (or a crash) leaves it as it was.
    /// - Parameters:
    ///   - replacing: whether `destination` may exist (in-place compaction replaces the original);
    ///     otherwise an existing `destination` is `.fileExists`.
    ///   - syncingDirectory: whether to sync the directory after the rename (in-place compaction
    ///     does it itself, after switching the store to the copy).
    ///   - renamed: called right after the copy was renamed over `destination`.
    /// - Throws: `.fileExists`, `.io`, `.corrupted` (the source, or the copy failing verification).
    @discardableResult
    package func writeVerifiedCopy(
        of store: Store, to destination: String, replacing: Bool, syncingDirectory: Bool = true, progress: ((Progress) -> Void)? = nil,
        renamed: () -> Void = {}
    ) throws -> Result {
        if !replacing && SystemFile.exists(destination) {
            throw StorageError(.fileExists, "file already exists", path: destination)
        }
        let tmp = destination + ".compacting"
        SystemFile.unlink(tmp)
        let result = try writeCopy(of: store, to: tmp, progress: progress)
        progress?(Progress(phase: .verifying, bytesWritten: result.bytesAfter, bytesExpected: result.bytesAfter))
        do {
            beforeVerification?(tmp)
            try Self.verifyCopy(at: tmp, result)
        } catch {
            SystemFile.unlink(tmp)
            throw error
        }
        progress?(Progress(phase: .replacing, bytesWritten: result.bytesAfter, bytesExpected: result.bytesAfter))
        if !replacing && SystemFile.exists(destination) {
            SystemFile.unlink(tmp)
            throw StorageError(.fileExists, "file already exists", path: destination)
        }
        try SystemFile.rename(tmp, destination)
        renamed()
        if syncingDirectory { try SystemFile.syncDirectory(Self.directory(of: destination)) }
        return result
    }

    /// Opens the copy passively (recovery checks the commit's checksum over every byte written),
    /// compares version and object counts with what was copied and runs a full verification.
    static func verifyCopy(at path: String, _ expected: Result) throws {
        let copy = try Store.open(at: path, options: .passive).snapshot(kind: "other")
        guard copy.version == expected.version else {
            throw StorageError(.corrupted, "the compacted copy holds version \(copy.version), not \(expected.version)", path: path)
        }
        for (table, count) in expected.objectCounts.sorted(by: { $0.key < $1.key }) {
            let n = try copy.objectCount(table)
            guard n == count else {
                throw StorageError(.corrupted, "the compacted copy holds \(n) '\(table)' objects; the source holds \(count)", path: path)
            }
        }
        let check = Verifier().verify(copy)
        guard check.isClean else {
            throw StorageError(.corrupted, "the compacted copy failed verification: \(check.problems.first!)", path: path)
        }
    }

    /// Compacts `store`'s file in place. Refuses with `.inUseByAnotherProcess` (naming the other
    /// processes' pids) while any other store (in this or another process) has the file open; the
    /// store then continues on the new file. The copy is verified before it replaces anything (see
    /// ``writeCopy(of:to:progress:)``); `progress` hears about each step.
    /// - Throws: `.inUseByAnotherProcess`, `.readOnly`, `.io`, `.corrupted`; the original file is then
    ///   unchanged — unless the copy had already replaced it (an `.io` error syncing the directory or
    ///   opening the copy), in which case the store continues on the copy, at the latest before its
    ///   next write or ``Store/refresh()``.
    @discardableResult
    public func compact(_ store: Store, progress: ((Progress) -> Void)? = nil) throws -> Result {
        guard !store.isReadOnly else { throw StorageError(.readOnly, "the store was opened read-only", path: store.path) }
        let tx = try store.beginWrite()
        defer { tx.cancel() }
        // Hold the open byte exclusively for the whole compaction: nobody may open the old file now.
        guard try store.lockFile?.acquireExclusiveOpen() ?? true else {
            let pids = store.otherProcessIDs()
            throw StorageError(
                .inUseByAnotherProcess,
                "the file is open elsewhere" + (pids.isEmpty ? "" : " (pid \(pids.map(String.init).joined(separator: ", ")))"),
                path: store.path)
        }
        defer { store.lockFile?.releaseExclusiveOpen() }
        let result = try writeVerifiedCopy(
            of: store, to: store.path, replacing: true, syncingDirectory: false, progress: progress,
            // From the rename on, the store must continue on the copy even if what follows fails
            // (found by the Operations fuzzer: its later commits went to the unlinked original),
            // and the next writer looks at the file afresh (Spec/FORMAT.md §7).
            renamed: {
                store.state.withLock {
                    $0.fileReplaced = true
                    $0.writerUpToDate = false
                }
            })
        try store.adoptReplacedFile()
        try SystemFile.syncDirectory(Self.directory(of: store.path))
        return result
    }

    static func directory(of path: String) -> String {
        let dir = (path as NSString).deletingLastPathComponent
        return dir.isEmpty ? "." : dir
    }
}

/// Appends blocks to a file through a bounded buffer (4 MiB), tracking the next offset. Without a
/// file it only counts: ``Compactor/compactedSize(of:)`` lays out a copy that way.
struct StreamingWriter {
    let file: SystemFile?
    var offset: Int
    var buffer = ByteWriter(capacity: 0)
    var bufferStart: Int
    /// XXH64 of everything appended so far (not kept while only counting).
    var hasher = XXH64.Streaming()

    init(file: SystemFile?, offset: Int) {
        self.file = file
        self.offset = offset
        self.bufferStart = offset
        if file != nil { buffer = ByteWriter(capacity: 1 << 22) }
    }

    mutating func append(_ bytes: [UInt8]) throws -> BlockRef {
        let ref = BlockRef(offset: UInt64(offset), length: UInt64(bytes.count))
        offset += bytes.count
        guard file != nil else { return ref }
        hasher.update(bytes)
        buffer.append(bytes)
        if buffer.count >= 1 << 22 { try flush() }
        return ref
    }

    /// Copies the block at `ref` of `s` (checked against `magic` and its checksum); a counting
    /// writer takes only its length and reads nothing.
    mutating func copy(_ ref: BlockRef, _ magic: UInt32, from s: Snapshot) throws -> BlockRef {
        guard file != nil else {
            // Not read, but still bounded: a damaged length must not overflow the count.
            guard ref.offset <= UInt64(s.fileLength), ref.length <= UInt64(s.fileLength) - ref.offset else {
                throw StorageError.corrupted("block \(ref) lies outside the committed file", at: Int(clamping: ref.offset))
            }
            defer { offset += Int(ref.length) }
            return BlockRef(offset: UInt64(offset), length: ref.length)
        }
        return try append(s.block(ref, magic).allBytes())
    }

    mutating func flush() throws {
        guard let file, buffer.count > 0 else { return }
        try file.write(buffer.bytes, at: bufferStart)
        bufferStart = offset
        buffer = ByteWriter(capacity: 1 << 22)
    }
}

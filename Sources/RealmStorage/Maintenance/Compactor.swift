import Foundation

/// Rewrites the newest version of a file to only its live data, streaming block by block so memory
/// stays bounded. In place it runs online, while other stores keep the file open: temporary file,
/// fsync, verification, then under the writer lock the commits made meanwhile, rename over the
/// original and fsync of the directory (Spec/FORMAT.md §8).
///
/// ```swift
/// let result = try Compactor().compact(store)
/// print(result.bytesBefore, "→", result.bytesAfter)
/// ```
///
/// `Sendable`; it holds its verification level and optional test hooks.
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
        /// Holding the writer word: copying the commits made during the copy (online compaction).
        case catchingUp
        /// Renaming the verified copy into place and syncing the directory.
        case replacing
    }

    /// A progress report, given to the `progress` closure of ``writeCopy(of:to:progress:)`` and
    /// ``compact(_:progress:)`` as the work goes on.
    public struct Progress: Sendable {
        /// What the compaction is doing now.
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

    /// How a copy is checked before it replaces anything.
    public enum Verification: Sendable {
        /// Every block's checksum, the row-group and index structure, every table's object count,
        /// then a full ``Verifier`` pass (every segment decoded and every invariant checked).
        case full
        /// Every block's checksum, the row-group and index structure and every table's object
        /// count, without decoding segments: what automatic compaction uses (about 20 times less
        /// work than ``full`` on a file of a million objects).
        case structure
    }

    /// How the copy is checked (``Verification/full`` unless set).
    public var verification: Verification = .full

    /// Called with the temporary copy's path after it is written and before it is verified (tests
    /// damage the copy here to show that verification stops the replacement).
    package var beforeVerification: (@Sendable (String) -> Void)?

    /// A compactor with no test hooks.
    public init() {}

    /// Writes the newest version of `store` to a new file at `destination` (which must not exist).
    /// The copy is made durable but not verified (``Store/compact(to:)`` and
    /// `writeVerifiedCopy(of:to:progress:)` verify it); a failure
    /// removes it.
    /// - Throws: `.fileExists`, `.io`, `.corrupted` if the source cannot be read.
    @discardableResult
    public func writeCopy(of store: Store, to destination: String, progress: ((Progress) -> Void)? = nil) throws -> Result {
        let s = try store.snapshot(kind: "other")
        let out = try SystemFile.open(destination, .createNew)
        do {
            var w = StreamingWriter(file: out, offset: FileHeader.size)
            var map = CopyMap()
            let laidOut = try Self.layOut(s, into: &w, reusing: &map, progress: progress)
            try w.flush()
            try out.write(Self.header(slots: [Self.slot(laidOut, s, fileLength: w.offset)]), at: 0)
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
        var map = CopyMap()
        _ = try Self.layOut(s, into: &w, reusing: &map, progress: nil)
        return w.offset
    }

    /// Blocks of a source file already written to the copy, by their offset in the source (blocks
    /// of an append-only file never change): the catch-up of an online compaction writes only what
    /// the commits made during the copy wrote. Structures carry the bytes reachable from them.
    struct CopyMap {
        /// Segments and index chunks.
        var blocks: [UInt64: BlockRef] = [:]
        /// Row groups, with their segments' bytes.
        var groups: [UInt64: (ref: BlockRef, bytes: Int)] = [:]
        /// Row-group lists and index directories (pages included), by their top block.
        var structures: [UInt64: (ref: BlockRef, bytes: Int)] = [:]
    }

    /// What ``layOut(_:into:reusing:progress:)`` wrote.
    struct LaidOut {
        var recordRef: BlockRef
        var recordBytes: [UInt8]
        var counts: [String: Int]
    }

    /// Appends every live block of `s` to `w` (row groups, their segments, row-group lists and
    /// indexes, then one version record without history); a counting writer only adds lengths.
    /// Blocks `map` already holds are not written again, and what is written is added to it.
    private static func layOut(
        _ s: Snapshot, into w: inout StreamingWriter, reusing map: inout CopyMap, progress: ((Progress) -> Void)?
    ) throws -> LaidOut {
        let expected = Int(s.liveBytes)
        var states: [UInt32: TableState] = [:]
        var counts: [String: Int] = [:]
        var released = 0
        // Bytes the version reaches, written now or before (its live bytes, less header and record).
        var reachable = 0
        func copy(_ ref: BlockRef, _ magic: UInt32, _ w: inout StreamingWriter) throws -> BlockRef {
            reachable += Int(ref.length)
            if let done = map.blocks[ref.offset], done.length == ref.length { return done }
            let new = try w.copy(ref, magic, from: s)
            if w.file != nil { map.blocks[ref.offset] = new }
            return new
        }
        // A block copied as it is, or a patch (Spec/FORMAT.md §4.8, §5.7) written as the segment or
        // chunk it reads as (`folded`), so the new file holds no patches.
        func copyFolding(_ ref: BlockRef, _ magic: UInt32, isPatch: Bool, _ w: inout StreamingWriter, folded: () throws -> [UInt8])
            throws -> BlockRef
        {
            guard isPatch else { return try copy(ref, magic, &w) }
            if let done = map.blocks[ref.offset], done.length == ref.length {
                reachable += Int(done.length)
                return done
            }
            let bytes = try folded()
            let new = try w.append(bytes)
            reachable += bytes.count
            if w.file != nil { map.blocks[ref.offset] = new }
            return new
        }
        func copySegment(_ ref: BlockRef, _ w: inout StreamingWriter) throws -> BlockRef {
            try copyFolding(ref, BlockMagic.segment, isPatch: try s.segmentPatch(ref) != nil, &w) {
                SegmentEncoder.encode(try s.uncachedSegment(ref).decodeAll())
            }
        }
        func copyChunk(_ chunk: IndexDirectory.Chunk, _ w: inout StreamingWriter) throws -> BlockRef {
            try copyFolding(chunk.block, BlockMagic.indexChunk, isPatch: try s.chunkPatch(chunk.block) != nil, &w) {
                IndexDirectory.encodeChunk(try s.uncachedIndexChunk(chunk).entries)
            }
        }
        for t in s.catalog.tables {
            var st = try s.tableState(t.name)
            counts[t.name] = Int(st.objectCount)
            if !st.rowGroups.isNone, let done = map.structures[st.rowGroups.offset] {
                st.rowGroups = done.ref
                reachable += done.bytes
            } else {
                let before = reachable
                var entries: [RowGroupEntry] = []
                var rows = 0
                for e in try s.rowGroups(st) {
                    rows += e.rowCount
                    if let done = map.groups[e.block.offset] {
                        reachable += done.bytes
                        entries.append(RowGroupEntry(firstKey: e.firstKey, lastKey: e.lastKey, rowCount: e.rowCount, block: done.ref))
                        continue
                    }
                    let groupStart = reachable
                    let g = try s.rowGroup(e.block)
                    var ng = RowGroupBlock(rowCount: g.rowCount, keys: try copySegment(g.keys, &w), columns: [:])
                    for c in t.columns {
                        if let ref = g.columns[c.id] { ng.columns[c.id] = try copySegment(ref, &w) }
                    }
                    let bytes = ng.encode()
                    let ref = try w.append(bytes)
                    reachable += bytes.count
                    if w.file != nil { map.groups[e.block.offset] = (ref, reachable - groupStart) }
                    entries.append(RowGroupEntry(firstKey: e.firstKey, lastKey: e.lastKey, rowCount: e.rowCount, block: ref))
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
                let source = st.rowGroups
                if !entries.isEmpty {
                    let (ref, bytes) = try Self.appendList(entries, into: &w)
                    reachable += bytes
                    st.rowGroups = ref
                    if w.file != nil { map.structures[source.offset] = (ref, reachable - before) }
                } else {
                    st.rowGroups = .none
                }
            }
            for (col, ref) in st.indexes {
                if let done = map.structures[ref.offset] {
                    st.indexes[col] = done.ref
                    reachable += done.bytes
                    continue
                }
                let before = reachable
                var dir = try s.indexDirectory(ref)
                for i in dir.chunks.indices { dir.chunks[i].block = try copyChunk(dir.chunks[i], &w) }
                let (top, bytes) = try Self.appendDirectory(dir, into: &w)
                reachable += bytes
                st.indexes[col] = top
                if w.file != nil { map.structures[ref.offset] = (top, reachable - before) }
            }
            states[t.id] = st
        }
        s.releaseResidentPages()
        var record = VersionRecord(
            version: s.version, parentVersion: 0, parentRecord: .none, commitStart: UInt64(w.start),
            commitChecksum: w.hasher.finalize(), commitTime: s.record.commitTime, liveBytes: 0, catalog: s.catalog,
            tables: states, changeset: Changeset(), formatVersion: FileHeader.formatVersion)
        let recordLength = record.encode().count
        record.liveBytes = UInt64(FileHeader.size + reachable + recordLength)
        let bytes = record.encode()
        return LaidOut(recordRef: try w.append(bytes), recordBytes: bytes, counts: counts)
    }

    /// A row-group list as a new file (format 4) holds it: one block, or pages and their table (Spec
    /// §5.4). Returns its top block and the bytes of all its blocks.
    private static func appendList(_ entries: [RowGroupEntry], into w: inout StreamingWriter) throws -> (BlockRef, Int) {
        let start = w.offset
        let top = try Pages.write(
            entries, paged: true, base: nil, block: { slice, _ in try w.append(RowGroupEntry.encodeList(Array(slice))) },
            table: { try w.append(RowGroupEntry.encodeListPages($0)) }
        ).top
        return (top, w.offset - start)
    }

    /// An index directory as a new file holds it: one block, or pages and their table (Spec §5.7).
    private static func appendDirectory(_ dir: IndexDirectory, into w: inout StreamingWriter) throws -> (BlockRef, Int) {
        let start = w.offset
        let top = try Pages.write(
            dir.chunks, paged: true, base: nil,
            block: { slice, _ in try w.append(IndexDirectory(columnId: dir.columnId, chunks: Array(slice)).encode()) },
            table: { try w.append(IndexDirectory.encodePages(columnId: dir.columnId, $0)) }
        ).top
        return (top, w.offset - start)
    }

    /// How many bytes the copy writes between releases of the source's resident pages.
    static let releaseInterval = 8 << 20

    /// The slot naming a laid-out version record.
    static func slot(_ l: LaidOut, _ s: Snapshot, fileLength: Int) -> CommitSlot {
        CommitSlot(
            version: s.version, record: l.recordRef, fileLength: UInt64(fileLength), commitTime: s.record.commitTime,
            recordChecksum: blockTrailer(l.recordBytes))
    }

    /// A new file's header (the current format version) with these slots (slot 0, then slot 1).
    static func header(slots: [CommitSlot]) -> [UInt8] {
        var header = FileHeader.encodeStatic()
        header += [UInt8](repeating: 0, count: FileHeader.size - header.count)
        for (i, slot) in slots.enumerated() {
            let sb = slot.encode()
            header.replaceSubrange(FileHeader.slotOffsets[i]..<FileHeader.slotOffsets[i] + sb.count, with: sb)
        }
        return header
    }

    /// Writes a verified copy of `store`'s newest version to `destination`, which must not exist:
    /// into `destination.compacting` first, made durable, read back and checked (the commit
    /// checksum, every block checksum, the object count of every table against the source, a full
    /// ``Verifier`` pass), then renamed to `destination` and the directory synced. Nothing is at
    /// `destination` until the copy has passed; a failure (or a crash) leaves it as it was.
    /// (In-place compaction is ``compact(_:progress:)``.)
    /// - Throws: `.fileExists`, `.io`, `.corrupted` (the source, or the copy failing verification).
    @discardableResult
    package func writeVerifiedCopy(of store: Store, to destination: String, progress: ((Progress) -> Void)? = nil) throws -> Result {
        if SystemFile.exists(destination) {
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
        if SystemFile.exists(destination) {
            SystemFile.unlink(tmp)
            throw StorageError(.fileExists, "file already exists", path: destination)
        }
        try SystemFile.rename(tmp, destination)
        try SystemFile.syncDirectory(Self.directory(of: destination))
        return result
    }

    /// Opens the copy passively (recovery checks the commit's checksum over every byte written),
    /// compares version and object counts with what was copied and runs a full verification.
    static func verifyCopy(at path: String, _ expected: Result, _ verification: Verification = .full) throws {
        let copy = try openCopy(at: path, expecting: expected.version, expected.objectCounts)
        try checkStructure(copy, path)
        guard verification == .full else { return }
        let check = Verifier().verify(copy)
        guard check.isClean else {
            throw StorageError(.corrupted, "the compacted copy failed verification: \(check.problems.first!)", path: path)
        }
    }

    /// Opens the copy passively (recovery checks its newest commit's checksum) and compares its
    /// version and the object count of every table with the source's.
    static func openCopy(at path: String, expecting version: UInt64, _ counts: [String: Int]) throws -> Snapshot {
        let copy = try Store.open(at: path, options: .passive).snapshot(kind: "other")
        guard copy.version == version else {
            throw StorageError(.corrupted, "the compacted copy holds version \(copy.version), not \(version)", path: path)
        }
        for (table, count) in counts.sorted(by: { $0.key < $1.key }) {
            let n = try copy.objectCount(table)
            guard n == count else {
                throw StorageError(.corrupted, "the compacted copy holds \(n) '\(table)' objects; the source holds \(count)", path: path)
            }
        }
        return copy
    }

    /// The named steps of an online compaction, in order (crash tests stop a process at each).
    package enum Step: String, CaseIterable, Sendable {
        /// The newest version at the start is written to `<file>.compacting` and synced.
        case copied
        /// That copy passed a full verification.
        case verified
        /// Holding the writer word, the commits made meanwhile are appended to the copy and synced.
        case caughtUp
        /// The old file is marked superseded (naming the path) and the mark synced.
        case marked
        /// The lock file's generation is odd: the switch has begun.
        case switching
        /// The copy is renamed over the file (the directory not yet synced).
        case renamed
        /// The rename is durable, the generation even again; the writer word is still held.
        case switched
    }

    /// Called at each ``Step`` (crash tests kill the process there).
    package var atStep: (@Sendable (Step) -> Void)?

    /// Reads every block `copy` reaches and checks its checksum, each row group against its list
    /// entry, and each table's object count against its row groups; decodes no segment.
    static func checkStructure(_ copy: Snapshot, _ path: String) throws {
        for t in copy.catalog.tables {
            let st = try copy.tableState(t.name)
            var rows = 0
            for e in try copy.rowGroups(st) {
                let g = try copy.rowGroup(e.block)
                guard g.rowCount == e.rowCount else {
                    throw StorageError.corrupted("row group holds \(g.rowCount) rows; its list says \(e.rowCount)", at: Int(e.block.offset))
                }
                // A patch's own block is checked as it is read; its parts are segments.
                for ref in [g.keys] + Array(g.columns.values) {
                    for part in try copy.segmentPatch(ref)?.parts ?? [ref] { _ = try copy.block(part, BlockMagic.segment) }
                }
                rows += e.rowCount
            }
            guard rows == Int(st.objectCount) else {
                throw StorageError(
                    .corrupted, "the compacted copy's table '\(t.name)' counts \(st.objectCount) objects but holds \(rows)", path: path)
            }
            for ref in st.indexes.values {
                for c in try copy.indexDirectory(ref).chunks {
                    for part in try copy.chunkPatch(c.block)?.parts ?? [c.block] { _ = try copy.block(part, BlockMagic.indexChunk) }
                }
            }
        }
    }

    /// Compacts `store`'s file online (Spec/FORMAT.md §8), while other stores of this and other
    /// processes keep it open, read and write: the newest version is copied to a new file without
    /// the writer word; then, holding the word, the commits made meanwhile are copied and the new
    /// file renamed over the old. Every store follows it at its next read transaction, refresh or
    /// write; snapshots taken before keep reading the old file until they are released. Commits
    /// wait only for that last step. The copy is verified before it replaces anything; `progress`
    /// hears about each step.
    /// - Throws: `.compactionInProgress` (another store, in any process, is compacting the file),
    ///   `.readOnly`, `.io`, `.corrupted`; the original file is then unchanged, unless the copy had
    ///   already replaced it (an `.io` error after the rename), in which case every store continues
    ///   on the copy, this one at the latest before its next write or ``Store/refresh()``.
    @discardableResult
    public func compact(_ store: Store, progress: ((Progress) -> Void)? = nil) throws -> Result {
        guard !store.isReadOnly, let lock = store.lockFile else {
            throw StorageError(.readOnly, "the store was opened read-only", path: store.path)
        }
        let busy = store.state.withLock { s in
            defer { s.compacting = true }
            return s.compacting
        }
        if busy { throw StorageError(.compactionInProgress, "this store is already compacting the file", path: store.path) }
        defer { store.state.withLock { $0.compacting = false } }
        guard try lock.tryCompactionLock() else {
            throw StorageError(.compactionInProgress, "another store is compacting the file", path: store.path)
        }
        defer { lock.releaseCompactionLock() }
        // Renaming a copy over a file with another name would leave that name on the old file: a
        // second database that could take commits (§8). Checked again, holding the word, below.
        try Self.refuseIfLinked(store.state.withLock { $0.current.file }, store.path)
        let clock = ContinuousClock()
        let started = clock.now
        let startDate = Date()
        store.telemetry.compactionStarted(bytes: (try? store.state.withLock { $0.current.file }.size()) ?? 0)
        let tmp = store.path + ".compacting"
        // Only the holder of the compaction byte writes this name: a file there is a crashed
        // compaction's.
        SystemFile.unlink(tmp)
        let source = try store.snapshot(kind: Store.compactionPinKind)
        let out = try SystemFile.open(tmp, .createNew)
        var renamed = false
        defer { if !renamed { SystemFile.unlink(tmp) } }
        // 1. The newest version, without the writer word.
        var map = CopyMap()
        var w = StreamingWriter(file: out, offset: FileHeader.size)
        let first = try Self.layOut(source, into: &w, reusing: &map, progress: progress)
        try w.flush()
        let firstSlot = Self.slot(first, source, fileLength: w.offset)
        try out.write(Self.header(slots: [firstSlot]), at: 0)
        try out.syncData()
        atStep?(.copied)
        progress?(Progress(phase: .verifying, bytesWritten: w.offset, bytesExpected: w.offset))
        beforeVerification?(tmp)
        try Self.verifyCopy(
            at: tmp, Result(version: source.version, bytesBefore: 0, bytesAfter: w.offset, objectCounts: first.counts), verification)
        atStep?(.verified)
        // 2. Holding the writer word: the commits made meanwhile, then the switch.
        let tx = try store.beginWrite()
        let held = clock.now
        defer { tx.cancel() }
        // The copy must hold only acknowledged commits: this store's commits still waiting for their
        // sync (group commit) are made durable first.
        try store.flushPendingCommits()
        let newest = tx.base
        let bytesBefore = (try? store.state.withLock { $0.current.file }.size()) ?? newest.fileLength
        var counts = first.counts
        var length = w.offset
        if newest.version != source.version {
            progress?(Progress(phase: .catchingUp, bytesWritten: length, bytesExpected: length))
            var more = StreamingWriter(file: out, offset: length)
            let next = try Self.layOut(newest, into: &more, reusing: &map, progress: nil)
            try more.flush()
            length = more.offset
            counts = next.counts
            try out.write(Self.header(slots: [firstSlot, Self.slot(next, newest, fileLength: length)]), at: 0)
            try out.syncData()
            // The appended commit is checked as recovery checks a newest commit (its region's
            // checksum), and its tables' object counts; the blocks it copied were checked as read.
            _ = try Self.openCopy(at: tmp, expecting: newest.version, counts)
        }
        atStep?(.caughtUp)
        progress?(Progress(phase: .replacing, bytesWritten: length, bytesExpected: length))
        // The old file is marked superseded, durably, before the rename (§8): a name that still
        // leads to it after the rename (a hard link made since the check) can never take a commit.
        let old = store.state.withLock { $0.current }
        try Self.refuseIfLinked(old.file, store.path)
        let mark = SupersededMark(version: old.slot.version, fileLength: old.slot.fileLength, time: Store.now(), path: store.path)
        let markBytes = mark.encode()
        try old.file.write(markBytes, at: Int(mark.fileLength))
        defer {
            // Not renamed: the mark is stale; the next commit would cover it only in part.
            if !renamed { try? old.file.write([UInt8](repeating: 0, count: markBytes.count), at: Int(mark.fileLength)) }
        }
        try old.file.syncData()
        atStep?(.marked)
        let generation = lock.beginSwitch()
        atStep?(.switching)
        try SystemFile.rename(tmp, store.path)
        renamed = true
        atStep?(.renamed)
        if let links = try? old.file.linkCount(), links > 0 {
            store.telemetry.supersededFileStillLinked(links: links, mark: mark)
        }
        // The lock file's records named commits of the old file; the copy is durable.
        lock.forgetCommitRecords()
        if let (_, slot) = try Store.readNewestSlot(out) { lock.markDurable(version: slot.version, recordChecksum: slot.recordChecksum) }
        // Before any commit can go to the new file (the word is still held): the rename is durable.
        try SystemFile.syncDirectory(Self.directory(of: store.path))
        try store.switchToReplacedFile()
        lock.endSwitch(generation)
        store.state.withLock { $0.seenGeneration = generation &+ 1 }
        atStep?(.switched)
        let waited = store.writersWaiting.load(ordering: .relaxed)
        let others = lock.writerWord & LockFile.wantedBit != 0
        let done = clock.now
        let report = CompactionReport(
            startedAt: startDate, duration: done - started, bytesBefore: bytesBefore, bytesAfter: length,
            copiedVersion: source.version, version: newest.version, writerHeld: done - held, commitsWaited: waited,
            otherProcessesWaited: others)
        store.state.withLock { $0.lastCompaction = report }
        store.telemetry.compacted(report)
        return Result(version: newest.version, bytesBefore: bytesBefore, bytesAfter: length, objectCounts: counts)
    }

    /// Throws ``StorageError/Code/hardLinked`` when `file` has more than one name.
    static func refuseIfLinked(_ file: SystemFile, _ path: String) throws {
        let links = try file.linkCount()
        guard links <= 1 else {
            throw StorageError(
                .hardLinked,
                "the file has \(links) names (hard links): a compacted copy renamed over this one would leave the other names on "
                    + "the old file, a second database; remove the other links, or write a compacted copy to another path "
                    + "(realm-compact --output)",
                path: path)
        }
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
    /// Where it started writing.
    let start: Int
    var offset: Int
    var buffer = ByteWriter(capacity: 0)
    var bufferStart: Int
    /// XXH64 of everything appended so far (not kept while only counting).
    var hasher = XXH64.Streaming()

    init(file: SystemFile?, offset: Int) {
        self.file = file
        self.start = offset
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

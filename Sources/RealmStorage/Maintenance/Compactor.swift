import Foundation

/// Rewrites the newest version of a file to only its live data, streaming block by block so memory
/// stays bounded. In place: temporary file, fsync, rename over the original, fsync of the directory.
public struct Compactor: Sendable {
    public struct Result: Sendable {
        public var version: UInt64
        public var bytesBefore: Int
        public var bytesAfter: Int
    }

    public init() {}

    /// Writes the newest version of `store` to a new file at `destination` (which must not exist).
    @discardableResult
    public func writeCopy(of store: Store, to destination: String) throws -> Result {
        let s = try store.snapshot(kind: "other")
        let out = try SystemFile.open(destination, .createNew)
        do {
            var w = StreamingWriter(file: out, offset: FileHeader.size)
            var region = XXH64.Streaming()
            var states: [UInt32: TableState] = [:]
            for t in s.catalog.tables {
                var st = try s.tableState(t.name)
                var entries: [RowGroupEntry] = []
                for e in try s.rowGroups(st) {
                    let g = try s.rowGroup(e.block)
                    var ng = RowGroupBlock(rowCount: g.rowCount, keys: try w.copy(s.block(g.keys, BlockMagic.segment)), columns: [:])
                    for c in t.columns {
                        if let ref = g.columns[c.id] { ng.columns[c.id] = try w.copy(s.block(ref, BlockMagic.segment)) }
                    }
                    entries.append(
                        RowGroupEntry(firstKey: e.firstKey, lastKey: e.lastKey, rowCount: e.rowCount, block: try w.append(ng.encode())))
                }
                st.rowGroups = entries.isEmpty ? .none : try w.append(RowGroupEntry.encodeList(entries))
                for (col, ref) in st.indexes {
                    var dir = try s.indexDirectory(ref)
                    for i in dir.chunks.indices { dir.chunks[i].block = try w.copy(s.block(dir.chunks[i].block, BlockMagic.indexChunk)) }
                    st.indexes[col] = try w.append(dir.encode())
                }
                states[t.id] = st
            }
            region = w.hasher
            var record = VersionRecord(
                version: s.version, parentVersion: 0, parentRecord: .none, commitStart: UInt64(FileHeader.size),
                commitChecksum: region.finalize(), commitTime: s.record.commitTime, liveBytes: 0, catalog: s.catalog,
                tables: states, changeset: Changeset())
            let recordLength = UInt64(record.encode().count)
            record.liveBytes = UInt64(w.offset) + recordLength
            let recordRef = try w.append(record.encode())
            try w.flush()
            var header = FileHeader.encodeStatic()
            header += [UInt8](repeating: 0, count: FileHeader.size - header.count)
            let slot = CommitSlot(
                version: s.version, record: recordRef, fileLength: UInt64(w.offset), commitTime: record.commitTime,
                recordChecksum: ByteView(copying: record.encode()).lastWord)
            let sb = slot.encode()
            header.replaceSubrange(FileHeader.slotOffsets[0]..<FileHeader.slotOffsets[0] + sb.count, with: sb)
            try out.write(header, at: 0)
            try out.syncAll()
            return Result(version: s.version, bytesBefore: try store.state.withLock { try $0.current.file.size() }, bytesAfter: w.offset)
        } catch {
            SystemFile.unlink(destination)
            throw error
        }
    }

    /// Compacts `store`'s file in place. Refuses with `.inUseByAnotherProcess` while any other store
    /// (in this or another process) has the file open; the store then continues on the new file.
    @discardableResult
    public func compact(_ store: Store) throws -> Result {
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
        let tmp = store.path + ".compacting"
        SystemFile.unlink(tmp)
        let result = try writeCopy(of: store, to: tmp)
        let check: Verifier.Report
        do {
            check = Verifier().verify(try Store.open(at: tmp, options: .init(readOnly: true)).snapshot(kind: "other"))
        } catch {
            SystemFile.unlink(tmp)
            throw error
        }
        guard check.isClean else {
            SystemFile.unlink(tmp)
            throw StorageError(.corrupted, "the compacted copy failed verification: \(check.problems.first!)", path: tmp)
        }
        try SystemFile.rename(tmp, store.path)
        let dir = (store.path as NSString).deletingLastPathComponent
        try SystemFile.syncDirectory(dir.isEmpty ? "." : dir)
        let file = try SystemFile.open(store.path, .readWrite)
        // The copy was made durable before the rename: record it as the durable commit.
        let compacted = try Store.readNewestSlot(file)?.1
        if let compacted { store.lockFile?.markDurable(version: compacted.version, recordChecksum: compacted.recordChecksum) }
        let current = try Store.recover(file, durable: compacted.map { ($0.version, $0.recordChecksum) })
        let size = try file.size()
        store.state.withLock {
            $0.current = current
            $0.allocatedLength = size
            $0.failedCommit = nil
        }
        return result
    }
}

/// Appends blocks to a file through a bounded buffer (4 MiB), tracking the next offset.
struct StreamingWriter {
    let file: SystemFile
    var offset: Int
    var buffer = ByteWriter(capacity: 1 << 22)
    var bufferStart: Int
    /// XXH64 of everything appended so far.
    var hasher = XXH64.Streaming()

    init(file: SystemFile, offset: Int) {
        self.file = file
        self.offset = offset
        self.bufferStart = offset
    }

    mutating func append(_ bytes: [UInt8]) throws -> BlockRef {
        let ref = BlockRef(offset: UInt64(offset), length: UInt64(bytes.count))
        hasher.update(bytes)
        buffer.append(bytes)
        offset += bytes.count
        if buffer.count >= 1 << 22 { try flush() }
        return ref
    }

    mutating func copy(_ block: ByteView) throws -> BlockRef { try append(block.allBytes()) }

    mutating func flush() throws {
        guard buffer.count > 0 else { return }
        try file.write(buffer.bytes, at: bufferStart)
        bufferStart = offset
        buffer = ByteWriter(capacity: 1 << 22)
    }
}

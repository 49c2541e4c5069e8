/// The commit protocol (Spec/FORMAT.md §6): append a commit head (format 3), every new block and the
/// version record after the committed length, write the inactive commit slot unless the commit is
/// chained, then make it durable with one `fdatasync`. Recovery checks the region checksum of the
/// newest slot's commit and of every chained commit, so a torn commit falls back to its parent.
extension WriteTransaction {
    /// Appends blocks to the commit buffer at increasing file offsets. A large commit's blocks go
    /// to the file as they pass ``flushThreshold`` (``flush()``), so the commit never holds
    /// its whole region in memory (a bulk insert's would be as large as the file).
    struct Emitter {
        /// The file offset of the commit region (the first block).
        let start: UInt64
        /// The commit as written at `start - UInt64(headSize)`: room for the commit head (filled
        /// in last), then the region's blocks not yet in the file.
        var out: ByteWriter
        let headSize: Int
        /// Every block emitted, with its checksum trailer.
        var blocks: [(BlockRef, UInt64)] = []
        /// What the commit built, decoded, for the store's cache once the commit is acknowledged.
        var products: [(BlockCache.Key, BlockCache.Product)] = []
        /// The region's bytes already written to the file, and their running checksum.
        private(set) var flushed: UInt64 = 0
        private var flushedChecksum = XXH64.Streaming()
        /// Region bytes held before ``flush()`` writes them out (``Store/Options/commitFlushThreshold``).
        let flushThreshold: Int
        /// The file the commit goes to.
        let file: SystemFile

        init(start: UInt64, headSize: Int, file: SystemFile, flushThreshold: Int) {
            self.start = start
            self.headSize = headSize
            self.file = file
            self.flushThreshold = flushThreshold
            // Most commits are a few kilobytes; a larger one grows the buffer as it goes.
            out = ByteWriter(capacity: 8 << 10)
            out.zeros(headSize)
            blocks.reserveCapacity(16)
            products.reserveCapacity(8)
        }

        /// The bytes of the blocks emitted so far.
        var written: UInt64 { flushed + UInt64(out.count - headSize) }

        /// XXH64 of the region's blocks emitted so far (the head excluded).
        var regionChecksum: UInt64 {
            guard flushed > 0 else { return out.checksum(from: headSize) }
            var sum = flushedChecksum
            sum.update(out.bytes[headSize...])
            return sum.finalize()
        }

        /// Whether the blocks held have reached ``flushThreshold``.
        var shouldFlush: Bool { out.count - headSize >= flushThreshold }

        /// Writes the blocks held to `file`, at their offsets, and drops them. The first flush
        /// writes the commit head's room too, zeroed: whatever lay there (a torn commit's head)
        /// no longer names bytes this commit overwrites; the head is written last
        /// (``writeRemainder()``).
        mutating func flush() throws {
            guard out.count > headSize else { return }
            let region = out.bytes[headSize...]
            if flushed == 0 {
                try file.write(out.bytes[...], at: Int(start) - headSize)
            } else {
                try file.write(region, at: Int(start + flushed))
            }
            flushedChecksum.update(region)
            flushed += UInt64(region.count)
            out.removeAll(from: headSize)
        }

        /// Writes what is not yet in the file: in one write when nothing was flushed, else the
        /// blocks held and then the commit head, so the head never names a region not yet written.
        func writeRemainder() throws {
            guard flushed > 0 else { return try file.write(out.bytes, at: Int(start) - headSize) }
            try file.write(out.bytes[headSize...], at: Int(start + flushed))
            if headSize > 0 { try file.write(out.bytes[..<headSize], at: Int(start) - headSize) }
        }

        /// The bytes of block `ref`, emitted earlier: from the buffer, or from the file once flushed.
        func read(_ ref: BlockRef) throws -> ByteView {
            precondition(ref.offset >= start && ref.offset + ref.length <= start + written, "not a block of this commit")
            let offset = ref.offset - start
            guard offset >= flushed else {
                return ByteView(copying: try file.read(at: Int(ref.offset), count: Int(ref.length)), origin: Int(ref.offset))
            }
            let from = headSize + Int(offset - flushed)
            return ByteView(copying: Array(out.bytes[from..<from + Int(ref.length)]), origin: Int(ref.offset))
        }

        /// Emits a block already encoded (the version record).
        mutating func emit(_ block: [UInt8]) -> BlockRef { emit { $0.append(block) } }

        /// Emits the block `build` appends to the commit buffer (after ``ByteWriter/beginBlock()``,
        /// so its padding and checksum count from its start): no array of its own to copy.
        mutating func emit(building build: (inout ByteWriter) -> Void) -> BlockRef {
            let from = out.beginBlock()
            build(&out)
            let ref = BlockRef(offset: start + flushed + UInt64(from - headSize), length: UInt64(out.count - from))
            // The block ends with its checksum trailer: the buffer's last 8 bytes.
            blocks.append((ref, blockTrailer(out.bytes)))
            return ref
        }

        /// Emits the block `build` appends and remembers `product`, its decoded form.
        mutating func emit(decoded product: BlockCache.Product, building build: (inout ByteWriter) -> Void) -> BlockRef {
            let ref = emit(building: build)
            products.append((BlockCache.Key(ref, checksum: blocks[blocks.count - 1].1), product))
            return ref
        }
    }

    /// Makes every change durable as a new version and returns a snapshot of it.
    /// - Throws: `.maximumNumberOfActiveVersionsExceeded` (nothing changed), `.io` (the file stays at
    ///   the previous version); the transaction ends either way.
    @discardableResult
    public func commit() throws -> Snapshot { try commit(whileSyncing: {}) }

    /// The changes as the writer recorded them (the commit's changeset before encoding settles it).
    func recordedChanges() -> Changeset {
        var changeset = Changeset()
        changeset.schemaChanged = schemaChanged
        func record(_ id: UInt32) {
            guard let t = catalog.table(id: id) else { return }
            var ch = changes[id] ?? .init()
            if let w = tables[id] {
                ch.pendingSets += w.pendingSets
                ch.insertedRuns = w.insertedRuns
            }
            if !ch.isEmpty { changeset.tables[t.name] = ch }
        }
        // Every table with working state or changes, once each.
        for id in tables.keys { record(id) }
        for id in changes.keys where tables[id] == nil { record(id) }
        return changeset
    }

    /// What this transaction has changed so far, as its commit's changeset will say it once read
    /// back (inserted keys listed, column sets sorted per object): for a hook that describes the
    /// commit inside it (the sync client's uploads, RealmSwiftSync).
    package func pendingChangeset() -> Changeset {
        var changeset = recordedChanges()
        for name in Array(changeset.tables.keys) {
            guard var t = changeset.tables[name] else { continue }
            for run in t.insertedRuns {
                for k in run.start..<(run.start + run.count) { t.inserted.insert(ObjectKey(k)) }
            }
            t.insertedRuns = []
            t.settleColumnSets()
            changeset.tables[name] = t
        }
        return changeset
    }

    /// Makes every change durable as a new version and returns a snapshot of it, as ``commit()``;
    /// `work` runs once the commit is written and the transaction has ended, before the commit
    /// waits for its sync (format 7; in older files, after the sync), so the sync hides its time.
    /// It is for work that needs neither the commit durable nor the transaction, such as releasing
    /// the caller's snapshot of the parent version. It runs at most once, and not at all when the
    /// commit fails before it writes.
    /// - Throws: as ``commit()``. A failed sync throws after `work` ran.
    @discardableResult
    public func commit(whileSyncing work: () -> Void) throws -> Snapshot {
        try checkOpen()
        defer { cancel() }
        let clock = ContinuousClock()
        let started = store.telemetry.timesCommits ? clock.now : nil
        // After a failed commit whose slot other processes may have seen, never reuse its version
        // number or its bytes (Spec/FORMAT.md §6.2).
        let (own, shared, failed) = failedCommits()
        let newVersion = max(base.version, failed?.version ?? 0) + 1
        if let limit = store.options.maximumNumberOfActiveVersions {
            var pins = store.pinnedVersions().filter { $0.kind != Store.compactionPinKind }
            if let i = pins.firstIndex(where: { $0.isLocal && $0.version == base.version && $0.kind == Store.transactionPinKind }) {
                pins[i].count -= 1
                if pins[i].count == 0 { pins.remove(at: i) }
            }
            let active = Set(pins.map(\.version)).union([newVersion]).count
            if active > limit {
                store.telemetry.refused(active: active, limit: limit)
                throw StorageError.maximumActiveVersions(active: active, limit: limit)
            }
        }
        let baseCurrent = store.state.withLock { $0.current }
        let (file, slotIndex, baseSlot, formatVersion, chained) = (
            baseCurrent.file, baseCurrent.slotIndex, baseCurrent.slot, baseCurrent.formatVersion, baseCurrent.chained
        )
        guard baseSlot.version == base.version else {
            throw StorageError(.invalidTransactionState, "the file advanced under the write lock", path: store.path)
        }
        // Never build on a commit reported failed (beginWrite moves off one; this is the guard).
        if own?.names(baseSlot) == true || shared?.names(baseSlot) == true {
            throw StorageError(
                .invalidTransactionState, "the version this transaction read was reported failed; begin a new transaction",
                path: store.path)
        }
        // Format 3: a commit head precedes the commit region (Spec/FORMAT.md §3.4).
        let hasHead = formatVersion >= FileHeader.chainedCommitsVersion
        let start = Self.regionStart(baseSlot, failed)
        var em = early ?? makeEmitter(baseCurrent, failed)
        self.early = nil
        // The commit continues the region sealed groups began, which was placed as this one is.
        guard em.start - UInt64(em.headSize) == start, em.file === file else {
            throw StorageError(.invalidTransactionState, "the file advanced under the write lock", path: store.path)
        }
        // Bytes emitted before the commit: sealed groups' segments, live if a group still names them.
        let emittedEarly = em.written
        sealedKept = 0
        for (id, w) in tables.sorted(by: { $0.key < $1.key }) where catalog.table(id: id) != nil {
            try finish(w, &em)
        }
        // Segments of groups unsealed, deleted or dropped since they were sealed are dead bytes.
        freed += emittedEarly - sealedKept
        let changeset = recordedChanges()
        var record = VersionRecord(
            version: newVersion, parentVersion: base.version, parentRecord: baseSlot.record,
            commitStart: em.start, commitChecksum: em.regionChecksum, commitTime: Store.now(), liveBytes: 0,
            catalog: catalog, tables: states, changeset: changeset, formatVersion: formatVersion)
        // Format 8: the record says, as its head does, which commit was acknowledged when it was
        // written, so that a record found past a damaged block is evidence by itself (Spec §5.1,
        // §6.6). A commit that writes its slot waits below for its group to be durable; its lag
        // still names the commit acknowledged now, the older one, which stays true.
        if formatVersion >= FileHeader.recordLagVersion {
            record.lag = UInt32(clamping: newVersion - store.acknowledgedVersion(base: base.version))
        }
        var (recordBytes, changesetRange, catalogRange) = record.encodeWithChangesetRange(reusing: base.record)
        record.catalogBytes = ByteView(copying: Array(recordBytes[catalogRange]))
        // The commit head is never live: only recovery reads it.
        let live =
            Int64(base.record.liveBytes) + Int64(em.written) + Int64(recordBytes.count) - Int64(freed) - Int64(baseSlot.record.length)
        record.liveBytes = UInt64(max(0, live))
        VersionRecord.patchLiveBytes(&recordBytes, record.liveBytes)
        let recordRef = em.emit(recordBytes)
        // Keep the record as a reader would see it (changeset decoded from its bytes on demand).
        record.changesetView = try ByteView(
            copying: Array(recordBytes[changesetRange]), origin: Int(recordRef.offset) + changesetRange.lowerBound
        ).slice(0, changesetRange.count)
        record.changeset = Changeset()
        let slot = CommitSlot(
            version: newVersion, record: recordRef, fileLength: em.start + em.written, commitTime: record.commitTime,
            recordChecksum: blockTrailer(recordBytes))
        // A small commit right after its parent is chained: its head alone names it, and its one
        // fdatasync covers one contiguous range. After a failed commit, every 64 commits and for
        // large commits the slot is written too (Spec/FORMAT.md §6.2).
        let writesSlot =
            !hasHead || !store.options.chainsCommits || start != baseSlot.fileLength || chained >= Self.maximumChainLength
            || em.written >= Self.chainedCommitLimit
        // Format 7: commits of several threads may share one fdatasync (Spec/FORMAT.md §6.2). A
        // commit that writes a slot waits until every earlier one is durable: a slot never names a
        // commit whose parent may still be torn.
        let groups = hasHead && formatVersion >= FileHeader.groupCommitVersion
        if groups && writesSlot { try store.flushPendingCommits() }
        if hasHead {
            var head = CommitHead(slot: slot, parentVersion: base.version, parentRecordChecksum: baseSlot.recordChecksum)
            if formatVersion >= FileHeader.recordLagVersion {
                head.lag = record.lag
            } else if groups {
                let acknowledged = store.acknowledgedVersion(base: base.version)
                head.lag = UInt32(clamping: newVersion - acknowledged)
            }
            em.out.overwrite(head.encode(), at: 0)
        }
        let inactive = 1 - slotIndex
        let slotOffset = FileHeader.slotOffsets[inactive]
        let previousSlotBytes = writesSlot ? try file.read(at: slotOffset, count: FileHeader.slotSize) : []
        // From here until the commit becomes current, other stores may see bytes this store does
        // not count as its current commit: it must not release the writer word as up to date.
        let allocated = store.state.withLock { s in
            s.writerUpToDate = false
            return s.allocatedLength
        }
        // Grow the file ahead of the committed length in steps, so most commits overwrite
        // already-sized space and their fdatasync need not journal a size change (Spec §6.2).
        let end = Int(slot.fileLength)
        if end > allocated {
            // Another store may have grown the file meanwhile: never shrink it.
            let size = try file.size()
            let target = end + max(1 << 20, end / 16)
            if size < end { try Self.extend(file, from: size, to: target) }
            store.state.withLock { $0.allocatedLength = max(size, size < end ? target : size) }
        }
        // Formats 1 and 2: a failed data write names nothing yet (no slot written), so it is not a
        // failed commit; in format 3 the head it wrote may name the bytes (Spec/FORMAT.md §6.2).
        if !hasHead { try em.writeRemainder() }
        do {
            if hasHead { try em.writeRemainder() }
            if writesSlot { try file.write(slot.encode(), at: slotOffset) }
            if !groups { try file.syncData() }
        } catch {
            // The commit is not acknowledged: unname it so no reader adopts it from now on, and
            // remember its extent so the next commit neither reuses its version number nor
            // overwrites bytes a reader may have seen meanwhile.
            store.unnameFailedCommit(
                FailedCommit(version: newVersion, fileLength: slot.fileLength), file: file, head: hasHead ? Int(start) : nil,
                slot: writesSlot ? (slotOffset, previousSlotBytes) : nil, before: baseCurrent)
            throw error
        }
        // The sync comes after the bookkeeping below: the disk may start on the commit meanwhile.
        if groups { store.startWritebackIfAlone(file, from: Int(start), to: Int(slot.fileLength)) }
        // This store wrote these blocks (durable, or made durable by the sync this commit waits
        // for; if that fails, nothing reaches them): its own reads need not hash the large ones
        // again (other processes, and this one after reopening, still verify every block).
        if let cache = base.cache {
            // Small blocks hash again faster than the set of verified blocks takes a new entry.
            for (ref, sum) in em.blocks where ref.length >= Self.verifiedMarkMinimum { cache.markVerified(ref, sum) }
            cache.store(em.products, superseded: supersededGroups, written: em.blocks)
        }
        let snapshot = try store.state.withLock { s in
            s.failedCommit = nil
            let size = Int(slot.fileLength)
            let mapping =
                size <= s.current.mapping.length ? s.current.mapping : try FileMapping(file: file, length: Store.mappingLength(for: size))
            s.current = Store.Current(
                file: file, formatVersion: s.current.formatVersion, mapping: mapping, slot: slot,
                slotIndex: writesSlot ? inactive : slotIndex, record: record, chained: writesSlot ? 0 : chained + 1)
            s.writerUpToDate = true
            return store.makeSnapshot(&s, s.current, kind: "snapshot")
        }
        if groups {
            store.enqueue(
                Store.PendingCommit(
                    version: newVersion, fileLength: slot.fileLength, parentVersion: base.version,
                    recordChecksum: slot.recordChecksum, headOffset: Int(start),
                    slotWrite: writesSlot ? (slotOffset, previousSlotBytes) : nil, before: baseCurrent))
        }
        // The transaction ends: the next one of this store may begin while this commit waits for
        // its sync, and what it built goes meanwhile, with the caller's work.
        cancel()
        work()
        if groups { try store.awaitDurable(newVersion) }
        // Spares an opener hashing a large region (Spec/FORMAT.md §7); a small one hashes in less
        // time than the record takes to write.
        if em.written >= Self.durableRecordThreshold {
            store.lockFile?.markDurable(version: slot.version, recordChecksum: slot.recordChecksum)
        }
        store.telemetry.committed(
            store, version: newVersion, duration: started.map { clock.now - $0 }, bytes: em.written, fileSize: Int(slot.fileLength),
            liveBytes: record.liveBytes)
        store.considerCompaction(after: SpaceUsage(fileSize: Int(slot.fileLength), liveBytes: Int(record.liveBytes)))
        return snapshot
    }

    /// The most entries in an index chunk that a commit rebuilds for changes inside the index (see
    /// ``writeIndex(_:_:)``); chunks appended at the end hold up to the row-group capacity.
    static let interiorChunkCapacity = 256
    /// The same in a file whose chunks may be patched (format 5): few changes land in a chunk as a
    /// patch, so its pieces may be larger, and the directory (a page of which every commit that
    /// changes the index rewrites) shorter.
    static let patchedInteriorChunkCapacity = 1024
    /// A rebuilt chunk that received at most this many inserts and deletes is cut into pieces of
    /// ``interiorChunkCapacity`` entries; one that received more, into pieces of the row-group
    /// capacity.
    static let fewIndexChanges = 16

    /// Blocks a commit wrote of this many bytes or more are marked verified in the store's cache.
    static let verifiedMarkMinimum: UInt64 = 4096

    /// Commits of this many bytes or more are recorded as durable in the lock file.
    static let durableRecordThreshold: UInt64 = 64 << 10

    /// The most commits chained after a slot-named one: recovery checks each of their regions.
    static let maximumChainLength = 63
    /// Commits of this many bytes or more write their slot: their sync is long anyway, and recovery
    /// need not hash them when it can start from the slot.
    static let chainedCommitLimit: UInt64 = 256 << 10

    /// Extends `file` from `size` to `target` bytes by writing zeros (Spec/FORMAT.md §6.2): the
    /// blocks are then allocated and written, so the commits that later overwrite them make only
    /// their data durable — writing into a hole left by `ftruncate` made each `fdatasync` journal
    /// a block allocation too (measured here: 7,700 versus 10,900 durable overwrites per second).
    static func extend(_ file: SystemFile, from size: Int, to target: Int) throws {
        let chunk = [UInt8](repeating: 0, count: min(256 << 10, max(0, target - size)))
        var offset = size
        while offset < target {
            let n = min(chunk.count, target - offset)
            try file.write(chunk[..<n], at: offset)
            offset += n
        }
    }

    /// Writes a working table's changed groups, row-group list and indexes; updates `states`.
    func finish(_ w: WorkingTable, _ em: inout Emitter) throws {
        let t = catalog.table(id: w.tableId)!
        try mergeTail(w)
        var changed = w.listChanged
        // The leading groups still stored are the base's first entries, in place: copied at once.
        let unchanged = w.groups.unchangedPrefix
        var entries = w.groups.baseEntries(unchanged, capacity: w.groups.count)
        for i in unchanged..<w.groups.count {
            switch w.groups[i] {
            case .stored(let e):
                entries.append(e)
            case .loaded(let l):
                guard l.rowCount > 0 else { continue }
                let needsWrite = l.rowsChanged || l.original == nil || !l.dirty.isEmpty
                if !needsWrite, let o = l.original {
                    entries.append(o)
                    continue
                }
                changed = true
                var block = RowGroupBlock(rowCount: l.rowCount, keys: .none, columns: .init(minimumCapacity: t.columns.count))
                // Rows of the stored segments this transaction deleted (nil: rows were added, or the
                // group is new, and every segment is written whole).
                let deleted = patchesSegments && l.original != nil ? l.deletedOriginalRows() : nil
                if l.rowsChanged || l.original == nil {
                    block.keys = try writeSegment(
                        ColumnBuffer(ints: l.allKeys), replacing: l.originalBlock?.keys, deleted: deleted, set: [], &em)
                } else {
                    block.keys = l.originalBlock!.keys
                }
                for c in t.columns {
                    let rewrite = l.rowsChanged || l.original == nil || l.dirty.contains(c.id)
                    if rewrite, let s = l.sealed?.first(where: { $0.id == c.id }) {
                        // A full new group, already written (``seal(_:)``).
                        block.columns[c.id] = s.block
                        sealedKept += s.block.length
                    } else if rewrite {
                        let buf = l.columns[c.id] ?? Self.defaults(c, l.rowCount)
                        precondition(buf.count == l.rowCount, "column buffer out of step with keys")
                        // A column set without a record of which rows (a column added meanwhile) is
                        // written whole.
                        let old = l.originalBlock?.columns[c.id]
                        let sets = l.setKeys[c.id]?.count
                        let patchable =
                            deleted != nil && (!l.dirty.contains(c.id) || sets != nil) && sets ?? 0 <= LoadedGroup.mostPatchedSets
                        block.columns[c.id] = try writeSegment(
                            buf, replacing: old, deleted: patchable ? deleted : nil, set: patchable ? l.setRows(c.id) : [], &em)
                    } else if let old = l.originalBlock?.columns[c.id] {
                        block.columns[c.id] = old
                    }
                }
                if let o = l.original { supersede(o) }
                // Segments of removed columns are dropped with the rewritten group.
                if let ob = l.originalBlock {
                    for (id, ref) in ob.columns where t.column(id: id) == nil { freed += ref.length }
                    freed += l.original!.block.length
                }
                // Every loaded buffer holds exactly what the group's segments now hold (a sealed
                // group has none to give the cache).
                let ref =
                    l.isSealed
                    ? em.emit { block.encode(into: &$0) }
                    : em.emit(decoded: .group(.init(block: block, keys: l.keys, columns: l.columns))) { block.encode(into: &$0) }
                entries.append(RowGroupEntry(firstKey: l.firstKey!, lastKey: l.lastKey!, rowCount: l.rowCount, block: ref))
                try flushIfLarge(&em)
            }
        }
        var st = states[w.tableId] ?? w.baseState
        st.nextObjectKey = w.nextKey
        st.objectCount = UInt64(w.objectCount)
        if changed {
            let old = st.rowGroups.isNone ? nil : try base.rowGroupList(st)
            if !st.rowGroups.isNone { freed += st.rowGroups.length }
            if entries.isEmpty {
                for p in old?.pages ?? [] { freed += p.block.length }
                st.rowGroups = .none
            } else {
                st.rowGroups = writeList(entries, replacing: old, unchanged: unchanged, &em)
            }
        }
        for (id, iw) in w.indexes.sorted(by: { $0.key < $1.key }) where t.column(id: id) != nil {
            let ref = try writeIndex(iw, &em)
            st.indexes[id] = ref
        }
        states[w.tableId] = st
    }

    /// Writes the commit's blocks built so far to the file once they are many (a bulk insert's,
    /// ``Emitter/flushThreshold``). From the first such write until the commit becomes current,
    /// the file holds bytes past its committed length that this store does not count as its
    /// commit: the writer word is no longer released as up to date.
    func flushIfLarge(_ em: inout Emitter) throws {
        guard em.shouldFlush else { return }
        if em.flushed == 0 { store.state.withLock { $0.writerUpToDate = false } }
        try em.flush()
    }

    /// The failed commit whose version number and bytes the next commit must not reuse: this
    /// store's (`own`), or one another store recorded in the lock file (`shared`); only one past
    /// the base matters (`failed`).
    func failedCommits() -> (own: FailedCommit?, shared: FailedCommit?, failed: FailedCommit?) {
        let own = store.state.withLock { $0.failedCommit }
        let shared = store.lockFile?.failedCommit()
        var failed = own
        if let shared, shared.version > base.version, shared.version > failed?.version ?? 0 { failed = shared }
        return (own, shared, failed)
    }

    /// Where a commit on `baseSlot` writes: after its committed length, and after the bytes of a
    /// failed commit (Spec/FORMAT.md §6.2).
    static func regionStart(_ baseSlot: CommitSlot, _ failed: FailedCommit?) -> UInt64 {
        max(baseSlot.fileLength, failed?.fileLength ?? 0)
    }

    /// An emitter for a commit on `current`: its region begins after room for the commit head
    /// (format 3, Spec/FORMAT.md §3.4).
    func makeEmitter(_ current: Store.Current, _ failed: FailedCommit?) -> Emitter {
        let headSize = current.formatVersion >= FileHeader.chainedCommitsVersion ? CommitHead.size : 0
        return Emitter(
            start: Self.regionStart(current.slot, failed) + UInt64(headSize), headSize: headSize, file: current.file,
            flushThreshold: store.options.commitFlushThreshold)
    }

    /// Seals `g`, a full group a bulk insert left (``LoadedGroup/seal(writing:)``): its segments
    /// are emitted into the commit region at once, ahead of the commit, which goes on after them
    /// (to the file, once they pass the flush threshold, so a bulk insert holds none of its full
    /// groups). A transaction that ends without committing leaves those bytes past the committed
    /// length, where the next commit writes over them.
    func seal(_ g: LoadedGroup) throws {
        var em = early ?? makeEmitter(store.state.withLock { $0.current }, failedCommits().failed)
        // Taken out while it grows: a second reference to its buffer would make the first append
        // copy the whole buffer (every full group of a bulk insert paid that copy).
        early = nil
        g.seal { buffer in em.emit { SegmentEncoder.encode(buffer, into: &$0) } }
        early = em
        try flushIfLarge(&early!)
    }

    /// Decodes a sealed group's columns again (``LoadedGroup/unseal(reading:)``), reading its
    /// segments from the commit region begun early.
    func unseal(_ g: LoadedGroup) throws {
        guard g.isSealed else { return }
        guard let early else { throw StorageError(.invalidTransactionState, "a sealed group without its commit region") }
        try g.unseal { try early.read($0) }
    }

    /// Whether this file's row groups may name segment patches (format 5).
    var patchesSegments: Bool { formatVersion >= FileHeader.segmentPatchesVersion }

    /// Writes a row group's segment holding `buffer`, which replaces the stored segment or patch
    /// `old`: as a patch over `old`'s base when the group lost the rows `deleted` (rows of `old`)
    /// and had the rows `set` (rows of `buffer`) set, and a patch pays (Spec/FORMAT.md §4.8);
    /// otherwise whole. `deleted` nil: write it whole. Counts what it frees.
    func writeSegment(_ buffer: ColumnBuffer, replacing old: BlockRef?, deleted: [Int]?, set: [Int], _ em: inout Emitter) throws
        -> BlockRef
    {
        guard let old else { return em.emit { SegmentEncoder.encode(buffer, into: &$0) } }
        let stored = try base.segmentPatch(old)
        if let deleted, !(deleted.isEmpty && set.isEmpty),
            let (patch, values) = try patchPlan(buffer, replacing: old, stored: stored, deleted: deleted, set: set)
        {
            // The new patch keeps the base (`old` itself, or the stored patch's, whose own block
            // and values go).
            if let stored { freed += old.length + stored.values.length }
            var patch = patch
            patch.values = values.map { v in em.emit { $0.append(v) } } ?? .none
            return em.emit { patch.encode(into: &$0) }
        }
        freed += stored?.parts.reduce(old.length) { $0 + $1.length } ?? old.length
        return em.emit { SegmentEncoder.encode(buffer, into: &$0) }
    }

    /// A patch over the base of `old` (itself, or the base of `stored`, the patch it is) that gives
    /// `buffer`, with its values segment encoded (the patch's `values` is left for the caller to
    /// fill in); nil when the whole segment is the better write (``SegmentPatch/pays(bytes:entries:baseBytes:)``).
    func patchPlan(_ buffer: ColumnBuffer, replacing old: BlockRef, stored: SegmentPatch?, deleted: [Int], set: [Int]) throws -> (
        SegmentPatch, values: [UInt8]?
    )? {
        let baseRef = stored?.base ?? old
        // A bulk change is written whole: at 4 bytes an entry (its row number) at least, this many
        // entries cannot pay, so nothing is encoded to find that out.
        let least = deleted.count + set.count
        guard SegmentPatch.pays(bytes: 64 + 4 * least, entries: least, baseBytes: Int(baseRef.length)) else { return nil }
        // Deleted rows of `old` as rows of its base: old row `d` is base row `d + k`, `k` the stored
        // patch's deleted rows at or below it (both lists ascend).
        let oldDeleted = stored?.deleted ?? []
        var k = 0
        var newDeleted: [Int] = []
        newDeleted.reserveCapacity(deleted.count)
        for d in deleted {
            while k < oldDeleted.count && oldDeleted[k] <= d + k { k += 1 }
            newDeleted.append(d + k)
        }
        let allDeleted = newDeleted.isEmpty ? oldDeleted : (oldDeleted + newDeleted).sorted()
        // Rows the stored patch replaced that remain, renumbered past this transaction's deletes,
        // joined with the rows set now.
        var replaced = Set(set)
        if let stored {
            var k = 0
            for r in stored.replaced {
                while k < deleted.count && deleted[k] < r { k += 1 }
                if k < deleted.count && deleted[k] == r { continue }
                replaced.insert(r - k)
            }
        }
        let rows = replaced.sorted()
        let entries = allDeleted.count + rows.count
        var values: [UInt8]?
        if !rows.isEmpty {
            var v = ColumnBuffer(
                type: buffer.type, nullable: buffer.nullable, isList: buffer.isList, isMap: buffer.isMap, capacity: rows.count)
            for r in rows { v.append(buffer.value(r)) }
            values = SegmentEncoder.encode(v)
        }
        guard SegmentPatch.pays(bytes: 64 + 4 * entries + (values?.count ?? 0), entries: entries, baseBytes: Int(baseRef.length))
        else { return nil }
        return (SegmentPatch(base: baseRef, values: .none, rowCount: buffer.count, deleted: allDeleted, replaced: rows), values)
    }

    /// Merges trailing row groups like a binary counter (a group absorbs the one after it when that
    /// one is at least as large and both fit), so one-object commits copy O(log capacity) rows each.
    func mergeTail(_ w: WorkingTable) throws {
        while w.groups.count >= 2 {
            let n = w.groups.count
            let p = w.groups[n - 2]
            let l = w.groups[n - 1]
            guard case .loaded(let lg) = l, lg.rowsChanged || lg.original == nil,
                p.rowCount <= l.rowCount, p.rowCount + l.rowCount <= capacity
            else { return }
            let pg = try load(w, n - 2, allColumns: true)
            try load(w, n - 1, allColumns: true)
            pg.keys += lg.keys
            let t = catalog.table(id: w.tableId)!
            for c in t.columns {
                // Both loaded with all columns: appended in place, by position.
                let p = pg.columns.position(c.id)!
                if let q = lg.columns.position(c.id) {
                    pg.columns.buffers[p].append(contentsOf: lg.columns.buffers[q])
                } else {
                    pg.columns.buffers[p].append(contentsOf: Self.defaults(c, lg.keys.count))
                }
            }
            pg.rowsChanged = true
            if let o = lg.original { try dropGroup(o) }
            w.groups.removeLast()
        }
    }

    /// A chunk of an index being rewritten: untouched in the file, or new entries not yet emitted.
    enum ChunkState {
        case stored(IndexDirectory.Chunk)
        /// New entries: a slice of the transaction's sorted inserts or of a rebuilt chunk, so
        /// cutting a bulk insert's index into chunks copies none of it.
        case fresh(ArraySlice<(UInt64, Int64)>)
        /// New entries: a piece of the transaction's pending inserts, made into a list only when
        /// the chunk is written (held as runs, a bulk insert's index is not spelled out whole).
        case pending(Slice<PendingIndexEntries>)
        /// A stored chunk changed by a patch over its base chunk (format 5); `replacesPatch`: the
        /// stored chunk is itself a patch (of the same base). Its entries are listed only if the
        /// chunk is folded into a new one: applying the patch is a pass over the whole base.
        case patched(IndexDirectory.Chunk, IndexChunkPatch, base: IndexChunk, replacesPatch: Bool)
        /// Whether the chunk holds new entries only (the trailing merge joins them).
        var isNew: Bool {
            switch self {
            case .fresh, .pending: true
            case .stored, .patched: false
            }
        }
        var count: Int {
            switch self {
            case .stored(let c): c.count
            case .fresh(let e): e.count
            case .pending(let e): e.count
            case .patched(_, let patch, _, _): patch.count
            }
        }
    }

    func chunkEntries(_ c: ChunkState) throws -> ArraySlice<(UInt64, Int64)> {
        switch c {
        case .fresh(let e): return e
        case .pending(let e): return ArraySlice(e)
        case .patched(let chunk, let patch, let baseChunk, let replacesPatch):
            // Folded into a new chunk after all: the stored chunk (and the base of the patch it is) goes.
            freed += chunk.block.length + (replacesPatch ? patch.base.length : 0)
            return try patch.apply(base: baseChunk, origin: Int(chunk.block.offset))[...]
        case .stored(let chunk):
            freed += try base.chunkBlocks(chunk.block).reduce(0) { $0 + $1.length }
            if let key = base.cacheKey(chunk.block), let e = base.cache?.chunkEntries(key), e.count == chunk.count { return e[...] }
            return try base.uncachedIndexChunk(chunk).entries[...]
        }
    }

    /// Applies an index's pending inserts and deletes, rewriting only the chunks they touch. Inserts
    /// beyond the last entry (ascending integer keys) go to new trailing chunks that merge like a
    /// binary counter, so a one-object commit copies O(log chunk size) entries.
    func writeIndex(_ iw: IndexWork, _ em: inout Emitter) throws -> BlockRef {
        if iw.inserts.isEmpty && iw.deletes.isEmpty && !iw.baseRef.isNone { return iw.baseRef }
        let inserts = iw.inserts.inOrder()
        let memo = iw.baseRef.isNone ? nil : try base.indexMemo(iw.baseRef)
        let dir = memo?.directory ?? IndexDirectory(columnId: iw.column.id, chunks: [])
        if !iw.baseRef.isNone { freed += iw.baseRef.length }
        let cap = capacity  // index chunks hold as many entries as row groups hold objects
        // Inserts past the last stored entry are appended as a fresh tail chunk.
        // Slices of `inserts`: the interior ones and those appended (none copied).
        var appended = inserts[inserts.endIndex...]
        var interior = inserts[...]
        var baseLast: (hash: UInt64, key: Int64)?
        if dir.chunks.isEmpty {
            // A new index, or an empty one: every entry goes to the new trailing chunks.
            swap(&appended, &interior)
        } else if let lastChunk = dir.chunks.last,
            iw.deletes.isEmpty || !iw.deletes.contains(where: { $0.hash >= lastChunk.firstHash })
        {
            let lastEntry = try memo?.lastEntry ?? base.lastEntry(of: lastChunk)
            baseLast = lastEntry
            // The first insert past the last stored entry (`inserts` is sorted).
            let split = inserts.partitionPoint { ($0.0, $0.1) <= lastEntry }
            appended = inserts[split...]
            interior = inserts[..<split]
        }
        var touchedInserts: [Int: ArraySlice<(UInt64, Int64)>] = [:]
        var touchedDeletes: [Int: Set<IndexWork.HashKey>] = [:]
        if !dir.chunks.isEmpty {
            for e in interior { touchedInserts[dir.chunkIndex(for: e.0), default: []].append(e) }
            for d in iw.deletes {
                for j in dir.chunks(possiblyHolding: d.hash) { touchedDeletes[j, default: []].insert(d) }
            }
        }
        // The chunks before the first touched one are kept as they are, in place: `kept` of them
        // (the trailing merge may take some back); `chunks` holds the rest.
        var chunks: [ChunkState] = []
        let touched = Set(touchedInserts.keys).union(touchedDeletes.keys)
        let firstTouched = touched.min() ?? dir.chunks.count
        var kept = min(firstTouched, dir.chunks.count)
        func appendPieces(_ entries: ArraySlice<(UInt64, Int64)>) {
            var start = entries.startIndex
            while start < entries.endIndex {
                let end = min(entries.endIndex, start + cap)
                chunks.append(.fresh(entries[start..<end]))
                start = end
            }
        }
        // A chunk rebuilt for inserts and deletes inside the index (a string key, an index that
        // grows in random key order) is cut into even pieces of at most `interiorCap` entries: the
        // next commit that lands in it rewrites a few hundred entries, not thousands (a piece of
        // `cap` entries left full would be rewritten whole by every later insert into it).
        let interiorCap = min(cap, patchesSegments ? Self.patchedInteriorChunkCapacity : Self.interiorChunkCapacity)
        func appendInteriorPieces(_ entries: ArraySlice<(UInt64, Int64)>) {
            let pieces = (entries.count + interiorCap - 1) / interiorCap
            guard pieces > 1 else {
                if !entries.isEmpty { chunks.append(.fresh(entries)) }
                return
            }
            let size = (entries.count + pieces - 1) / pieces
            var start = entries.startIndex
            while start < entries.endIndex {
                let end = min(entries.endIndex, start + size)
                chunks.append(.fresh(entries[start..<end]))
                start = end
            }
        }
        for ci in kept..<dir.chunks.count {
            guard touched.contains(ci) else {
                chunks.append(.stored(dir.chunks[ci]))
                continue
            }
            let changes = (touchedInserts[ci]?.count ?? 0) + (touchedDeletes[ci]?.count ?? 0)
            // A few changes inside a stored chunk: a patch over its base when one pays (format 5).
            if patchesSegments, ci < dir.chunks.count, changes <= Self.fewIndexChanges,
                let state = try chunkPatchPlan(dir.chunks[ci], deletes: touchedDeletes[ci] ?? [], inserts: Array(touchedInserts[ci] ?? []))
            {
                chunks.append(state)
                continue
            }
            var entries: ArraySlice<(UInt64, Int64)> = []
            if ci < dir.chunks.count {
                let dels = touchedDeletes[ci] ?? []
                entries = try chunkEntries(.stored(dir.chunks[ci]))
                if !dels.isEmpty { entries = entries.filter { !dels.contains(.init(hash: $0.0, key: $0.1)) }[...] }
            }
            if let ins = touchedInserts[ci] {
                if entries.isEmpty {
                    // A new chunk (a new index, or inserts only): the inserts are its entries, in
                    // order already (`inserts` is sorted and split in order), a slice of them, not
                    // a copy (a bulk insert's index would otherwise be held twice at once).
                    entries = ins
                } else {
                    entries += ins
                    entries.sort { ($0.0, $0.1) < ($1.0, $1.1) }
                }
            }
            // Small pieces pay off for chunks that few changes at a time land in; a chunk a bulk
            // change rewrites anyway stays large (small pieces there would only lengthen the
            // directory every later commit rewrites a page of).
            // With patches (format 5) a chunk that only lost entries stays whole: its next changes
            // are patched, and pieces would only lengthen the directory.
            if patchesSegments && touchedInserts[ci] == nil {
                if !entries.isEmpty { chunks.append(.fresh(entries)) }
            } else if changes <= Self.fewIndexChanges {
                appendInteriorPieces(entries)
            } else {
                appendPieces(entries)
            }
        }
        var start = appended.startIndex
        while start < appended.endIndex {
            let end = min(appended.endIndex, start + cap)
            chunks.append(.pending(appended[start..<end]))
            start = end
        }
        // Merge trailing chunks like a binary counter (a kept chunk joins the rest when the merge
        // reaches it), when entries were appended at the end: interior pieces are left as cut.
        while !appended.isEmpty {
            if chunks.count == 1 && kept > 0 {
                kept -= 1
                chunks.insert(.stored(dir.chunks[kept]), at: 0)
            }
            guard chunks.count >= 2 else { break }
            let p = chunks[chunks.count - 2]
            let l = chunks[chunks.count - 1]
            guard l.isNew, p.count <= l.count, p.count + l.count <= cap else { break }
            let merged = try chunkEntries(p) + chunkEntries(l)
            chunks.removeLast(2)
            chunks.append(.fresh(merged))
        }
        var out = IndexDirectory(columnId: iw.column.id, chunks: prefixCopy(dir.chunks, kept, capacity: kept + chunks.count))
        // The new last entry, when known without decoding (the next commit starts from it).
        var lastEntry: (hash: UInt64, key: Int64)? = kept > 0 && kept == dir.chunks.count ? baseLast : nil
        func emitNew<C: RandomAccessCollection<(UInt64, Int64)>>(_ e: C) {
            guard let first = e.first, let last = e.last else { return }
            // Small chunks are merged into by the next commits: they read them from the cache.
            let ref =
                e.count <= BlockCache.maxCachedChunkCount
                ? em.emit(decoded: .chunk(Array(e))) { IndexDirectory.encodeChunk(e, into: &$0) }
                : em.emit { IndexDirectory.encodeChunk(e, into: &$0) }
            out.chunks.append(.init(firstHash: first.0, count: e.count, block: ref))
            lastEntry = last
        }
        for c in chunks {
            switch c {
            case .stored(let chunk):
                out.chunks.append(chunk)
                lastEntry = chunk == dir.chunks.last ? baseLast : nil
            case .patched(let old, let patch, let baseChunk, let replacesPatch):
                // The new patch replaces the stored one (its base stays); a stored chunk becomes the base.
                if replacesPatch { freed += old.block.length }
                // Not cached as entries: only a fold reads them, once, and each commit that changes
                // the chunk again writes a new patch.
                let ref = em.emit { patch.encode(into: &$0) }
                let ends = PatchedEntries.ends(base: baseChunk, patch)
                out.chunks.append(.init(firstHash: ends.first.0, count: patch.count, block: ref))
                lastEntry = ends.last
            case .fresh(let e):
                emitNew(e)
            case .pending(let e):
                emitNew(Array(e))
            }
            try flushIfLarge(&em)
        }
        return writeDirectory(out, lastEntry: lastEntry, replacing: memo, unchanged: kept, &em)
    }

    /// The stored chunk `chunk` with `deletes` and `inserts` applied as a patch over its base (itself,
    /// or the base of the patch it is): `.patched`, or `.stored` when none of the deletes is in it
    /// and nothing is inserted (deletes of a hash go to every chunk that may hold it); nil when
    /// rebuilding the chunk is the better write (``SegmentPatch/pays(bytes:entries:baseBytes:)``)
    /// or the chunk would be left empty. (An unchanged chunk whose empty patch would not pay is
    /// rebuilt as it is: keeping it too is left for a commit of its own.)
    func chunkPatchPlan(_ chunk: IndexDirectory.Chunk, deletes: Set<IndexWork.HashKey>, inserts: [(UInt64, Int64)]) throws
        -> ChunkState?
    {
        let stored = try base.chunkPatch(chunk.block)
        let baseRef = stored?.base ?? chunk.block
        let baseChunk = try stored == nil ? base.uncachedIndexChunk(chunk) : base.cachedPlainIndexChunk(baseRef)
        var deleted = Set(stored?.deleted ?? [])
        var inserted = stored?.inserted ?? []
        var changed = !inserts.isEmpty
        for d in deletes {
            let e = (d.hash, d.key)
            if let i = inserted.firstIndex(where: { $0 == e }) {
                inserted.remove(at: i)
                changed = true
                continue
            }
            // Binary search of the base chunk for the entry.
            var lo = 0
            var hi = baseChunk.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if (baseChunk.hash(mid), baseChunk.key(mid)) < e { lo = mid + 1 } else { hi = mid }
            }
            if lo < baseChunk.count && baseChunk.hash(lo) == e.0 && baseChunk.key(lo) == e.1 {
                deleted.insert(lo)
                changed = true
            }
        }
        inserted += inserts
        inserted.sort { $0 < $1 }
        let patch = IndexChunkPatch(
            base: baseRef, count: baseChunk.count - deleted.count + inserted.count, deleted: deleted.sorted(), inserted: inserted)
        let entries = patch.deleted.count + patch.inserted.count
        guard patch.count > 0,
            SegmentPatch.pays(
                bytes: 48 + 4 * patch.deleted.count + 16 * patch.inserted.count, entries: entries, baseBytes: Int(baseRef.length))
        else { return nil }
        guard changed else { return .stored(chunk) }
        try patch.checkFits(baseChunk, origin: Int(chunk.block.offset))
        return .patched(chunk, patch, base: baseChunk, replacesPatch: stored != nil)
    }

    /// Whether this file's lists and directories may be paged (format 4).
    var pagesLists: Bool { formatVersion >= FileHeader.pagedListsVersion }

    /// Writes a row-group list, paged as ``Pages/write(_:paged:base:unchanged:block:table:)``
    /// says, keeping the pages of `old` that hold the same entries at the same place (a one-object
    /// commit to a large table writes its last page and the page table). Adds the pages of `old`
    /// it drops to `freed` (the caller frees `old`'s top block).
    func writeList(_ entries: [RowGroupEntry], replacing old: RowGroupList?, unchanged: Int, _ em: inout Emitter) -> BlockRef {
        let (top, dropped) = Pages.write(
            entries, paged: pagesLists, base: old.map { ($0.entries, $0.pages) }, unchanged: unchanged,
            block: { slice, whole in
                // A page's decoded form is not kept: the next transaction and this store's readers
                // start from the page table's, which holds every entry.
                let encode = { (w: inout ByteWriter) in RowGroupEntry.encodeList(slice, into: &w) }
                return whole
                    ? em.emit(decoded: .list(RowGroupList(entries: entries, pages: [])), building: encode) : em.emit(building: encode)
            },
            table: { pages in
                em.emit(decoded: .list(RowGroupList(entries: entries, pages: pages))) { RowGroupEntry.encodeListPages(pages, into: &$0) }
            })
        for b in dropped { freed += b.length }
        return top
    }

    /// Writes an index directory like ``writeList(_:replacing:unchanged:_:)`` writes a list;
    /// `lastEntry` goes with the whole directory's decoded form.
    func writeDirectory(
        _ directory: IndexDirectory, lastEntry: (hash: UInt64, key: Int64)?, replacing old: BlockCache.IndexMemo?, unchanged: Int,
        _ em: inout Emitter
    ) -> BlockRef {
        let (top, dropped) = Pages.write(
            directory.chunks, paged: pagesLists, base: old.map { ($0.directory.chunks, $0.pages) }, unchanged: unchanged,
            block: { slice, whole in
                let encode = { (w: inout ByteWriter) in IndexDirectory.encode(columnId: directory.columnId, slice, into: &w) }
                return whole
                    ? em.emit(decoded: .index(.init(directory: directory, lastEntry: lastEntry, pages: [])), building: encode)
                    : em.emit(building: encode)
            },
            table: { pages in
                em.emit(decoded: .index(.init(directory: directory, lastEntry: lastEntry, pages: pages))) {
                    IndexDirectory.encodePages(columnId: directory.columnId, pages, into: &$0)
                }
            })
        for b in dropped { freed += b.length }
        return top
    }
}

/// The commit protocol (Spec/FORMAT.md §6): append every new block and the version record after the
/// committed length, write the inactive commit slot, then make both durable with one `fdatasync`.
/// Recovery verifies every block of the newest commit, so a torn commit falls back to its parent.
extension WriteTransaction {
    /// Appends blocks to the commit buffer at increasing file offsets.
    struct Emitter {
        let start: UInt64
        var out = ByteWriter(capacity: 1 << 16)
        var written: UInt64 = 0

        mutating func emit(_ block: [UInt8]) -> BlockRef {
            let ref = BlockRef(offset: start + UInt64(out.count), length: UInt64(block.count))
            out.append(block)
            written += UInt64(block.count)
            return ref
        }
    }

    /// Makes every change durable as a new version and returns a snapshot of it.
    /// - Throws: `.maximumNumberOfActiveVersionsExceeded` (nothing changed), `.io` (the file stays at
    ///   the previous version); the transaction ends either way.
    @discardableResult
    public func commit() throws -> Snapshot {
        try checkOpen()
        defer { cancel() }
        let newVersion = base.version + 1
        if let limit = store.options.maximumNumberOfActiveVersions {
            var pins = store.pinnedVersions()
            if let i = pins.firstIndex(where: { $0.isLocal && $0.version == base.version && $0.kind == "transaction" }) {
                pins[i].count -= 1
                if pins[i].count == 0 { pins.remove(at: i) }
            }
            let active = Set(pins.map(\.version)).union([newVersion]).count
            if active > limit { throw StorageError.maximumActiveVersions(active: active, limit: limit) }
        }
        let (file, slotIndex, baseSlot) = store.state.withLock { ($0.current.file, $0.current.slotIndex, $0.current.slot) }
        guard baseSlot.version == base.version else {
            throw StorageError(.invalidTransactionState, "the file advanced under the write lock", path: store.path)
        }
        var em = Emitter(start: baseSlot.fileLength)
        for (id, w) in tables.sorted(by: { $0.key < $1.key }) where catalog.table(id: id) != nil {
            try finish(w, &em)
        }
        var changeset = Changeset()
        changeset.schemaChanged = schemaChanged
        for (id, ch) in changes where !ch.isEmpty {
            if let t = catalog.table(id: id) { changeset.tables[t.name] = ch }
        }
        var record = VersionRecord(
            version: newVersion, parentVersion: base.version, parentRecord: baseSlot.record,
            parentFileLength: baseSlot.fileLength, commitTime: Store.now(), liveBytes: 0, catalog: catalog,
            tables: states, changeset: changeset)
        var recordBytes = record.encode()
        let live = Int64(base.record.liveBytes) + Int64(em.written) + Int64(recordBytes.count) - Int64(freed) - Int64(baseSlot.record.length)
        record.liveBytes = UInt64(max(0, live))
        recordBytes = record.encode()
        let recordRef = em.emit(recordBytes)
        let slot = CommitSlot(version: newVersion, record: recordRef, fileLength: baseSlot.fileLength + em.written, commitTime: record.commitTime)
        let inactive = 1 - slotIndex
        let slotOffset = FileHeader.slotOffsets[inactive]
        let previousSlotBytes = try file.read(at: slotOffset, count: FileHeader.slotSize)
        try file.write(em.out.bytes, at: Int(baseSlot.fileLength))
        do {
            try file.write(slot.encode(), at: slotOffset)
            try file.syncData()
        } catch {
            // The commit is not acknowledged: put the inactive slot back so no reader adopts it.
            try? file.write(previousSlotBytes, at: slotOffset)
            throw error
        }
        return try store.state.withLock { s in
            let size = Int(slot.fileLength)
            let mapping = size <= s.current.mapping.length ? s.current.mapping : try FileMapping(file: file, length: Store.mappingLength(for: size))
            s.current = Store.Current(file: file, mapping: mapping, slot: slot, slotIndex: inactive, record: record)
            return store.makeSnapshot(&s, s.current, kind: "snapshot")
        }
    }

    /// Writes a working table's changed groups, row-group list and indexes; updates `states`.
    func finish(_ w: WorkingTable, _ em: inout Emitter) throws {
        let t = catalog.table(id: w.tableId)!
        try mergeTail(w)
        var entries: [RowGroupEntry] = []
        entries.reserveCapacity(w.groups.count)
        var changed = w.listChanged
        for g in w.groups {
            switch g {
            case .stored(let e): entries.append(e)
            case .loaded(let l):
                guard !l.keys.isEmpty else { continue }
                let needsWrite = l.rowsChanged || l.original == nil || !l.dirty.isEmpty
                if !needsWrite, let o = l.original {
                    entries.append(o)
                    continue
                }
                changed = true
                var block = RowGroupBlock(rowCount: l.keys.count, keys: .none, columns: [:])
                if l.rowsChanged || l.original == nil {
                    var kb = ColumnBuffer(type: .int, nullable: false, isList: false, capacity: l.keys.count)
                    for k in l.keys { kb.append(.int(k)) }
                    block.keys = em.emit(SegmentEncoder.encode(kb))
                    if let ob = l.originalBlock { freed += ob.keys.length }
                } else {
                    block.keys = l.originalBlock!.keys
                }
                for c in t.columns {
                    let rewrite = l.rowsChanged || l.original == nil || l.dirty.contains(c.id)
                    if rewrite {
                        let buf = l.columns[c.id] ?? Self.defaults(c, l.keys.count)
                        precondition(buf.count == l.keys.count, "column buffer out of step with keys")
                        block.columns[c.id] = em.emit(SegmentEncoder.encode(buf))
                        if let old = l.originalBlock?.columns[c.id] { freed += old.length }
                    } else if let old = l.originalBlock?.columns[c.id] {
                        block.columns[c.id] = old
                    }
                }
                // Segments of removed columns are dropped with the rewritten group.
                if let ob = l.originalBlock {
                    for (id, ref) in ob.columns where t.column(id: id) == nil { freed += ref.length }
                    freed += l.original!.block.length
                }
                let ref = em.emit(block.encode())
                entries.append(RowGroupEntry(firstKey: l.keys.first!, lastKey: l.keys.last!, rowCount: l.keys.count, block: ref))
            }
        }
        var st = states[w.tableId] ?? w.baseState
        st.nextObjectKey = w.nextKey
        st.objectCount = UInt64(w.objectCount)
        if changed {
            if !st.rowGroups.isNone { freed += st.rowGroups.length }
            st.rowGroups = entries.isEmpty ? .none : em.emit(RowGroupEntry.encodeList(entries))
        }
        for (id, iw) in w.indexes.sorted(by: { $0.key < $1.key }) where t.column(id: id) != nil {
            let ref = try writeIndex(iw, &em)
            st.indexes[id] = ref
        }
        states[w.tableId] = st
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
                pg.columns[c.id]!.append(contentsOf: lg.columns[c.id] ?? Self.defaults(c, lg.keys.count))
            }
            pg.rowsChanged = true
            if let o = lg.original { freed += try groupBytes(o) }
            w.groups.removeLast()
        }
    }

    /// Applies an index's pending inserts and deletes, rewriting only the chunks they touch.
    func writeIndex(_ iw: IndexWork, _ em: inout Emitter) throws -> BlockRef {
        if iw.inserts.isEmpty && iw.deletes.isEmpty && !iw.baseRef.isNone { return iw.baseRef }
        var inserts = iw.inserts
        if !iw.insertsSorted { inserts.sort { ($0.0, $0.1) < ($1.0, $1.1) } }
        var dir = iw.baseRef.isNone ? IndexDirectory(columnId: iw.column.id, chunks: []) : try base.indexDirectory(iw.baseRef)
        if !iw.baseRef.isNone { freed += iw.baseRef.length }
        let cap = IndexDirectory.chunkCapacity
        func chunkIndex(_ h: UInt64) -> Int {
            var lo = 0
            var hi = dir.chunks.count
            while lo < hi {
                let m = (lo + hi) / 2
                if dir.chunks[m].firstHash <= h { lo = m + 1 } else { hi = m }
            }
            return max(0, lo - 1)
        }
        var touchedInserts: [Int: [(UInt64, Int64)]] = [:]
        var touchedDeletes: [Int: Set<IndexWork.HashKey>] = [:]
        if dir.chunks.isEmpty {
            touchedInserts[0] = inserts
        } else {
            for e in inserts { touchedInserts[chunkIndex(e.0), default: []].append(e) }
            for d in iw.deletes {
                // An entry with this hash may sit in any chunk starting at or before it.
                var ci = chunkIndex(d.hash)
                while ci > 0 && dir.chunks[ci].firstHash == d.hash { ci -= 1 }
                for j in ci..<dir.chunks.count where dir.chunks[j].firstHash <= d.hash {
                    touchedDeletes[j, default: []].insert(d)
                }
            }
        }
        var newChunks: [IndexDirectory.Chunk] = []
        let touched = Set(touchedInserts.keys).union(touchedDeletes.keys)
        for ci in 0..<max(dir.chunks.count, dir.chunks.isEmpty ? 1 : 0) {
            guard touched.contains(ci) else {
                newChunks.append(dir.chunks[ci])
                continue
            }
            var entries: [(UInt64, Int64)] = []
            if ci < dir.chunks.count {
                let e = try IndexDirectory.chunkEntries(try base.block(dir.chunks[ci].block, BlockMagic.indexChunk))
                entries.reserveCapacity(e.count / 2 + (touchedInserts[ci]?.count ?? 0))
                let dels = touchedDeletes[ci] ?? []
                for i in 0..<(e.count / 2) {
                    let h = UInt64(bitPattern: e[2 * i])
                    if !dels.isEmpty && dels.contains(.init(hash: h, key: e[2 * i + 1])) { continue }
                    entries.append((h, e[2 * i + 1]))
                }
                freed += dir.chunks[ci].block.length
            }
            if let ins = touchedInserts[ci] {
                if let last = entries.last, let first = ins.first, (last.0, last.1) <= (first.0, first.1) {
                    entries += ins
                } else {
                    entries += ins
                    entries.sort { ($0.0, $0.1) < ($1.0, $1.1) }
                }
            }
            var start = 0
            while start < entries.count {
                let end = min(entries.count, start + cap)
                let piece = Array(entries[start..<end])
                newChunks.append(.init(firstHash: piece[0].0, count: piece.count, block: em.emit(IndexDirectory.encodeChunk(piece))))
                start = end
            }
        }
        dir.chunks = newChunks
        return em.emit(dir.encode())
    }
}

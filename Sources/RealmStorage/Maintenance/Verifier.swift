/// Walks a version completely: every block's checksum, every segment's structure and values, key
/// order, counts, and every index entry against the column it indexes. Reports each problem with
/// its byte offset instead of stopping at the first.
public struct Verifier: Sendable {
    /// One problem found.
    public struct Problem: Sendable, CustomStringConvertible, Equatable {
        /// The byte offset of the damage, when it has one place.
        public var offset: UInt64?
        /// What is wrong, in words.
        public var reason: String
        /// The damage lies in bytes no version needs (a commit head recovery no longer reads, Spec/
        /// FORMAT.md §3.4): every version still reads, nothing is lost, but the medium may be failing.
        public var inDeadBytes: Bool
        public var description: String { offset.map { "at byte \($0): \(reason)" } ?? reason }

        /// A problem at `offset` (nil when it has no one place); `inDeadBytes` when no version needs
        /// the damaged bytes.
        public init(offset: UInt64?, reason: String, inDeadBytes: Bool = false) {
            self.offset = offset
            self.reason = reason
            self.inDeadBytes = inDeadBytes
        }
    }

    /// The outcome of a verification.
    public struct Report: Sendable {
        /// The version verified (the newest intact one).
        public var version: UInt64
        /// Every problem found, in the order found.
        public var problems: [Problem] = []
        /// Blocks whose checksum and structure were checked.
        public var blocksChecked = 0
        /// Objects whose values were read and checked.
        public var objectsChecked = 0
        /// Version records of the commit chain that were checked.
        public var versionsChecked = 0
        /// The file was replaced by a compacted copy at another name (``Store/superseded``).
        package var superseded: SupersededMark?
        /// Whether nothing was found.
        public var isClean: Bool { problems.isEmpty }
        /// Whether every problem lies in dead bytes: every version reads and nothing is lost.
        public var losesNothing: Bool { problems.allSatisfy(\.inDeadBytes) }
    }

    /// A verifier; it holds no state.
    public init() {}

    /// Opens `path` read-only and verifies its whole commit chain (every slot, head and record
    /// recovery reaches; a chain broken before later commits is reported, with each version it
    /// hides and its offset), then the newest intact version and the chain of older version records.
    /// - Throws: only when the file cannot be opened at all (not a Realm file, no valid commit, I/O).
    public func verify(path: String) throws -> Report {
        var options = Store.Options.passive
        options.salvage = true
        let store = try Store.open(at: path, options: options)
        var report = verify(try store.snapshot(kind: "other"))
        if let damage = store.damage { report.problems = Self.problems(damage) + report.problems }
        report.problems += Self.slotProblems(store)
        report.superseded = store.superseded
        return report
    }

    /// A header slot naming a version no newer than the one read must name a record that loads
    /// (Spec/FORMAT.md §3.3): it was acknowledged once. (A slot naming a newer version that did not
    /// verify, or whose checksum fails, can be a commit a crash tore, and is not reported.)
    static func slotProblems(_ store: Store) -> [Problem] {
        let (file, formatVersion, mapping, version) = store.state.withLock {
            ($0.current.file, $0.current.formatVersion, $0.current.mapping, $0.current.record.version)
        }
        guard let size = try? file.size() else { return [] }
        var problems: [Problem] = []
        for (i, o) in FileHeader.slotOffsets.enumerated() {
            guard let bytes = try? file.read(at: o, count: FileHeader.slotSize),
                let slot = CommitSlot.decode(ByteView(copying: bytes, origin: o)), slot.version <= version
            else { continue }
            guard slot.fileLength >= UInt64(FileHeader.size), slot.fileLength <= UInt64(size) else {
                problems.append(
                    Problem(offset: UInt64(o), reason: "header slot \(i) claims \(slot.fileLength) bytes; the file has \(size)"))
                continue
            }
            do {
                _ = try Store.loadRecord(
                    mapping.view(validLength: Int(slot.fileLength)), slot, formatVersion: formatVersion, cache: nil)
            } catch let e as StorageError {
                problems.append(
                    Problem(
                        offset: e.offset,
                        reason: "header slot \(i) (version \(slot.version)) names a record that does not load: \(e.reason)"))
            } catch {
                problems.append(Problem(offset: UInt64(o), reason: "header slot \(i): \(error)"))
            }
        }
        return problems
    }

    /// What a damaged commit chain means, as problems: where it breaks, and each unreachable version
    /// with the offset of its commit head.
    public static func problems(_ d: ChainDamage) -> [Problem] {
        [
            Problem(
                offset: d.offset,
                reason: "the commit chain is damaged (\(d.reason)): versions after \(d.intactVersion) up to "
                    + "\(d.newestUnreachableVersion) cannot be read")
        ]
            + d.unreachableCommits.map {
                Problem(offset: $0.offset, reason: "version \($0.version) cannot be reached (its commit head is here)")
            }
    }

    /// The commit heads in front of `records` (newest first, as ``Snapshot/ancestorRecords(downTo:)``
    /// lists them) that are not valid heads of their commit. Every commit with a parent has one.
    static func headProblems(_ records: [VersionRecord], _ s: Snapshot) -> [Problem] {
        var problems: [Problem] = []
        for r in records.reversed() where !r.parentRecord.isNone && r.commitStart >= UInt64(FileHeader.size + CommitHead.size) {
            let at = Int(r.commitStart) - CommitHead.size
            let head = (try? s.view.slice(at, CommitHead.size)).flatMap { CommitHead.decode($0) }
            if let head, head.slot.version == r.version, head.parentVersion == r.parentVersion, head.slot.commitTime == r.commitTime {
                continue
            }
            problems.append(
                Problem(
                    offset: UInt64(at),
                    reason: "the commit head of version \(r.version) is damaged; recovery no longer needs it (every version "
                        + "still reads), but the medium may be failing",
                    inDeadBytes: true))
        }
        return problems
    }

    /// Checks what a segment's structure cannot: link keys are not negative, typed links name a
    /// table id the catalog has assigned, and sets hold no element twice.
    func checkValue(_ v: StorageValue, _ c: ColumnSchema, _ catalog: Catalog, at offset: Int) throws {
        if c.isSet, case .list(let items) = v, let d = ColumnBuffer.firstDuplicate(items) {
            throw StorageError.corrupted("set '\(c.name)' holds \(d) more than once", at: offset)
        }
        switch v {
        case .link(let k) where k.rawValue < 0:
            throw StorageError.corrupted("negative link key in '\(c.name)'", at: offset)
        case .typedLink(let table, let k):
            guard table >= 1, table < catalog.nextTableId, k.rawValue >= 0 else {
                throw StorageError.corrupted("typed link to table \(table), key \(k.rawValue) in '\(c.name)'", at: offset)
            }
        case .list(let items): for e in items { try checkValue(e, c, catalog, at: offset) }
        case .map(let entries): for e in entries.values { try checkValue(e, c, catalog, at: offset) }
        default: break
        }
    }

    /// Verifies one snapshot.
    public func verify(_ s: Snapshot) -> Report {
        var report = Report(version: s.version)
        func problem(_ e: any Error) {
            if let se = e as? StorageError {
                report.problems.append(Problem(offset: se.offset, reason: se.reason))
            } else {
                report.problems.append(Problem(offset: nil, reason: "\(e)"))
            }
        }
        // The version chain: every older record still verifies, and (format 3) so does the commit
        // head in front of each commit, which recovery no longer reads once a newer slot names a
        // later commit: damage there loses nothing, but says the medium is failing.
        do {
            let records = try s.ancestorRecords(downTo: 0)
            report.versionsChecked = records.count
            if s.formatVersion >= FileHeader.chainedCommitsVersion { report.problems += Self.headProblems(records, s) }
        } catch { problem(error) }
        var groupsChecked = 0
        for t in s.catalog.tables {
            do {
                let st = try s.tableState(t.name)
                var total = 0
                var previousKey = Int64.min
                for e in try s.rowGroups(st) {
                    report.blocksChecked += 1
                    do {
                        let g = try s.rowGroup(e.block)
                        guard g.rowCount == e.rowCount else {
                            throw StorageError.corrupted(
                                "row group holds \(g.rowCount) rows; its list says \(e.rowCount)", at: Int(e.block.offset))
                        }
                        let keys = try s.keySegment(g)
                        report.blocksChecked += 1
                        for i in 0..<g.rowCount {
                            let k = try s.keyAt(keys, i)
                            guard k > previousKey, k >= e.firstKey, k <= e.lastKey, k < st.nextObjectKey else {
                                throw StorageError.corrupted("object key \(k) out of order or outside its group", at: Int(g.keys.offset))
                            }
                            previousKey = k
                        }
                        for c in t.columns {
                            guard let seg = try s.columnSegment(g, c, cached: false) else { continue }
                            report.blocksChecked += 1
                            let offset = Int(g.columns[c.id]!.offset)
                            for i in 0..<g.rowCount { try checkValue(try seg.value(i), c, s.catalog, at: offset) }
                        }
                        total += g.rowCount
                        report.objectsChecked += g.rowCount
                        // Memory stays bounded on large files: pages already checked may leave.
                        groupsChecked += 1
                        if groupsChecked % 16 == 0 { s.releaseResidentPages() }
                    } catch { problem(error) }
                }
                if total != Int(st.objectCount) {
                    report.problems.append(
                        Problem(
                            offset: st.rowGroups.isNone ? nil : st.rowGroups.offset,
                            reason: "table '\(t.name)' counts \(st.objectCount) objects but its row groups hold \(total)"))
                }
                for c in t.columns where c.isIndexed {
                    guard let ref = st.indexes[c.id] else {
                        if total > 0 {
                            report.problems.append(Problem(offset: nil, reason: "indexed column '\(t.name).\(c.name)' has no index"))
                        }
                        continue
                    }
                    do {
                        let dir = try s.indexDirectory(ref)
                        report.blocksChecked += 1
                        var entries = 0
                        var previousHash: UInt64 = 0
                        for (ci, chunk) in dir.chunks.enumerated() {
                            // Entries reach objects in hash order, all over the file: let pages go now and then.
                            if ci % 8 == 7 { s.releaseResidentPages() }
                            let e = try s.uncachedIndexChunk(chunk)
                            report.blocksChecked += 1
                            guard e.hash(0) == chunk.firstHash else {
                                throw StorageError.corrupted(
                                    "index chunk does not start with its directory's first hash", at: Int(chunk.block.offset))
                            }
                            // Entries ascend by (hash, key) within a chunk and by hash across chunks.
                            var previous: (UInt64, Int64)?
                            for i in 0..<e.count {
                                let h = e.hash(i)
                                let k = e.key(i)
                                if let p = previous, (p.0, p.1) >= (h, k) {
                                    throw StorageError.corrupted("index entries out of order", at: Int(chunk.block.offset))
                                }
                                guard h >= previousHash else {
                                    throw StorageError.corrupted("index chunks out of order", at: Int(chunk.block.offset))
                                }
                                previous = (h, k)
                                previousHash = h
                                guard try s.locate(st, ObjectKey(k)) != nil else {
                                    throw StorageError.corrupted("index entry names missing object \(k)", at: Int(chunk.block.offset))
                                }
                                let v = try s.value(t.name, ObjectKey(k), c.name)
                                guard IndexHash.hash(v) == h else {
                                    throw StorageError.corrupted(
                                        "index entry for object \(k) does not match its value \(v)", at: Int(chunk.block.offset))
                                }
                                entries += 1
                            }
                        }
                        if entries != total {
                            throw StorageError.corrupted(
                                "index on '\(t.name).\(c.name)' holds \(entries) entries for \(total) objects", at: Int(ref.offset))
                        }
                    } catch { problem(error) }
                }
            } catch { problem(error) }
        }
        if s.liveBytes > UInt64(s.fileLength) {
            report.problems.append(Problem(offset: nil, reason: "live bytes \(s.liveBytes) exceed the committed length \(s.fileLength)"))
        }
        return report
    }
}

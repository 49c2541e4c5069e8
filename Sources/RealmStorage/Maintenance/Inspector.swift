import Foundation

/// Everything `realm-dump` prints about a file, gathered without writing anything: the file is
/// opened passively (no lock taken, no pin published, nothing created beside it).
///
/// ```swift
/// let report = try Inspector().inspect(path: "people.realm")
/// print(report.currentVersion, report.liveBytes, report.deadBytes)
/// ```
///
/// A damaged file yields as much as could be read: what failed is in ``Report/problems`` with its
/// byte offset, and only a file that cannot be opened at all throws. `Sendable`; it holds no state.
public struct Inspector: Sendable {
    /// One commit slot of the header.
    public struct SlotInfo: Sendable {
        /// The slot number, 0 or 1.
        public var index: Int
        /// Whether the slot's magic and checksum are intact.
        public var isValid: Bool
        /// The version the slot names (nil when the slot is not valid).
        public var version: UInt64?
        /// Where the named version's record lies in the file.
        public var recordOffset: UInt64?
        /// The committed length of the file at that version.
        public var fileLength: UInt64?
        /// When that version was committed.
        public var commitTime: Date?
        /// Whether the store reads this slot's commit.
        public var isCurrent: Bool
    }
    /// The header as read straight from the file, without opening a store.
    public struct HeaderInfo: Sendable {
        /// The size of the file in bytes.
        public var fileSize: Int
        /// The format version in the header (Spec/FORMAT.md §2).
        public var formatVersion: UInt32
        /// Both commit slots, slot 0 first.
        public var slots: [SlotInfo]
    }
    /// One version record still reachable through parent links.
    public struct VersionInfo: Sendable {
        /// The version number.
        public var version: UInt64
        /// The version it was committed on top of (0 for the first).
        public var parent: UInt64
        /// When it was committed.
        public var commitTime: Date
        /// Where the version record lies in the file, and its length.
        public var recordOffset: UInt64
        /// The version record's length in bytes.
        public var recordLength: UInt64
        /// Where the commit's bytes begin (its blocks lie between here and the record).
        public var commitStart: UInt64
        /// Bytes this commit appended (its blocks and record).
        public var commitBytes: UInt64
        /// Whether the commit changed the schema.
        public var schemaChanged: Bool
        /// Per table: how many objects the commit inserted, deleted and modified.
        public var changedTables: [String: (inserted: Int, deleted: Int, modified: Int)]
    }
    /// One column segment of one row group (with `segments: true`).
    public struct SegmentInfo: Sendable {
        /// The table's name.
        public var table: String
        /// The column's name, or `(keys)` for the object keys.
        public var column: String
        /// The row group, counted from 0 in the table.
        public var rowGroup: Int
        /// Where the segment lies in the file.
        public var offset: UInt64
        /// Its length in the file (compressed, when it is).
        public var storedBytes: UInt64
        /// Its length once decoded.
        public var decodedBytes: Int
        /// Array encodings, outermost first (for example `lz4`, `bytes-offsets`).
        public var encodings: [String]
        /// The rows (values) it holds.
        public var rows: Int
        /// Whether the segment's checksum and structure verified.
        public var checksumOK: Bool
        /// Why it did not, when it did not.
        public var problem: String?
    }
    /// One table of the current version.
    public struct TableInfo: Sendable {
        /// The table's name.
        public var name: String
        /// Its objects in the current version.
        public var objects: Int
        /// Its row groups.
        public var rowGroups: Int
        /// Bytes of its row-group list, row groups, segments and indexes.
        public var bytes: UInt64
    }
    /// A stretch of the file, for a map of it (with `blocks: true`).
    public struct Block: Sendable, Equatable {
        /// What the bytes are: `header`, `record`, `row-group list`, `row-group list page`, `row
        /// group`, `segment`, `index directory`, `index directory page`, `index chunk`, or `dead`
        /// for bytes of a commit that the current version no longer reaches, `unknown` for
        /// committed bytes of no reachable commit.
        public var kind: String
        /// Where the stretch begins.
        public var offset: UInt64
        /// Its length in bytes.
        public var length: UInt64
        /// The version whose commit wrote the bytes, when a reachable record says so.
        public var version: UInt64?
        /// Whether the current version reaches the bytes.
        public var isLive: Bool
    }
    /// Everything gathered about a file.
    public struct Report: Sendable {
        /// The path inspected.
        public var path: String
        /// The file was replaced by a compacted copy at another name (``Store/superseded``).
        package var superseded: SupersededMark?
        /// The size of the file in bytes.
        public var fileSize: Int
        /// The format version in the header.
        public var formatVersion: UInt32
        /// Both commit slots, slot 0 first.
        public var slots: [SlotInfo]
        /// The header slot the report was read from when it was chosen (`slot:`), not the newest.
        public var chosenSlot: Int?
        /// The version the report describes: the newest, or the chosen slot's.
        public var currentVersion: UInt64
        /// Commits between the newest slot-named one and the current one, each named only by its
        /// commit head (format 3, Spec/FORMAT.md §3.4).
        public var chainedCommits: Int
        /// The bytes of the file that belong to some commit (the rest is a torn or unused tail).
        public var committedLength: Int
        /// The bytes the current version reaches.
        public var liveBytes: UInt64
        /// Committed bytes no longer reachable from the current version (reclaimed by compaction).
        public var deadBytes: UInt64 { UInt64(committedLength) - min(UInt64(committedLength), liveBytes) }
        /// The schema of the current version.
        public var catalog: Catalog
        /// Each table of the current version, in catalog order.
        public var tables: [TableInfo]
        /// Newest first.
        public var versions: [VersionInfo]
        /// Versions pinned by other stores (any process).
        public var pins: [VersionPin]
        /// Every segment of the current version (with `segments: true`), in table and row-group order.
        public var segments: [SegmentInfo]
        /// In offset order, covering the committed length (with `blocks: true`).
        public var blocks: [Block]
        /// What could not be read, each with its byte offset where known.
        public var problems: [Verifier.Problem]
    }

    /// An inspector; it holds no state.
    public init() {}

    /// Reads the static header and both commit slots of `path` without opening a store: what can
    /// still be shown of a file whose commits do not open.
    /// - Throws: `.fileNotFound`, `.notARealmFile`, `.unsupportedFormatVersion`, `.corrupted` (a
    ///   damaged static header), `.io`.
    public func readHeader(path: String) throws -> HeaderInfo {
        do {
            let file = try SystemFile.open(path, .readOnly)
            let size = try file.size()
            let head = ByteView(copying: try file.read(at: 0, count: min(size, FileHeader.size)))
            if size < 64 {
                throw StorageError(
                    .notARealmFile, size == 0 ? "the file is empty" : "the file is \(size) bytes, shorter than a Realm header")
            }
            let format = try FileHeader.validateStatic(head)
            let slots = FileHeader.slotOffsets.enumerated().map { i, o in
                Self.slotInfo(i, (try? head.slice(o, FileHeader.slotSize)).flatMap(CommitSlot.decode), current: false)
            }
            return HeaderInfo(fileSize: size, formatVersion: format, slots: slots)
        } catch let e as StorageError {
            throw e.withPath(path)
        }
    }

    static func slotInfo(_ index: Int, _ slot: CommitSlot?, current: Bool) -> SlotInfo {
        SlotInfo(
            index: index, isValid: slot != nil, version: slot?.version, recordOffset: slot?.record.offset, fileLength: slot?.fileLength,
            commitTime: slot.map { Date(timeIntervalSince1970: Double($0.commitTime) / 1e9) }, isCurrent: current)
    }

    /// Inspects `path` passively.
    /// - Parameters:
    ///   - path: the Realm file.
    ///   - segments: list every segment (of `segmentTable` only, when given).
    ///   - segmentTable: the table whose segments to list (nil: every table).
    ///   - slot: read the commit of this header slot instead of the newest (forensics).
    ///   - blocks: map the committed bytes (``Report/blocks``).
    ///   - salvage: read a file whose commit chain is damaged at its newest intact version (the
    ///     damage is among the report's problems) instead of failing.
    /// - Throws: only when the file cannot be opened at all (see ``Store/open(at:options:)``), or
    ///   `.notFound` for an unknown `segmentTable`.
    public func inspect(
        path: String, segments: Bool = false, segmentTable: String? = nil, slot: Int? = nil, blocks: Bool = false,
        salvage: Bool = false
    ) throws -> Report {
        var options = Store.Options.passive
        options.slot = slot
        options.salvage = salvage
        let store = try Store.open(at: path, options: options)
        let s = try store.snapshot(kind: "other")
        if let segmentTable, s.catalog.table(segmentTable) == nil {
            throw StorageError(.notFound, "no table named '\(segmentTable)'", path: path)
        }
        let (file, currentIndex, currentSlot, chained) = store.state.withLock {
            ($0.current.file, $0.current.slotIndex, $0.current.slot, $0.current.chained)
        }
        let size = try file.size()
        let head = ByteView(copying: try file.read(at: 0, count: FileHeader.size))
        let format = try FileHeader.validateStatic(head)
        let slots = FileHeader.slotOffsets.enumerated().map { i, o in
            Self.slotInfo(
                i, (try? head.slice(o, FileHeader.slotSize)).flatMap(CommitSlot.decode), current: i == currentIndex && chained == 0)
        }
        var problems: [Verifier.Problem] = store.damage.map(Verifier.problems) ?? []
        func problem(_ e: any Error) {
            let se = e as? StorageError
            problems.append(Verifier.Problem(offset: se?.offset, reason: se?.reason ?? "\(e)"))
        }
        let versions = readVersions(s, currentSlot.record, problem)
        var tables: [TableInfo] = []
        var segs: [SegmentInfo] = []
        var live: [Block] = [Block(kind: "record", offset: currentSlot.record.offset, length: currentSlot.record.length, isLive: true)]
        for t in s.catalog.tables {
            var info = TableInfo(name: t.name, objects: 0, rowGroups: 0, bytes: 0)
            do {
                let st = try s.tableState(t.name)
                info.objects = Int(st.objectCount)
                if !st.rowGroups.isNone { live.append(Block(kind: "row-group list", ref: st.rowGroups)) }
                info.bytes.addSaturating(st.rowGroups.length)
                let list = try s.rowGroupList(st)
                for p in list.pages {
                    info.bytes.addSaturating(p.block.length)
                    live.append(Block(kind: "row-group list page", ref: p.block))
                }
                let groups = list.entries
                info.rowGroups = groups.count
                for (gi, e) in groups.enumerated() {
                    do {
                        let g = try s.rowGroup(e.block)
                        if gi % 64 == 63 { s.releaseResidentPages() }
                        info.bytes.addSaturating(e.block.length)
                        live.append(Block(kind: "row group", ref: e.block))
                        let named = Dictionary(t.columns.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
                        let cols =
                            [("(keys)", g.keys)]
                            + g.columns.sorted { $0.key < $1.key }.map { (named[$0.key] ?? "(removed \($0.key))", $0.value) }
                        for (name, ref) in cols {
                            // A patch (format 5) keeps its base and values segments live too.
                            let parts = try s.segmentBlocks(ref)
                            for part in parts {
                                info.bytes.addSaturating(part.length)
                                live.append(Block(kind: part == ref && parts.count > 1 ? "segment patch" : "segment", ref: part))
                            }
                            guard segments, segmentTable == nil || segmentTable == t.name else { continue }
                            segs.append(segmentInfo(s, t.name, name, gi, ref))
                            // Memory stays bounded on large files: pages already read may leave.
                            if segs.count % 256 == 0 { s.releaseResidentPages() }
                        }
                    } catch { problem(error) }
                }
                for (_, ref) in st.indexes.sorted(by: { $0.key < $1.key }) {
                    info.bytes.addSaturating(ref.length)
                    live.append(Block(kind: "index directory", ref: ref))
                    do {
                        let memo = try s.indexMemo(ref)
                        for p in memo.pages {
                            info.bytes.addSaturating(p.block.length)
                            live.append(Block(kind: "index directory page", ref: p.block))
                        }
                        for chunk in memo.directory.chunks {
                            // A patch (format 5) keeps its base chunk live too.
                            let parts = try s.chunkBlocks(chunk.block)
                            for part in parts {
                                info.bytes.addSaturating(part.length)
                                live.append(
                                    Block(kind: part == chunk.block && parts.count > 1 ? "index chunk patch" : "index chunk", ref: part))
                            }
                        }
                    } catch { problem(error) }
                }
            } catch { problem(error) }
            tables.append(info)
        }
        return Report(
            path: path, superseded: store.superseded, fileSize: size, formatVersion: format, slots: slots, chosenSlot: slot,
            currentVersion: s.version,
            chainedCommits: chained, committedLength: s.fileLength, liveBytes: s.liveBytes, catalog: s.catalog, tables: tables,
            versions: versions,
            pins: store.pinnedVersions().filter { !$0.isLocal }, segments: segs,
            blocks: blocks
                ? Self.map(
                    live: live, versions: versions, committedLength: UInt64(s.fileLength), heads: format >= FileHeader.chainedCommitsVersion
                )
                : [],
            problems: problems)
    }

    /// Every version record reachable from the current one, newest first; a break in the chain is
    /// reported and ends the list.
    func readVersions(_ s: Snapshot, _ currentRecord: BlockRef, _ problem: (any Error) -> Void) -> [VersionInfo] {
        var versions: [VersionInfo] = []
        var nextStart = UInt64(s.fileLength)
        var ref = currentRecord
        var r = s.record
        while true {
            var changed: [String: (inserted: Int, deleted: Int, modified: Int)] = [:]
            var schemaChanged = false
            do {
                (schemaChanged, changed) = try r.changeCounts()
            } catch { problem(error) }
            versions.append(
                VersionInfo(
                    version: r.version, parent: r.parentVersion, commitTime: Date(timeIntervalSince1970: Double(r.commitTime) / 1e9),
                    recordOffset: ref.offset, recordLength: ref.length, commitStart: r.commitStart,
                    commitBytes: nextStart - min(nextStart, Self.start(s, r)), schemaChanged: schemaChanged, changedTables: changed))
            nextStart = Self.start(s, r)
            guard !r.parentRecord.isNone else { break }
            do {
                let parent = try VersionRecord.decode(try s.block(r.parentRecord, BlockMagic.versionRecord), formatVersion: s.formatVersion)
                guard parent.version == r.parentVersion else {
                    throw StorageError.corrupted(
                        "version \(r.version) names parent \(r.parentVersion); its record holds \(parent.version)",
                        at: Int(r.parentRecord.offset))
                }
                ref = r.parentRecord
                r = parent
            } catch {
                problem(error)
                break
            }
        }
        return versions
    }

    /// Where a commit's bytes begin: at its commit head when it has one (format 3), else at its region.
    static func start(_ s: Snapshot, _ r: VersionRecord) -> UInt64 {
        guard s.formatVersion >= FileHeader.chainedCommitsVersion, r.commitStart >= UInt64(FileHeader.size + CommitHead.size),
            let v = try? s.view.slice(Int(r.commitStart) - CommitHead.size, CommitHead.size), let head = CommitHead.decode(v),
            head.slot.version == r.version
        else { return r.commitStart }
        return r.commitStart - UInt64(CommitHead.size)
    }

    func segmentInfo(_ s: Snapshot, _ table: String, _ column: String, _ group: Int, _ ref: BlockRef) -> SegmentInfo {
        var info = SegmentInfo(
            table: table, column: column, rowGroup: group, offset: ref.offset, storedBytes: ref.length, decodedBytes: 0, encodings: [],
            rows: 0, checksumOK: false, problem: nil)
        do {
            let reader = try s.uncachedSegment(ref)
            info.decodedBytes = reader.decodedSize
            info.encodings = reader.encodings.map(\.description)
            info.rows = reader.rowCount
            // A patch (format 5): its blocks' bytes together, and the stored base's encodings.
            if let patch = try s.segmentPatch(ref) {
                info.storedBytes = patch.parts.reduce(ref.length) { $0 + $1.length }
                let base = try SegmentReader(block: try s.block(patch.base, BlockMagic.segment))
                info.encodings = ["patch"] + base.encodings.map(\.description)
            }
            info.checksumOK = true
        } catch let e as StorageError {
            info.problem = e.offset.map { "at byte \($0): \(e.reason)" } ?? e.reason
        } catch {
            info.problem = "\(error)"
        }
        return info
    }

    /// The committed bytes in offset order: the header, the live blocks, and between them the
    /// commit regions of reachable versions (dead) or of none (unknown).
    /// With `heads` (format 3), the 80 bytes just before a commit region are its commit head.
    static func map(live: [Block], versions: [VersionInfo], committedLength: UInt64, heads: Bool = false) -> [Block] {
        // Commit regions, ascending: [commitStart, end of record).
        let regions = versions.map { ($0.commitStart, $0.recordOffset + $0.recordLength, $0.version) }.sorted { $0.0 < $1.0 }
        func version(at offset: UInt64) -> UInt64? {
            regions.last { $0.0 <= offset && offset < $0.1 }?.2
        }
        var out = [Block(kind: "header", offset: 0, length: UInt64(FileHeader.size), version: nil, isLive: true)]
        var cursor = UInt64(FileHeader.size)
        func gap(to end: UInt64) {
            // Split the gap at region boundaries so each piece has one version.
            while cursor < end {
                let region = regions.last { $0.0 <= cursor && cursor < $0.1 }
                let following = regions.first { $0.0 > cursor }
                let next = region.map { min($0.1, end) } ?? min(following?.0 ?? end, end)
                let isHead = heads && region == nil && following.map { $0.0 == next && next - cursor == UInt64(CommitHead.size) } ?? false
                out.append(
                    Block(
                        kind: isHead ? "commit head" : region == nil ? "unknown" : "dead", offset: cursor, length: next - cursor,
                        version: isHead ? following?.2 : region?.2, isLive: false))
                cursor = next
            }
        }
        var seen = Set<UInt64>()
        for b in live.sorted(by: { $0.offset < $1.offset }) where seen.insert(b.offset).inserted {
            // A damaged reference may name any offset and length: compare without overflowing.
            guard b.offset >= cursor, b.length <= committedLength, b.offset <= committedLength - b.length else { continue }
            gap(to: b.offset)
            var block = b
            block.version = version(at: b.offset)
            out.append(block)
            cursor = b.offset + b.length
        }
        gap(to: committedLength)
        return out
    }
}

extension Inspector.Block {
    init(kind: String, ref: BlockRef) {
        self.init(kind: kind, offset: ref.offset, length: ref.length, version: nil, isLive: true)
    }
    init(kind: String, offset: UInt64, length: UInt64, isLive: Bool) {
        self.init(kind: kind, offset: offset, length: length, version: nil, isLive: isLive)
    }
}

extension UInt64 {
    /// Adds `other`, stopping at `UInt64.max`: the lengths of damaged references are summed before
    /// they are checked, and a huge one trapped (found by the FileOpen fuzzer).
    fileprivate mutating func addSaturating(_ other: UInt64) {
        let (sum, overflow) = addingReportingOverflow(other)
        self = overflow ? .max : sum
    }
}

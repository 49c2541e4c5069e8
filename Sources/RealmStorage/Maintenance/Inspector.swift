import Foundation

/// Everything `realm-dump` prints about a file, gathered without writing to it.
public struct Inspector: Sendable {
    /// One commit slot of the header.
    public struct SlotInfo: Sendable {
        public var index: Int
        public var isValid: Bool
        public var version: UInt64?
        public var recordOffset: UInt64?
        public var fileLength: UInt64?
        public var isCurrent: Bool
    }
    /// One version record still reachable through parent links.
    public struct VersionInfo: Sendable {
        public var version: UInt64
        public var parent: UInt64
        public var commitTime: Date
        /// Where the version record lies in the file.
        public var recordOffset: UInt64
        /// Bytes this commit appended (its blocks and record).
        public var commitBytes: UInt64
        /// Per table: how many objects the commit inserted, deleted and modified.
        public var changedTables: [String: (inserted: Int, deleted: Int, modified: Int)]
    }
    /// One column segment of one row group (with `segments: true`).
    public struct SegmentInfo: Sendable {
        public var table: String
        public var column: String
        public var rowGroup: Int
        public var offset: UInt64
        public var storedBytes: UInt64
        public var decodedBytes: Int
        /// Array encodings, outermost first (for example `lz4`, `bytes-offsets`).
        public var encodings: [String]
        public var rows: Int
        /// Whether the segment's checksum and structure verified.
        public var checksumOK: Bool
    }
    /// One table of the current version.
    public struct TableInfo: Sendable {
        public var name: String
        public var objects: Int
        public var rowGroups: Int
        /// Bytes of its row-group list, row groups and segments.
        public var bytes: UInt64
    }
    /// Everything gathered about a file.
    public struct Report: Sendable {
        public var path: String
        public var fileSize: Int
        public var formatVersion: UInt32
        public var slots: [SlotInfo]
        public var currentVersion: UInt64
        public var committedLength: Int
        public var liveBytes: UInt64
        /// Committed bytes no longer reachable from the current version (reclaimed by compaction).
        public var deadBytes: UInt64 { UInt64(committedLength) - min(UInt64(committedLength), liveBytes) }
        public var catalog: Catalog
        public var tables: [TableInfo]
        public var versions: [VersionInfo]
        /// Versions pinned by other stores (any process).
        public var pins: [VersionPin]
        public var segments: [SegmentInfo]
    }

    /// An inspector; it holds no state.
    public init() {}

    /// Inspects `path` (read-only). With `segments`, lists every segment of every table.
    public func inspect(path: String, segments: Bool = false) throws -> Report {
        let store = try Store.open(at: path, options: .passive)
        let s = try store.snapshot(kind: "other")
        let (file, currentIndex) = store.state.withLock { ($0.current.file, $0.current.slotIndex) }
        let size = try file.size()
        let head = ByteView(copying: try file.read(at: 0, count: FileHeader.size))
        let format = try FileHeader.validateStatic(head)
        var slots: [SlotInfo] = []
        for (i, o) in FileHeader.slotOffsets.enumerated() {
            let slot = (try? head.slice(o, FileHeader.slotSize)).flatMap(CommitSlot.decode)
            slots.append(
                SlotInfo(
                    index: i, isValid: slot != nil, version: slot?.version, recordOffset: slot?.record.offset, fileLength: slot?.fileLength,
                    isCurrent: i == currentIndex))
        }
        var versions: [VersionInfo] = []
        var nextStart = UInt64(s.fileLength)
        var recordOffset = store.state.withLock { $0.current.slot.record.offset }
        for r in (try? s.ancestorRecords(downTo: 0)) ?? [] {
            defer { recordOffset = r.parentRecord.offset }
            var changed: [String: (Int, Int, Int)] = [:]
            for (n, t) in ((try? r.decodeChangeset()) ?? Changeset()).tables {
                changed[n] = (t.inserted.count, t.deleted.count, t.modified.count)
            }
            versions.append(
                VersionInfo(
                    version: r.version, parent: r.parentVersion, commitTime: Date(timeIntervalSince1970: Double(r.commitTime) / 1e9),
                    recordOffset: recordOffset, commitBytes: nextStart - min(nextStart, r.commitStart), changedTables: changed))
            nextStart = r.commitStart
        }
        var tables: [TableInfo] = []
        var segs: [SegmentInfo] = []
        for t in s.catalog.tables {
            let st = try s.tableState(t.name)
            let groups = try s.rowGroups(st)
            var bytes: UInt64 = st.rowGroups.length
            for (gi, e) in groups.enumerated() {
                let g = try s.rowGroup(e.block)
                bytes += e.block.length + g.keys.length
                let cols: [(String, BlockRef)] = [("(keys)", g.keys)] + t.columns.compactMap { c in g.columns[c.id].map { (c.name, $0) } }
                for (name, ref) in cols {
                    if name != "(keys)" { bytes += ref.length }
                    guard segments else { continue }
                    let reader = try? s.segment(ref)
                    segs.append(
                        SegmentInfo(
                            table: t.name, column: name, rowGroup: gi, offset: ref.offset, storedBytes: ref.length,
                            decodedBytes: reader?.decodedSize ?? 0, encodings: reader?.encodings.map(\.description) ?? [],
                            rows: reader?.rowCount ?? 0, checksumOK: reader != nil))
                }
            }
            tables.append(TableInfo(name: t.name, objects: Int(st.objectCount), rowGroups: groups.count, bytes: bytes))
        }
        return Report(
            path: path, fileSize: size, formatVersion: format, slots: slots, currentVersion: s.version, committedLength: s.fileLength,
            liveBytes: s.liveBytes, catalog: s.catalog, tables: tables, versions: versions,
            pins: store.pinnedVersions().filter { !$0.isLocal }, segments: segs)
    }
}

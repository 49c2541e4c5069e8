/// What one commit (or a range of commits) changed, per table (Spec/FORMAT.md §5.6). Notifications
/// are computed from it.
public struct Changeset: Sendable, Equatable {
    /// Changes to one table.
    public struct TableChanges: Sendable, Equatable {
        /// Objects the commits inserted (and did not delete again).
        public var inserted: Set<ObjectKey> = []
        /// Objects that existed before and were deleted.
        public var deleted: Set<ObjectKey> = []
        /// Objects that existed before and whose values changed.
        public var modified: Set<ObjectKey> = []
        /// Ids of the columns set on objects that existed before (a write of the same value
        /// counts: it is a change, as in RealmSwift).
        public var modifiedColumns: Set<UInt32> = []
        /// For each column id of ``modifiedColumns``, the ``modified`` objects that had it set:
        /// recorded by files of format version 6 and later (``knowsColumnsPerObject``).
        public var modifiedByColumn: [UInt32: Set<ObjectKey>] = [:]
        /// Whether ``modifiedByColumn`` is known. False for changes read from a file of format
        /// version 5 or earlier, which records only the table's ``modifiedColumns``: every modified
        /// object may then have had any of them set.
        public var knowsColumnsPerObject = true
        /// Inserted keys as runs (the writer's compact form; merged into ``inserted`` when decoded).
        package var insertedRuns: [KeyRun] = []
        /// The writer's record of sets not yet sorted into ``modifiedColumns`` and
        /// ``modifiedByColumn`` (see ``settleColumnSets()``, which encoding calls): appending a
        /// pair costs a fraction of a set insertion, and a commit that sets one column never
        /// builds a second key set.
        package var pendingSets: [PendingSet] = []

        /// One recorded set of a column on an object.
        package struct PendingSet: Equatable, Sendable {
            let column: UInt32
            let key: ObjectKey
        }
        /// No change.
        public init() {}
        /// Whether the table did not change.
        public var isEmpty: Bool {
            inserted.isEmpty && insertedRuns.isEmpty && deleted.isEmpty && modified.isEmpty && pendingSets.isEmpty
        }

        /// Whether column `column` of object `key` may have been set: certainly when the columns
        /// are known per object (format version 6 and later), else whenever the object was modified
        /// and some modified object had the column set.
        public func mayHaveSet(_ column: UInt32, of key: ObjectKey) -> Bool {
            if knowsColumnsPerObject { return modifiedByColumn[column]?.contains(key) == true }
            return modifiedColumns.contains(column) && modified.contains(key)
        }

        /// Records that column `column` of object `key` (which existed before) was set: the key
        /// joins ``modified`` when the pending sets are settled (one reserved pass then, instead of
        /// a hash insertion, and the set's growth, on every write).
        package mutating func recordSet(_ column: UInt32, of key: ObjectKey) {
            pendingSets.append(PendingSet(column: column, key: key))
        }

        /// Records that object `key` (which existed before) was deleted (its pending sets are
        /// dropped when they are settled).
        package mutating func recordDelete(_ key: ObjectKey) {
            deleted.insert(key)
            modified.remove(key)
        }

        /// Sorts the pending sets into ``modified`` (objects not deleted since), ``modifiedColumns``
        /// (every column set, deleted objects included) and ``modifiedByColumn`` (only objects
        /// still modified). When every set named one column, its key set is ``modified`` itself.
        package mutating func settleColumnSets() {
            guard !pendingSets.isEmpty else { return }
            modified.reserveCapacity(modified.count + pendingSets.count)
            for p in pendingSets where deleted.isEmpty || !deleted.contains(p.key) { modified.insert(p.key) }
            var last: UInt32?
            var mixed = false
            for p in pendingSets where p.column != last {
                mixed = mixed || last != nil
                last = p.column
                modifiedColumns.insert(p.column)
            }
            if !mixed, let column = last, modifiedByColumn.isEmpty {
                modifiedByColumn[column] = modified
            } else {
                for p in pendingSets where modified.contains(p.key) { modifiedByColumn[p.column, default: []].insert(p.key) }
                // A column set only on objects deleted later has an empty key set (as decoded).
                for column in modifiedColumns where modifiedByColumn[column] == nil { modifiedByColumn[column] = [] }
            }
            pendingSets = []
        }

        /// The modified objects' keys as sorted runs, and the one column set on them, read straight
        /// from the pending sets when every one of them named the same column and nothing was
        /// settled before: what ``settleColumnSets()`` then encoding would give, without a hash
        /// insertion per set and a sort of the key set (a bulk update's commit spent a sixth of its
        /// time in them). Nil otherwise.
        func pendingSingleColumn() -> (column: UInt32, runs: [(Int64, Int64)])? {
            guard let column = pendingSets.first?.column, modified.isEmpty, modifiedColumns.isEmpty, modifiedByColumn.isEmpty
            else { return nil }
            var keys: [Int64] = []
            keys.reserveCapacity(pendingSets.count)
            var ascending = true
            for p in pendingSets {
                guard p.column == column else { return nil }
                if !deleted.isEmpty && deleted.contains(p.key) { continue }
                if let last = keys.last, p.key.rawValue < last { ascending = false }
                keys.append(p.key.rawValue)
            }
            if !ascending { keys.sort() }
            return (column, Changeset.merged(keys.lazy.map { KeyRun(start: $0, count: 1) }))
        }
    }

    /// Changes by table name.
    public var tables: [String: TableChanges] = [:]
    /// Whether the schema changed.
    public var schemaChanged = false

    /// No change.
    public init() {}

    /// Folds a later changeset into this one: an object inserted then deleted disappears; a
    /// modification of an object inserted in the range stays an insertion.
    public mutating func merge(later: Changeset) {
        schemaChanged = schemaChanged || later.schemaChanged
        for (name, l) in later.tables {
            var t = tables[name] ?? TableChanges()
            for k in l.inserted { t.inserted.insert(k) }
            for k in l.modified where !t.inserted.contains(k) { t.modified.insert(k) }
            for (column, keys) in l.modifiedByColumn {
                for k in keys where !t.inserted.contains(k) { t.modifiedByColumn[column, default: []].insert(k) }
            }
            for k in l.deleted {
                if t.inserted.remove(k) == nil { t.deleted.insert(k) }
                if t.modified.remove(k) != nil {
                    for column in t.modifiedByColumn.keys { t.modifiedByColumn[column]?.remove(k) }
                }
            }
            t.modifiedColumns.formUnion(l.modifiedColumns)
            t.knowsColumnsPerObject = t.knowsColumnsPerObject && l.knowsColumnsPerObject
            tables[name] = t
        }
    }

    // MARK: Encoding: key sets as sorted runs (start, length)

    /// A run of consecutive object keys.
    package struct KeyRun: Hashable, Sendable {
        package var start: Int64
        package var count: Int64
    }

    static func runs(_ keys: Set<ObjectKey>, plus extra: [KeyRun] = []) -> [(Int64, Int64)] {
        if keys.isEmpty && extra.count <= 1 { return extra.map { ($0.start, $0.count) } }
        var all = extra
        all.reserveCapacity(keys.count + extra.count)
        for k in keys { all.append(KeyRun(start: k.rawValue, count: 1)) }
        all.sort { $0.start < $1.start }
        return merged(all)
    }

    /// `runs` (ascending by start) with overlapping and adjacent runs joined, as (start, length).
    static func merged<S: Sequence<KeyRun>>(_ runs: S) -> [(Int64, Int64)] {
        var out: [(Int64, Int64)] = []
        for r in runs {
            if let last = out.last, last.0 &+ last.1 >= r.start {
                out[out.count - 1].1 = max(last.1, r.start &+ r.count &- last.0)
            } else {
                out.append((r.start, r.count))
            }
        }
        return out
    }

    /// Encodes the changeset as a file of format `formatVersion` stores it (§5.6: from version 6,
    /// each modified column's objects follow the column ids).
    func encode(into w: inout ByteWriter, formatVersion: UInt32) {
        w.u32(schemaChanged ? 1 : 0)
        w.u32(UInt32(tables.count))
        for (name, recorded) in tables.sorted(by: { $0.key < $1.key }) {
            var t = recorded
            let single = t.pendingSingleColumn()
            if single == nil { t.settleColumnSets() }
            w.string(name)
            func put(_ set: Set<ObjectKey>, plus extra: [KeyRun] = []) { put(runs: Self.runs(set, plus: extra)) }
            func put(runs r: [(Int64, Int64)]) {
                w.u32(UInt32(r.count))
                guard formatVersion >= FileHeader.columnChangesVersion else {
                    for (s, n) in r {
                        w.i64(s)
                        w.i64(n)
                    }
                    return
                }
                // Format 6: each run as the gap from the previous run's end and its length − 1,
                // ULEB128 (two bytes for a lone key near the previous one).
                var end: Int64 = 0
                for (s, n) in r {
                    w.uleb128(UInt64(bitPattern: s &- end))
                    w.uleb128(UInt64(n - 1))
                    end = s &+ n
                }
            }
            put(t.inserted, plus: t.insertedRuns)
            put(t.deleted)
            if let single {
                // One column set on every modified object: no column's objects are listed apart.
                put(runs: single.runs)
                w.u32(1)
                w.u32(single.column)
                if formatVersion >= FileHeader.columnChangesVersion { w.u32(0) }
                continue
            }
            put(t.modified)
            w.u32(UInt32(t.modifiedColumns.count))
            for c in t.modifiedColumns.sorted() { w.u32(c) }
            guard formatVersion >= FileHeader.columnChangesVersion else { continue }
            // Only the columns set on some of the modified objects are listed (a column's objects
            // are a subset of them): a commit that sets one column adds four bytes.
            let partial = t.modifiedColumns.sorted().compactMap { c -> (UInt32, Set<ObjectKey>)? in
                let keys = t.modifiedByColumn[c] ?? []
                return keys.count == t.modified.count ? nil : (c, keys)
            }
            w.u32(UInt32(partial.count))
            for (c, keys) in partial {
                w.u32(c)
                put(keys)
            }
        }
    }

    /// The most keys a decoded changeset may name (a bound against hostile run lengths).
    static let maximumKeys = 1 << 28

    /// Walks an encoded format-1-to-5 changeset without building it, validating its structure
    /// and finding its end (a format-6 changeset runs to its record's trailer and is checked when
    /// read, §5.6).
    static func skipFormat5(_ r: inout BlockReader) throws {
        _ = try r.u32()
        let n = try r.count(max: 1 << 16, "changeset table count")
        for _ in 0..<n {
            _ = try r.string()
            for _ in 0..<3 {
                let nr = try r.count(max: 1 << 26, "key run count")
                for _ in 0..<nr {
                    _ = try r.i64()
                    _ = try r.i64()
                }
            }
            let nc = try r.count(max: 1 << 16, "modified column count")
            for _ in 0..<nc { _ = try r.u32() }
        }
    }

    /// Reads a key set's runs (§5.6) as a file of `formatVersion` stores them, counting their keys
    /// into `total` against ``maximumKeys`` and passing each run (start, length) to `body`.
    private static func forEachRun(
        _ r: inout BlockReader, _ formatVersion: UInt32, total: inout Int, _ body: (Int64, Int64) -> Void
    ) throws {
        let nr = try r.count(max: 1 << 26, "key run count")
        var end: Int64 = 0
        for _ in 0..<nr {
            let s: Int64
            let len: Int64
            if formatVersion >= FileHeader.columnChangesVersion {
                s = end &+ Int64(bitPattern: try r.uleb128())
                let lengthLess1 = try r.uleb128()
                guard lengthLess1 < UInt64(Int64.max) else { throw r.corrupted("bad key run length \(lengthLess1) + 1") }
                len = Int64(lengthLess1) + 1
                end = s &+ len
            } else {
                s = try r.i64()
                len = try r.i64()
            }
            guard len >= 1, len <= Int64(maximumKeys - total), s.addingReportingOverflow(len).overflow == false else {
                throw r.corrupted("bad key run \(s)+\(len)")
            }
            total += Int(len)
            body(s, len)
        }
    }

    /// The keys of a key set (see ``forEachRun(_:_:total:_:)``).
    private static func keySet(_ r: inout BlockReader, _ formatVersion: UInt32, total: inout Int) throws -> Set<ObjectKey> {
        var set = Set<ObjectKey>()
        try forEachRun(&r, formatVersion, total: &total) { s, len in for k in s..<(s + len) { set.insert(ObjectKey(k)) } }
        return set
    }

    /// How many keys a key set names (see ``forEachRun(_:_:total:_:)``), in constant memory.
    private static func keyCount(_ r: inout BlockReader, _ formatVersion: UInt32, total: inout Int) throws -> Int {
        var count = 0
        try forEachRun(&r, formatVersion, total: &total) { count += Int($1) }
        return count
    }

    /// How many keys an encoded changeset names per table (inserted, deleted, modified), summed
    /// from its runs without building key sets, validated like ``decode(_:)``: what an inspector
    /// prints about a commit of a million objects, in constant memory.
    static func counts(_ r: inout BlockReader, formatVersion: UInt32) throws -> (
        schemaChanged: Bool, tables: [String: (inserted: Int, deleted: Int, modified: Int)]
    ) {
        var total = 0
        let schemaChanged = try r.u32() != 0
        var tables: [String: (inserted: Int, deleted: Int, modified: Int)] = [:]
        let n = try r.count(max: 1 << 16, "changeset table count")
        for _ in 0..<n {
            let name = try r.string()
            var counts = [0, 0, 0]
            for which in 0..<3 {
                counts[which] = try keyCount(&r, formatVersion, total: &total)
            }
            let nc = try r.count(max: 1 << 16, "modified column count")
            for _ in 0..<nc { _ = try r.u32() }
            if formatVersion >= FileHeader.columnChangesVersion {
                let ns = try r.count(max: 1 << 16, "column key set count")
                for _ in 0..<ns {
                    _ = try r.u32()
                    _ = try keyCount(&r, formatVersion, total: &total)
                }
            }
            tables[name] = (counts[0], counts[1], counts[2])
        }
        return (schemaChanged, tables)
    }

    static func decode(_ r: inout BlockReader, formatVersion: UInt32) throws -> Changeset {
        var total = 0
        var c = Changeset()
        c.schemaChanged = try r.u32() != 0
        let n = try r.count(max: 1 << 16, "changeset table count")
        for _ in 0..<n {
            let name = try r.string()
            var t = TableChanges()
            t.inserted = try keySet(&r, formatVersion, total: &total)
            t.deleted = try keySet(&r, formatVersion, total: &total)
            t.modified = try keySet(&r, formatVersion, total: &total)
            let nc = try r.count(max: 1 << 16, "modified column count")
            for _ in 0..<nc { t.modifiedColumns.insert(try r.u32()) }
            t.knowsColumnsPerObject = formatVersion >= FileHeader.columnChangesVersion
            if t.knowsColumnsPerObject {
                let ns = try r.count(max: 1 << 16, "column key set count")
                for _ in 0..<ns {
                    let column = try r.u32()
                    guard t.modifiedColumns.contains(column), t.modifiedByColumn[column] == nil else {
                        throw r.corrupted("column key set for column \(column), which is not a modified column or is repeated")
                    }
                    t.modifiedByColumn[column] = try keySet(&r, formatVersion, total: &total)
                }
                // A modified column not listed was set on every modified object.
                for column in t.modifiedColumns where t.modifiedByColumn[column] == nil { t.modifiedByColumn[column] = t.modified }
            }
            c.tables[name] = t
        }
        return c
    }
}

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
        /// Ids of the columns whose values changed in ``modified`` objects.
        public var modifiedColumns: Set<UInt32> = []
        /// Inserted keys as runs (the writer's compact form; merged into ``inserted`` when decoded).
        package var insertedRuns: [KeyRun] = []
        /// No change.
        public init() {}
        /// Whether the table did not change.
        public var isEmpty: Bool { inserted.isEmpty && insertedRuns.isEmpty && deleted.isEmpty && modified.isEmpty }
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
            for k in l.deleted {
                if t.inserted.remove(k) == nil { t.deleted.insert(k) }
                t.modified.remove(k)
            }
            t.modifiedColumns.formUnion(l.modifiedColumns)
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
        var out: [(Int64, Int64)] = []
        for r in all {
            if let last = out.last, last.0 &+ last.1 >= r.start {
                out[out.count - 1].1 = max(last.1, r.start &+ r.count &- last.0)
            } else {
                out.append((r.start, r.count))
            }
        }
        return out
    }

    func encode(into w: inout ByteWriter) {
        w.u32(schemaChanged ? 1 : 0)
        w.u32(UInt32(tables.count))
        for (name, t) in tables.sorted(by: { $0.key < $1.key }) {
            w.string(name)
            func put(_ set: Set<ObjectKey>, plus extra: [KeyRun] = []) {
                let r = Self.runs(set, plus: extra)
                w.u32(UInt32(r.count))
                for (s, n) in r {
                    w.i64(s)
                    w.i64(n)
                }
            }
            put(t.inserted, plus: t.insertedRuns)
            put(t.deleted)
            put(t.modified)
            w.u32(UInt32(t.modifiedColumns.count))
            for c in t.modifiedColumns.sorted() { w.u32(c) }
        }
    }

    /// The most keys a decoded changeset may name (a bound against hostile run lengths).
    static let maximumKeys = 1 << 28

    /// Walks an encoded changeset without building it, validating its structure.
    static func skip(_ r: inout BlockReader) throws {
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

    /// How many keys an encoded changeset names per table (inserted, deleted, modified), summed
    /// from its runs without building key sets, validated like ``decode(_:)``: what an inspector
    /// prints about a commit of a million objects, in constant memory.
    static func counts(_ r: inout BlockReader) throws -> (
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
                let nr = try r.count(max: 1 << 26, "key run count")
                for _ in 0..<nr {
                    let s = try r.i64()
                    let len = try r.i64()
                    guard len >= 1, len <= Int64(maximumKeys - total), s.addingReportingOverflow(len).overflow == false else {
                        throw r.corrupted("bad key run \(s)+\(len)")
                    }
                    total += Int(len)
                    counts[which] += Int(len)
                }
            }
            let nc = try r.count(max: 1 << 16, "modified column count")
            for _ in 0..<nc { _ = try r.u32() }
            tables[name] = (counts[0], counts[1], counts[2])
        }
        return (schemaChanged, tables)
    }

    static func decode(_ r: inout BlockReader) throws -> Changeset {
        var total = 0
        var c = Changeset()
        c.schemaChanged = try r.u32() != 0
        let n = try r.count(max: 1 << 16, "changeset table count")
        for _ in 0..<n {
            let name = try r.string()
            var t = TableChanges()
            for which in 0..<3 {
                let nr = try r.count(max: 1 << 26, "key run count")
                var set = Set<ObjectKey>()
                for _ in 0..<nr {
                    let s = try r.i64()
                    let len = try r.i64()
                    guard len >= 1, len <= Int64(maximumKeys - total), s.addingReportingOverflow(len).overflow == false else {
                        throw r.corrupted("bad key run \(s)+\(len)")
                    }
                    total += Int(len)
                    for k in s..<(s + len) { set.insert(ObjectKey(k)) }
                }
                switch which {
                case 0: t.inserted = set
                case 1: t.deleted = set
                default: t.modified = set
                }
            }
            let nc = try r.count(max: 1 << 16, "modified column count")
            for _ in 0..<nc { t.modifiedColumns.insert(try r.u32()) }
            c.tables[name] = t
        }
        return c
    }
}

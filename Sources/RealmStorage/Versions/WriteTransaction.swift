import Foundation

/// The one write transaction of a store: schema changes, inserts, updates and deletes, visible to
/// this transaction at once and to everyone else after ``commit()``.
///
/// Thread-confined: use it from the thread that began it. Ends with ``commit()`` or ``cancel()``;
/// dropping it cancels. Nothing is written to the file before ``commit()``.
public final class WriteTransaction {
    /// The store being written.
    public let store: Store
    /// The version this transaction started from (its pin is released when the transaction ends).
    public let baseVersion: UInt64
    private var baseSnapshot: Snapshot?
    var base: Snapshot {
        guard let baseSnapshot else { preconditionFailure("the write transaction has already ended") }
        return baseSnapshot
    }
    /// The schema as this transaction has changed it so far.
    public private(set) var catalog: Catalog
    var states: [UInt32: TableState]
    var tables: [UInt32: WorkingTable] = [:]
    var changes: [UInt32: Changeset.TableChanges] = [:]
    /// Resolved insert plans by table name, entered when another table's plan takes the place of
    /// `lastPlan`; see ``dropInsertPlans()``.
    var insertPlans: [String: InsertPlan] = [:]
    /// The plan used last (most inserts go to one table in a row, and most transactions insert
    /// into one table: they never hash a name into `insertPlans`).
    var lastPlan: InsertPlan?
    /// The table an operation named last, resolved (most operations in a row name one table:
    /// they never search or copy the catalog's schema); see ``resolved(_:)``. Only loaded and
    /// stored, so the optimizer needs no dynamic exclusivity check for it.
    var lastTable: ResolvedTable?
    /// Forgets every insert plan and resolved table (a schema change makes them stale).
    func dropInsertPlans() {
        insertPlans = [:]
        lastPlan = nil
        lastTable = nil
    }
    var schemaChanged = false
    var freed: UInt64 = 0
    /// The commit's emitter, begun before the commit when a bulk insert seals a full group
    /// (``seal(_:)``): the sealed segments go to the commit region as they are made, and the
    /// commit continues after them.
    var early: Emitter?
    /// Bytes of sealed segments the commit's row groups name (the rest of those emitted early are
    /// dead).
    var sealedKept: UInt64 = 0
    /// Base row groups this transaction rewrites, merges away or deletes whole: the commit drops
    /// their decoded forms from the store's cache (no later version holds them).
    var supersededGroups: [BlockCache.Key] = []
    /// Read by every operation: exempt from dynamic exclusivity checks like the working state (the
    /// transaction is confined to one thread, and no access to it overlaps another).
    public var isFinished: Bool { finished }
    /// Read and written only by plain loads and stores in this file (no access spans a call), so
    /// the optimizer needs no dynamic exclusivity check for it.
    private var finished = false
    let capacity: Int

    init(store: Store, base: Snapshot) {
        self.store = store
        self.baseSnapshot = base
        self.baseVersion = base.version
        self.catalog = base.catalog
        self.states = base.record.tables
        self.capacity = min(max(1, store.options.rowGroupCapacity), SegmentReader.maximumRows)
    }

    deinit { if !finished { cancel() } }

    /// Abandons every change and releases the write lock.
    public func cancel() {
        guard !finished else { return }
        finished = true
        baseSnapshot = nil
        // What the transaction built goes now: a commit ends its transaction before it waits for
        // its sync, so the sync hides this work.
        tables = [:]
        changes = [:]
        dropInsertPlans()
        early = nil
        supersededGroups = []
        store.endWrite()
    }

    func checkOpen() throws {
        guard !finished else { throw StorageError(.invalidTransactionState, "the write transaction has already ended") }
    }

    // MARK: Schema

    /// The file's format version, fixed when it was created (Spec/FORMAT.md §3.1).
    var formatVersion: UInt32 { base.formatVersion }

    /// Refuses a column that the file's format version cannot hold.
    func checkFormatVersion(_ column: ColumnSchema) throws {
        guard let feature = column.formatVersion2Feature, formatVersion < 2 else { return }
        throw StorageError(
            .unsupportedFormatVersion,
            "column '\(column.name)' is \(feature), which needs format version 2; this file has format version \(formatVersion), "
                + "which cannot hold mixed, set or map columns; compact the file to upgrade it",
            path: store.path)
    }

    /// Creates an empty table, optionally with a primary-key column (indexed, unique).
    /// - Throws: `.invalidSchema` if the name is taken or the key type cannot be a primary key;
    ///   `.unsupportedFormatVersion` for a key column a format-version-1 file cannot hold.
    public func createTable(_ name: String, primaryKey: ColumnSchema? = nil) throws {
        try checkOpen()
        guard !name.isEmpty, catalog.table(name) == nil else {
            throw StorageError(.invalidSchema, "a table named '\(name)' already exists or the name is empty")
        }
        if let pk = primaryKey { try checkFormatVersion(pk) }
        var t = TableSchema(id: catalog.nextTableId, name: name)
        catalog.nextTableId += 1
        if var pk = primaryKey {
            guard [.int, .string, .objectId, .uuid].contains(pk.type), !pk.isList, !pk.isMap else {
                throw StorageError(.invalidSchema, "a primary key must be an int, string, objectId or uuid")
            }
            pk.id = t.nextColumnId
            pk.isIndexed = true
            t.nextColumnId += 1
            t.columns.append(pk)
            t.primaryKey = pk.name
        }
        dropInsertPlans()
        catalog.tables.append(t)
        states[t.id] = TableState(tableId: t.id, nextObjectKey: 0, objectCount: 0, rowGroups: .none, indexes: [:])
        schemaChanged = true
    }

    /// Removes a table and all its objects.
    public func removeTable(_ name: String) throws {
        try checkOpen()
        guard let t = catalog.table(name) else { throw StorageError(.notFound, "no table named '\(name)'") }
        if let other = catalog.tables.first(where: { o in o.name != name && o.columns.contains { $0.linkTarget == name } }) {
            throw StorageError(.invalidSchema, "table '\(other.name)' links to '\(name)'; remove that column first")
        }
        if let st = base.record.tables[t.id] { freed += try bytesReachable(st) }
        dropInsertPlans()
        catalog.tables.removeAll { $0.id == t.id }
        states[t.id] = nil
        tables[t.id] = nil
        changes[t.id] = nil
        schemaChanged = true
    }

    /// Adds a column; existing objects read its default (an empty collection, null, or the type's
    /// zero) until set. Mixed columns, to-one links and maps of links are always nullable.
    /// - Throws: `.notFound` (no such table), `.invalidSchema` (a taken name, a missing link target,
    ///   an index on a column that cannot have one, a map that is also a list), `.unsupportedFormatVersion`
    ///   (a mixed, set or map column in a format-version-1 file; compaction upgrades the file).
    public func addColumn(_ table: String, _ column: ColumnSchema) throws {
        try checkOpen()
        guard let ti = catalog.tables.firstIndex(where: { $0.name == table }) else {
            throw StorageError(.notFound, "no table named '\(table)'")
        }
        guard !column.name.isEmpty, catalog.tables[ti].column(column.name) == nil else {
            throw StorageError(.invalidSchema, "table '\(table)' already has a column '\(column.name)'")
        }
        if column.type == .link {
            guard let target = column.linkTarget, catalog.table(target) != nil else {
                throw StorageError(.invalidSchema, "link column '\(column.name)' needs an existing target table")
            }
        }
        try checkFormatVersion(column)
        guard column.isList || !column.isSet else { throw StorageError(.invalidSchema, "set column '\(column.name)' must be a list") }
        guard !(column.isMap && column.isList) else {
            throw StorageError(.invalidSchema, "map column '\(column.name)' cannot also be a list or a set")
        }
        if column.isIndexed && (column.isList || column.isMap || [.float, .double, .mixed].contains(column.type)) {
            throw StorageError(.invalidSchema, "lists, sets, maps, floats, doubles and mixed columns cannot be indexed")
        }
        dropInsertPlans()
        var c = column
        if c.type == .link && !c.isList { c.isNullable = true }  // a to-one link (or a map's link) is always optional
        if c.type == .mixed { c.isNullable = true }  // null is one of a mixed column's values
        c.id = catalog.tables[ti].nextColumnId
        catalog.tables[ti].nextColumnId += 1
        catalog.tables[ti].columns.append(c)
        schemaChanged = true
        if let w = tables[catalog.tables[ti].id] {
            for g in w.groups.loadedGroups where g.rowsChanged || g.original == nil {
                try unseal(g)
                g.columns[c.id] = Self.defaults(c, g.keys.count)
                g.markDirty(c.id)
            }
        }
        if c.isIndexed {
            let w = try working(table)
            let iw = IndexWork(column: c, unique: false, baseRef: .none)
            w.setIndex(iw, for: c.id)
            let def = c.defaultValue
            for k in try allKeys(w) { iw.insert(IndexHash.hash(def), k) }
        }
    }

    /// Removes a column (its bytes become dead and are dropped by compaction or the next rewrite).
    public func removeColumn(_ table: String, _ name: String) throws {
        try checkOpen()
        guard let ti = catalog.tables.firstIndex(where: { $0.name == table }) else {
            throw StorageError(.notFound, "no table named '\(table)'")
        }
        guard let c = catalog.tables[ti].column(name) else { throw StorageError(.notFound, "table '\(table)' has no column '\(name)'") }
        guard catalog.tables[ti].primaryKey != name else { throw StorageError(.invalidSchema, "the primary key cannot be removed") }
        dropInsertPlans()
        catalog.tables[ti].columns.removeAll { $0.id == c.id }
        schemaChanged = true
        let w = try working(table)
        for g in w.groups.loadedGroups { g.forget(c.id) }
        w.setIndex(nil, for: c.id)
        w.listChanged = true
        if let ref = states[w.tableId]?.indexes[c.id] {
            freed += try indexBytes(ref)
            states[w.tableId]?.indexes[c.id] = nil
        }
    }

    // MARK: Reading own writes

    func schema(_ table: String) throws -> TableSchema {
        guard let t = catalog.table(table) else { throw StorageError(.notFound, "no table named '\(table)'") }
        return t
    }

    /// A table of the catalog with what reading and setting values by name need, kept while the
    /// schema does not change (a class: operations share it instead of copying its schema).
    final class ResolvedTable {
        let name: String
        let schema: TableSchema
        /// The table's working state, once an operation needed it.
        var working: WorkingTable?
        /// The column named last, by position in `schema.columns`.
        private var lastColumn = 0
        /// The position of the primary-key column in `schema.columns`.
        let primaryKey: Int?
        init(name: String, schema: TableSchema) {
            self.name = name
            self.schema = schema
            primaryKey = schema.primaryKey.flatMap { name in schema.columns.firstIndex { $0.name == name } }
        }

        /// The position of column `name` in `schema.columns` (the last one found is tried first).
        func column(_ name: String) -> Int? {
            let columns = schema.columns
            if lastColumn < columns.count, columns[lastColumn].name == name { return lastColumn }
            guard let i = columns.firstIndex(where: { $0.name == name }) else { return nil }
            lastColumn = i
            return i
        }
    }

    /// Table `table`, resolved: the last one named is kept (see ``lastTable``).
    func resolved(_ table: String) throws -> ResolvedTable {
        if let r = lastTable, r.name == table { return r }
        let r = ResolvedTable(name: table, schema: try schema(table))
        lastTable = r
        return r
    }

    /// Whether the catalog, as this transaction has changed it, has table `name` (the table named
    /// last is answered without reading the catalog).
    package func hasTable(_ name: String) -> Bool {
        if let r = lastTable, r.name == name { return true }
        return catalog.table(name) != nil
    }

    /// The working state of a resolved table (made when first needed).
    func working(_ r: ResolvedTable) throws -> WorkingTable {
        if let w = r.working { return w }
        let w = try working(r.name)
        r.working = w
        return w
    }

    func working(_ table: String) throws -> WorkingTable {
        let t = try schema(table)
        if let w = tables[t.id] { return w }
        let st = states[t.id] ?? TableState(tableId: t.id, nextObjectKey: 0, objectCount: 0, rowGroups: .none, indexes: [:])
        let list = st.rowGroups.isNone ? [] : try base.rowGroups(st)
        let w = WorkingTable(state: st, groups: list)
        for c in t.columns where c.isIndexed {
            w.setIndex(IndexWork(column: c, unique: c.name == t.primaryKey, baseRef: st.indexes[c.id] ?? .none), for: c.id)
        }
        tables[t.id] = w
        return w
    }

    func allKeys(_ w: WorkingTable) throws -> [Int64] {
        var out: [Int64] = []
        for g in w.groups {
            switch g {
            case .loaded(let l): out += l.allKeys
            case .stored(let e):
                let keys = try base.keySegment(try base.rowGroup(e.block))
                out += keys.integers!.array
            }
        }
        return out
    }

    static func defaults(_ c: ColumnSchema, _ n: Int) -> ColumnBuffer {
        var b = ColumnBuffer(c, capacity: n)
        let d = c.defaultValue
        for _ in 0..<n { b.append(d) }
        return b
    }

    /// Loads group `i` for modification (all columns when `allColumns`).
    @discardableResult
    func load(_ w: WorkingTable, _ i: Int, allColumns: Bool, column: ColumnSchema? = nil) throws -> LoadedGroup {
        let t = catalog.table(id: w.tableId)!
        let g: LoadedGroup
        switch w.groups[i] {
        case .loaded(let l):
            try unseal(l)
            g = l
        case .stored(let e):
            if let key = base.cacheKey(e.block), let cached = base.cache?.group(key), cached.keys.count == cached.block.rowCount {
                // Written by this store's last commits: its buffers are the segments' contents.
                let block = cached.block
                var ids: [UInt32] = []
                var buffers: [ColumnBuffer] = []
                ids.reserveCapacity(t.columns.count)
                buffers.reserveCapacity(t.columns.count)
                for c in t.columns where block.columns[c.id] != nil {
                    guard let p = cached.columns.position(c.id) else { continue }
                    let b = cached.columns.buffers[p]
                    if b.rule == ValueRule(c), b.count == block.rowCount {
                        ids.append(c.id)
                        buffers.append(b)
                    }
                }
                g = LoadedGroup(
                    original: e, originalBlock: block, keys: cached.keys, columns: ColumnSet(ids: ids, buffers: buffers), rowsChanged: false
                )
            } else {
                let block = try base.rowGroup(e.block)
                let keySeg = try base.keySegment(block)
                // keySegment checked that the keys are one integer lane of the group's row count.
                g = LoadedGroup(original: e, originalBlock: block, keys: keySeg.integers!.array, columns: [:], rowsChanged: false)
            }
            w.groups[i] = .loaded(g)
            w.listChanged = true
        }
        let wanted = allColumns ? t.columns : (column.map { [$0] } ?? [])
        for c in wanted where g.columns.position(c.id) == nil {
            if let block = g.originalBlock, let seg = try base.columnSegment(block, c) {
                g.columns[c.id] = try seg.decodeAll(isSet: c.isSet)
            } else {
                g.columns[c.id] = Self.defaults(c, g.keys.count)
            }
        }
        return g
    }

    /// Group `i` of `w` loaded with column `ci` of `t` (the column's schema is copied only when
    /// the group must load it: not for every set after a group's first).
    func load(_ w: WorkingTable, _ i: Int, _ t: ResolvedTable, column ci: Int) throws -> LoadedGroup {
        if case .loaded(let l) = w.groups[i], l.columns.position(t.schema.columns[ci].id) != nil { return l }
        return try load(w, i, allColumns: false, column: t.schema.columns[ci])
    }

    /// The value of `column` of object `key`, including this transaction's changes.
    public func value(_ table: String, _ key: ObjectKey, _ column: String) throws -> StorageValue {
        try checkOpen()
        let t = try resolved(table)
        guard let ci = t.column(column) else { throw StorageError(.notFound, "table '\(table)' has no column '\(column)'") }
        guard let w = t.working ?? tables[t.schema.id] else { return try base.value(table, key, column) }
        guard let gi = w.groupIndex(of: key.rawValue) else { throw StorageError(.notFound, "no object \(key) in '\(table)'") }
        switch w.groups[gi] {
        case .stored:
            return try base.value(table, key, column)
        case .loaded(let g):
            guard let row = g.row(of: key.rawValue) else { throw StorageError(.notFound, "no object \(key) in '\(table)'") }
            try unseal(g)
            let id = t.schema.columns[ci].id
            if let p = g.columns.position(id) { return g.columns.buffers[p].value(row) }
            let c = t.schema.columns[ci]
            if let block = g.originalBlock, !g.rowsChanged, let seg = try base.columnSegment(block, c) { return try seg.value(row) }
            return c.defaultValue
        }
    }

    /// Whether `table` holds `key`, including this transaction's changes.
    public func contains(_ table: String, _ key: ObjectKey) throws -> Bool {
        try checkOpen()
        let t = try schema(table)
        guard let w = tables[t.id] else { return try base.contains(table, key) }
        guard let gi = w.groupIndex(of: key.rawValue) else { return false }
        switch w.groups[gi] {
        case .stored: return try base.contains(table, key)
        case .loaded(let g): return g.row(of: key.rawValue) != nil
        }
    }

    /// The number of objects in `table`, including this transaction's changes.
    public func objectCount(_ table: String) throws -> Int {
        try checkOpen()
        let t = try schema(table)
        if let w = tables[t.id] { return w.objectCount }
        return Int(states[t.id]?.objectCount ?? 0)
    }

    /// The keys of every object in `table`, ascending, including this transaction's changes.
    public func objectKeys(_ table: String) throws -> [ObjectKey] {
        try checkOpen()
        return try allKeys(try working(table)).map { ObjectKey($0) }
    }

    /// The object whose primary key is `value`, including this transaction's changes.
    public func objectKey(_ table: String, primaryKey value: StorageValue) throws -> ObjectKey? {
        try checkOpen()
        let t = try resolved(table)
        guard let pk = t.primaryKey else { throw StorageError(.notFound, "table '\(table)' has no primary key") }
        return try firstIndexed(try working(t), t, column: pk, value).map { ObjectKey($0) }
    }

    /// What ``indexLookup(_:_:_:)`` finds first for column `ci` of `t`. For an integer column (its
    /// hash is the value) whose index lost no entry in this transaction, that is the index's first
    /// entry for the hash, found without gathering candidates.
    func firstIndexed(_ w: WorkingTable, _ t: ResolvedTable, column ci: Int, _ value: StorageValue) throws -> Int64? {
        if let iw = w.indexes[t.schema.columns[ci].id], iw.exact, iw.deletes.isEmpty {
            let h = IndexHash.hash(value)
            if h != IndexHash.nullHash { return try iw.firstBaseCandidate(h, in: base) ?? iw.pending(h).first }
        }
        return try indexLookup(w, t.schema.columns[ci], value).first
    }

    func indexLookup(_ w: WorkingTable, _ c: ColumnSchema, _ value: StorageValue) throws -> [Int64] {
        guard let iw = w.indexes[c.id] else { return [] }
        let h = IndexHash.hash(value)
        var cands: [Int64] = []
        if !iw.baseRef.isNone {
            cands = try iw.baseCandidates(h, in: base)
            if !iw.deletes.isEmpty { cands.removeAll { iw.deletes.contains(.init(hash: h, key: $0)) } }
        }
        cands += iw.pending(h)
        if IndexHash.isExact(c.type) && h != IndexHash.nullHash { return cands }
        let table = catalog.table(id: w.tableId)!.name
        return try cands.filter { try self.value(table, ObjectKey($0), c.name).bitwiseEquals(value) }
    }

    // MARK: Mutations

    /// Inserts an object; missing columns get their default. Returns its new, never-reused key.
    /// - Throws: `.notFound` (unknown table or column), `.typeMismatch`, `.duplicatePrimaryKey`.
    @discardableResult
    public func insert(_ table: String, _ values: [String: StorageValue]) throws -> ObjectKey {
        let t = try schema(table)
        for name in values.keys where t.column(name) == nil {
            throw StorageError(.notFound, "table '\(table)' has no column '\(name)'")
        }
        return try insert(
            table,
            row: t.columns.map { c in values[c.name] ?? c.defaultValue })
    }

    /// What inserting into one table needs, resolved once per transaction and schema (a class, so
    /// each insert shares it instead of copying it).
    final class InsertPlan {
        let name: String
        let schema: TableSchema
        /// Column names in catalog order (for error messages without copying schemas per row).
        let names: [String]
        /// Column ids in catalog order (shared by the new groups' column sets).
        let columnIds: [UInt32]
        /// What each column accepts, in catalog order (checked without touching the buffers).
        let rules: [ValueRule]
        let table: WorkingTable
        /// The row position and index work of each indexed column (apart: the per-row loops read
        /// them without copying a column schema, and its strings, for every row).
        let indexPositions: [Int]
        let indexWorks: [IndexWork]
        /// Positions of mixed columns (whose typed links must name a table).
        let mixed: [Int]
        /// Each column's default value, in catalog order (made when an insert first needs one).
        lazy var defaults: [StorageValue] = schema.columns.map(\.defaultValue)
        /// The tail group new rows go to, with buffers in catalog order.
        var tail: LoadedGroup?
        init(
            name: String, schema: TableSchema, names: [String], table: WorkingTable, indexed: [(Int, IndexWork)],
            mixed: [Int],
            tail: LoadedGroup?
        ) {
            self.name = name
            self.schema = schema
            self.names = names
            self.columnIds = schema.columns.map(\.id)
            self.rules = schema.columns.map(ValueRule.init)
            self.table = table
            self.indexPositions = indexed.map(\.0)
            self.indexWorks = indexed.map(\.1)
            self.mixed = mixed
            self.tail = tail
        }
    }

    func insertPlan(_ table: String) throws -> InsertPlan {
        if let p = lastPlan, p.name == table { return p }
        if let last = lastPlan { insertPlans[last.name] = last }
        if let p = insertPlans[table] {
            lastPlan = p
            return p
        }
        let r = try resolved(table)
        let t = r.schema
        let w = try working(r)
        let indexed = t.columns.enumerated().compactMap { i, c in w.indexes[c.id].map { (i, $0) } }
        let mixed = t.columns.indices.filter { t.columns[$0].type == .mixed }
        let p = InsertPlan(name: table, schema: t, names: t.columns.map(\.name), table: w, indexed: indexed, mixed: mixed, tail: nil)
        lastPlan = p
        return p
    }

    /// Inserts an object given one value per column, in catalog order (the fast path for bulk loads).
    @discardableResult
    public func insert(_ table: String, row: [StorageValue]) throws -> ObjectKey {
        try insertRow(table, count: row.count) { _, i in row[i] }
    }

    /// Inserts an object given one value per column, in catalog order, where nil stands for the
    /// column's default value.
    @discardableResult
    public func insert(_ table: String, values: [StorageValue?]) throws -> ObjectKey {
        try insertRow(table, count: values.count) { plan, i in values[i] ?? plan.defaults[i] }
    }

    /// The one insert: `read(plan, i)` is column i's value (read a few times; inlined into both callers).
    @inline(__always)
    private func insertRow(_ table: String, count: Int, _ read: (InsertPlan, Int) -> StorageValue) throws -> ObjectKey {
        try checkOpen()
        let plan = try insertPlan(table)
        func value(_ i: Int) -> StorageValue { read(plan, i) }
        let w = plan.table
        guard count == plan.names.count else {
            throw StorageError(.typeMismatch, "table '\(table)' has \(plan.names.count) columns; got \(count) values")
        }
        // The tail: the last group if this transaction created it and it has room (buffers in
        // catalog order), else a new one.
        let tail: LoadedGroup
        if let g = plan.tail, g.rowCount < capacity, w.groups.endsWith(g) {
            tail = g
        } else {
            // The group filled last is kept encoded from now on (the commit writes it as it is).
            if let full = plan.tail, full.rowCount >= capacity, full.original == nil, !full.isSealed { try seal(full) }
            // A transaction's first new group starts small (most transactions insert a few
            // objects); later ones, after a full group, expect many more rows.
            let reserve = plan.tail == nil ? min(capacity, 8) : min(capacity, 1024)
            var buffers: [ColumnBuffer] = []
            buffers.reserveCapacity(plan.columnIds.count)
            for c in plan.schema.columns { buffers.append(ColumnBuffer(c, capacity: reserve)) }
            var keys: [Int64] = []
            keys.reserveCapacity(reserve)
            tail = LoadedGroup(
                original: nil, originalBlock: nil, keys: keys, columns: ColumnSet(ids: plan.columnIds, buffers: buffers), rowsChanged: true)
        }
        let key = w.nextKey
        // Checks before any change: unique index values (checked themselves first) and typed links.
        var uniqueHash: (n: Int, hash: UInt64)?
        for n in plan.indexWorks.indices where plan.indexWorks[n].unique {
            let i = plan.indexPositions[n]
            let v = value(i)
            try plan.rules[i].validate(v, column: plan.names[i])
            let iw = plan.indexWorks[n]
            let h = IndexHash.hash(v)
            let baseMax = try iw.baseMaxHash(in: base)
            let fresh = iw.exact && h != IndexHash.nullHash && h > (iw.maxInsertedHash ?? 0) && h > baseMax
            if !fresh, try !indexLookup(w, iw.column, v).isEmpty {
                throw StorageError(.duplicatePrimaryKey, "an object with primary key \(v) already exists in '\(table)'")
            }
            uniqueHash = (n, h)
        }
        for i in plan.mixed { try checkTypedLinks(value(i), column: plan.names[i]) }
        // Each value is checked as it is appended (one read of it); a bad one takes the values
        // appended before it back out, so a failed insert changes nothing (a new tail group joins
        // the table only after its first row is in).
        for i in 0..<count {
            let v = value(i)
            do {
                try plan.rules[i].validate(v, column: plan.names[i])
            } catch {
                for j in 0..<i { tail.columns.buffers[j].remove(sortedIndices: [tail.keys.count]) }
                throw error
            }
            tail.columns.buffers[i].append(consume v)
        }
        if plan.tail !== tail {
            w.groups.append(.loaded(tail))
            plan.tail = tail
        }
        tail.keys.append(key)
        for n in plan.indexWorks.indices {
            let h = uniqueHash?.n == n ? uniqueHash!.hash : IndexHash.hash(value(plan.indexPositions[n]))
            plan.indexWorks[n].insert(h, key)
        }
        w.nextKey += 1
        w.objectCount += 1
        w.listChanged = true
        return ObjectKey(key)
    }

    /// Sets one field of an existing object.
    /// - Throws: `.notFound`, `.typeMismatch`, `.duplicatePrimaryKey`.
    public func set(_ table: String, _ key: ObjectKey, _ column: String, _ value: StorageValue) throws {
        try checkOpen()
        let t = try resolved(table)
        guard let ci = t.column(column) else { throw StorageError(.notFound, "table '\(table)' has no column '\(column)'") }
        let w = try working(t)
        guard let gi = w.groupIndex(of: key.rawValue) else { throw StorageError(.notFound, "no object \(key) in '\(table)'") }
        let g = try load(w, gi, t, column: ci)
        guard let row = g.row(of: key.rawValue) else { throw StorageError(.notFound, "no object \(key) in '\(table)'") }
        // The column's fields are read in place (a copy of its schema retains its strings), and
        // so is its buffer, which `load` loaded (a copy out would make its arrays non-unique).
        let id = t.schema.columns[ci].id
        guard let p = g.columns.position(id) else { preconditionFailure("column \(id) not loaded") }
        try g.columns.buffers[p].validate(value, column: t.schema.columns[ci].name)
        if t.schema.columns[ci].type == .mixed { try checkTypedLinks(value, column: t.schema.columns[ci].name) }
        if t.schema.columns[ci].isIndexed, let iw = w.indexes[id] {
            let old = g.columns.buffers[p].value(row)
            if iw.unique, !old.bitwiseEquals(value), try !indexLookup(w, t.schema.columns[ci], value).isEmpty {
                throw StorageError(.duplicatePrimaryKey, "an object with primary key \(value) already exists in '\(table)'")
            }
            iw.delete(IndexHash.hash(old), key.rawValue)
            iw.insert(IndexHash.hash(value), key.rawValue)
        }
        g.columns.buffers[p].set(row, value)
        g.recordSet(id, of: key.rawValue)
        if key.rawValue < w.firstNewKey { w.recordSet(id, of: key) }
    }

    /// Checks that the typed links in a mixed column's value name tables of the catalog.
    func checkTypedLinks(_ value: StorageValue, column: String) throws {
        switch value {
        case .typedLink(let table, _):
            guard catalog.table(id: table) != nil else {
                throw StorageError(.notFound, "column '\(column)' holds a typed link to table id \(table), which does not exist")
            }
        case .list(let items): for v in items { try checkTypedLinks(v, column: column) }
        case .map(let entries): for v in entries.values { try checkTypedLinks(v, column: column) }
        default: break
        }
    }

    /// Deletes an object.
    /// - Throws: `.notFound` when it does not exist.
    public func delete(_ table: String, _ key: ObjectKey) throws {
        try checkOpen()
        let t = try schema(table)
        let w = try working(table)
        guard let gi = w.groupIndex(of: key.rawValue) else { throw StorageError(.notFound, "no object \(key) in '\(table)'") }
        let g = try load(w, gi, allColumns: true)
        guard let row = g.row(of: key.rawValue) else { throw StorageError(.notFound, "no object \(key) in '\(table)'") }
        for c in t.columns where c.isIndexed {
            w.indexes[c.id]?.delete(IndexHash.hash(g.columns[c.id]!.value(row)), key.rawValue)
        }
        g.keys.remove(at: row)
        for p in g.columns.buffers.indices { g.columns.buffers[p].remove(sortedIndices: [row]) }
        g.rowsChanged = true
        if g.keys.isEmpty {
            w.groups.remove(at: gi)
            if let o = g.original { try dropGroup(o) }
        }
        w.objectCount -= 1
        w.listChanged = true
        if key.rawValue >= w.firstNewKey {
            w.deletedNew.insert(key.rawValue)
        } else {
            changes[w.tableId, default: .init()].recordDelete(key)
        }
    }

    /// Deletes every object of `table`.
    public func deleteAll(_ table: String) throws {
        let w = try working(table)
        for k in try allKeys(w) { try delete(table, ObjectKey(k)) }
    }

    // MARK: Byte accounting

    /// A base row group leaves the table: its bytes are freed and its decoded form superseded.
    func dropGroup(_ e: RowGroupEntry) throws {
        freed += try groupBytes(e)
        supersede(e)
    }

    /// Notes that no later version holds the base row group `e` (see ``supersededGroups``).
    func supersede(_ e: RowGroupEntry) {
        if let key = base.cacheKey(e.block) { supersededGroups.append(key) }
    }

    func groupBytes(_ e: RowGroupEntry) throws -> UInt64 {
        let g = try base.rowGroup(e.block)
        return try e.block.length + base.segmentBytes(g.keys) + g.columns.values.reduce(0) { $0 + (try base.segmentBytes($1)) }
    }

    func indexBytes(_ ref: BlockRef) throws -> UInt64 {
        let d = try base.indexMemo(ref)
        return try ref.length + d.directory.chunks.reduce(0) { $0 + (try base.chunkBlocks($1.block).reduce(0) { $0 + $1.length }) }
            + d.pages.reduce(0) { $0 + $1.block.length }
    }

    func bytesReachable(_ st: TableState) throws -> UInt64 {
        var n: UInt64 = 0
        if !st.rowGroups.isNone {
            let list = try base.rowGroupList(st)
            n += st.rowGroups.length + list.pages.reduce(0) { $0 + $1.block.length }
            for e in list.entries { n += try groupBytes(e) }
        }
        for (_, r) in st.indexes { n += try indexBytes(r) }
        return n
    }
}

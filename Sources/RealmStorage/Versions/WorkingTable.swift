/// A row group as the write transaction sees it: untouched (still the stored entry) or loaded into
/// mutable column buffers.
enum WorkGroup {
    case stored(RowGroupEntry)
    case loaded(LoadedGroup)

    var firstKey: Int64 {
        switch self {
        case .stored(let e): e.firstKey
        case .loaded(let g): g.firstKey ?? .min
        }
    }
    var lastKey: Int64 {
        switch self {
        case .stored(let e): e.lastKey
        case .loaded(let g): g.lastKey ?? .min
        }
    }
    var rowCount: Int {
        switch self {
        case .stored(let e): e.rowCount
        case .loaded(let g): g.rowCount
        }
    }
}

/// A table's row groups as a write transaction sees them, without copying the base version's list:
/// positions before `split` read the shared base entries (or a group loaded in their place, kept
/// in `front`); from `split` on, groups live in `tail`, where a transaction appends, removes and
/// merges. A one-object commit to a large table so touches a few groups instead of building and
/// freeing a working list of all of them.
/// A class (one per working table, confined to its transaction like the table): calls on it need
/// not copy its three arrays, and its state, one value, is exempt from dynamic exclusivity checks
/// (see `LoadedGroup`).
final class GroupList: RandomAccessCollection {
    /// The base version's entries (shared with the snapshot's decoded list).
    private let base: [RowGroupEntry]
    /// The list's own state, in one value: exempt from dynamic exclusivity checks (read by every
    /// lookup of an object in the transaction; see `LoadedGroup`).
    @exclusivity(unchecked) private var parts: Parts

    private struct Parts {
        /// Positions below this read `base` or `front`; the rest are `tail`.
        var split: Int
        /// Groups loaded at positions below `split` (a few: more are moved into `tail`).
        var front: [(position: Int, group: LoadedGroup)] = []
        var tail: [WorkGroup] = []
    }

    /// Front groups kept apart before the list moves them, and what follows them, into `tail`.
    private static let maximumFront = 8

    init(_ base: [RowGroupEntry]) {
        self.base = base
        parts = Parts(split: base.count)
        parts.tail.reserveCapacity(4)
    }

    var startIndex: Int { 0 }
    var endIndex: Int { parts.split + parts.tail.count }

    /// The group loaded in place at `i` (a position below `split`), if any.
    @inline(__always)
    private func frontGroup(_ i: Int) -> LoadedGroup? {
        for f in parts.front where f.position == i { return f.group }
        return nil
    }

    subscript(i: Int) -> WorkGroup {
        @inline(__always) get {
            if i >= parts.split { return parts.tail[i - parts.split] }
            if let g = frontGroup(i) { return .loaded(g) }
            return .stored(base[i])
        }
        // Nonmutating: the list is a class.
        set {
            if i < parts.split, case .loaded(let g) = newValue, parts.front.count < Self.maximumFront {
                if let j = parts.front.firstIndex(where: { $0.position == i }) {
                    parts.front[j].group = g
                } else {
                    parts.front.append((i, g))
                }
                return
            }
            if i < parts.split { materialize(from: Swift.min(unchangedPrefix, i)) }
            parts.tail[i - parts.split] = newValue
        }
    }

    /// The last key of the group at `i` (the smallest integer for an empty group), without making
    /// a work group.
    @inline(__always)
    func lastKey(_ i: Int) -> Int64 {
        if i >= parts.split { return parts.tail[i - parts.split].lastKey }
        if let g = frontGroup(i) { return g.lastKey ?? .min }
        return base[i].lastKey
    }

    /// The first key of the group at `i` (the smallest integer for an empty group).
    @inline(__always)
    func firstKey(_ i: Int) -> Int64 {
        if i >= parts.split { return parts.tail[i - parts.split].firstKey }
        if let g = frontGroup(i) { return g.firstKey ?? .min }
        return base[i].firstKey
    }

    /// The position `position(of:)` found last: tried first (consecutive operations mostly touch
    /// one group), and only a guess, which a change of the list may make wrong.
    private var lastFound = 0

    /// The position of the group that holds (or would hold) `key`: the group found last when its
    /// key range holds `key` (the groups' ranges are disjoint), else a binary search by last key.
    func position(of key: Int64) -> Int? {
        if lastFound < endIndex, firstKey(lastFound) <= key, key <= lastKey(lastFound) { return lastFound }
        let i = indices.partitionPoint { lastKey($0) < key }
        guard i < endIndex && firstKey(i) <= key else { return nil }
        lastFound = i
        return i
    }

    /// Whether `g` is the last group (what every insert asks).
    func endsWith(_ g: LoadedGroup) -> Bool {
        guard !parts.tail.isEmpty, case .loaded(let l) = parts.tail[parts.tail.count - 1] else { return false }
        return l === g
    }

    func append(_ g: WorkGroup) { parts.tail.append(g) }

    func removeLast() {
        precondition(!isEmpty, "removeLast on an empty group list")
        if parts.tail.isEmpty { materialize(from: endIndex - 1) }
        parts.tail.removeLast()
    }

    func remove(at i: Int) {
        if i < parts.split { materialize(from: i) }
        parts.tail.remove(at: i - parts.split)
    }

    /// Moves positions `i..<split` into `tail` (front groups among them included).
    private func materialize(from i: Int) {
        guard i < parts.split else { return }
        var moved: [WorkGroup] = []
        moved.reserveCapacity(parts.split - i + parts.tail.count + 4)
        for j in i..<parts.split { moved.append(.stored(base[j])) }
        for f in parts.front where f.position >= i { moved[f.position - i] = .loaded(f.group) }
        parts.front.removeAll { $0.position >= i }
        moved += parts.tail
        parts.tail = moved
        parts.split = i
    }

    /// The leading positions that still hold the base's entries, in place and untouched.
    var unchangedPrefix: Int { parts.front.reduce(parts.split) { Swift.min($0, $1.position) } }

    /// The base's first `count` entries (at most ``unchangedPrefix``), in a new array with room
    /// for `capacity`.
    func baseEntries(_ count: Int, capacity: Int) -> [RowGroupEntry] {
        precondition(count <= unchangedPrefix)
        return prefixCopy(base, count, capacity: capacity)
    }

    /// Every loaded group, in list order.
    var loadedGroups: [LoadedGroup] {
        var out = parts.front.sorted { $0.position < $1.position }.map(\.group)
        for case .loaded(let g) in parts.tail { out.append(g) }
        return out
    }
}

/// A row group loaded for modification. Columns are loaded on demand; once rows are added or removed
/// (`rowsChanged`) every column is loaded and rewritten at commit.
final class LoadedGroup {
    let original: RowGroupEntry?
    let originalBlock: RowGroupBlock?
    // Exempt from dynamic exclusivity checks (the engine keeps five, all in this file: these two,
    // the index work's two and the group list's state): appended to in place for every inserted
    // object, where a check costs more than the append. A transaction is confined to one thread
    // and no access to these overlaps another. The rest of the per-object state is changed by
    // taking it out, changing it and putting it back, so every access to it is instantaneous and
    // the optimizer needs no check. Measured with callgrind: W1's adds (`realm-bench 100000`,
    // instructions per insert) 6,237 with the 22 exemptions the engine once had, 7,680 with none,
    // 6,310 with these five; W8's updates (`realm-vs-sqlite --n 200000 --only W8`, collecting
    // `*w8Update*`) 166 M instructions with these five, 150 M once the rest was changed that way
    // (149 M with 14 more exemptions instead).
    /// The objects' keys, ascending; empty while the group is sealed with consecutive keys, which
    /// ``keyRange`` then holds (``rowCount``, ``firstKey``, ``lastKey``, ``row(of:)`` and
    /// ``allKeys`` read either).
    @exclusivity(unchecked) var keys: [Int64]
    /// The keys of a group ``seal(writing:)`` sealed when they are consecutive (a bulk insert's are), in
    /// place of ``keys``: 8 bytes an object less while the transaction lasts.
    private(set) var keyRange: ClosedRange<Int64>?

    var rowCount: Int { keyRange?.count ?? keys.count }
    var firstKey: Int64? { keyRange?.lowerBound ?? keys.first }
    var lastKey: Int64? { keyRange?.upperBound ?? keys.last }
    /// The keys, spelled out for a sealed group that holds them as a range.
    var allKeys: [Int64] { keyRange.map { Array($0) } ?? keys }
    @exclusivity(unchecked) var columns: ColumnSet
    /// The ids of the columns this transaction set or added (a handful: searched linearly).
    private(set) var dirty: [UInt32] = []
    var rowsChanged: Bool
    /// The keys the group held when it was loaded (empty for a new group): what its stored
    /// segments' rows are, so a commit can write patches of them (Spec/FORMAT.md §4.8).
    let originalKeys: [Int64]
    /// Keys of objects whose value in a column this transaction set, by column id (a key may
    /// repeat; objects deleted later are skipped at commit).
    private(set) var setKeys = SetKeys()
    /// The most values of one column a commit writes as a patch of the group's segment; more are
    /// written as a whole segment (and ``setKeys`` stops recording them one past this).
    static let mostPatchedSets = 64

    /// Keys by column id, for a handful of columns (searched linearly: cheaper than hashing).
    struct SetKeys {
        private var ids: [UInt32] = []
        private var keys: [[Int64]] = []

        subscript(id: UInt32) -> [Int64]? { ids.firstIndex(of: id).map { keys[$0] } }

        /// Appends `key` to column `id`'s keys unless they number `limit` already.
        mutating func append(_ key: Int64, to id: UInt32, limit: Int) {
            if let p = ids.firstIndex(of: id) {
                if keys[p].count < limit { keys[p].append(key) }
            } else {
                ids.append(id)
                keys.append([key])
            }
        }

        mutating func remove(_ id: UInt32) {
            guard let p = ids.firstIndex(of: id) else { return }
            ids.remove(at: p)
            keys.remove(at: p)
        }
    }

    /// Notes that column `id` must be written (it was set or added).
    func markDirty(_ id: UInt32) {
        guard !dirty.contains(id) else { return }
        // Taken out, changed and put back (every access instantaneous: the optimizer needs no
        // dynamic exclusivity check for them), as with the other per-object state here.
        var d = dirty
        dirty = []
        d.append(id)
        dirty = d
    }

    /// Records that this transaction set column `id` of the object `key`: the column is written at
    /// commit, as a patch of the stored segment while few enough of its values changed.
    func recordSet(_ id: UInt32, of key: Int64) {
        markDirty(id)
        guard originalBlock != nil else { return }
        var k = setKeys
        setKeys = SetKeys()
        k.append(key, to: id, limit: Self.mostPatchedSets + 1)
        setKeys = k
    }

    /// A full group this transaction created, kept encoded: each column's segment, by column id,
    /// already written to the commit region ahead of the commit (see ``seal(writing:)``); nil
    /// while the buffers hold the columns.
    private(set) var sealed: [(id: UInt32, isSet: Bool, block: BlockRef)]?

    /// Whether the group's columns are kept encoded (``seal(writing:)``): they must be decoded
    /// (``unseal(reading:)``) before they are read or changed.
    var isSealed: Bool { sealed != nil }

    /// Hands every column of this group, a full one this transaction created, to `write` (which
    /// encodes it into the commit region, ahead of the commit) and drops the
    /// buffers: a bulk insert holds neither its finished groups' rows nor their segments, only
    /// where the segments are. Consecutive keys are kept as their range, other keys stay decoded,
    /// for lookups. The next read or change of the columns decodes them again; the segments
    /// written then are dead bytes of the commit.
    func seal(writing write: (ColumnBuffer) -> BlockRef) {
        precondition(original == nil && sealed == nil, "only a new group is sealed, once")
        var out: [(id: UInt32, isSet: Bool, block: BlockRef)] = []
        out.reserveCapacity(columns.ids.count)
        for (id, buffer) in zip(columns.ids, columns.buffers) {
            out.append((id, buffer.isSet, write(buffer)))
        }
        columns = ColumnSet()
        sealed = out
        if let first = keys.first, let last = keys.last, last - first == Int64(keys.count - 1) {
            keyRange = first...last
            keys = []
        }
    }

    /// Decodes the columns ``seal(writing:)`` encoded back into buffers, reading each segment
    /// through `read`.
    func unseal(reading read: (BlockRef) throws -> ByteView) throws {
        guard let sealed else { return }
        var set = ColumnSet()
        for s in sealed { set[s.id] = try SegmentReader(block: read(s.block)).decodeAll(isSet: s.isSet) }
        columns = set
        self.sealed = nil
        if let keyRange {
            keys = Array(keyRange)
            self.keyRange = nil
        }
    }

    /// Forgets column `id` (removed from the table).
    func forget(_ id: UInt32) {
        sealed?.removeAll { $0.id == id }
        columns[id] = nil
        dirty = dirty.filter { $0 != id }
        var k = setKeys
        setKeys = SetKeys()
        k.remove(id)
        setKeys = k
    }

    init(original: RowGroupEntry?, originalBlock: RowGroupBlock?, keys: [Int64], columns: ColumnSet, rowsChanged: Bool) {
        self.original = original
        self.originalBlock = originalBlock
        self.keys = keys
        self.originalKeys = originalBlock == nil ? [] : keys
        self.columns = columns
        self.rowsChanged = rowsChanged
    }

    /// The row `row(of:)` found last: tried first (a value is mostly read, then set), and only a
    /// guess, which a change of the keys may make wrong.
    private var lastRow = 0

    func row(of key: Int64) -> Int? {
        if let keyRange { return keyRange.contains(key) ? Int(key - keyRange.lowerBound) : nil }
        if lastRow < keys.count, keys[lastRow] == key { return lastRow }
        guard let r = keys.sortedIndex(of: key) else { return nil }
        lastRow = r
        return r
    }

    /// The rows of the stored segments this group no longer holds, ascending, or nil when rows were
    /// added too (then the group is rewritten whole).
    func deletedOriginalRows() -> [Int]? {
        guard originalBlock != nil, keys.count <= originalKeys.count else { return nil }
        if !rowsChanged { return [] }
        var deleted: [Int] = []
        var j = 0
        for (i, k) in originalKeys.enumerated() {
            if j < keys.count && keys[j] == k {
                j += 1
            } else {
                deleted.append(i)
            }
        }
        return j == keys.count ? deleted : nil
    }

    /// The rows (of the group as it is now) whose value in column `id` this transaction set,
    /// ascending and distinct.
    func setRows(_ id: UInt32) -> [Int] {
        guard let ks = setKeys[id] else { return [] }
        return Set(ks.compactMap { row(of: $0) }).sorted()
    }
}

/// Pending changes to one persisted index.
final class IndexWork {
    let column: ColumnSchema
    let unique: Bool
    var baseRef: BlockRef
    // Exempt from dynamic exclusivity checks for the reason and measurement given at `LoadedGroup`.
    @exclusivity(unchecked) var inserts = PendingIndexEntries()
    var deletes: Set<HashKey> = []
    @exclusivity(unchecked) var byHash: [UInt64: [Int64]]?

    struct HashKey: Hashable {
        let hash: UInt64
        let key: Int64
    }

    /// Whether a hash decides equality for this column's values (integers).
    let exact: Bool
    /// The base version's index, its chunks decoded as lookups need them.
    private var baseIndex: IndexCursor?
    /// The largest hash of the base version's index, once asked for.
    private var baseMax: UInt64?

    init(column: ColumnSchema, unique: Bool, baseRef: BlockRef) {
        self.column = column
        self.unique = unique
        self.baseRef = baseRef
        self.exact = IndexHash.isExact(column.type)
    }

    /// The base version's index, resolved on first use (nil when the base has none).
    private func baseCursor(_ base: Snapshot) throws -> Bool {
        guard !baseRef.isNone else { return false }
        if baseIndex == nil { baseIndex = try IndexCursor(baseRef, in: base) }
        return true
    }

    /// Runs `body` on the base version's index (nil when the base has none). The cursor is taken
    /// out and put back (every access instantaneous: the optimizer needs no dynamic exclusivity
    /// check for it); its decoded chunks stay for the next lookup.
    private func withBaseCursor<T>(_ base: Snapshot, _ body: (inout IndexCursor) throws -> T) throws -> T? {
        guard try baseCursor(base), var cursor = baseIndex else { return nil }
        baseIndex = nil
        defer { baseIndex = cursor }
        return try body(&cursor)
    }

    /// The largest hash of the base version's index (0 without one): an insert whose hash is
    /// greater, and greater than this transaction's, cannot repeat an existing unique value.
    func baseMaxHash(in base: Snapshot) throws -> UInt64 {
        if let baseMax { return baseMax }
        let h = baseRef.isNone ? 0 : try base.largestIndexHash(baseRef)
        baseMax = h
        return h
    }

    /// The keys the base version's index holds for `h` (deleted ones included; the caller filters).
    func baseCandidates(_ h: UInt64, in base: Snapshot) throws -> [Int64] {
        try withBaseCursor(base) { try $0.keys(hash: h, in: base) } ?? []
    }

    /// The first key the base version's index holds for `h` (nil without a base index).
    func firstBaseCandidate(_ h: UInt64, in base: Snapshot) throws -> Int64? {
        try withBaseCursor(base) { try $0.firstKey(hash: h, in: base) } ?? nil
    }

    var maxInsertedHash: UInt64? { inserts.maxHash }

    func insert(_ h: UInt64, _ key: Int64) {
        inserts.append((h, key))
        byHash?[h, default: []].append(key)
    }

    func delete(_ h: UInt64, _ key: Int64) {
        // `byHash`, when made, tells at once whether the entry is a pending one.
        if byHash.map({ $0[h]?.contains(key) == true }) ?? true, inserts.removeLast((h, key)) {
            byHash?[h]?.removeAll { $0 == key }
        } else {
            var d = deletes
            deletes = []
            d.insert(HashKey(hash: h, key: key))
            deletes = d
        }
    }

    /// Keys inserted in this transaction with hash `h`.
    func pending(_ h: UInt64) -> [Int64] {
        if byHash == nil {
            var d: [UInt64: [Int64]] = [:]
            for (hh, k) in inserts { d[hh, default: []].append(k) }
            byHash = d
        }
        return byHash![h] ?? []
    }
}

/// The working state of one table inside a write transaction.
final class WorkingTable {
    let tableId: UInt32
    let groups: GroupList
    var nextKey: Int64
    var objectCount: Int
    /// The work on each persisted index, by column id (read by every lookup and set; changed only
    /// through ``setIndex(_:for:)``).
    private(set) var indexes: [UInt32: IndexWork] = [:]
    var baseState: TableState
    var listChanged = false
    /// Keys from here on were inserted by this transaction.
    let firstNewKey: Int64
    /// Keys inserted by this transaction and deleted again before it committed.
    var deletedNew: Set<Int64> = []
    /// The sets of columns of objects that existed before, in order (the table's changeset takes
    /// them at commit: recorded here, a set costs an append, not a dictionary lookup).
    private(set) var pendingSets: [Changeset.TableChanges.PendingSet] = []

    // The two are changed by taking them out, changing and putting them back: every access is
    // instantaneous, so the optimizer needs no dynamic exclusivity check for them.

    func setIndex(_ work: IndexWork?, for column: UInt32) {
        var i = indexes
        indexes = [:]
        i[column] = work
        indexes = i
    }

    /// Records that column `column` of object `key`, which existed before, was set.
    func recordSet(_ column: UInt32, of key: ObjectKey) {
        var p = pendingSets
        pendingSets = []
        p.append(.init(column: column, key: key))
        pendingSets = p
    }

    init(state: TableState, groups: [RowGroupEntry]) {
        tableId = state.tableId
        firstNewKey = state.nextObjectKey
        baseState = state
        self.groups = GroupList(groups)
        nextKey = state.nextObjectKey
        objectCount = Int(state.objectCount)
    }

    /// The keys this transaction inserted (and kept), as sorted runs.
    var insertedRuns: [Changeset.KeyRun] {
        if deletedNew.isEmpty { return nextKey > firstNewKey ? [.init(start: firstNewKey, count: nextKey - firstNewKey)] : [] }
        var runs: [Changeset.KeyRun] = []
        var start = firstNewKey
        for k in deletedNew.sorted() + [nextKey] {
            if k > start { runs.append(.init(start: start, count: k - start)) }
            start = k + 1
        }
        return runs
    }

    /// The index of the group that holds (or would hold) `key`.
    func groupIndex(of key: Int64) -> Int? { groups.position(of: key) }
}

/// The loaded columns of a row group, by column id. A handful of columns is searched linearly
/// (cheaper than hashing), and new groups keep catalog order so inserts address them by position.
struct ColumnSet: ExpressibleByDictionaryLiteral {
    private(set) var ids: [UInt32] = []
    var buffers: [ColumnBuffer] = []

    init() {}

    init(dictionaryLiteral elements: (UInt32, ColumnBuffer)...) {
        for (k, v) in elements { self[k] = v }
    }

    /// Buffers by column id, given as two arrays of one length with distinct ids.
    init(ids: [UInt32], buffers: [ColumnBuffer]) {
        precondition(ids.count == buffers.count)
        self.ids = ids
        self.buffers = buffers
    }

    @inline(__always)
    func position(_ id: UInt32) -> Int? { ids.firstIndex(of: id) }

    var keys: [UInt32] { ids }

    subscript(id: UInt32) -> ColumnBuffer? {
        get { position(id).map { buffers[$0] } }
        // Mutations of an existing buffer happen in place: copying it out would make its arrays
        // non-unique and every element write would copy the whole column.
        _modify {
            if let p = position(id) {
                var b: ColumnBuffer? = buffers[p]
                buffers[p] = ColumnBuffer(type: .int, nullable: false, isList: false)
                defer {
                    if let b {
                        buffers[p] = b
                    } else {
                        ids.remove(at: p)
                        buffers.remove(at: p)
                    }
                }
                yield &b
            } else {
                var b: ColumnBuffer? = nil
                defer {
                    if let b {
                        ids.append(id)
                        buffers.append(b)
                    }
                }
                yield &b
            }
        }
        set {
            if let p = position(id) {
                if let newValue {
                    buffers[p] = newValue
                } else {
                    ids.remove(at: p)
                    buffers.remove(at: p)
                }
            } else if let newValue {
                ids.append(id)
                buffers.append(newValue)
            }
        }
    }
}

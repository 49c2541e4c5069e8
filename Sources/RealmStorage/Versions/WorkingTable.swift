/// A row group as the write transaction sees it: untouched (still the stored entry) or loaded into
/// mutable column buffers.
enum WorkGroup {
    case stored(RowGroupEntry)
    case loaded(LoadedGroup)

    var firstKey: Int64 {
        switch self {
        case .stored(let e): e.firstKey
        case .loaded(let g): g.keys.first ?? .min
        }
    }
    var lastKey: Int64 {
        switch self {
        case .stored(let e): e.lastKey
        case .loaded(let g): g.keys.last ?? .min
        }
    }
    var rowCount: Int {
        switch self {
        case .stored(let e): e.rowCount
        case .loaded(let g): g.keys.count
        }
    }
}

/// A table's row groups as a write transaction sees them, without copying the base version's list:
/// positions before `split` read the shared base entries (or a group loaded in their place, kept
/// in `front`); from `split` on, groups live in `tail`, where a transaction appends, removes and
/// merges. A one-object commit to a large table so touches a few groups instead of building and
/// freeing a working list of all of them.
/// A class (one per working table, confined to its transaction like the table): calls on it need
/// not copy its three arrays, and its state is exempt from dynamic exclusivity checks like the
/// working table's.
final class GroupList: RandomAccessCollection {
    /// The base version's entries (shared with the snapshot's decoded list).
    private let base: [RowGroupEntry]
    /// Positions below this read `base` or `front`; the rest are `tail`.
    private var split: Int
    /// Groups loaded at positions below `split` (a few: more are moved into `tail`).
    private var front: [(position: Int, group: LoadedGroup)] = []
    private var tail: [WorkGroup] = []

    /// Front groups kept apart before the list moves them, and what follows them, into `tail`.
    private static let maximumFront = 8

    init(_ base: [RowGroupEntry]) {
        self.base = base
        split = base.count
        tail.reserveCapacity(4)
    }

    var startIndex: Int { 0 }
    var endIndex: Int { split + tail.count }

    /// The group loaded in place at `i` (a position below `split`), if any.
    @inline(__always)
    private func frontGroup(_ i: Int) -> LoadedGroup? {
        for f in front where f.position == i { return f.group }
        return nil
    }

    subscript(i: Int) -> WorkGroup {
        @inline(__always) get {
            if i >= split { return tail[i - split] }
            if let g = frontGroup(i) { return .loaded(g) }
            return .stored(base[i])
        }
        // Nonmutating: the list is a class.
        set {
            if i < split, case .loaded(let g) = newValue, front.count < Self.maximumFront {
                if let j = front.firstIndex(where: { $0.position == i }) {
                    front[j].group = g
                } else {
                    front.append((i, g))
                }
                return
            }
            if i < split { materialize(from: Swift.min(unchangedPrefix, i)) }
            tail[i - split] = newValue
        }
    }

    /// The last key of the group at `i` (the smallest integer for an empty group), without making
    /// a work group.
    @inline(__always)
    func lastKey(_ i: Int) -> Int64 {
        if i >= split { return tail[i - split].lastKey }
        if let g = frontGroup(i) { return g.keys.last ?? .min }
        return base[i].lastKey
    }

    /// The first key of the group at `i` (the smallest integer for an empty group).
    @inline(__always)
    func firstKey(_ i: Int) -> Int64 {
        if i >= split { return tail[i - split].firstKey }
        if let g = frontGroup(i) { return g.keys.first ?? .min }
        return base[i].firstKey
    }

    /// The position of the group that holds (or would hold) `key`: a binary search by last key.
    func position(of key: Int64) -> Int? {
        let i = indices.partitionPoint { lastKey($0) < key }
        return i < endIndex && firstKey(i) <= key ? i : nil
    }

    /// Whether `g` is the last group (what every insert asks).
    func endsWith(_ g: LoadedGroup) -> Bool {
        guard !tail.isEmpty, case .loaded(let l) = tail[tail.count - 1] else { return false }
        return l === g
    }

    func append(_ g: WorkGroup) { tail.append(g) }

    func removeLast() {
        precondition(!isEmpty, "removeLast on an empty group list")
        if tail.isEmpty { materialize(from: endIndex - 1) }
        tail.removeLast()
    }

    func remove(at i: Int) {
        if i < split { materialize(from: i) }
        tail.remove(at: i - split)
    }

    /// Moves positions `i..<split` into `tail` (front groups among them included).
    private func materialize(from i: Int) {
        guard i < split else { return }
        var moved: [WorkGroup] = []
        moved.reserveCapacity(split - i + tail.count + 4)
        for j in i..<split { moved.append(.stored(base[j])) }
        for f in front where f.position >= i { moved[f.position - i] = .loaded(f.group) }
        front.removeAll { $0.position >= i }
        moved += tail
        tail = moved
        split = i
    }

    /// The leading positions that still hold the base's entries, in place and untouched.
    var unchangedPrefix: Int { front.reduce(split) { Swift.min($0, $1.position) } }

    /// The base's first `count` entries (at most ``unchangedPrefix``), in a new array with room
    /// for `capacity`.
    func baseEntries(_ count: Int, capacity: Int) -> [RowGroupEntry] {
        precondition(count <= unchangedPrefix)
        return prefixCopy(base, count, capacity: capacity)
    }

    /// Every loaded group, in list order.
    var loadedGroups: [LoadedGroup] {
        var out = front.sorted { $0.position < $1.position }.map(\.group)
        for case .loaded(let g) in tail { out.append(g) }
        return out
    }
}

/// A row group loaded for modification. Columns are loaded on demand; once rows are added or removed
/// (`rowsChanged`) every column is loaded and rewritten at commit.
final class LoadedGroup {
    var original: RowGroupEntry?
    var originalBlock: RowGroupBlock?
    // Exempt from dynamic exclusivity checks (the engine keeps five, all in this file): appended
    // to in place for every inserted object, where a check costs more than the append. Measured
    // with callgrind on `realm-bench 100000` (W1's adds, instructions per insert): 6,237 with the
    // 22 exemptions the engine had, 7,680 with none, 6,310 with these five. A transaction is
    // confined to one thread and no access to these overlaps another.
    @exclusivity(unchecked) var keys: [Int64]
    @exclusivity(unchecked) var columns: ColumnSet
    var dirty: Set<UInt32> = []
    var rowsChanged: Bool
    /// The keys the group held when it was loaded (empty for a new group): what its stored
    /// segments' rows are, so a commit can write patches of them (Spec/FORMAT.md §4.8).
    let originalKeys: [Int64]
    /// Keys of objects whose value in a column this transaction set, by column id (a key may
    /// repeat; objects deleted later are skipped at commit).
    var setKeys: [UInt32: [Int64]] = [:]
    /// The most values of one column a commit writes as a patch of the group's segment; more are
    /// written as a whole segment (and ``setKeys`` stops recording them one past this).
    static let mostPatchedSets = 64

    init(original: RowGroupEntry?, originalBlock: RowGroupBlock?, keys: [Int64], columns: ColumnSet, rowsChanged: Bool) {
        self.original = original
        self.originalBlock = originalBlock
        self.keys = keys
        self.originalKeys = originalBlock == nil ? [] : keys
        self.columns = columns
        self.rowsChanged = rowsChanged
    }

    func row(of key: Int64) -> Int? { keys.sortedIndex(of: key) }

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
    @exclusivity(unchecked) var inserts: [(UInt64, Int64)] = []
    @exclusivity(unchecked) var insertsSorted = true
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
        try baseCursor(base) ? baseIndex!.keys(hash: h, in: base) : []
    }

    var maxInsertedHash: UInt64? { insertsSorted ? inserts.last?.0 : inserts.map(\.0).max() }

    func insert(_ h: UInt64, _ key: Int64) {
        if let last = inserts.last, last.0 > h || (last.0 == h && last.1 > key) { insertsSorted = false }
        inserts.append((h, key))
        byHash?[h, default: []].append(key)
    }

    func delete(_ h: UInt64, _ key: Int64) {
        if let i = byHashIndex(h, key) {
            inserts.remove(at: i)
            byHash?[h]?.removeAll { $0 == key }
        } else {
            deletes.insert(HashKey(hash: h, key: key))
        }
    }

    private func byHashIndex(_ h: UInt64, _ key: Int64) -> Int? {
        if let bh = byHash, bh[h]?.contains(key) != true { return nil }
        return inserts.lastIndex { $0.0 == h && $0.1 == key }
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
    var indexes: [UInt32: IndexWork] = [:]
    var baseState: TableState
    var listChanged = false
    /// Keys from here on were inserted by this transaction.
    let firstNewKey: Int64
    /// Keys inserted by this transaction and deleted again before it committed.
    var deletedNew: Set<Int64> = []

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

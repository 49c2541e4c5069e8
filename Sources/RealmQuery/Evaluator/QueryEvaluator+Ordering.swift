import RealmStorage

/// Sorting, `distinct` and aggregates over a list of objects (Spec/QUERY.md §7.7, §9).
extension QueryEvaluator {
    /// `keys` stably sorted by `sortKeys`, the first key deciding first (Spec/QUERY.md §9): nil
    /// first ascending, numbers numerically (NaN after nil), strings and binary data by bytes,
    /// `false` before `true`, dates chronologically; descending is the exact reverse. An object
    /// whose to-one link on the path is nil (so it has no value there at all) sorts after every
    /// other object ascending and before them descending, as in RealmSwift. With `limit`, only the first `limit` keys are
    /// returned, selected with a bounded heap rather than a full sort.
    ///
    /// - Throws: ``QueryError`` (`.invalidKeyPath`) for a to-many path or one ending on a link
    ///   (before reading anything); `StorageError` (`.notFound`) for a key `table` lacks.
    package func sort(_ table: String, _ keys: [ObjectKey], by sortKeys: [SortKey], limit: Int? = nil) throws -> [ObjectKey] {
        for key in sortKeys {
            guard !key.path.isToMany else {
                throw QueryError(.invalidKeyPath, "cannot sort by '\(key.path)': it reaches many values per object")
            }
            guard key.path.valueType != .link else {
                throw QueryError(
                    .invalidKeyPath, "cannot sort by '\(key.path)': links are not sortable; sort by a property of the linked object")
            }
        }
        let n = keys.count
        let k = min(max(0, limit ?? n), n)
        guard !sortKeys.isEmpty, k > 0 else { return Array(keys.prefix(k)) }
        let ascending = sortKeys.map(\.ascending)
        if let typed = try typedSortColumns(table, keys, sortKeys) {
            // Plain numbers compared unboxed (same order as ValueOrder: NaN before numbers).
            func precedes(_ i: Int, _ j: Int) -> Bool {
                for c in 0..<typed.count {
                    let order = typed[c].order(i, j)
                    if order != 0 { return ascending[c] ? order < 0 : order > 0 }
                }
                return i < j
            }
            if k == n { return Array(0..<n).sorted(by: precedes).map { keys[$0] } }
            var heap = BoundedHeap(capacity: k, precedes: precedes)
            for i in 0..<n { heap.insert(i) }
            return heap.sorted().map { keys[$0] }
        }
        let columns = try values(table, keys, sortKeys.map(\.path))
        let missing = try missingLinks(table, keys, sortKeys.map(\.path))
        func precedes(_ i: Int, _ j: Int) -> Bool {
            for c in 0..<columns.count {
                // No value at all (a nil link on the path) is above every value, either way.
                if let m = missing[c], m[i] != m[j] { return ascending[c] ? !m[i] : m[i] }
                let order = ValueOrder.sortOrder(columns[c][i], columns[c][j])
                if order != 0 { return ascending[c] ? order < 0 : order > 0 }
            }
            return i < j
        }
        if k == n {
            return Array(0..<n).sorted(by: precedes).map { keys[$0] }
        }
        var heap = BoundedHeap(capacity: k, precedes: precedes)
        for i in 0..<n { heap.insert(i) }
        return heap.sorted().map { keys[$0] }
    }

    /// The first `limit` objects of the whole of `table` under `sortKeys`: exactly what
    /// ``sort(_:_:by:limit:)`` returns for every object of the table in key order, found without
    /// materializing every object. When the first sort key is an own non-nullable int, bool, float
    /// or double column of a snapshot, one pass over its lanes (as order keys) keeps the `limit`
    /// best rows and every row tied with the worst of them; with one sort key those are the answer,
    /// with more only they are sorted by every key. nil when that does not apply (the caller sorts
    /// in full).
    package func sortedPrefix(ofAll table: String, by sortKeys: [SortKey], limit: Int) throws -> [ObjectKey]? {
        guard let snapshot = source as? Snapshot, let first = sortKeys.first, limit > 0, first.path.readsOnlyOwnColumns,
            case .column(_, let c) = first.path.steps[0], !c.isNullable, !c.isList, !c.isMap, !c.isSet,
            [.int, .bool, .double, .float].contains(c.type)
        else { return nil }
        let reader = try TableReader(snapshot, table)
        guard let index = reader.columnIndex(c.name) else { return nil }
        let keepsTies = sortKeys.count > 1
        var heap = SmallestKeys(capacity: limit)
        var candidates: [(key: UInt64, row: Int)] = []
        var groupStarts: [Int] = []
        var base = 0
        for g in 0..<reader.groupCount {
            candidates.removeAll(keepingCapacity: true)
            // Only rows not above the largest key kept can enter (or tie with it): the lane is
            // read for them alone.
            let bound = heap.largestKept ?? .max
            let scan = try reader.scan(group: g, column: index)
            guard try scan.appendOrderKeys(descending: !first.ascending, notAbove: bound, firstRow: base, to: &candidates) else {
                return nil
            }
            groupStarts.append(base)
            if keepsTies {
                for c in candidates { heap.offerKeepingTies(c.key, c.row) }
            } else {
                for c in candidates { heap.offer(c.key, c.row) }
            }
            base += scan.rowCount
        }
        let rows: [Int]
        if keepsTies {
            // Every row whose first key is not past the `limit`-th best, in key order (the tie
            // order), sorted by every key.
            rows = (heap.rows + heap.ties).sorted()
        } else {
            // The order keys order the rows exactly (equal keys are equal values): no value is read.
            let heapKeys = heap.keys
            let heapRows = heap.rows
            rows = heapKeys.indices.sorted { a, b in
                heapKeys[a] < heapKeys[b] || (heapKeys[a] == heapKeys[b] && heapRows[a] < heapRows[b])
            }.map { heapRows[$0] }
        }
        guard let keys = try objectKeys(ofRows: rows, reader, groupStarts) else { return nil }
        return keepsTies ? try sort(table, keys, by: sortKeys, limit: min(limit, base)) : keys
    }

    /// The object keys of table rows numbered across `reader`'s groups (group `g` starts at row
    /// `groupStarts[g]`); nil when a group's keys do not match its rows.
    private func objectKeys(ofRows rows: [Int], _ reader: TableReader, _ groupStarts: [Int]) throws -> [ObjectKey]? {
        var keysOfGroup: [Int: IntegerLane] = [:]
        var out: [ObjectKey] = []
        out.reserveCapacity(rows.count)
        for row in rows {
            // The group holding `row`: the last whose start is not past it.
            var lo = 0
            var hi = groupStarts.count - 1
            while lo < hi {
                let mid = (lo + hi + 1) / 2
                if groupStarts[mid] <= row { lo = mid } else { hi = mid - 1 }
            }
            if keysOfGroup[lo] == nil { keysOfGroup[lo] = try reader.keys(group: lo) }
            guard let lane = keysOfGroup[lo], row - groupStarts[lo] < lane.count else { return nil }
            out.append(ObjectKey(lane[row - groupStarts[lo]]))
        }
        return out
    }

    /// `keys` keeping the first object of each group of objects with equal values of `paths`, in
    /// the current order. Values are equal when neither sorts before the other (so nil equals nil,
    /// NaN equals NaN, `-0.0` equals `0.0`, strings are equal byte for byte). An object whose to-one
    /// link on a path is nil has no value there and is left out, as in RealmSwift.
    ///
    /// - Throws: ``QueryError`` (`.invalidKeyPath`) for a to-many path; `StorageError` for a key
    ///   `table` lacks.
    package func distinct(_ table: String, _ keys: [ObjectKey], by paths: [BoundKeyPath]) throws -> [ObjectKey] {
        for path in paths where path.isToMany {
            throw QueryError(.invalidKeyPath, "cannot apply distinct to '\(path)': it reaches many values per object")
        }
        guard !paths.isEmpty, !keys.isEmpty else { return keys }
        let missing = try missingLinks(table, keys, paths).compactMap { $0 }
        if !missing.isEmpty {
            let reached = keys.indices.filter { i in !missing.contains { $0[i] } }
            if reached.count < keys.count { return try distinct(table, reached.map { keys[$0] }, by: paths) }
        }
        guard keys.count > 1 else { return keys }
        let columns = try values(table, keys, paths)
        func order(_ i: Int, _ j: Int) -> Int {
            for c in columns {
                let o = ValueOrder.sortOrder(c[i], c[j])
                if o != 0 { return o }
            }
            return 0
        }
        let sorted = Array(0..<keys.count).sorted { i, j in
            let o = order(i, j)
            return o != 0 ? o < 0 : i < j
        }
        var keep = [Bool](repeating: false, count: keys.count)
        keep[sorted[0]] = true
        for p in 1..<sorted.count where order(sorted[p - 1], sorted[p]) != 0 { keep[sorted[p]] = true }
        return keys.indices.filter { keep[$0] }.map { keys[$0] }
    }

    /// `@min`, `@max`, `@sum`, `@avg` (or `@count`, of the values reached, nil included) of
    /// `path` over the objects `keys`. `path` is a to-one path to a numeric or date column, or a
    /// path through collections (every value reached counts). Nils are skipped.
    ///
    /// Results: `@sum` of nothing is 0 — `.int` for ints, `.double` for floats and doubles,
    /// `.decimal128` for decimals; `@min`, `@max`, `@avg` of nothing are nil; `@min`/`@max` have
    /// the column's type (NaN only when every value is NaN); `@avg` is `.double`, or
    /// `.decimal128` for decimals.
    ///
    /// - Throws: ``QueryError`` `.typeMismatch` when the values cannot be aggregated so (`@sum` of
    ///   strings, `@avg` of dates, mixed values), `.overflow` when a sum of ints leaves `Int64`;
    ///   `StorageError` for a key `table` lacks.
    package func aggregate(_ table: String, _ keys: [ObjectKey], _ function: AggregateFunction, _ path: BoundKeyPath) throws
        -> StorageValue?
    {
        let type = path.valueType
        try StoredValues.check(function, type, "values of '\(path)'")
        let evaluation = Evaluation(source)
        let compiled = try evaluation.compile(path)
        var aggregator = Aggregator(function)
        let objects = try evaluation.objects(evaluation.slot(table), keys)
        if let values = try evaluation.columnValues(compiled, objects) {
            for v in values { aggregator.add(v) }
        } else {
            for object in objects {
                try evaluation.walk(compiled, .object(object)) { v in
                    aggregator.add(v)
                    return true
                }
            }
        }
        return try StoredValues.finish(aggregator, function, type, "'\(path)'")
    }

    /// ``aggregate(_:_:_:_:)`` over every object of `table`. Over a snapshot, an own int, float or
    /// double column is reduced row group by row group from its typed lanes (no objects located,
    /// no values boxed).
    ///
    /// - Throws: as ``aggregate(_:_:_:_:)``.
    package func aggregate(_ table: String, _ function: AggregateFunction, _ path: BoundKeyPath) throws -> StorageValue? {
        let type = path.valueType
        guard let snapshot = source as? Snapshot, path.readsOnlyOwnColumns, [.int, .double, .float].contains(type),
            case .column(_, let column) = path.steps[0], !column.isList, !column.isMap, !column.isSet
        else { return try aggregate(table, try source.objectKeys(table), function, path) }
        let reader = try TableReader(snapshot, table)
        guard let index = reader.columnIndex(column.name) else { return try aggregate(table, try source.objectKeys(table), function, path) }
        var aggregator = Aggregator(function)
        for g in 0..<reader.groupCount {
            let scan = try reader.scan(group: g, column: index)
            if let value = scan.defaultValue {
                for _ in 0..<scan.rowCount { aggregator.add(value) }
            } else if scan.nullCount > 0 {
                for row in 0..<scan.rowCount { aggregator.add(try scan.value(row)) }
            } else if type == .int, let lane = scan.integers {
                if let summary = lane.summary() { aggregator.add(intSummary: summary, count: lane.count) }
            } else if type != .int, scan.isFixedWidth {
                try aggregator.add(floatingRowsOf: scan, float: type == .float)
            } else {
                for row in 0..<scan.rowCount { aggregator.add(try scan.value(row)) }
            }
        }
        if function == .sum, type == .int {
            guard let sum = Int64(exactly: aggregator.exactIntSum) else {
                throw QueryError(.overflow, "the sum of '\(path)' is \(aggregator.exactIntSum), beyond the range of a 64-bit int")
            }
            return .int(sum)
        }
        let result = aggregator.result(sumType: type)
        return result.isNull ? nil : result
    }

    /// The sort keys' values as plain numbers, when every key is an own non-nullable int, bool,
    /// float or double column of a snapshot's table (else nil: the boxed path sorts).
    private func typedSortColumns(_ table: String, _ keys: [ObjectKey], _ sortKeys: [SortKey]) throws -> [TypedSortColumn]? {
        guard let snapshot = source as? Snapshot else { return nil }
        var columns: [ColumnSchema] = []
        for key in sortKeys {
            guard key.path.readsOnlyOwnColumns, case .column(_, let c) = key.path.steps[0], !c.isNullable, !c.isList, !c.isMap, !c.isSet,
                [.int, .bool, .double, .float].contains(c.type)
            else { return nil }
            columns.append(c)
        }
        let evaluation = Evaluation(source)
        let objects = try evaluation.objects(evaluation.slot(table), keys)
        let reader = try TableReader(snapshot, table)
        var out: [TypedSortColumn] = []
        for c in columns {
            guard let index = reader.columnIndex(c.name) else { return nil }
            let isInt = c.type == .int || c.type == .bool
            var ints: [Int64] = []
            var doubles: [Double] = []
            if isInt { ints.reserveCapacity(objects.count) } else { doubles.reserveCapacity(objects.count) }
            // A group's rows are decoded whole when many of the objects lie in it; a few are read
            // one by one in place (a sort of a few objects spread over many groups).
            var i = 0
            while i < objects.count {
                guard let first = objects[i].location else { return nil }
                let group = Int(first.group)
                var end = i + 1
                while end < objects.count, let l = objects[end].location, Int(l.group) == group { end += 1 }
                let scan = try reader.scan(group: group, column: index)
                let rows = objects[i..<end].lazy.map { Int($0.location!.row) }
                let whole = (end - i) * 16 >= scan.rowCount
                if let value = scan.defaultValue {
                    switch value {
                    case .int(let v): ints += repeatElement(v, count: end - i)
                    case .bool(let v): ints += repeatElement(v ? 1 : 0, count: end - i)
                    case .double(let v): doubles += repeatElement(v, count: end - i)
                    case .float(let v): doubles += repeatElement(Double(v), count: end - i)
                    default: return nil
                    }
                } else if isInt {
                    guard let lane = scan.integers else { return nil }
                    if whole {
                        let all = lane.array
                        for r in rows { ints.append(all[r]) }
                    } else {
                        for r in rows { ints.append(lane[r]) }
                    }
                } else {
                    guard scan.isFixedWidth else { return nil }
                    if whole {
                        let all = try scan.doubles()
                        for r in rows { doubles.append(all[r]) }
                    } else {
                        for r in rows { doubles.append(try scan.double(r)) }
                    }
                }
                i = end
            }
            out.append(isInt ? .ints(ints) : .doubles(doubles))
        }
        return out
    }

    /// For each path through to-one links, which objects have a nil link on it (nil for a path of
    /// the object's own property).
    private func missingLinks(_ table: String, _ keys: [ObjectKey], _ paths: [BoundKeyPath]) throws -> [[Bool]?] {
        try paths.map { path -> [Bool]? in
            guard path.steps.count > 1 else { return nil }
            let links = BoundKeyPath(
                steps: Array(path.steps.dropLast()), valueType: .link, targetTable: path.steps[path.steps.count - 2].linkTarget,
                isNullable: true)
            return try values(table, keys, [links])[0].map(\.isNull)
        }
    }

    /// The value of each path for each object, path by path (to-one paths: one value each).
    private func values(_ table: String, _ keys: [ObjectKey], _ paths: [BoundKeyPath]) throws -> [[StorageValue]] {
        let evaluation = Evaluation(source)
        let objects = try evaluation.objects(evaluation.slot(table), keys)
        return try paths.map { path in
            let compiled = try evaluation.compile(path)
            if let values = try evaluation.columnValues(compiled, objects) { return values }
            return try objects.map { try evaluation.one(.path(compiled), .object($0)) }
        }
    }
}

/// The `capacity` first elements under `precedes` (a strict total order) of everything inserted,
/// kept in a max-heap so each insertion costs O(log capacity).
struct BoundedHeap {
    let capacity: Int
    let precedes: (Int, Int) -> Bool
    private var items: [Int] = []

    init(capacity: Int, precedes: @escaping (Int, Int) -> Bool) {
        self.capacity = capacity
        self.precedes = precedes
        items.reserveCapacity(capacity)
    }

    mutating func insert(_ x: Int) {
        if items.count < capacity {
            items.append(x)
            var i = items.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard precedes(items[parent], items[i]) else { break }
                items.swapAt(parent, i)
                i = parent
            }
        } else if let top = items.first, precedes(x, top) {
            items[0] = x
            var i = 0
            while true {
                let (l, r) = (2 * i + 1, 2 * i + 2)
                var largest = i
                if l < items.count && precedes(items[largest], items[l]) { largest = l }
                if r < items.count && precedes(items[largest], items[r]) { largest = r }
                if largest == i { break }
                items.swapAt(i, largest)
                i = largest
            }
        }
    }

    /// The kept elements in order.
    func sorted() -> [Int] { items.sorted(by: precedes) }
}

/// One sort key's values as plain numbers, for sorting without boxing.
enum TypedSortColumn {
    case ints([Int64])
    case doubles([Double])

    /// The order of rows `i` and `j` (ValueOrder's: numerically, NaN before every number).
    @inline(__always)
    func order(_ i: Int, _ j: Int) -> Int {
        switch self {
        case .ints(let v): return v[i] < v[j] ? -1 : v[i] > v[j] ? 1 : 0
        case .doubles(let v):
            let (a, b) = (v[i], v[j])
            if a.isNaN { return b.isNaN ? 0 : -1 }
            if b.isNaN { return 1 }
            return a < b ? -1 : a > b ? 1 : 0
        }
    }
}

/// The `capacity` smallest (key, row) pairs offered, kept as a max-heap ordered by key, then row
/// (a value type with mutating methods, so that the top-k loop reads plain arrays).
struct SmallestKeys {
    private(set) var keys: [UInt64] = []
    private(set) var rows: [Int] = []
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        keys.reserveCapacity(capacity)
        rows.reserveCapacity(capacity)
    }

    /// The largest key kept once the heap is full (a larger key cannot enter, nor tie); nil before.
    var largestKept: UInt64? { keys.count < capacity ? nil : keys[0] }

    /// Rows not kept whose key equals the largest kept key (``offerKeepingTies(_:_:)`` only).
    private(set) var ties: [Int] = []

    /// Keeps (`key`, `row`) when it is among the `capacity` smallest so far. Rows offered in
    /// increasing order never displace an equal key (the earlier row is smaller), so a tie costs
    /// one comparison.
    @inline(__always)
    mutating func offer(_ key: UInt64, _ row: Int) {
        if keys.count < capacity {
            insert(key, row)
        } else if key < keys[0] {
            replaceLargest(key, row)
        }
    }

    /// ``offer(_:_:)`` that also remembers, in ``ties``, every row not kept whose key equals the
    /// largest kept key, so that the kept rows and the ties are exactly the rows whose key is not
    /// past the `capacity`-th smallest (what a sort by more keys than this one must look at).
    /// The largest kept key only decreases: when it does, the ties of the old one are dropped.
    @inline(__always)
    mutating func offerKeepingTies(_ key: UInt64, _ row: Int) {
        if keys.count < capacity {
            insert(key, row)
        } else if key < keys[0] {
            let (largest, evicted) = (keys[0], rows[0])
            replaceLargest(key, row)
            if keys[0] == largest { ties.append(evicted) } else { ties.removeAll(keepingCapacity: true) }
        } else if key == keys[0] {
            ties.append(row)
        }
    }

    private func above(_ a: Int, _ b: Int) -> Bool { keys[a] > keys[b] || (keys[a] == keys[b] && rows[a] > rows[b]) }

    private mutating func swap(_ a: Int, _ b: Int) {
        keys.swapAt(a, b)
        rows.swapAt(a, b)
    }

    /// Adds a pair while the heap is not full.
    private mutating func insert(_ key: UInt64, _ row: Int) {
        keys.append(key)
        rows.append(row)
        var i = keys.count - 1
        while i > 0, above(i, (i - 1) / 2) {
            swap(i, (i - 1) / 2)
            i = (i - 1) / 2
        }
    }

    /// Replaces the largest pair with a smaller one.
    private mutating func replaceLargest(_ key: UInt64, _ row: Int) {
        keys[0] = key
        rows[0] = row
        var i = 0
        while true {
            let (l, r) = (2 * i + 1, 2 * i + 2)
            var largest = i
            if l < keys.count && above(l, largest) { largest = l }
            if r < keys.count && above(r, largest) { largest = r }
            if largest == i { return }
            swap(i, largest)
            i = largest
        }
    }
}

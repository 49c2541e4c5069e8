import RealmStorage

extension BoundPredicate {
    /// Whether evaluating the predicate on an object reads only that object's own columns (no
    /// hop through a link or backlink, no subquery): then only changed objects can change whether
    /// they match.
    package var readsOnlyOwnColumns: Bool {
        switch self {
        case .constant: true
        case .and(let ps), .or(let ps): ps.allSatisfy(\.readsOnlyOwnColumns)
        case .not(let p): p.readsOnlyOwnColumns
        case .comparison(let c): c.left.readsOnlyOwnColumns && c.right.readsOnlyOwnColumns
        }
    }
}

extension BoundOperand {
    var readsOnlyOwnColumns: Bool {
        switch self {
        case .keyPath(let p), .aggregate(_, let p), .length(let p): p.readsOnlyOwnColumns
        case .constant, .list: true
        case .subqueryCount: false
        }
    }
}

extension BoundKeyPath {
    /// Whether the path is one column of the object itself (no link hop, no backlink).
    package var readsOnlyOwnColumns: Bool {
        guard variable == nil, steps.count == 1, case .column = steps[0] else { return false }
        return true
    }
}

extension QueryEvaluator {
    /// The keys among `keys` of objects that exist in `table` and match `predicate` (all existing
    /// ones when nil), in the order of `keys`: any order is accepted and kept, and a key given
    /// twice is returned twice when it matches (so a list's objects filter in list order). Keys
    /// that ascend are located by one walk over the row groups.
    ///
    /// - Throws: ``QueryError`` when the predicate names columns the source lacks; `StorageError`
    ///   for a damaged file.
    package func matching(_ table: String, _ keys: [ObjectKey], _ predicate: BoundPredicate?) throws -> [ObjectKey] {
        let evaluation = Evaluation(source)
        let slot = evaluation.slot(table)
        let compiled = try predicate.map { try evaluation.compile($0) }
        var present: [ObjectKey] = []
        for k in keys where try source.contains(table, k) { present.append(k) }
        var out: [ObjectKey] = []
        for o in try evaluation.objects(slot, present) where try compiled.map({ try evaluation.matches($0, .object(o)) }) ?? true {
            out.append(o.key)
        }
        return out
    }

    /// The keys of `table` matching `predicate`, sorted by `sortKeys` (stably over ascending keys,
    /// as ``filter(_:_:)`` then ``sort(_:_:by:limit:)`` give them), computed from `previous` —
    /// the same query's result at an older version — when only the objects `changed` (ascending)
    /// were inserted, modified or deleted since, and the query reads only the objects' own
    /// columns (``BoundPredicate/readsOnlyOwnColumns``; one-column sort keys).
    ///
    /// Every other object keeps its match and its sort values, so the result is `previous`
    /// without the changed objects, merged with the changed objects that now exist and match, at
    /// their places: by key without sort keys, else by a galloping search over the kept objects
    /// (O(changed · log(kept / changed)) reads).
    ///
    /// - Throws: ``QueryError`` for sort keys that are not one own column; `StorageError` for a
    ///   damaged file.
    package func update(
        _ table: String, previous: [ObjectKey], changed: [ObjectKey], isChanged: (ObjectKey) -> Bool, predicate: BoundPredicate?,
        sortKeys: [SortKey]
    ) throws -> [ObjectKey] {
        for key in sortKeys where !key.path.readsOnlyOwnColumns || key.path.valueType == .link {
            throw QueryError(.invalidKeyPath, "cannot update a result sorted by '\(key.path)' incrementally")
        }
        let evaluation = Evaluation(source)
        let slot = evaluation.slot(table)
        let matched = try evaluation.objects(slot, try matching(table, changed, predicate))
        var out: [ObjectKey] = []
        out.reserveCapacity(previous.count + matched.count)
        if sortKeys.isEmpty {
            // Both ascending: merge by key.
            var m = 0
            for k in previous where !isChanged(k) {
                while m < matched.count && matched[m].key < k {
                    out.append(matched[m].key)
                    m += 1
                }
                out.append(k)
            }
            while m < matched.count {
                out.append(matched[m].key)
                m += 1
            }
            return out
        }
        let kept = previous.filter { !isChanged($0) }
        let paths = try sortKeys.map { try evaluation.compile($0.path) }
        let ascending = sortKeys.map(\.ascending)
        func values(_ o: ObjectRef) throws -> [StorageValue] { try paths.map { try evaluation.one(.path($0), .object(o)) } }
        /// Whether (a, ka) sorts before (b, kb).
        func precedes(_ a: [StorageValue], _ ka: ObjectKey, _ b: [StorageValue], _ kb: ObjectKey) -> Bool {
            for c in 0..<a.count {
                let order = ValueOrder.sortOrder(a[c], b[c])
                if order != 0 { return ascending[c] ? order < 0 : order > 0 }
            }
            return ka < kb
        }
        let candidates = try matched.map { ($0.key, try values($0)) }.sorted { precedes($0.1, $0.0, $1.1, $1.0) }
        func keptValues(_ i: Int) throws -> [StorageValue] {
            guard let o = try evaluation.object(slot, kept[i]) else { throw Evaluation.missing(kept[i], table) }
            return try values(o)
        }
        var position = 0
        for (key, v) in candidates {
            // The first kept object after the candidate, found by galloping from `position`.
            var step = 1
            var low = position
            var high = position
            while high < kept.count, !precedes(v, key, try keptValues(high), kept[high]) {
                low = high + 1
                high = position + step
                step *= 2
            }
            high = Swift.min(high, kept.count)
            while low < high {
                let mid = (low + high) / 2
                if precedes(v, key, try keptValues(mid), kept[mid]) { high = mid } else { low = mid + 1 }
            }
            out.append(contentsOf: kept[position..<low])
            out.append(key)
            position = low
        }
        out.append(contentsOf: kept[position...])
        return out
    }
}

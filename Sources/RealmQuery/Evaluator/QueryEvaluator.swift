import RealmStorage

/// Runs bound queries against a ``QuerySource``: filtering, sorting, `distinct` and aggregates
/// (Spec/QUERY.md §7, §9).
///
/// ```swift
/// let snapshot = try store.snapshot()
/// let person = snapshot.catalog.table("Person")!
/// let predicate = try BoundPredicate.compile("age > 50 AND name BEGINSWITH 'A'", table: person, catalog: snapshot.catalog)
/// let evaluator = QueryEvaluator(snapshot)
/// let keys = try evaluator.filter("Person", predicate)
/// let oldest = try evaluator.sort("Person", keys, by: [SortKey(path: try .bind("age", table: person, catalog: snapshot.catalog), ascending: false)], limit: 10)
/// ```
///
/// Over a `Snapshot`, comparisons of one int, bool, link, float, double, timestamp, string or
/// binary column with constants are decided by scanning the row groups' segments in place, AND/OR
/// combine per row group, and `==`/`IN` on an indexed column start from the persisted index; the
/// rest is evaluated object by object. Over a `WriteTransaction` everything goes object by object
/// (through its primary-key index for `==`/`IN` on the key), so it sees the transaction's changes.
///
/// A value type holding its source: thread-confined like the source it reads.
package struct QueryEvaluator {
    /// What the evaluator reads.
    package let source: any QuerySource

    /// An evaluator reading `source`.
    package init(_ source: any QuerySource) { self.source = source }

    /// The keys of the objects of `table` matching `predicate` (all when nil), ascending.
    ///
    /// - Throws: `StorageError` for an unknown table or a damaged file; ``QueryError`` when the
    ///   predicate names columns the source's schema lacks.
    package func filter(_ table: String, _ predicate: BoundPredicate?) throws -> [ObjectKey] {
        guard let predicate else { return try source.objectKeys(table) }
        let evaluation = Evaluation(source)
        let compiled = try evaluation.compile(predicate)
        let slot = evaluation.slot(table)
        guard let schema = source.catalog.table(table) else { return try source.objectKeys(table) }
        if let candidates = try indexCandidates(compiled, schema) {
            return try evaluation.objects(slot, candidates).compactMap { o in try evaluation.matches(compiled, .object(o)) ? o.key : nil }
        }
        if evaluation.snapshot != nil {
            return try SegmentScan(evaluation, slot: slot).filter(compiled)
        }
        var out: [ObjectKey] = []
        for key in try source.objectKeys(table) where try evaluation.matches(compiled, .object(ObjectRef(table: slot, key: key))) {
            out.append(key)
        }
        return out
    }

    /// How many objects of `table` match `predicate` (nil: all), without collecting their keys when
    /// the source is a snapshot.
    package func count(_ table: String, _ predicate: BoundPredicate?) throws -> Int {
        guard let predicate else { return try source.objectCount(table) }
        // One comparison of an int column with constants: counted in place by the engine's typed
        // loops over the segments (no lanes decoded into arrays, no masks).
        if let snapshot = source as? Snapshot, case .comparison(let c) = predicate, let (column, comparison) = Self.intComparison(c) {
            return try snapshot.count(table, whereInt: column, comparison)
        }
        let evaluation = Evaluation(source)
        let compiled = try evaluation.compile(predicate)
        guard let schema = source.catalog.table(table) else { return 0 }
        if evaluation.snapshot != nil, try indexCandidates(compiled, schema) == nil {
            return try SegmentScan(evaluation, slot: evaluation.slot(table)).count(compiled)
        }
        return try filter(table, predicate).count
    }

    /// Whether object `key` of `table` matches `predicate`.
    ///
    /// - Throws: `StorageError` (`.notFound`) when the table has no such object; see
    ///   ``filter(_:_:)``.
    package func matches(_ table: String, _ key: ObjectKey, _ predicate: BoundPredicate) throws -> Bool {
        let evaluation = Evaluation(source)
        let compiled = try evaluation.compile(predicate)
        guard try source.contains(table, key), let object = try evaluation.object(evaluation.slot(table), key) else {
            throw Evaluation.missing(key, table)
        }
        return try evaluation.matches(compiled, .object(object))
    }

    // MARK: Indexes

    /// The sorted keys that can match, from a persisted index, when `predicate` is (or is an AND
    /// with) an `==` or `IN` on an indexed column whose index equality is the query's equality
    /// (int, bool, string without options, objectId, uuid); nil otherwise.
    func indexCandidates(_ predicate: CompiledPredicate, _ table: TableSchema) throws -> [ObjectKey]? {
        let terms: [CompiledPredicate]
        switch predicate {
        case .comparison: terms = [predicate]
        case .and(let ps): terms = ps
        default: return nil
        }
        for case .comparison(let c) in terms {
            guard c.bound.modifier == nil, c.bound.options.isEmpty, c.bound.op == .equal || c.bound.op == .in,
                case .keyPath(let path) = c.bound.left, path.steps.count == 1, case .column(let owner, let column) = path.steps[0],
                owner == table.name, column.isIndexed || table.primaryKey == column.name, !column.isList, !column.isMap,
                [.int, .bool, .string, .objectId, .uuid].contains(column.type)
            else { continue }
            let values = c.bound.op == .in ? c.test.list : [c.test.constant ?? .null]
            guard let keys = try lookup(table, column, values) else { continue }
            return Array(Set(keys)).sorted()
        }
        return nil
    }

    /// The objects whose indexed `column` equals one of `values`; nil when the source cannot say.
    private func lookup(_ table: TableSchema, _ column: ColumnSchema, _ values: [StorageValue]) throws -> [ObjectKey]? {
        var out: [ObjectKey] = []
        if let snapshot = source as? Snapshot {
            for v in values { out += try snapshot.objectKeys(table.name, indexed: column.name, equalTo: v) }
            return out
        }
        guard let transaction = source as? WriteTransaction, table.primaryKey == column.name else { return nil }
        for v in values { if let key = try transaction.objectKey(table.name, primaryKey: v) { out.append(key) } }
        return out
    }
}

extension QueryEvaluator {
    /// `c` as the engine's in-place integer comparison, when it is one: a single int column (not
    /// a collection) compared with int constants, without options or modifiers, and with the same
    /// meaning for nulls (which match none of these, except `!=` on a nullable column — excluded).
    static func intComparison(_ c: BoundComparison) -> (String, IntComparison)? {
        guard c.modifier == nil, c.options.isEmpty, case .keyPath(let path) = c.left, path.readsOnlyOwnColumns,
            case .column(_, let column) = path.steps[0], column.type == .int, !column.isList, !column.isMap, !column.isSet
        else { return nil }
        let comparison: IntComparison
        switch (c.op, c.right) {
        case (.equal, .constant(.int(let v))): comparison = .equal(v)
        case (.notEqual, .constant(.int(let v))) where !column.isNullable: comparison = .notEqual(v)
        case (.less, .constant(.int(let v))): comparison = .less(v)
        case (.lessOrEqual, .constant(.int(let v))): comparison = .lessOrEqual(v)
        case (.greater, .constant(.int(let v))): comparison = .greater(v)
        case (.greaterOrEqual, .constant(.int(let v))): comparison = .greaterOrEqual(v)
        case (.between, .list(let values)):
            guard values.count == 2, case .int(let lo) = values[0], case .int(let hi) = values[1] else { return nil }
            comparison = .between(lo, hi)
        default: return nil
        }
        return (column.name, comparison)
    }
}

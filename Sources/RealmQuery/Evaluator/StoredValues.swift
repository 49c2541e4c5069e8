import RealmStorage

/// Sorting, `distinct` and aggregates of plain stored values — the elements of a list or set of
/// primitives, or values gathered by the layer above — by the rules the evaluator applies to
/// objects (Spec/QUERY.md §7.7, §9).
///
/// ```swift
/// let values: [StorageValue] = [.int(3), .null, .int(1)]
/// StoredValues.sortedIndices(values, ascending: true)    // [1, 2, 0]: nil first
/// StoredValues.distinctIndices([.int(1), .int(1), .null])  // [0, 2]
/// try StoredValues.aggregate(values, .sum, type: .int)   // .int(4): nils skipped
/// ```
///
/// Pure functions; `Sendable` by having no state.
package enum StoredValues {
    /// The positions of `values` in sorted order, stably (equal values keep their order in both
    /// directions): nil first ascending, then NaN, then numbers numerically; strings and binary
    /// data by bytes; `false` before `true`; dates chronologically. Descending reverses the order
    /// of unequal values only.
    package static func sortedIndices(_ values: [StorageValue], ascending: Bool) -> [Int] {
        values.indices.sorted { i, j in
            let order = ValueOrder.sortOrder(values[i], values[j])
            if order != 0 { return ascending ? order < 0 : order > 0 }
            return i < j
        }
    }

    /// The positions of the first value of each group of equal values, ascending. Values are equal
    /// when neither sorts before the other (nil equals nil, NaN equals NaN, `-0.0` equals `0.0`,
    /// strings are equal byte for byte), as for `distinct` over objects.
    package static func distinctIndices(_ values: [StorageValue]) -> [Int] {
        guard values.count > 1 else { return Array(values.indices) }
        let sorted = sortedIndices(values, ascending: true)
        var keep = [Bool](repeating: false, count: values.count)
        keep[sorted[0]] = true
        for p in 1..<sorted.count where ValueOrder.sortOrder(values[sorted[p - 1]], values[sorted[p]]) != 0 { keep[sorted[p]] = true }
        return values.indices.filter { keep[$0] }
    }

    /// The positions of the `values` (all of column type `type`, or nil) that match `predicate`, a
    /// query whose key path `self` names the value: `self > 3`, `self BEGINSWITH[c] 'a'`,
    /// `self IN %@` — as RealmSwift's `filter` on a list of primitives (Spec/QUERY.md).
    ///
    /// - Throws: ``QueryError`` for a malformed query, a key path other than `self`, or a type
    ///   mismatch, with the position in the text.
    package static func matchingIndices(
        _ values: [StorageValue], type: ColumnType, isNullable: Bool, predicate: String, arguments: [QueryArgument] = []
    ) throws -> [Int] {
        try matchingIndices(values, type: type, isNullable: isNullable, query: .text(predicate, arguments: arguments))
    }

    /// The positions of `values` matching `query` (text or a tree built in code), as above.
    package static func matchingIndices(_ values: [StorageValue], type: ColumnType, isNullable: Bool, query: QueryInput) throws -> [Int] {
        let catalog = Catalog.standalone(table: ValueList.table, columns: [ColumnSchema(ValueList.column, type, nullable: isNullable)])
        let bound = try query.compile(table: catalog.tables[0], catalog: catalog)
        return try QueryEvaluator(ValueList(catalog, values)).filter(ValueList.table, bound).map { Int($0.rawValue) }
    }

    /// `@min`, `@max`, `@sum`, `@avg` or `@count` of `values`, all of column type `type` (or nil),
    /// with the results of ``QueryEvaluator/aggregate(_:_:_:_:)``: nils are skipped; `@sum` of
    /// nothing is 0 of `type`'s sum type; `@min`, `@max`, `@avg` of nothing are nil.
    ///
    /// - Throws: ``QueryError`` `.typeMismatch` when values of `type` cannot be aggregated so
    ///   (`@sum` of strings, `@avg` of dates), `.overflow` when a sum of ints leaves `Int64`.
    package static func aggregate(_ values: [StorageValue], _ function: AggregateFunction, type: ColumnType) throws -> StorageValue? {
        try check(function, type, "values")
        var aggregator = Aggregator(function)
        for v in values { aggregator.add(v) }
        return try finish(aggregator, function, type, "values")
    }

    /// Throws unless `function` can aggregate values of `type` (`what` names them in the message).
    static func check(_ function: AggregateFunction, _ type: ColumnType, _ what: String) throws {
        let fits: Bool
        switch function {
        case .count: fits = true
        // Mixed values (§7.10): min and max in the order of mixed values, sums and means of the
        // numbers among them.
        case .min, .max: fits = type.isNumeric || type == .timestamp || type == .mixed
        case .sum, .avg: fits = type.isNumeric || type == .mixed
        }
        guard fits else { throw QueryError(.typeMismatch, "\(function) cannot aggregate the \(type) \(what)") }
    }

    /// The aggregate's result: an exact int sum (throwing beyond `Int64`), else the aggregator's.
    static func finish(_ aggregator: Aggregator, _ function: AggregateFunction, _ type: ColumnType, _ what: String) throws
        -> StorageValue?
    {
        if function == .sum, type == .int {
            guard let sum = Int64(exactly: aggregator.exactIntSum) else {
                throw QueryError(.overflow, "the sum of \(what) is \(aggregator.exactIntSum), beyond the range of a 64-bit int")
            }
            return .int(sum)
        }
        let result = aggregator.result(sumType: type)
        return result.isNull ? nil : result
    }
}

/// Values as the objects of a one-column table, keyed by position: what ``StoredValues/matchingIndices(_:type:isNullable:predicate:arguments:)`` evaluates on.
final class ValueList: QuerySource {
    static let table = "values"
    static let column = "self"
    let catalog: Catalog
    let values: [StorageValue]

    init(_ catalog: Catalog, _ values: [StorageValue]) {
        self.catalog = catalog
        self.values = values
    }

    func objectKeys(_ table: String) throws -> [ObjectKey] { values.indices.map { ObjectKey(Int64($0)) } }

    func objectCount(_ table: String) throws -> Int { values.count }

    func value(_ table: String, _ key: ObjectKey, _ column: String) throws -> StorageValue {
        guard try contains(table, key) else { throw StorageError(.notFound, "no value at position \(key.rawValue)") }
        return values[Int(key.rawValue)]
    }

    func contains(_ table: String, _ key: ObjectKey) throws -> Bool { key.rawValue >= 0 && key.rawValue < Int64(values.count) }
}

import Foundation
import RealmQuery
import RealmStorage
import RealmTestSupport
import Testing

/// Sorting, `distinct` and aggregates over the ``EvaluationFixture`` (Spec/QUERY.md §7.7, §9),
/// each over a snapshot and a write transaction.
@Suite struct OrderingTests {
    /// Runs `body` with the committed snapshot and with a write transaction holding the same data.
    static func each(_ body: (any QuerySource) throws -> Void) throws {
        try body(EvaluationFixture.committed.snapshot)
        try EvaluationFixture.withTransaction { tx in try body(tx) }
    }

    static func path(_ text: String, _ source: any QuerySource, table: String = "Item", toMany: Bool = false) throws -> BoundKeyPath {
        try BoundKeyPath.bind(
            text, table: source.catalog.table(table)!, catalog: source.catalog, allowToMany: toMany,
            linkingObjects: EvaluationFixture.linkingObjects)
    }

    struct SortCase: CustomTestStringConvertible, Sendable {
        /// `"i"` ascending, `"-i"` descending; several keys separated by commas.
        var keys: String
        var expected: [Int]
        var limit: Int?
        var subset: [Int]?
        var testDescription: String { keys + (limit.map { " limit \($0)" } ?? "") }
    }

    static func s(_ keys: String, _ expected: [Int], limit: Int? = nil, subset: [Int]? = nil) -> SortCase {
        SortCase(keys: keys, expected: expected, limit: limit, subset: subset)
    }

    static let sorts: [SortCase] = [
        s("i", all8), s("-i", [7, 6, 5, 4, 3, 2, 1, 0]), s("oi", [0, 3, 6, 1, 2, 4, 5, 7]), s("-oi", [7, 5, 4, 2, 1, 0, 3, 6]),
        s("od", [0, 5, 2, 3, 6, 1, 4, 7]), s("-od", [7, 4, 1, 3, 6, 2, 0, 5]), s("s", [5, 6, 1, 3, 0, 7, 2, 4]),
        s("b,-i", [6, 4, 2, 0, 7, 5, 3, 1]), s("link.weight", [0, 3, 1, 7, 4, 6, 2, 5]), s("link.name", [6, 4, 1, 7, 0, 3, 2, 5]),
        s("dec", [0, 7, 1, 2, 3, 6, 4, 5]), s("m", [0, 4, 1, 2, 5, 3, 6, 7]), s("-t", [7, 6, 5, 4, 3, 2, 1, 0]),
        s("ot", [0, 2, 5, 3, 4, 6, 1, 7]), s("bin", [2, 3, 0, 4, 6, 1, 5, 7]), s("u", all8), s("ou", [1, 3, 5, 7, 0, 2, 4, 6]),
        s("parent.i", [1, 2, 3, 4, 5, 7, 0, 6]), s("-i", [7, 6, 5], limit: 3), s("oi", [0, 3, 6, 1], limit: 4), s("i", [], limit: 0),
        s("i", all8, limit: 100), s("od", [0, 5, 2], limit: 3), s("i", [1, 3, 5], subset: [5, 1, 3]), s("i", [], subset: []),
        s("code,-s", [4, 0, 1, 5, 2, 6, 7, 3]), s("os", [0, 3, 6, 4, 7, 1, 2, 5]), s("f", all8), s("-of", [7, 5, 1, 3, 0, 2, 4, 6]),
        s("ob,i", [0, 3, 6, 2, 5, 1, 4, 7]), s("oid", all8), s("-odec", [4, 7, 1, 6, 3, 0, 2, 5]), s("late,-i", [7, 6, 5, 4, 3, 2, 1, 0]),
        s("code,-s", [4, 0], limit: 2), s("-m", [7, 6, 3, 5, 1, 2, 4, 0]), s("-i", [5, 3, 1], limit: 5, subset: [1, 3, 5]),
    ]

    @Test(arguments: sorts)
    func sortsStably(_ c: SortCase) throws {
        try Self.each { source in
            let all = try source.objectKeys("Item")
            let keys = c.subset.map { $0.map { all[$0] } } ?? all
            let sortKeys = try c.keys.split(separator: ",").map { key in
                let descending = key.hasPrefix("-")
                return SortKey(path: try Self.path(String(key.drop { $0 == "-" }), source), ascending: !descending)
            }
            let got = try QueryEvaluator(source).sort("Item", keys, by: sortKeys, limit: c.limit)
            #expect(got == c.expected.map { all[$0] }, "\(c.keys) over \(type(of: source))")
        }
    }

    struct DistinctCase: CustomTestStringConvertible, Sendable {
        var paths: [String]
        var expected: [Int]
        var order: [Int]
        var testDescription: String { paths.joined(separator: ",") }
    }

    static let distincts: [DistinctCase] = [
        .init(paths: ["b"], expected: [0, 1], order: all8), .init(paths: ["code"], expected: [0, 1, 2, 3], order: all8),
        .init(paths: ["oi"], expected: [0, 1, 2, 4, 5, 7], order: all8), .init(paths: ["od"], expected: [0, 1, 2, 3, 4, 7], order: all8),
        .init(paths: ["b", "code"], expected: [0, 1, 2, 3], order: all8), .init(paths: ["link"], expected: [0, 1, 2, 4, 6], order: all8),
        .init(paths: ["m"], expected: [0, 1, 3, 4, 5, 6, 7], order: all8),
        .init(paths: ["dec"], expected: [0, 1, 2, 3, 4, 5, 7], order: all8),
        .init(paths: ["s"], expected: all8, order: all8), .init(paths: ["b"], expected: [7, 6], order: [7, 6, 5, 4, 3, 2, 1, 0]),
        .init(paths: ["link.name"], expected: [0, 1, 4, 6], order: all8), .init(paths: [], expected: [3, 1], order: [3, 1]),
        .init(paths: ["late"], expected: [2], order: [2, 0, 1]), .init(paths: ["ot"], expected: [0, 1, 3, 4, 6], order: all8),
        .init(paths: ["parent"], expected: [0, 1, 3, 5, 7], order: all8),
        .init(paths: ["ob", "b"], expected: [0, 1, 2, 3, 4, 5], order: all8),
        .init(paths: ["i"], expected: [], order: []),
    ]

    @Test(arguments: distincts)
    func distinctKeepsTheFirst(_ c: DistinctCase) throws {
        try Self.each { source in
            let all = try source.objectKeys("Item")
            let paths = try c.paths.map { try Self.path($0, source) }
            let got = try QueryEvaluator(source).distinct("Item", c.order.map { all[$0] }, by: paths)
            #expect(got == c.expected.map { all[$0] }, "\(c.paths) over \(type(of: source))")
        }
    }

    struct AggregateCase: CustomTestStringConvertible, Sendable {
        var function: AggregateFunction
        var path: String
        var expected: StorageValue?
        var objects: [Int]
        var table = "Item"
        var testDescription: String { "\(function) \(path) of \(objects)" }
    }

    static func a(_ f: AggregateFunction, _ path: String, _ expected: StorageValue?, _ objects: [Int] = all8, table: String = "Item")
        -> AggregateCase
    {
        AggregateCase(function: f, path: path, expected: expected, objects: objects, table: table)
    }

    static let aggregates: [AggregateCase] = [
        a(.sum, "i", .int(120)), a(.sum, "oi", .int(19)), a(.min, "oi", .int(1)), a(.max, "oi", .int(7)), a(.avg, "oi", .double(3.8)),
        a(.avg, "i", .double(15)), a(.sum, "f", .double(10.5)), a(.min, "f", .float(-1.5)), a(.max, "f", .float(4.5)),
        a(.min, "od", .double(-0.0)), a(.max, "od", .double(3.5)), a(.sum, "dec", EvaluationFixture.dec("103.5")),
        a(.avg, "dec", EvaluationFixture.dec("12.9375")), a(.min, "t", EvaluationFixture.ts(-100)), a(.max, "ot", EvaluationFixture.ts(50)),
        a(.count, "i", .int(8)), a(.sum, "ints", .int(36)), a(.max, "links.weight", .int(4)), a(.sum, "link.weight", .int(13)),
        a(.sum, "i", .int(0), []), a(.sum, "d", .double(0), []), a(.sum, "dec", EvaluationFixture.dec("0"), []), a(.min, "i", nil, []),
        a(.avg, "d", nil, []), a(.max, "t", nil, []), a(.sum, "oi", .int(0), [0, 3, 6]), a(.min, "oi", nil, [0, 3, 6]),
        a(.avg, "oi", nil, [0, 3, 6]), a(.max, "late", nil), a(.sum, "late", .int(0)), a(.avg, "ints", .double(36.0 / 11)),
        a(.min, "intMap", .int(-5)), a(.sum, "weight", .int(10), [0, 1, 2, 3], table: "Tag"),
        a(.avg, "score", .double(2), [0, 1, 2, 3], table: "Tag"),
        a(.max, "items.i", .int(50), [0, 1], table: "Tag"), a(.count, "links", .int(10)), a(.min, "odec", EvaluationFixture.dec("1")),
        a(.sum, "odec", nil), a(.avg, "d", .double(1.5)), a(.max, "oints", .int(4)), a(.sum, "doubles", nil),
    ]

    @Test(arguments: aggregates)
    func aggregatesSkipNils(_ c: AggregateCase) throws {
        try Self.each { source in
            let all = try source.objectKeys(c.table)
            let path = try Self.path(c.path, source, table: c.table, toMany: true)
            let got = try QueryEvaluator(source).aggregate(c.table, c.objects.map { all[$0] }, c.function, path)
            switch (got, c.expected) {
            case (.decimal128(let l, let h)?, .decimal128(let el, let eh)?):
                #expect(Decimal128(low: l, high: h) == Decimal128(low: el, high: eh), "\(c) over \(type(of: source)): \(got!)")
            case (.double(let d)?, nil) where c.path == "doubles" || c.path == "odec":
                #expect(d.isNaN, "NaN among the values makes the sum NaN")
            case (.decimal128(let l, let h)?, nil) where c.path == "odec":
                #expect(Decimal128(low: l, high: h).isNaN, "NaN among the values makes the sum NaN")
            default:
                #expect(got == c.expected, "\(c) over \(type(of: source))")
            }
        }
    }

    @Test func errors() throws {
        let source = EvaluationFixture.committed.snapshot
        let item = source.catalog.table("Item")!
        func code(_ body: () throws -> Void) -> QueryError.Code? {
            do {
                try body()
                return nil
            } catch let error as QueryError {
                return error.code
            } catch {
                return nil
            }
        }
        #expect(code { _ = try BoundKeyPath.bind("links.name", table: item, catalog: source.catalog) } == .invalidKeyPath)
        #expect(code { _ = try BoundKeyPath.bind("ints", table: item, catalog: source.catalog) } == .invalidKeyPath)
        #expect(code { _ = try BoundKeyPath.bind("intMap", table: item, catalog: source.catalog) } == .invalidKeyPath)
        #expect(code { _ = try BoundKeyPath.bind("nope", table: item, catalog: source.catalog) } == .unknownProperty)
        #expect(code { _ = try BoundKeyPath.bind("link..name", table: item, catalog: source.catalog) } == .invalidKeyPath)
        #expect(code { _ = try BoundKeyPath.bind("i.name", table: item, catalog: source.catalog) } == .invalidKeyPath)
        #expect(code { _ = try BoundKeyPath.bind("", table: item, catalog: source.catalog) } == .invalidKeyPath)
        let all = try source.objectKeys("Item")
        let evaluator = QueryEvaluator(source)
        let link = try Self.path("link", source)
        #expect(code { _ = try evaluator.sort("Item", all, by: [SortKey(path: link, ascending: true)]) } == .invalidKeyPath)
        let toMany = try Self.path("ints", source, toMany: true)
        #expect(code { _ = try evaluator.sort("Item", all, by: [SortKey(path: toMany, ascending: true)]) } == .invalidKeyPath)
        #expect(code { _ = try evaluator.distinct("Item", all, by: [toMany]) } == .invalidKeyPath)
        #expect(code { _ = try evaluator.aggregate("Item", all, .sum, try Self.path("s", source)) } == .typeMismatch)
        #expect(code { _ = try evaluator.aggregate("Item", all, .avg, try Self.path("t", source)) } == .typeMismatch)
        // Mixed values aggregate (Spec/QUERY.md §7.10).
        #expect(code { _ = try evaluator.aggregate("Item", all, .max, try Self.path("m", source)) } == nil)
        func compile(_ text: String, _ arguments: [QueryArgument]) -> QueryError.Code? {
            code { _ = try BoundPredicate.compile(text, arguments: arguments, table: item, catalog: source.catalog) }
        }
        #expect(compile("m == %@", [.value(.link(ObjectKey(1)))]) == .typeMismatch)
        #expect(compile("m == %@", [.value(.objectId([1, 2, 3]))]) == .invalidArgument)
        #expect(compile("m == %@", [.object(table: "Nope", key: ObjectKey(1))]) == .typeMismatch)
        // In predicates, aggregates of mixed lists stay unsupported (Spec/QUERY.md §7.10).
        #expect(compile("mixedList.@sum > 1", []) == .typeMismatch)
        #expect(compile("m LIKE[d] 'x'", []) == .unsupportedOperator)
        #expect(compile("intMap.@avg == 'x'", []) == .typeMismatch)
        #expect(compile("ANY i > 1", []) == .unsupportedOperator)
        do {
            _ = try BoundKeyPath.bind("link.nope", table: item, catalog: source.catalog)
        } catch {
            #expect(error.offset == 5 && error.text == "link.nope")
        }
        #expect(throws: StorageError.self) {
            try evaluator.sort("Item", [ObjectKey(99)], by: [SortKey(path: try Self.path("i", source), ascending: true)])
        }
    }

    /// Int sums are exact: beyond `Int64` an aggregate throws `.overflow`, and `@sum` in a
    /// predicate compares exactly.
    @Test func intSumsAreExact() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true))
        let tx = try store.beginWrite()
        try tx.createTable("T")
        try tx.addColumn("T", ColumnSchema("v", .int))
        try tx.addColumn("T", ColumnSchema("l", .int, list: true))
        try tx.insert("T", ["v": .int(.max), "l": .list([.int(.max), .int(.max), .int(.min)])])
        try tx.insert("T", ["v": .int(.max), "l": .list([.int(.max), .int(1)])])
        let snapshot = try tx.commit()
        let table = snapshot.catalog.table("T")!
        let evaluator = QueryEvaluator(snapshot)
        let keys = try snapshot.objectKeys("T")
        let v = try BoundKeyPath.bind("v", table: table, catalog: snapshot.catalog)
        #expect(throws: QueryError.self) { try evaluator.aggregate("T", keys, .sum, v) }
        #expect(try evaluator.aggregate("T", [keys[0]], .sum, v) == .int(.max))
        #expect(try evaluator.aggregate("T", keys, .avg, v) == .double(Double(Int64.max)))
        func filter(_ text: String) throws -> [ObjectKey] {
            try evaluator.filter("T", try BoundPredicate.compile(text, table: table, catalog: snapshot.catalog))
        }
        #expect(try filter("l.@sum > 9223372036854775807") == [keys[1]])
        #expect(try filter("l.@sum == 9223372036854775806") == [keys[0]])
        #expect(try filter("l.@sum < -1") == [])
        #expect(try filter("l.@avg > 1e18") == keys)
    }
}

import Foundation
import RealmQuery
import RealmStorage
import RealmTestSupport
import Testing

/// `StoredValues` (sorting, distinct and aggregates of plain values) and the order contract of
/// `QueryEvaluator.matching` over keys given in any order (what results over a list start from).
@Suite struct StoredValuesTests {
    typealias V = StorageValue

    @Test func valuesMatchAQueryOnSelf() throws {
        let ints: [V] = [.int(1), .int(5), .null, .int(3), .int(-7)]
        #expect(try StoredValues.matchingIndices(ints, type: .int, isNullable: true, predicate: "self > 2") == [1, 3])
        #expect(try StoredValues.matchingIndices(ints, type: .int, isNullable: true, predicate: "self == nil") == [2])
        #expect(
            try StoredValues.matchingIndices(ints, type: .int, isNullable: true, predicate: "self != nil AND NOT self < 0") == [0, 1, 3])
        #expect(try StoredValues.matchingIndices(ints, type: .int, isNullable: true, predicate: "self BETWEEN {1, 3}") == [0, 3])
        #expect(
            try StoredValues.matchingIndices(
                ints, type: .int, isNullable: true, predicate: "self IN %@", arguments: [.values([.int(5), .int(-7)])])
                == [1, 4])
        // nil never satisfies < or > (Spec/QUERY.md); an int literal compares with doubles.
        let doubles: [V] = [.double(0.5), .null, .double(2)]
        #expect(try StoredValues.matchingIndices(doubles, type: .double, isNullable: true, predicate: "self < 1") == [0])
        let strings: [V] = [.string("Ann"), .string("bob"), .string(""), .string("Émile")]
        #expect(try StoredValues.matchingIndices(strings, type: .string, isNullable: false, predicate: "self BEGINSWITH[c] 'a'") == [0])
        #expect(try StoredValues.matchingIndices(strings, type: .string, isNullable: false, predicate: "self CONTAINS[d] 'e'") == [3])
        #expect(try StoredValues.matchingIndices(strings, type: .string, isNullable: false, predicate: "self LIKE '?o*'") == [1])
        #expect(try StoredValues.matchingIndices([], type: .int, isNullable: false, predicate: "self > 0") == [])
        // Errors, typed and with the position: other key paths, type mismatches, bad syntax.
        for (text, code) in [
            ("name == 'a'", QueryError.Code.unknownProperty), ("self == 'a'", .typeMismatch), ("self >", .syntax),
            ("self > 1.5", .typeMismatch),
        ] {
            do {
                _ = try StoredValues.matchingIndices(ints, type: .int, isNullable: true, predicate: text)
                Issue.record("\(text) was accepted")
            } catch let e as QueryError {
                #expect(e.code == code, "\(text): \(e)")
                #expect(e.offset != nil, "\(text): \(e)")
            }
        }
    }

    @Test func sortsStablyNilFirstStringsByBytes() {
        let values: [V] = [.int(3), .null, .int(1), .int(3), .null, .int(-2)]
        #expect(StoredValues.sortedIndices(values, ascending: true) == [1, 4, 5, 2, 0, 3])
        // Descending reverses unequal values only: equal ones keep their order.
        #expect(StoredValues.sortedIndices(values, ascending: false) == [0, 3, 2, 5, 1, 4])
        let strings: [V] = [.string("b"), .string("B"), .string("é"), .string("a"), .string("")]
        #expect(StoredValues.sortedIndices(strings, ascending: true) == [4, 1, 3, 0, 2])
        let doubles: [V] = [.double(1), .double(.nan), .null, .double(-0.0), .double(0)]
        #expect(StoredValues.sortedIndices(doubles, ascending: true) == [2, 1, 3, 4, 0])
        let floats: [V] = [.float(2.5), .float(-1), .float(.nan)]
        #expect(StoredValues.sortedIndices(floats, ascending: true) == [2, 1, 0])
        let bools: [V] = [.bool(true), .bool(false), .null]
        #expect(StoredValues.sortedIndices(bools, ascending: true) == [2, 1, 0])
        let dates: [V] = [
            .timestamp(seconds: 5, nanoseconds: 0), .timestamp(seconds: -1, nanoseconds: 0), .timestamp(seconds: 5, nanoseconds: 1),
        ]
        #expect(StoredValues.sortedIndices(dates, ascending: false) == [2, 0, 1])
        #expect(StoredValues.sortedIndices([], ascending: true) == [])
    }

    @Test func distinctKeepsTheFirstOfEachGroupInOrder() {
        let values: [V] = [.int(2), .null, .int(1), .int(2), .null, .int(1), .int(7)]
        #expect(StoredValues.distinctIndices(values) == [0, 1, 2, 6])
        let doubles: [V] = [.double(.nan), .double(0), .double(-0.0), .double(.nan), .double(1)]
        #expect(StoredValues.distinctIndices(doubles) == [0, 1, 4])
        let strings: [V] = [.string("a"), .string("A"), .string("a"), .string("é"), .string("e\u{301}")]
        #expect(StoredValues.distinctIndices(strings) == [0, 1, 3, 4])  // bytes, not canonical equivalence
        #expect(StoredValues.distinctIndices([.int(1)]) == [0])
        #expect(StoredValues.distinctIndices([]) == [])
    }

    @Test func aggregatesSkipNilsWithTheEvaluatorsResults() throws {
        let ints: [V] = [.int(4), .null, .int(-1), .int(3)]
        #expect(try StoredValues.aggregate(ints, .sum, type: .int) == .int(6))
        #expect(try StoredValues.aggregate(ints, .min, type: .int) == .int(-1))
        #expect(try StoredValues.aggregate(ints, .max, type: .int) == .int(4))
        #expect(try StoredValues.aggregate(ints, .avg, type: .int) == .double(2))
        #expect(try StoredValues.aggregate(ints, .count, type: .int) == .int(4))
        // Nothing, or only nils: sum 0 of the type, min/max/avg nil.
        for values in [[], [V.null, .null]] {
            #expect(try StoredValues.aggregate(values, .sum, type: .int) == .int(0))
            #expect(try StoredValues.aggregate(values, .sum, type: .double) == .double(0))
            #expect(try StoredValues.aggregate(values, .min, type: .int) == nil)
            #expect(try StoredValues.aggregate(values, .max, type: .timestamp) == nil)
            #expect(try StoredValues.aggregate(values, .avg, type: .double) == nil)
        }
        let floats: [V] = [.float(1.5), .float(2)]
        #expect(try StoredValues.aggregate(floats, .sum, type: .float) == .double(3.5))
        #expect(try StoredValues.aggregate(floats, .max, type: .float) == .float(2))
        let decimals: [V] = [EvaluationFixture.dec("1.25"), .null, EvaluationFixture.dec("2.75")]
        let sum = try StoredValues.aggregate(decimals, .sum, type: .decimal128)
        #expect(sum.map { if case .decimal128(let l, let h) = $0 { Decimal128(low: l, high: h) == 4 } else { false } } == true)
        let dates: [V] = [.timestamp(seconds: 5, nanoseconds: 0), .timestamp(seconds: -1, nanoseconds: 0)]
        #expect(try StoredValues.aggregate(dates, .min, type: .timestamp) == .timestamp(seconds: -1, nanoseconds: 0))
        // NaN never wins min/max over a number.
        #expect(try StoredValues.aggregate([.double(.nan), .double(2), .double(1)], .min, type: .double) == .double(1))
    }

    @Test func aggregateErrors() {
        func code(_ body: () throws -> Void) -> QueryError.Code? {
            do {
                try body()
                return nil
            } catch let e as QueryError {
                return e.code
            } catch {
                return nil
            }
        }
        #expect(code { _ = try StoredValues.aggregate([.string("a")], .sum, type: .string) } == .typeMismatch)
        #expect(code { _ = try StoredValues.aggregate([.string("a")], .min, type: .string) } == .typeMismatch)
        #expect(code { _ = try StoredValues.aggregate([], .avg, type: .timestamp) } == .typeMismatch)
        #expect(code { _ = try StoredValues.aggregate([.int(.max), .int(1)], .sum, type: .int) } == .overflow)
        #expect(code { _ = try StoredValues.aggregate([.int(.max), .int(1)], .avg, type: .int) } == nil)
    }

    /// `matching` keeps the order of the keys it is given, duplicates included, and drops keys
    /// the table lacks — over a snapshot and over a write transaction.
    @Test func matchingKeepsTheGivenOrder() throws {
        try OrderingTests.each { source in
            let all = try source.objectKeys("Item")
            let item = source.catalog.table("Item")!
            let evaluator = QueryEvaluator(source)
            let order = [7, 2, 5, 2, 0, 7, 3]
            let keys = order.map { all[$0] } + [ObjectKey(9_999)]
            #expect(try evaluator.matching("Item", keys, nil) == order.map { all[$0] })
            let predicate = try BoundPredicate.compile("i >= 0 AND b == false", table: item, catalog: source.catalog)
            #expect(try evaluator.matching("Item", keys, predicate) == [2, 2].map { all[$0] })
            let links = try BoundPredicate.compile("link.name == 'green'", table: item, catalog: source.catalog)
            #expect(try evaluator.matching("Item", keys, links) == [7, 7].map { all[$0] })
            #expect(try evaluator.matching("Item", [], predicate) == [])
        }
    }
}

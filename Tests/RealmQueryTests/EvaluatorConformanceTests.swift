import Foundation
import RealmQuery
import RealmStorage
import Testing

/// One query over the ``EvaluationFixture`` and the indices of the objects it must match.
struct QueryCase: CustomTestStringConvertible, Sendable {
    var text: String
    var expected: [Int]
    var arguments: [QueryArgument]
    var table: String
    var testDescription: String { text }

    /// Checks `filter` (and `matches` object by object) against a committed snapshot and against a
    /// write transaction holding the same data uncommitted.
    func check() throws {
        try check(EvaluationFixture.committed.snapshot)
        try EvaluationFixture.withTransaction { tx in try check(tx) }
    }

    func check(_ source: any QuerySource) throws {
        let catalog = source.catalog
        let predicate = try BoundPredicate.compile(
            text, arguments: arguments, table: catalog.table(table)!, catalog: catalog, linkingObjects: EvaluationFixture.linkingObjects)
        let all = try source.objectKeys(table)
        let want = expected.map { all[$0] }
        let evaluator = QueryEvaluator(source)
        let got = try evaluator.filter(table, predicate)
        #expect(got == want, "\(text) over \(type(of: source)): \(got.map(\.rawValue)) vs \(want.map(\.rawValue))")
        let one = try all.filter { try evaluator.matches(table, $0, predicate) }
        #expect(one == want, "\(text) object by object over \(type(of: source))")
    }
}

func q(_ text: String, _ expected: [Int], _ arguments: [QueryArgument] = [], table: String = "Item") -> QueryCase {
    QueryCase(text: text, expected: expected, arguments: arguments, table: table)
}

/// An argument for `%@`.
func arg(_ value: StorageValue) -> QueryArgument { .value(value) }
/// Tag `k` (or Item `k`) as an object argument.
func tag(_ k: Int) -> QueryArgument { .object(table: "Tag", key: ObjectKey(Int64(k))) }
func item(_ k: Int) -> QueryArgument { .object(table: "Item", key: ObjectKey(Int64(k))) }

let all8 = Array(0..<8)
let nan = Double.nan

/// Every operator on every scalar type (Spec/QUERY.md §7.2–§7.5, §7.9): query text and arguments
/// against the objects they must match, over a snapshot and a write transaction.
@Suite struct EvaluatorConformanceTests {
    static let ints: [QueryCase] = [
        q("i == 0", [2]), q("i != 0", [0, 1, 3, 4, 5, 6, 7]), q("i < 0", [0, 1]), q("i <= 0", [0, 1, 2]), q("i > 20", [5, 6, 7]),
        q("i >= 20", [4, 5, 6, 7]), q("i BETWEEN {-10, 10}", [1, 2, 3]), q("i BETWEEN {10, -10}", []), q("i IN {-20, 50, 7}", [0, 7]),
        q("i IN %@", [], [.values([])]), q("0 < i", [3, 4, 5, 6, 7]), q("i > -9223372036854775808", all8),
        q("i < -9223372036854775808", []), q("i > 9223372036854775807", []), q("i <= 9223372036854775807", all8),
        q("NOT i > 0", [0, 1, 2]), q("i > %@", [5, 6, 7], [arg(.int(25))]), q("i > 0 AND i < 40", [3, 4, 5]),
        q("i < 0 OR i > 40", [0, 1, 7]), q("i == id", []), q("i < id", all8),
        q("i BETWEEN %@", [2, 3, 4, 5], [.values([.int(0), .int(30)])]),
        q("i == 0x14", [4]), q("i == -0b1010", [1]), q("i >= 0o62", [7]),
        q("oi == nil", [0, 3, 6]), q("oi != nil", [1, 2, 4, 5, 7]), q("oi == 2", [2]), q("oi != 2", [0, 1, 3, 4, 5, 6, 7]),
        q("oi > 3", [4, 5, 7]), q("oi < 3", [1, 2]), q("oi < nil", []), q("oi >= nil", [0, 3, 6]), q("oi <= nil", [0, 3, 6]),
        q("oi > nil", []), q("oi BETWEEN {1, 4}", [1, 2, 4]),
        q("oi IN {1, nil}", [0, 1, 3, 6]), q("NOT oi > 3", [0, 1, 2, 3, 6]), q("oi == oi", all8), q("oi != i", all8),
        q("oi < i", [4, 5, 7]), q("oi == NULL", [0, 3, 6]), q("nil == oi", [0, 3, 6]), q("3 < oi", [4, 5, 7]),
    ]

    static let bools: [QueryCase] = [
        q("b == TRUE", [1, 3, 5, 7]), q("b == NO", [0, 2, 4, 6]), q("b != true", [0, 2, 4, 6]), q("b IN {true}", [1, 3, 5, 7]),
        q("b IN {true, false}", all8), q("ob == nil", [0, 3, 6]), q("ob == true", [1, 4, 7]), q("ob != true", [0, 2, 3, 5, 6]),
        q("ob == false", [2, 5]), q("ob IN {false, nil}", [0, 2, 3, 5, 6]), q("b == ob", [1, 2, 7]), q("NOT b == true", [0, 2, 4, 6]),
        q("b == %@", [1, 3, 5, 7], [arg(.bool(true))]), q("ob != nil", [1, 2, 4, 5, 7]), q("b == YES AND ob == NO", [5]),
    ]

    static let floats: [QueryCase] = [
        q("f == 0", [2]), q("f > 0.5", [4, 5, 6, 7]), q("f >= 0.5", [3, 4, 5, 6, 7]), q("f < 0", [0, 1]), q("f == -0.0", [2]),
        q("f BETWEEN {-0.5, 1.5}", [1, 2, 3, 4]), q("f IN {2.5, 4.5, 7}", [5, 7]), q("f != 1.5", [0, 1, 2, 3, 5, 6, 7]),
        q("f > %@", [5, 6, 7], [arg(.double(2))]), q("f < %@", [0, 1], [arg(.float(0))]), q("f == 0.1", []), q("f <= -1.5", [0]),
        q("of == nil", [0, 2, 4, 6]), q("of > 0", [1, 5, 7]), q("of != 1", [0, 1, 2, 3, 4, 6, 7]), q("of < 1", [1, 3]),
        q("of == 0.25", [1]), q("of BETWEEN {-1, 1}", [1, 3, 5]), q("f > of", [3, 5, 7]),
    ]

    static let doubles: [QueryCase] = [
        q("d == 1", [3]), q("d > 2.5", [5, 6, 7]), q("d <= -1", [0, 1]), q("d BETWEEN {0, 2}", [2, 3, 4]), q("d IN {1, 2, 9.5}", [3, 4]),
        q("d != 0", [0, 1, 3, 4, 5, 6, 7]), q("d > 1e0", [4, 5, 6, 7]), q("d < -1.5E-0", [0]), q("od == nil", [0, 5]),
        q("od == 0", [3, 6]), q("od != 0", [0, 1, 2, 4, 5, 7]), q("od > 0", [1, 4, 7]), q("od < 1", [3, 6]),
        q("od >= -0.0", [1, 3, 4, 6, 7]), q("od == %@", [], [arg(.double(.nan))]), q("od != %@", all8, [arg(.double(.nan))]),
        q("od > %@", [], [arg(.double(.nan))]), q("od <= %@", [1, 3, 4, 6, 7], [arg(.double(.infinity))]),
        q("od BETWEEN {0, 2}", [1, 3, 4, 6]), q("NOT od > 0", [0, 2, 3, 5, 6]), q("d > od", [3, 6, 7]),
        q("od == od", [0, 1, 3, 4, 5, 6, 7]), q("od IN {0, 3.5}", [3, 6, 7]), q("d == %@", [4], [arg(.float(2))]),
    ]

    static let strings: [QueryCase] = [
        q("s == 'alpha'", [0]), q("s ==[c] 'alpha'", [0, 1, 6]), q("s ==[c] 'ALPHA'", [0, 1, 6]), q("s != 'alpha'", [1, 2, 3, 4, 5, 6, 7]),
        q("s !=[c] 'alpha'", [2, 3, 4, 5, 7]), q("s ==[d] 'Beta'", [3]), q("s ==[d] 'beta'", [2]), q("s ==[cd] 'BETA'", [2, 3]),
        q("s == 'Be\\u0301ta'", []), q("s ==[d] 'Be\\u0301ta'", [3]), q("s == 'B\\u00e9ta'", [3]), q("s BEGINSWITH 'a'", [0]),
        q("s BEGINSWITH[c] 'a'", [0, 1, 6]), q("s BEGINSWITH 'be'", [2, 7]), q("s BEGINSWITH ''", []), q("s BEGINSWITH nil", []),
        q("s ENDSWITH 'a'", [0, 1, 2, 3, 4]), q("s ENDSWITH[c] 'HA'", [0, 1, 6]), q("s ENDSWITH 'ta'", [2, 3]), q("s ENDSWITH ''", []),
        q("s CONTAINS 'ph'", [0, 1]), q("s CONTAINS[c] 'PH'", [0, 1, 6]), q("s CONTAINS '\\u00e9'", [3]),
        q("s CONTAINS[d] 'e'", [2, 3, 7]), q("s CONTAINS ''", []), q("s CONTAINS nil", []), q("s LIKE 'a*'", [0]),
        q("s LIKE '*a'", [0, 1, 2, 3, 4]), q("s LIKE '?eta'", [2]), q("s LIKE 'B?ta'", [3]), q("s LIKE[c] 'b?ta'", [2, 3]),
        q("s LIKE '*'", all8), q("s LIKE '?*'", [0, 1, 2, 3, 4, 6, 7]), q("s LIKE ''", [5]), q("s LIKE nil", []),
        q("s LIKE[c] '*L*A'", [0, 1, 6]), q("s LIKE '*?*?*?*?*?*'", [0, 1, 4, 6]), q("s IN {'alpha', 'beta', 'zeta'}", [0, 2]),
        q("s IN[c] {'ALPHA'}", [0, 1, 6]), q("s == ''", [5]), q("s.@count == 0", [5]), q("s.@count > 4", [0, 1, 3, 4, 6]),
        q("s.@size == 4", [2]), q("s == os", []), q("NOT s CONTAINS 'a'", [5, 6, 7]), q("s BEGINSWITH %@", [2, 7], [arg(.string("be"))]),
        q("os == nil", [0, 3, 6]), q("os != nil", [1, 2, 4, 5, 7]), q("os == 'x'", [1]), q("os ==[c] 'x'", [1, 7]),
        q("os != 'x'", [0, 2, 3, 4, 5, 6, 7]), q("os BEGINSWITH 'x'", [1, 2]), q("os ENDSWITH 'x'", [1, 5]),
        q("os CONTAINS[c] 'X'", [1, 2, 5, 7]), q("os LIKE nil", [0, 3, 6]), q("os LIKE '*'", [1, 2, 4, 5, 7]), q("os == ''", [4]),
        q("os.@count == nil", [0, 3, 6]), q("os.@count == 0", [4]), q("os.@count > 1", [2, 5]), q("os IN {'xy', nil}", [0, 2, 3, 6]),
        q("NOT os BEGINSWITH 'x'", [0, 3, 4, 5, 6, 7]), q("os ==[cd] 'X'", [1, 7]), q("os LIKE[c] 'x?'", [2]),
        // Among strings nil orders before every string (Realm Core's rule; Spec/QUERY.md §7.5).
        q("os < 'a'", [0, 3, 4, 6, 7]), q("os <= 'x'", [0, 1, 3, 4, 6, 7]), q("os > 'x'", [2, 5]), q("os >= 'x'", [1, 2, 5]),
        q("os > nil", [1, 2, 4, 5, 7]), q("os >= nil", all8), q("os < nil", []), q("os <= nil", [0, 3, 6]),
        q("'a' > os", [0, 3, 4, 6, 7]), q("nil < os", [1, 2, 4, 5, 7]), q("os < s", [0, 3, 4, 6, 7]), q("os >= s", [1, 2, 5]),
        q("os <[c] 'a'", [0, 3, 4, 6]), q("NOT os < 'a'", [1, 2, 5]),
    ]

    static let binaries: [QueryCase] = [
        q("bin == %@", [4], [arg(.binary([1]))]), q("bin != %@", [0, 1, 2, 3, 5, 6, 7], [arg(.binary([1]))]),
        q("bin BEGINSWITH %@", [1, 4, 6], [arg(.binary([1]))]), q("bin ENDSWITH %@", [0, 4, 5], [arg(.binary([1]))]),
        q("bin CONTAINS %@", [1, 5, 6], [arg(.binary([2]))]), q("bin CONTAINS %@", [1, 6], [arg(.binary([1, 2]))]),
        q("bin BEGINSWITH %@", [], [arg(.binary([]))]), q("bin LIKE %@", [0, 1, 3, 4, 5, 6, 7], [arg(.binary([0x3F, 0x2A]))]),
        q("bin LIKE %@", [1, 4, 6], [arg(.binary([1, 0x2A]))]), q("bin LIKE %@", [0, 5, 6], [arg(.binary([0x3F, 0x3F]))]),
        q("bin == %@", [2], [arg(.binary([]))]), q("bin.@count == 0", [2]), q("bin.@count > 1", [0, 1, 5, 6]),
        q("bin IN %@", [3, 7], [.values([.binary([0]), .binary([3])])]), q("obin == nil", [0, 2, 6]), q("obin != nil", [1, 3, 4, 5, 7]),
        q("obin BEGINSWITH %@", [1, 3], [arg(.binary([1]))]), q("obin == bin", []), q("obin.@count == nil", [0, 2, 6]),
        q("obin LIKE nil", [0, 2, 6]), q("obin CONTAINS nil", []), q("obin ENDSWITH %@", [1, 3, 7], [arg(.binary([1]))]),
    ]

    static let timestamps: [QueryCase] = {
        let ts = EvaluationFixture.ts
        return [
            q("t == %@", [1], [arg(ts(0, 0))]), q("t > %@", [2, 3, 4, 5, 6, 7], [arg(ts(100, 0))]),
            q("t >= %@", [2, 3, 4, 5, 6, 7], [arg(ts(100, 500_000_000))]), q("t < %@", [0, 1], [arg(ts(100, 500_000_000))]),
            q("t BETWEEN %@", [1, 2, 3, 4], [.values([ts(0, 0), ts(300, 0)])]),
            q("t IN %@", [0, 7], [.values([ts(-100, 0), ts(600, 0), ts(7, 0)])]),
            q("t != %@", [0, 2, 3, 4, 5, 6, 7], [arg(ts(0, 0))]), q("t == %@", [2], [arg(ts(100, 500_000_000))]),
            q("ot == nil", [0, 2, 5]), q("ot == %@", [3], [arg(ts(-2, 500_000_000))]), q("ot < %@", [3], [arg(ts(0, 0))]),
            q("ot > %@", [1, 6, 7], [arg(ts(0, 0))]), q("ot != %@", [0, 2, 3, 4, 5, 6], [arg(ts(50, 0))]), q("ot < t", [3, 4, 6, 7]),
            q("ot <= %@", [3, 4], [arg(ts(0, 0))]), q("ot BETWEEN %@", [3, 4], [.values([ts(-1, -500_000_000), ts(0, 0)])]),
            q("ot == %@", [3], [arg(ts(-1, -500_000_000))]), q("NOT ot > %@", [0, 2, 3, 4, 5], [arg(ts(0, 0))]),
        ]
    }()

    static let identifiers: [QueryCase] = [
        q("oid == '010101010101010101010101'", [1]), q("oid == %@", [7], [arg(EvaluationFixture.oid(7))]),
        q("oid != '000000000000000000000000'", [1, 2, 3, 4, 5, 6, 7]),
        q("oid IN {'020202020202020202020202', '030303030303030303030303'}", [2, 3]), q("ooid == nil", [0, 2, 4, 6]),
        q("ooid == oid", [1, 3, 5, 7]), q("ooid != oid", [0, 2, 4, 6]), q("ooid == '050505050505050505050505'", [5]),
        q("u == '00000000-0000-0000-0000-000000000003'", [3]), q("u == %@", [5], [arg(.uuid(EvaluationFixture.uuid(5)))]),
        q("u != '00000000-0000-0000-0000-000000000003'", [0, 1, 2, 4, 5, 6, 7]),
        q("u IN {'00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-000000000002'}", [1, 2]), q("ou == nil", [1, 3, 5, 7]),
        q("ou == u", [0, 2, 4, 6]), q("ou != nil AND u != '00000000-0000-0000-0000-000000000000'", [2, 4, 6]),
    ]

    static let decimals: [QueryCase] = [
        q("dec == 1", [3, 6]), q("dec == 1.0", [3, 6]), q("dec == 1.000000", [3, 6]), q("dec > 0.5", [3, 4, 5, 6]),
        q("dec >= 0.5", [2, 3, 4, 5, 6]), q("dec < 0", [0, 7]), q("dec BETWEEN {0, 1}", [1, 2, 3, 6]), q("dec IN {100, -0.5}", [5, 7]),
        q("dec != 1", [0, 1, 2, 4, 5, 7]), q("dec == %@", [2], [arg(.double(0.5))]),
        q("dec == %@", [4], [arg(EvaluationFixture.dec("2.5"))]),
        q("dec > 99.99999999999999999999999999999999", [5]), q("dec < 1e2", [0, 1, 2, 3, 4, 6, 7]), q("odec == nil", [0, 2, 5]),
        q("odec == 1", [1, 6]), q("odec != 1", [0, 2, 3, 4, 5, 7]), q("odec > 1", [4, 7]), q("odec < 10", [1, 4, 6, 7]),
        q("dec < odec", [1, 4, 7]), q("odec == odec", [0, 1, 2, 4, 5, 6, 7]), q("odec != %@", all8, [arg(.double(.nan))]),
        q("dec == %@", [3, 6], [arg(.int(1))]),
    ]

    @Test(arguments: ints + bools + floats + doubles)
    func numbersAndBools(_ c: QueryCase) throws { try c.check() }

    @Test(arguments: strings + binaries)
    func stringsAndBinary(_ c: QueryCase) throws { try c.check() }

    @Test(arguments: timestamps + identifiers + decimals)
    func datesIdentifiersDecimals(_ c: QueryCase) throws { try c.check() }
}

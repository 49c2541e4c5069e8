import Foundation
import RealmQuery
import RealmStorage
import Testing

/// Query text → canonical text, for every operator, option, modifier, literal form, argument form
/// and precedence rule of Spec/QUERY.md §2–§5.
@Suite struct ParserTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var text: String
        var canonical: String
        var arguments: [QueryArgument] = []
        var testDescription: String { text }
    }

    static func c(_ text: String, _ canonical: String? = nil, _ arguments: [QueryArgument] = []) -> Case {
        Case(text: text, canonical: canonical ?? text, arguments: arguments)
    }

    static let comparisons: [Case] = [
        c("age == 5"), c("age = 5", "age == 5"), c("age != 5"), c("age <> 5", "age != 5"), c("age < 5"), c("age <= 5"),
        c("age =< 5", "age <= 5"), c("age > 5"), c("age >= 5"), c("age => 5", "age >= 5"), c("age>5", "age > 5"),
        c("age>-5", "age > -5"), c("age BETWEEN {1, 10}"), c("age between {1,10}", "age BETWEEN {1, 10}"), c("age IN {1, 2, 3}"),
        c("name IN {}"), c("age in{1}", "age IN {1}"), c(#"name BEGINSWITH "a""#), c("name beginswith 'a'", #"name BEGINSWITH "a""#),
        c("name ENDSWITH 'a'", #"name ENDSWITH "a""#), c("name CONTAINS 'a'", #"name CONTAINS "a""#),
        c("name LIKE 'a?c*'", #"name LIKE "a?c*""#), c("name Like 'x'", #"name LIKE "x""#),
        c("5 < age"), c("'x' IN tags", #""x" IN tags"#), c("age > otherAge"), c("owner.name == name"),
        c("  age\n==\t5  ", "age == 5"),
    ]

    static let options: [Case] = [
        c("name ==[c] 'a'", #"name ==[c] "a""#), c("name ==[d] 'a'", #"name ==[d] "a""#), c("name ==[cd] 'a'", #"name ==[cd] "a""#),
        c("name ==[dc] 'a'", #"name ==[cd] "a""#), c("name ==[C] 'a'", #"name ==[c] "a""#), c("name ==[CD] 'a'", #"name ==[cd] "a""#),
        c("name !=[c] 'a'", #"name !=[c] "a""#), c("name BEGINSWITH[cd] 'x'", #"name BEGINSWITH[cd] "x""#),
        c("name ENDSWITH[d] 'x'", #"name ENDSWITH[d] "x""#), c("name CONTAINS[c] 'x'", #"name CONTAINS[c] "x""#),
        c("name LIKE[c] 'x*'", #"name LIKE[c] "x*""#), c("name IN[c] {'a', 'b'}", #"name IN[c] {"a", "b"}"#),
        c("name ==[ c ] 'a'", #"name ==[c] "a""#),
    ]

    static let modifiers: [Case] = [
        c("ANY dogs.age > 5"), c("SOME dogs.age > 5", "ANY dogs.age > 5"), c("ALL dogs.age > 5"), c("NONE dogs.age > 5"),
        c("any dogs.name == 'x'", #"ANY dogs.name == "x""#), c("all scores BETWEEN {1, 2}", "ALL scores BETWEEN {1, 2}"),
        c("none tags IN {'a'}", #"NONE tags IN {"a"}"#), c("ANY tags BEGINSWITH[c] 'a'", #"ANY tags BEGINSWITH[c] "a""#),
    ]

    static let logic: [Case] = [
        c("a == 1 AND b == 2"), c("a == 1 && b == 2", "a == 1 AND b == 2"), c("a == 1 and b == 2", "a == 1 AND b == 2"),
        c("a == 1 OR b == 2"), c("a == 1 || b == 2", "a == 1 OR b == 2"), c("NOT a == 1"), c("!a == 1", "NOT a == 1"),
        c("!(a == 1)", "NOT a == 1"), c("not a == 1", "NOT a == 1"), c("NOT NOT a == 1"),
        c("a == 1 OR b == 2 AND c == 3"), c("a == 1 AND b == 2 OR c == 3"), c("(a == 1 OR b == 2) AND c == 3"),
        c("a == 1 AND (b == 2 OR c == 3)"), c("NOT a == 1 AND b == 2"), c("NOT (a == 1 AND b == 2)"), c("NOT (a == 1 OR b == 2)"),
        c("a == 1 AND (b == 2 AND c == 3)", "a == 1 AND b == 2 AND c == 3"),
        c("(a == 1 AND b == 2) AND c == 3", "a == 1 AND b == 2 AND c == 3"),
        c("a == 1 OR (b == 2 OR c == 3)", "a == 1 OR b == 2 OR c == 3"), c("((a == 1))", "a == 1"), c("TRUEPREDICATE"),
        c("FALSEPREDICATE"), c("truepredicate", "TRUEPREDICATE"), c("TRUEPREDICATE AND a == 1"), c("NOT FALSEPREDICATE"),
        c("(a == 1 OR b == 2) AND (c == 3 OR d == 4)"), c("NOT (a == 1) OR NOT (b == 2)", "NOT a == 1 OR NOT b == 2"),
        c("name ==[c] 'a' AND NOT (age > 5 OR ALL scores < 3)", #"name ==[c] "a" AND NOT (age > 5 OR ALL scores < 3)"#),
    ]

    static let literals: [Case] = [
        c("a == nil"), c("a == NULL", "a == nil"), c("a == Nil", "a == nil"), c("a == TRUE"), c("a == YES", "a == TRUE"),
        c("a == yes", "a == TRUE"), c("a == FALSE"), c("a == NO", "a == FALSE"), c("a == 0x1F", "a == 31"), c("a == 0XFF", "a == 255"),
        c("a == -0x10", "a == -16"), c("a == 0o17", "a == 15"), c("a == 0b101", "a == 5"), c("a == -5"), c("a == 0"),
        c("a == 007", "a == 7"), c("a == 9223372036854775807"), c("a == -9223372036854775808"), c("a == 5.5"), c("a == -2.5"),
        c("a == 1e10"), c("a == 1.5E-3"), c("a == 2e+3"), c("a == .5"), c("a == -.5"), c("a == 5.0"), c(#"a == "double""#),
        c("a == 'single'", #"a == "single""#), c(#"a == 'it\'s'"#, #"a == "it's""#), c(#"a == "a\"b""#),
        c(#"a == 'tab\there'"#, #"a == "tab\there""#), c(#"a == 'a\\b'"#, #"a == "a\\b""#),
        c(#"a == 'line\nbreak'"#, #"a == "line\nbreak""#),
        c(#"a == '\u00e9'"#, #"a == "é""#), c(#"a == '\x41'"#, #"a == "A""#), c(#"a == '\uD83D\uDE00'"#, #"a == "😀""#),
        c(#"a == '\u{1F600}'"#, #"a == "😀""#), c(#"a == '\0\a\b\f\v\r'"#, #"a == "\0\u0007\u0008\u000C\u000B\r""#),
        c("a == 'héllo wörld'", #"a == "héllo wörld""#), c("a == ''", #"a == """#), c("a == \"'\"", #"a == "'""#),
        // Typed literals, spelled as in Realm's query language.
        c("_id == oid(507f191e810c19729de860ea)"), c("_id == oid(507F191E810C19729DE860EA)", "_id == oid(507f191e810c19729de860ea)"),
        c("u == uuid(3B241101-E2BB-4255-8CAF-4136C566A962)", "u == uuid(3b241101-e2bb-4255-8caf-4136c566a962)"),
        c("born > T1637275200:0"), c("born > T-5:-100"), c("born BETWEEN {T0:0, T10:5}"), c(#"data == B64"AQID""#),
        c("T1 == 5"), c("oid == 1"), c("uuid == 1"), c("B64 == 1"), c("T == 1"),
    ]

    static let keyPaths: [Case] = [
        c("owner.name == 'x'", #"owner.name == "x""#), c("owner.owner.age > 1"), c("#in == 5"), c("#name == 5", "name == 5"),
        c("owner.in == 5", "owner.#in == 5"), c("owner.#AND == 5", "owner.#AND == 5"), c("größe > 5"), c("_private == 1"),
        c("a1.b_2 == 1"), c("dogs.@count > 2"), c("dogs.@size > 2", "dogs.@count > 2"), c("dogs.@COUNT > 2", "dogs.@count > 2"),
        c("scores.@avg > 5"), c("scores.@min < 5"), c("scores.@max >= 5"), c("scores.@sum == 10"), c("dogs.@max.age > 3"),
        c("dogs.age.@max > 3"), c("dogs.@sum.age == 10"), c("dogs.@min.toys.price < 2"), c("name.@count > 3"),
        c("owner.dogs.@count == 0"), c("dogs.@count == owner.dogs.@count"),
        c("SUBQUERY(dogs, $d, $d.age > 5).@count > 0"),
        c("SUBQUERY(dogs, $d, $d.age > 5).@size > 0", "SUBQUERY(dogs, $d, $d.age > 5).@count > 0"),
        c(
            "subquery(dogs, $d, $d.name BEGINSWITH 'R' AND $d.age > 1).@count == 2",
            #"SUBQUERY(dogs, $d, $d.name BEGINSWITH "R" AND $d.age > 1).@count == 2"#),
        c("SUBQUERY(dogs, $d, SUBQUERY($d.toys, $t, $t.price > 5).@count > 0).@count > 0"),
        c("SUBQUERY(scores, $s, $s > 5).@count == 0"), c("SUBQUERY(dogs, $d, TRUEPREDICATE).@count > 0"),
        c("SUBQUERY(dogs, $d, $d.toys.@count > 1).@count > 0"), c("0 < SUBQUERY(dogs, $d, $d.age > 5).@count"),
    ]

    static let arguments: [Case] = [
        c("age > %@", "age > 5", [.value(.int(5))]), c("name == %@", #"name == "x""#, [.value(.string("x"))]),
        c("%K == %@", #"name == "x""#, [.keyPath("name"), .value(.string("x"))]),
        c("%K == 5", "owner.age == 5", [.value(.string("owner.age"))]), c("%K.name == 5", "owner.name == 5", [.keyPath("owner")]),
        c("owner.%K == 5", "owner.#in == 5", [.keyPath("in")]), c("dogs.%K > 2", "dogs.@count > 2", [.keyPath("@count")]),
        c("%K > 2", "dogs.@avg.age > 2", [.keyPath("dogs.@avg.age")]),
        c("age IN %@", "age IN {1, 2}", [.values([.int(1), .int(2)])]), c("age IN %@", "age IN {}", [.values([])]),
        c("age BETWEEN %@", "age BETWEEN {1, 2}", [.values([.int(1), .int(2)])]),
        c("age IN {%@, 3}", "age IN {2, 3}", [.value(.int(2))]),
        c("owner == %@", "owner == Person#7", [.object(table: "Person", key: ObjectKey(7))]),
        c("score > %@", "score > 5.5", [.value(.double(5.5))]),
        c("born > %@", "born > T1:5", [.value(.timestamp(seconds: 1, nanoseconds: 5))]),
        c("_id == %@", "_id == oid(0102030405060708090a0b0c)", [.value(.objectId(Array(1...12)))]),
        c("a == %@", "a == nil", [.value(.null)]), c("a == %@", "a == TRUE", [.value(.bool(true))]),
        c("a == %@ AND b == %@", "a == 1 AND b == 2", [.value(.int(1)), .value(.int(2))]),
        c("data == %@", #"data == B64"AQID""#, [.value(.binary([1, 2, 3]))]), c("%@ IN tags", #""t" IN tags"#, [.value(.string("t"))]),
    ]

    static let all = comparisons + options + modifiers + logic + literals + keyPaths + arguments

    @Test(arguments: all)
    func parsesToCanonicalText(_ c: Case) throws {
        let predicate = try QueryPredicate.parse(c.text, arguments: c.arguments)
        #expect(predicate.description == c.canonical)
    }

    /// The canonical text parses back to an equal tree (arguments of types with no literal aside).
    @Test(arguments: comparisons + options + modifiers + logic + literals + keyPaths)
    func canonicalTextRoundTrips(_ c: Case) throws {
        let predicate = try QueryPredicate.parse(c.text, arguments: c.arguments)
        let again = try QueryPredicate.parse(predicate.description)
        #expect(again == predicate)
        #expect(again.description == predicate.description)
    }

    @Test func treeStructure() throws {
        let p = try QueryPredicate.parse("a == 1 OR b == 2 AND NOT c == 3")
        let a = QueryPredicate.comparison(QueryComparison(.keyPath("a"), .equal, .constant(.integer(1))))
        let b = QueryPredicate.comparison(QueryComparison(.keyPath("b"), .equal, .constant(.integer(2))))
        let c = QueryPredicate.comparison(QueryComparison(.keyPath("c"), .equal, .constant(.integer(3))))
        #expect(p == (a || (b && !c)))
        #expect(
            try QueryPredicate.parse("x BEGINSWITH[cd] 'y'")
                == .comparison(
                    QueryComparison(
                        .keyPath("x"), .beginsWith, .constant(.string("y")), options: [.caseInsensitive, .diacriticInsensitive])))
        #expect(
            try QueryPredicate.parse("ALL s > 1")
                == .comparison(
                    QueryComparison(
                        .keyPath("s"), .greater, .constant(.integer(1)), modifier: .all)))
        #expect(try QueryPredicate.parse("a == 5") != QueryPredicate.parse("a == 5.0"))
        #expect(try QueryPredicate.parse("a == 5.0") == .comparison(QueryComparison(.keyPath("a"), .equal, .constant(.fractional("5.0")))))
    }

    @Test func aggregateSplitsCollectionAndProperty() throws {
        guard case .comparison(let c) = try QueryPredicate.parse("owner.dogs.@avg.toys.price > 1"),
            case .aggregate(let function, let collection, let property?) = c.left.kind
        else { return #expect(Bool(false)) }
        #expect(function == .avg)
        #expect(collection.components == ["owner", "dogs"])
        #expect(property.components == ["toys", "price"])
    }

    @Test func positionsPointIntoTheText() throws {
        guard case .comparison(let c) = try QueryPredicate.parse("  ANY owner.dogs.age >=[c] %@", arguments: [.value(.int(1))]),
            case .keyPath(let path) = c.left.kind
        else { return #expect(Bool(false)) }
        #expect(c.position == 2)
        #expect(c.left.position == 6)
        #expect(path.componentPositions == [6, 12, 17])
        #expect(c.operatorPosition == 21)
        #expect(c.right.position == 27)
        guard case .and(let terms) = try QueryPredicate.parse("é == 1 AND SUBQUERY(xs, $x, $x.a == 1).@count > 0"),
            case .comparison(let s) = terms[1], case .subqueryCount(let sub) = s.left.kind
        else { return #expect(Bool(false)) }
        #expect(s.position == 11)
        #expect(sub.collection.position == 20)
    }

    @Test func treesBuiltInCodePrint() throws {
        let p: QueryPredicate =
            .comparison(QueryComparison(.keyPath("name"), .equal, .constant(.string("a\"b\\c\u{1}"))))
            && .not(.comparison(QueryComparison(.keyPath("in"), .in, .constant(.list([.null, .bool(false)])))))
        #expect(p.description == #"name == "a\"b\\c\u0001" AND NOT #in IN {nil, FALSE}"#)
        #expect(try QueryPredicate.parse(p.description) == p)
    }
}

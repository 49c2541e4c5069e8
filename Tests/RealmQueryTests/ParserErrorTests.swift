import RealmQuery
import RealmStorage
import Testing

/// Invalid query text: each case expects an error code at the offset marked `‸` (no mark: no
/// offset), and the error carries the text.
@Suite struct ParserErrorTests {
    static func e(_ marked: String, _ code: QueryError.Code, _ arguments: [QueryArgument] = []) -> ErrorCase {
        ErrorCase(marked, code, arguments)
    }

    static let syntax: [ErrorCase] = [
        e("‸", .syntax), e("   ‸", .syntax), e("age‸", .syntax), e("age ==‸", .syntax), e("‸== 5", .syntax),
        e("age == 5 AND‸", .syntax), e("age == 5 OR‸", .syntax), e("age == 5 &&‸", .syntax), e("(age == 5‸", .syntax),
        e("age == 5‸)", .syntax), e("‸) age == 1", .syntax), e("age == 5 AND ‸)", .syntax), e("age == 5 ‸age == 6", .syntax),
        e("age >‸> 5", .syntax), e("age == ‸= 5", .syntax), e("age ==[‸x] 5", .syntax), e("age ==[c ‸5", .syntax),
        e("name ==[‸cc] 'a'", .syntax), e("name ==[‸] 'a'", .syntax), e("name ==[‸l] 'a'", .syntax), e("name ==[‸n] 'a'", .syntax),
        e("name ==[‸cdx] 'a'", .syntax), e("name ==[c]‸", .syntax), e("name == ‸'abc", .syntax), e("name == ‸\"abc", .syntax),
        e(#"name == ‸'abc\'"#, .syntax), e(#"name == 'abc‸\"#, .syntax), e("age == 5 ‸& b == 1", .syntax),
        e("age == 5 ‸| b == 1", .syntax), e("age ‸+ 1 == 5", .syntax), e("age == 5 ‸* 2", .syntax), e("age == ‸- 5", .syntax),
        e("age ‸/ 2 == 1", .syntax), e("age == ‸%d", .syntax), e("age == ‸%", .syntax), e("age == ‸%i", .syntax),
        e("age == {1, ‸{2}}", .syntax), e("age IN {1, 2‸", .syntax), e("age IN {1 ‸2}", .syntax), e("age IN {1,‸}", .syntax),
        e("age IN {‸name}", .syntax), e("age IN {‸TRUEPREDICATE}", .syntax), e("SUBQUERY(dogs, $d, $d.age > 5) ‸> 0", .syntax),
        e("SUBQUERY(dogs, $d, $d.age > 5).‸@avg > 0", .syntax), e("SUBQUERY(dogs, $d, $d.age > 5).‸age > 0", .syntax),
        e("SUBQUERY ‸dogs > 0", .syntax), e("SUBQUERY(‸5, $d, $d.age > 5).@count > 0", .syntax),
        e("SUBQUERY(dogs ‸$d, $d.age > 5).@count > 0", .syntax), e("SUBQUERY(dogs, ‸d, $d.age > 5).@count > 0", .syntax),
        e("SUBQUERY(dogs, $d‸.x, $d.age > 5).@count > 0", .syntax), e("SUBQUERY(dogs, $d, $d.age > 5‸", .syntax),
        e("SUBQUERY(dogs, $d, ‸).@count > 0", .syntax), e("‸in == 5", .syntax), e("age == ‸AND", .syntax), e("ANY ‸== 5", .syntax),
        e("ALL‸", .syntax), e("NOT‸", .syntax), e("NOT NOT‸", .syntax), e("age == ‸#", .syntax), e("‸#5 == 1", .syntax),
        e("age == ‸$", .syntax), e("‸$1 == 2", .syntax), e("dogs.‸@ > 1", .syntax), e("owner. ‸== 1", .syntax),
        e("owner.‸.name == 1", .syntax), e("owner‸.5 == 1", .syntax), e("'abc'‸", .syntax),
        e("age == 1 ‸, b == 2", .syntax), e("age == 1 ‸; b == 2", .syntax), e("age == ‸`x`", .syntax), e("age LIKE‸", .syntax),
        e("age BETWEEN‸", .syntax), e("TRUEPREDICATE ‸== 1", .syntax), e("age == 5 ‸TRUEPREDICATE", .syntax),
        e("age ‸TRUE", .syntax), e("age == TRUE ‸FALSE", .syntax),
    ]

    static let literals: [ErrorCase] = [
        e("_id == ‸oid(123)", .invalidLiteral), e("_id == ‸oid(507f191e810c19729de860eg)", .invalidLiteral),
        e("_id == ‸oid(507f191e", .syntax), e("u == ‸uuid(nope)", .invalidLiteral), e(#"d == ‸B64"!!""#, .invalidLiteral),
        e("t == ‸T5:2000000000", .invalidLiteral), e("t == ‸T5:-1", .invalidLiteral), e("t == T5‸:", .syntax),
        e("age == ‸99999999999999999999", .invalidLiteral), e("age == ‸-9223372036854775809", .invalidLiteral),
        e("age == ‸9223372036854775808", .invalidLiteral), e("age == ‸0x", .invalidLiteral), e("age == ‸0xZZ", .invalidLiteral),
        e("age == ‸0b102", .invalidLiteral), e("age == ‸0o8", .invalidLiteral), e("age == ‸12abc", .invalidLiteral),
        e("age == ‸1.5x", .invalidLiteral), e("age == ‸1e", .invalidLiteral), e("age == ‸0x10000000000000000", .invalidLiteral),
        e(#"name == 'a‸\q'"#, .invalidLiteral), e(#"name == 'a‸\x4'"#, .invalidLiteral), e(#"name == 'a‸\u12'"#, .invalidLiteral),
        e(#"name == 'a‸\uD800'"#, .invalidLiteral), e(#"name == 'a‸\uD800\u0041'"#, .invalidLiteral),
        e(#"name == 'a‸\uDC00'"#, .invalidLiteral), e(#"name == 'a‸\u{110000}'"#, .invalidLiteral),
        e(#"name == 'a‸\u{}'"#, .invalidLiteral), e(#"name == 'a‸\u{1234567}'"#, .invalidLiteral),
    ]

    static let keyPaths: [ErrorCase] = [
        e("‸@count > 5", .invalidKeyPath), e("dogs.‸@count.age > 1", .invalidKeyPath), e("dogs.‸@foo > 1", .invalidKeyPath),
        e("dogs.@avg.age.‸@sum > 1", .invalidKeyPath), e("dogs.@count.‸@count > 1", .invalidKeyPath),
        e("SUBQUERY(‸dogs.@count, $d, $d.age > 5).@count > 0", .invalidKeyPath), e("name ‸MATCHES 'a.*'", .unsupportedOperator),
        e("name ‸matches 'a.*'", .unsupportedOperator),
    ]

    static let arguments: [ErrorCase] = [
        e("age == ‸%@", .argumentCount), e("age == %@ AND name == ‸%@", .argumentCount, [.value(.int(1))]),
        e("age == 5", .argumentCount, [.value(.int(1))]), e("age == %@", .argumentCount, [.value(.int(1)), .value(.int(2))]),
        e("‸%K == 5", .argumentCount), e("‸%K == 5", .invalidArgument, [.value(.int(3))]),
        e("‸%K == 5", .invalidArgument, [.keyPath("first name")]), e("‸%K == 5", .invalidArgument, [.keyPath("")]),
        e("‸%K == 5", .invalidArgument, [.keyPath("a..b")]), e("‸%K == 5", .invalidArgument, [.keyPath("a.")]),
        e("‸%K == 5", .invalidArgument, [.object(table: "Person", key: ObjectKey(1))]),
        e("age == ‸%@", .invalidArgument, [.keyPath("age")]), e("‸%K == 5", .invalidKeyPath, [.keyPath("@count")]),
        e("‸%K == 5", .invalidKeyPath, [.keyPath("dogs.@foo")]), e("age IN {1, ‸%@}", .syntax, [.values([.int(1)])]),
    ]

    @Test(arguments: syntax + literals + keyPaths + arguments)
    func rejects(_ c: ErrorCase) {
        c.check { (text, arguments) throws(QueryError) in _ = try QueryPredicate.parse(text, arguments: arguments) }
    }

    @Test func atLeastEightyInvalidInputs() {
        #expect((Self.syntax + Self.literals + Self.keyPaths + Self.arguments).count >= 80)
    }

    @Test func nestingIsBounded() {
        let depth = 101
        for (open, close) in [("(", ")"), ("NOT (", ")")] {
            let text = String(repeating: open, count: depth) + "a == 1" + String(repeating: close, count: depth)
            #expect(throws: QueryError.self) { try QueryPredicate.parse(text) }
            let ok = String(repeating: open, count: 50) + "a == 1" + String(repeating: close, count: 50)
            #expect(throws: Never.self) { try QueryPredicate.parse(ok) }
        }
        let nots = String(repeating: "NOT ", count: depth) + "a == 1"
        do {
            _ = try QueryPredicate.parse(nots)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .syntax)
            #expect(error.offset == 4 * 100)
        }
        let chain = (0..<10_000).map { "a == \($0)" }.joined(separator: " AND ")
        #expect(throws: Never.self) { try QueryPredicate.parse(chain) }
    }

    /// Text made of random pieces of the language never traps: it parses and binds, or throws.
    @Test func randomTextNeverTraps() {
        let pieces = [
            "age", "dogs", ".", "name", "@count", "@avg", "==", "<", "IN", "BETWEEN", "BEGINSWITH", "[c]", "[", "]", "{", "}", ",", "(",
            ")", "AND", "OR", "NOT", "!", "ANY", "ALL", "SUBQUERY(", "$d", "$d.age", "%@", "%K", "5", "-1.5e3", "0x", "'a\\", "\"x\"",
            "nil", "TRUE", "#in", " ", "toys", "@sum.age", "é", "\u{301}",
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<3000 {
            var text = ""
            for _ in 0..<Int(state >> 60) + 1 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                text += pieces[Int(state >> 33) % pieces.count] + (state & 1 == 0 ? " " : "")
            }
            let arguments: [QueryArgument] = [.value(.int(1)), .keyPath("name"), .values([.int(1), .int(2)])]
            for count in 0...arguments.count {
                if let error = catchError({ () throws(QueryError) in
                    _ = try Fixture.bind(text, Array(arguments.prefix(count)))
                }) {
                    #expect(error.text == text)
                    #expect(error.offset.map { (0...text.unicodeScalars.count).contains($0) } ?? true, "\(error)")
                }
            }
        }
        #expect(
            catchError({ () throws(QueryError) in _ = try QueryPredicate.parse(String(repeating: "{", count: 100_000)) })?.code == .syntax)
    }

    @Test func descriptionShowsACaret() {
        do {
            _ = try QueryPredicate.parse("age >> 5")
        } catch {
            #expect(
                error.description
                    == "QueryError.syntax: expected a key path or a value after '>', found '>' (at offset 5)\n  age >> 5\n       ^")
        }
        do {
            _ = try QueryPredicate.parse("a == 1 AND\n\té == ‸")
        } catch {
            #expect(error.description.hasSuffix("(at offset 17)\n   é == ‸\n        ^"))
        }
        let noText = QueryError(.typeMismatch, "nope", offset: 3)
        #expect(noText.description == "QueryError.typeMismatch: nope (at offset 3)")
        #expect(noText.inText("abcdef").description.hasSuffix("\n  abcdef\n     ^"))
        #expect(QueryError(.argumentCount, "x").description == "QueryError.argumentCount: x")
    }

    @Test func codesMatchInCatch() {
        do {
            _ = try QueryPredicate.parse("age ==")
        } catch QueryError.syntax {
            return
        } catch {
            Issue.record("unexpected \(error)")
        }
        Issue.record("no error")
    }
}

/// The error `body` throws, or nil.
func catchError(_ body: () throws(QueryError) -> Void) -> QueryError? {
    do {
        try body()
        return nil
    } catch {
        return error
    }
}

import Foundation
import RealmQuery
import RealmStorage
import Testing

/// Queries that parse but do not fit the ``Fixture`` schema: each expects a code at the offset
/// marked `‸`.
@Suite struct BindingErrorTests {
    static func e(_ marked: String, _ code: QueryError.Code, _ arguments: [QueryArgument] = [], table: String = "Person") -> ErrorCase {
        ErrorCase(marked, code, arguments, table: table)
    }

    static let names: [ErrorCase] = [
        e("‸nmae == 'x'", .unknownProperty), e("best.‸nmae == 'x'", .unknownProperty), e("dogs.toys.‸prize > 1", .unknownProperty),
        e("age.‸foo == 1", .invalidKeyPath), e("tags.‸length == 1", .invalidKeyPath), e("‸owners.name == 'x'", .unknownProperty),
        e("owner.‸owners.name == 'x'", .unknownProperty, table: "Dog"),
        e("SUBQUERY(dogs, $d, $d.‸nmae > 1).@count > 0", .unknownProperty),
    ]

    static let types: [ErrorCase] = [
        e("age == ‸'x'", .typeMismatch), e("age > ‸5.5", .typeMismatch), e("age == ‸%@", .typeMismatch, [.value(.double(5))]),
        e("age == ‸%@", .typeMismatch, [.value(.float(5))]), e("name == ‸5", .typeMismatch), e("active == ‸2", .typeMismatch),
        e("age == ‸nil", .typeMismatch), e("dogs.owner.name == ‸nil", .typeMismatch), e("tags == ‸nil", .typeMismatch),
        e("dogs == ‸nil", .typeMismatch),
        e("score == ‸TRUE", .typeMismatch), e("born > ‸5", .typeMismatch), e("born > ‸'2020-01-01'", .typeMismatch),
        e("oid == ‸'zz'", .typeMismatch), e("uid == ‸'nope'", .typeMismatch), e("avatar == ‸'abc'", .typeMismatch),
        e("balance == ‸%@", .typeMismatch, [.value(.timestamp(seconds: 0, nanoseconds: 0))]), e("age == ‸{1, 2}", .typeMismatch),
        e("age == ‸%@", .typeMismatch, [.values([.int(1)])]), e("age BETWEEN ‸{1}", .typeMismatch),
        e("age BETWEEN ‸{1, nil}", .typeMismatch),
        e("age BETWEEN ‸{1, 2, 3}", .typeMismatch), e("age BETWEEN ‸5", .typeMismatch), e("age BETWEEN ‸id", .typeMismatch),
        e("age IN ‸5", .typeMismatch), e("age IN ‸id", .typeMismatch), e("5 IN ‸age", .typeMismatch), e("age IN ‸{1, 'x'}", .typeMismatch),
        e("name == ‸age", .typeMismatch), e("best == ‸spouse", .typeMismatch),
        e("best == ‸%@", .typeMismatch, [.object(table: "Person", key: ObjectKey(1))]),
        e("best.owner == ‸best", .typeMismatch), e("‸dogs.@avg.name > 1", .typeMismatch), e("‸dogs.toys.@sum.bought > 1", .typeMismatch),
        e("‸tags.@max == 'a'", .typeMismatch), e("scores.@sum == ‸nil", .typeMismatch), e("dogs.@count == ‸1.5", .typeMismatch),
        e("dogs.@count == ‸nil", .typeMismatch), e("scores.@avg > ‸'x'", .typeMismatch),
        e("SUBQUERY(dogs, $d, $d.age > 1).@count > ‸1.5", .typeMismatch),
        e("dogs.@count > ‸name", .typeMismatch),
        e("SUBQUERY(dogs, $d, $d == ‸%@).@count > 0", .typeMismatch, [.object(table: "Toy", key: ObjectKey(1))]),
    ]

    static let operators: [ErrorCase] = [
        e("name ‸BETWEEN {'a', 'b'}", .unsupportedOperator), e("active ‸> TRUE", .unsupportedOperator),
        e("oid ‸< %@", .unsupportedOperator, [.value(.objectId(Array(repeating: 0, count: 12)))]),
        e("uid ‸>= %@", .unsupportedOperator, [.value(.uuid(UUID()))]), e("avatar ‸> %@", .unsupportedOperator, [.value(.binary([1]))]),
        e("best ‸> %@", .unsupportedOperator, [.object(table: "Dog", key: ObjectKey(1))]), e("age ‸BEGINSWITH 1", .unsupportedOperator),
        e("score ‸LIKE 1", .unsupportedOperator),
        e("born ‸CONTAINS %@", .unsupportedOperator, [.value(.timestamp(seconds: 0, nanoseconds: 0))]),
        e("age ‸==[c] 5", .unsupportedOperator), e("avatar ‸BEGINSWITH[c] %@", .unsupportedOperator, [.value(.binary([1]))]),
        e("name ‸LIKE[d] 'a'", .unsupportedOperator), e("name ‸BETWEEN {'a', 'b'}", .unsupportedOperator),
        e("active ‸BETWEEN {FALSE, TRUE}", .unsupportedOperator),
        e("‸ANY age > 5", .unsupportedOperator), e("‸ALL best.age > 5", .unsupportedOperator),
        e("‸NONE dogs.@count > 5", .unsupportedOperator),
        e("‸ANY SUBQUERY(dogs, $d, $d.age > 1).@count > 1", .unsupportedOperator), e("‸5 == 5", .unsupportedOperator),
        e("‸'a' IN {'a'}", .unsupportedOperator), e("5 ‸BEGINSWITH name", .unsupportedOperator),
        e("{1} ‸BETWEEN age", .unsupportedOperator),
        e("‸ANY 5 == scores", .unsupportedOperator), e("ANY dogs.age ‸== scores", .unsupportedOperator),
        e("scores ‸IN tags", .unsupportedOperator), e("name BEGINSWITH ‸tags", .unsupportedOperator),
        e("‸ALL name IN tags", .unsupportedOperator),
    ]

    static let paths: [ErrorCase] = [
        e("‸age.@count > 1", .invalidKeyPath), e("‸best.@count > 1", .invalidKeyPath), e("‸age.@avg > 1", .invalidKeyPath),
        e("‸dogs.@avg > 1", .invalidKeyPath), e("‸best.@avg.age > 1", .invalidKeyPath), e("‸dogs.@avg.toys.price > 1", .invalidKeyPath),
        e("‸scores.@avg.x > 1", .invalidKeyPath), e("SUBQUERY(‸best, $d, $d.age > 1).@count > 0", .invalidKeyPath),
        e("SUBQUERY(scores, $s, ‸x > 1).@count > 0", .unknownVariable), e("SUBQUERY(dogs, $d, ‸$x.age > 1).@count > 0", .unknownVariable),
        e("‸$d.age > 1", .unknownVariable),
        e("SUBQUERY(dogs, $d, SUBQUERY($d.toys, $t, ‸$d.age > 1).@count > 0).@count > 0", .unknownVariable),
        e("SUBQUERY(dogs, $d, SUBQUERY(toys, $t, ‸$d.price > 1).@count > 0).@count > 0", .unknownVariable),
    ]

    static let literals: [ErrorCase] = [
        e("balance > ‸1.2345678901234567890123456789012345678", .invalidLiteral), e("score > ‸1e400", .invalidLiteral),
        e("weight > ‸1e39", .invalidLiteral), e("balance > ‸1e-7000", .invalidLiteral),
        e("oid == ‸%@", .invalidArgument, [.value(.objectId([1, 2, 3]))]),
    ]

    @Test(arguments: names + types + operators + paths + literals)
    func rejects(_ c: ErrorCase) {
        c.check { (text, arguments) throws(QueryError) in _ = try Fixture.bind(text, arguments, table: c.table) }
    }

    /// Messages name each side by its expression and type (a link by its target table, a
    /// subquery's count as an int): the names are made only when a message needs them.
    @Test func messagesNameTheSides() {
        func message(_ text: String, _ arguments: [QueryArgument] = []) -> String {
            do {
                _ = try Fixture.bind(text, arguments)
                return ""
            } catch {
                return error.message
            }
        }
        #expect(message("age BEGINSWITH 'x'").contains("'age' (int)"))
        #expect(message("best > %@", [.object(table: "Person", key: ObjectKey(1))]).contains("'best' (link to Dog)"))
        #expect(message("SUBQUERY(dogs, $d, $d.age > 1).@count BEGINSWITH 'x'").contains("' (int)"))
        #expect(message("dogs.@count LIKE 'x'").contains("'dogs.@count' (int)"))
        #expect(message("age == 'x'").contains("'age' (int) cannot be compared with"))
    }

    @Test func linkingObjectsMustNameALink() {
        let bad = [
            LinkingObjectsProperty(table: "Dog", name: "owners", originTable: "Person", originColumn: "name"),
            LinkingObjectsProperty(table: "Dog", name: "owners", originTable: "Person", originColumn: "spouse"),
            LinkingObjectsProperty(table: "Dog", name: "owners", originTable: "Nobody", originColumn: "dogs"),
        ]
        for property in bad {
            do {
                _ = try BoundPredicate.compile(
                    "owners.@count > 0", table: Fixture.table("Dog"), catalog: Fixture.catalog, linkingObjects: [property])
                Issue.record("expected an error for \(property)")
            } catch {
                #expect(error.code == .unknownProperty && error.offset == 0)
            }
        }
    }
}

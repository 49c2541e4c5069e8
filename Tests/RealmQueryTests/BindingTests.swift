import Foundation
import RealmQuery
import RealmStorage
import Testing

/// Binding against the ``Fixture`` schema: key paths through links, lists and LinkingObjects,
/// normalization, constant conversion (Spec/QUERY.md §6–§8).
@Suite struct BindingTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var text: String
        var bound: String
        var arguments: [QueryArgument] = []
        var table = "Person"
        var testDescription: String { text }
    }

    static func c(_ text: String, _ bound: String? = nil, _ arguments: [QueryArgument] = [], table: String = "Person") -> Case {
        Case(text: text, bound: bound ?? text, arguments: arguments, table: table)
    }

    static let cases: [Case] = [
        // Scalars and conversion of constants to the property's type.
        c("age > 5"), c("score > 5", "score > 5.0"), c("weight > 5", "weight > 5.0"), c("score > 5.5"), c("weight > .5", "weight > 0.5"),
        c("score > 1e3", "score > 1000.0"), c("age == -9223372036854775808"), c("height == nil", "height == null"),
        c("nickname != nil", "nickname != null"), c("active == YES", "active == true"), c("active != FALSE", "active != false"),
        c("name == 'Ada'", #"name == "Ada""#), c("name ==[cd] 'ada'", #"name ==[cd] "ada""#), c("name LIKE[c] 'a*'", #"name LIKE[c] "a*""#),
        c("name CONTAINS nil", "name CONTAINS null"), c("name BEGINSWITH ''", #"name BEGINSWITH """#),
        c("oid == '0123456789abcdef01234567'", "oid == ObjectId(0123456789abcdef01234567)"),
        c("uid == 'E621E1F8-C36C-495A-93FC-0C247A3E6E5F'", "uid == E621E1F8-C36C-495A-93FC-0C247A3E6E5F"),
        c("score > %@", "score > 1.5", [.value(.float(1.5))]), c("weight < %@", "weight < 2.5", [.value(.double(2.5))]),
        c("score > %@", "score > 2.0", [.value(.int(2))]), c("born > %@", "born > @5.0", [.value(.timestamp(seconds: 5, nanoseconds: 0))]),
        c(
            "born BETWEEN %@", "born BETWEEN {@1.0, @2.0}",
            [.values([.timestamp(seconds: 1, nanoseconds: 0), .timestamp(seconds: 2, nanoseconds: 0)])]),
        c("avatar BEGINSWITH %@", "avatar BEGINSWITH <2 bytes>", [.value(.binary([1, 2]))]), c("avatar == nil", "avatar == null"),
        // Normalization: constants move right, IN with a list on the right becomes ANY ==.
        c("5 < age", "age > 5"), c("5 == age", "age == 5"), c("5 >= age", "age <= 5"), c("'x' IN tags", #"ANY tags == "x""#),
        c("%@ IN scores", "ANY scores == 3", [.value(.int(3))]), c("name IN tags", "ANY tags == name"),
        c("age > scores", "ANY scores < age"), c("name ==[c] tags", "ANY tags ==[c] name"), c("age IN {1, 2}"),
        c("score IN {1, 2.5}", "score IN {1.0, 2.5}"), c("age IN %@", "age IN {}", [.values([])]), c("age BETWEEN {1, 10}"),
        c("nickname IN {'a', nil}", #"nickname IN {"a", null}"#),
        // Lists: implicit ANY, explicit modifiers.
        c("tags == 'x'", #"ANY tags == "x""#), c("ALL scores > 3"), c("NONE scores > 3"), c("SOME scores > 3", "ANY scores > 3"),
        c("ANY ratings == nil", "ANY ratings == null"), c("ALL scores BETWEEN {1, 5}"),
        c("dogs.name BEGINSWITH[c] 'r'", #"ANY dogs.name BEGINSWITH[c] "r""#),
        c("NONE dogs.toys.name == 'ball'", #"NONE dogs.toys.name == "ball""#),
        c("ANY dogs.age > age"), c("dogs.owner == nil", "ANY dogs.owner == null"),
        // Links.
        c("best.name == 'Rex'", #"best.name == "Rex""#), c("best.owner.name == nil", "best.owner.name == null"),
        c("best == nil", "best == null"),
        c("best == %@", "best == →#3", [.object(table: "Dog", key: ObjectKey(3))]),
        c("dogs == %@", "ANY dogs == →#3", [.object(table: "Dog", key: ObjectKey(3))]),
        c("%@ IN dogs", "ANY dogs == →#4", [.object(table: "Dog", key: ObjectKey(4))]), c("spouse == spouse.spouse"),
        c("best IN %@", "best IN {→#1, →#2}", [.values([.link(ObjectKey(1)), .link(ObjectKey(2))])]), c("age > id"),
        c("best.owner == spouse"),
        // Collection operators.
        c("dogs.@count > 2"), c("dogs.@size > 2", "dogs.@count > 2"), c("scores.@count == 0"), c("tags.@count == 0"),
        c("dogs.@avg.age > 2.5", "dogs.age.@avg > 2.5"), c("dogs.age.@avg > 2", "dogs.age.@avg > 2.0"), c("scores.@sum > 10"),
        c("scores.@avg == nil", "scores.@avg == null"), c("ratings.@sum > 10", "ratings.@sum > 10.0"),
        c("dogs.@max.age == nil", "dogs.age.@max == null"),
        c("dogs.@min.weight < 3", "dogs.weight.@min < 3.0"),
        c("dogs.toys.@max.bought > %@", "dogs.toys.bought.@max > @9.0", [.value(.timestamp(seconds: 9, nanoseconds: 0))]),
        c("dogs.@count > age"), c("age < dogs.@count", "age < dogs.@count"), c("5 < dogs.@count", "dogs.@count > 5"),
        c("name.@count > 3", "name.@length > 3"), c("avatar.@size == 0", "avatar.@length == 0"),
        c("dogs.name.@count > 3", "ANY dogs.name.@length > 3"),
        c("dogs.toys.@count > 3"), c("dogs.@count == best.toys.@count"), c("scores.@max BETWEEN {1, 2}"),
        c("dogs.toys.@sum.price > 1", "dogs.toys.price.@sum > Decimal128(3476778912330022912:1)"),
        // Subqueries.
        c(
            "SUBQUERY(dogs, $d, $d.age > 5 AND $d.name BEGINSWITH 'R').@count > 1",
            #"SUBQUERY(dogs, $d, $d.age > 5 AND $d.name BEGINSWITH "R").@count > 1"#),
        c("SUBQUERY(scores, $s, $s > 5).@count == 0"),
        c("SUBQUERY(tags, $t, $t ==[c] 'x').@count > 0", #"SUBQUERY(tags, $t, $t ==[c] "x").@count > 0"#),
        c(
            "SUBQUERY(dogs, $d, SUBQUERY($d.toys, $t, $t.price > 5).@count > 0).@count > 0",
            "SUBQUERY(dogs, $d, SUBQUERY($d.toys, $t, $t.price > Decimal128(3476778912330022912:5)).@count > 0).@count > 0"),
        c(
            "SUBQUERY(dogs, $d, $d == %@).@count > 0", "SUBQUERY(dogs, $d, $d == →#2).@count > 0",
            [.object(table: "Dog", key: ObjectKey(2))]),
        c(
            "SUBQUERY(dogs, $d, $d.toys.@count > 1 AND ANY $d.toys.name == 'x').@count == dogs.@count",
            #"SUBQUERY(dogs, $d, $d.toys.@count > 1 AND ANY $d.toys.name == "x").@count == dogs.@count"#),
        c("SUBQUERY(dogs.toys, $t, $t.name == 'x').@count > 1", #"SUBQUERY(dogs.toys, $t, $t.name == "x").@count > 1"#),
        // Without the variable, a key path names a property of the collection's objects, as in
        // RealmSwift (its query builder resolves the predicate against the objects' class).
        c(
            "SUBQUERY(dogs, $d, age > 5 AND $d.name BEGINSWITH 'R').@count > 1",
            #"SUBQUERY(dogs, $d, $d.age > 5 AND $d.name BEGINSWITH "R").@count > 1"#),
        c(
            "SUBQUERY(dogs, $d, SUBQUERY(toys, $t, price > 5).@count > 0).@count > 0",
            "SUBQUERY(dogs, $d, SUBQUERY($d.toys, $t, $t.price > Decimal128(3476778912330022912:5)).@count > 0).@count > 0"),
        // LinkingObjects and other tables.
        c("owners.name == 'Ada'", #"ANY @links.Person.dogs.name == "Ada""#, table: "Dog"),
        c("owners.@count > 1", "@links.Person.dogs.@count > 1", table: "Dog"),
        c("owner.dogs.@count > 1", table: "Dog"),
        c("toys.price > 1.5", "ANY toys.price > Decimal128(3476215962376601600:15)", table: "Dog"),
        c("owner.age > %@", "owner.age > 3", [.value(.int(3))], table: "Dog"),
        // Logic.
        c("TRUEPREDICATE"), c("NOT (age > 5 OR name == 'x')", #"NOT (age > 5 OR name == "x")"#),
        c("(age > 1 OR age < 0) AND NOT active == TRUE", "(age > 1 OR age < 0) AND NOT active == true"),
    ]

    @Test(arguments: cases)
    func binds(_ c: Case) throws {
        let bound = try Fixture.bind(c.text, c.arguments, table: c.table)
        #expect(bound.description == c.bound)
    }

    @Test func boundKeyPathsNameTheirColumns() throws {
        guard case .comparison(let c) = try Fixture.bind("ANY dogs.owner.nickname == nil"),
            case .keyPath(let path) = c.left
        else { return #expect(Bool(false)) }
        #expect(c.modifier == .any)
        #expect(c.valueType == .string)
        #expect(path.isToMany && path.isNullable)
        let person = Fixture.table("Person")
        let dog = Fixture.table("Dog")
        #expect(
            path.steps == [
                .column(table: "Person", person.column("dogs")!), .column(table: "Dog", dog.column("owner")!),
                .column(table: "Person", person.column("nickname")!),
            ])
        #expect(path.steps.map(\.linkTarget) == ["Dog", "Person", nil])

        guard case .comparison(let n) = try Fixture.bind("best.owner.name == nil"), case .keyPath(let through) = n.left else {
            return #expect(Bool(false))
        }
        #expect(through.isNullable && !through.isToMany && n.modifier == nil)
        guard case .comparison(let l) = try Fixture.bind("best == nil"), case .keyPath(let link) = l.left else {
            return #expect(Bool(false))
        }
        #expect(l.valueType == .link && link.targetTable == "Dog")
    }

    @Test func aggregatesHaveResultTypes() throws {
        let expectations: [(String, ColumnType)] = [
            ("dogs.@count > 1", .int), ("scores.@avg > 1", .double), ("scores.@sum > 1", .int), ("ratings.@min > 1", .double),
            ("dogs.toys.@avg.price > 1", .decimal128), ("dogs.toys.@sum.price > 1", .decimal128), ("name.@count > 1", .int),
            ("SUBQUERY(dogs, $d, TRUEPREDICATE).@count > 1", .int), ("dogs.toys.@min.bought > %@", .timestamp),
        ]
        for (text, type) in expectations {
            guard
                case .comparison(let c) = try Fixture.bind(
                    text, [.value(.timestamp(seconds: 0, nanoseconds: 0))].filter { _ in text.contains("%@") })
            else { return #expect(Bool(false)) }
            #expect(c.valueType == type, "\(text)")
        }
        #expect(try Fixture.bind("weight == 1") != Fixture.bind("weight == 1.5"))
        guard case .comparison(let c) = try Fixture.bind("weight > 1") else { return #expect(Bool(false)) }
        #expect(c.right == .constant(.float(1)))
    }

    @Test func decimalLiteralsAreExact() throws {
        func constant(_ text: String) throws -> StorageValue? {
            guard case .comparison(let c) = try Fixture.bind("balance == \(text)"), case .constant(let v) = c.right else { return nil }
            return v
        }
        let e0: UInt64 = 6176 << 49
        #expect(try constant("1") == .decimal128(low: 1, high: e0))
        #expect(try constant("-1") == .decimal128(low: 1, high: e0 | 1 << 63))
        #expect(try constant("0") == .decimal128(low: 0, high: e0))
        #expect(try constant("1.10") == .decimal128(low: 110, high: 6174 << 49))
        #expect(try constant("0.001") == .decimal128(low: 1, high: 6173 << 49))
        #expect(try constant("2.5e3") == .decimal128(low: 25, high: 6178 << 49))
        #expect(try constant("-9223372036854775808") == .decimal128(low: 1 << 63, high: e0 | 1 << 63))
        let big = "9999999999999999999999999999999999"  // 34 digits: the largest coefficient
        let coefficient = UInt128(big)!
        #expect(
            try constant(big + ".0e0") == .decimal128(low: UInt64(truncatingIfNeeded: coefficient), high: e0 | UInt64(coefficient >> 64)))
        #expect(
            try constant(big + "e-3")
                == .decimal128(low: UInt64(truncatingIfNeeded: coefficient), high: 6173 << 49 | UInt64(coefficient >> 64)))
        // More than 34 digits are fine while the extra ones are trailing zeros: 10^40 is 10^33 × 10^7.
        let e33 = UInt128("1" + String(repeating: "0", count: 33))!
        #expect(
            try constant("1" + String(repeating: "0", count: 40) + ".0")
                == .decimal128(low: UInt64(truncatingIfNeeded: e33), high: UInt64(6176 + 7) << 49 | UInt64(e33 >> 64)))
        #expect(try constant("1e6111") == .decimal128(low: 1, high: UInt64(6176 + 6111) << 49))
        #expect(try constant("1e6112") == .decimal128(low: 10, high: UInt64(6176 + 6111) << 49))
        #expect(try constant("1e-6176") == .decimal128(low: 1, high: 0))
        #expect(try constant("0e-9000") == .decimal128(low: 0, high: 0))
        let viaDouble = try Fixture.bind("balance == %@", [.value(.double(0.1))])
        #expect(
            viaDouble
                == .comparison(
                    BoundComparison(
                        modifier: nil,
                        left: .keyPath(
                            BoundKeyPath(
                                steps: [.column(table: "Person", Fixture.table("Person").column("balance")!)], valueType: .decimal128,
                                isNullable: false)),
                        op: .equal, options: [], right: .constant(.decimal128(low: 1, high: 6175 << 49)), valueType: .decimal128)))
        guard case .comparison(let nan) = try Fixture.bind("balance == %@", [.value(.double(.nan))]) else { return #expect(Bool(false)) }
        #expect(nan.right == .constant(.decimal128(low: 0, high: 0x7C00_0000_0000_0000)))
    }

    @Test func compileAttachesTheText() {
        do {
            _ = try Fixture.bind("age == 'x'")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .typeMismatch)
            #expect(error.text == "age == 'x'")
            #expect(error.description.hasSuffix("\n  age == 'x'\n         ^"))
        }
        do {
            _ = try QueryPredicate.parse("nmae == 1").bind(to: Fixture.table("Person"), in: Fixture.catalog)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .unknownProperty && error.text == nil && error.offset == 0)
        }
    }

    @Test func treesBuiltInCodeBind() throws {
        let p: QueryPredicate = .and([
            .comparison(QueryComparison(.keyPath("dogs", "age"), .greater, .constant(.integer(1)), modifier: .all)),
            .or([]), .and([]),
        ])
        let bound = try p.bind(to: Fixture.table("Person"), in: Fixture.catalog)
        #expect(bound.description == "ALL dogs.age > 1 AND FALSEPREDICATE AND TRUEPREDICATE")
        guard case .and(let terms) = bound else { return #expect(Bool(false)) }
        #expect(terms[1] == .or([]) && terms[2] == .and([]))
    }
}

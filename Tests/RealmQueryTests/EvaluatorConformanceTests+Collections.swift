import Foundation
import RealmQuery
import RealmStorage
import Testing

/// Links, collections (lists, sets, maps), backlinks, aggregates, subqueries, mixed values,
/// indexes and logic (Spec/QUERY.md §7.1, §7.6–§7.10).
extension EvaluatorConformanceTests {
    static let links: [QueryCase] = [
        q("link == nil", [2, 5]), q("link != nil", [0, 1, 3, 4, 6, 7]), q("link == %@", [0, 3], [tag(0)]),
        q("link != %@", [1, 2, 4, 5, 6, 7], [tag(0)]), q("link IN %@", [1, 4, 7], [.values([.link(ObjectKey(1)), .link(ObjectKey(2))])]),
        q("link.name == 'red'", [0, 3]), q("link.name ==[c] 'red'", [0, 3, 6]), q("link.name == nil", [2, 5]),
        q("link.weight > 2", [4, 6]), q("link.weight <= 2", [0, 1, 3, 7]), q("NOT link.weight > 2", [0, 1, 2, 3, 5, 7]),
        q("link.score == nil", [0, 2, 3, 5, 6]), q("link.score > 2", [4]), q("link.owner == %@", [1, 6, 7], [item(1)]),
        q("link.owner.i < 0", [0, 1, 3, 6, 7]), q("link.owner == nil", [2, 4, 5]), q("link.owner.s == 'alpha'", [0, 3]),
        q("parent == nil", [0, 6]), q("parent.i == -20", [1, 2]), q("parent.parent.i == -20", [3, 4, 5]),
        q("parent.parent == nil", [0, 1, 2, 6, 7]), q("parent == %@", [3, 4], [item(1)]), q("link == link", all8),
        q("parent.link == link", [5]), q("link == %@", [0, 3], [arg(.link(ObjectKey(0)))]),
        q("parent != nil AND parent.b == false", [1, 2, 5, 7]),
        q("owner.i == -10", [1, 3], table: "Tag"), q("owner.link.name == 'green'", [1, 3], table: "Tag"),
        q("owner == nil", [2], table: "Tag"),
    ]

    static let lists: [QueryCase] = [
        q("links.@count == 0", [0, 6]), q("links.@count > 1", [2, 3, 5]), q("links.@size == 1", [1, 4, 7]),
        q("ANY links.name == 'red'", [1, 2, 7]), q("links.name == 'blue'", [3, 5]), q("ALL links.name == 'blue'", [0, 3, 6]),
        q("NONE links.name == 'red'", [0, 3, 4, 5, 6]), q("ANY links.weight > 2", [3, 4, 5]), q("ALL links.weight > 2", [0, 3, 4, 6]),
        q("NONE links.weight > 2", [0, 1, 2, 6, 7]), q("links == %@", [2, 5], [tag(1)]), q("%@ IN links", [3, 5], [tag(2)]),
        q("ALL links != %@", [0, 3, 4, 5, 6], [tag(0)]), q("ANY links.name BEGINSWITH[c] 'r'", [1, 2, 4, 5, 7]),
        q("links.score == nil", [1, 2, 4, 5, 7]), q("links.@count == ints.@count", [0, 1, 2, 3, 4, 6]),
        q("ints == 1", [1, 2]), q("ANY ints > 4", [4, 5, 7]), q("ALL ints > 0", [0, 1, 2, 3, 4, 6, 7]),
        q("NONE ints > 4", [0, 1, 2, 3, 6]),
        q("ALL ints == 3", [0, 3, 6]), q("ints.@count == 2", [2, 3, 5]), q("3 IN ints", [3]), q("ANY ints == oi", [1, 2]),
        q("ANY ints BETWEEN {2, 4}", [2, 3, 7]), q("ints IN {5, 6}", [4, 7]), q("ANY ints < i", [3, 4, 5, 7]),
        q("ALL ints < i", [0, 3, 4, 5, 6, 7]), q("oi IN ints", [1, 2]), q("NOT ANY ints > 4", [0, 1, 2, 3, 6]),
        q("ANY oints == nil", [1, 2, 5]), q("oints.@count == 2", [2, 5]), q("NONE oints == nil", [0, 3, 4, 6, 7]),
        q("ALL oints != nil", [0, 3, 4, 6, 7]), q("ANY oints > 1", [3, 6, 7]), q("ANY oints != 2", [1, 2, 5, 6, 7]),
        q("ANY doubles > 2", [2, 6]), q("ALL doubles >= 1", [0, 1, 5, 6, 7]), q("ANY doubles != 1.5", [2, 3, 4, 6, 7]),
        q("NONE doubles == %@", all8, [arg(.double(.nan))]), q("doubles == 0.5", [2]),
        q("strings == 'a'", [1, 2]), q("ANY strings ==[c] 'b'", [2, 3]), q("ANY strings BEGINSWITH 'a'", [1, 2, 4]),
        q("ALL strings BEGINSWITH 'a'", [0, 1, 4, 6]), q("NONE strings == 'a'", [0, 3, 4, 5, 6, 7]), q("strings.@count == 0", [0, 6]),
        q("SUBQUERY(strings, $s, $s.@count > 1).@count > 0", [4, 7]), q("SUBQUERY(strings, $s, $s.@count == 0).@count == 1", [5]),
        q("ANY strings ==[d] 'e'", [7]),
        q("ANY strings LIKE '?'", [1, 2, 3, 5, 7]), q("'x' IN strings", [5]), q("ANY strings IN {'b', 'abc'}", [2, 4]),
        q("ANY strings CONTAINS ''", []), q("strings.@count < 2", [0, 1, 3, 4, 6, 7]),
    ]

    static let setsAndMaps: [QueryCase] = [
        q("intSet == 2", [2, 7]), q("ANY intSet > 4", [4, 6]), q("ALL intSet > 4", [0, 4, 5, 6]), q("NONE intSet > 4", [0, 1, 2, 3, 5, 7]),
        q("intSet.@count == 2", [2, 4, 7]), q("intSet.@sum == 11", [4]), q("intSet.@max == 7", [6]), q("intSet.@avg == 3", [3, 7]),
        q("1 IN intSet", [1, 2]), q("intSet.@min == nil", [0, 5]), q("strSet == 'a'", [1, 6]), q("strSet ==[c] 'a'", [1, 3, 6]),
        q("strSet.@count == 0", [0, 4]), q("ALL strSet != 'b'", [0, 1, 3, 4, 5, 7]), q("ANY strSet ==[cd] 'E'", [7]),
        q("intMap == 1", [1, 5]), q("ANY intMap > 2", [2, 3]), q("ALL intMap > 0", [0, 1, 2, 3, 4, 5]),
        q("NONE intMap == 1", [0, 2, 3, 4, 6, 7]),
        q("intMap.@count == 2", [2, 5]), q("intMap.@count == 0", [0, 4]), q("intMap.@sum == 5", [2]), q("intMap.@sum == 2", [5]),
        q("intMap.@min < 0", [6]), q("intMap.@max == nil", [0, 4]), q("intMap.@avg == 1", [1, 5]), q("10 IN intMap", [3]),
        q("SUBQUERY(intMap, $v, $v >= 1).@count == 2", [2, 5]), q("strMap == 'v'", [1]), q("strMap ==[c] 'v'", [1, 5]),
        q("ANY strMap == nil", [2, 6]), q("strMap.@count == 2", [3, 6]), q("ALL strMap != nil", [0, 1, 3, 4, 5, 7]),
        q("ANY strMap BEGINSWITH 'x'", [3]), q("SUBQUERY(strMap, $v, $v.@count == 0).@count > 0", [7]),
        q("linkMap == %@", [1, 7], [tag(0)]),
        q("ANY linkMap == nil", [4]), q("linkMap.name == 'blue'", [2]), q("linkMap.@count == 2", [2, 7]),
        q("linkMap.@count == 1", [1, 4, 5]),
        q("ALL linkMap.weight > 1", [0, 2, 3, 4, 5, 6]), q("linkMap.@sum.weight == 2", [7]),
        q("SUBQUERY(linkMap, $t, $t.weight > 1).@count == 2", [2]), q("SUBQUERY(linkMap, $t, weight > 1).@count == 2", [2]),
    ]

    static let aggregates: [QueryCase] = [
        q("links.@min.weight == 1", [1, 2, 7]), q("links.@max.weight == 3", [3]), q("links.@sum.weight > 4", [3, 5]),
        q("links.@sum.weight == 0", [0, 6]), q("links.@avg.weight == 3", [3, 5]), q("links.@avg.weight == nil", [0, 6]),
        // An average of ints (a double) against an int property or constant, both ways round
        // (Realm Core compares numbers of different types; Spec/QUERY.md §6 step 6).
        q("links.@avg.weight < i", [3, 4, 5, 7]), q("i > links.@avg.weight", [3, 4, 5, 7]), q("links.@avg.weight == oi", [0, 1, 4, 6]),
        q("links.@avg.weight < 3", [1, 2, 7]), q("3 > links.@avg.weight", [1, 2, 7]), q("i == d", [2]), q("i < d", [0, 1]),
        q("links.@max.weight == nil", [0, 6]), q("links.@min.score < 2", [2, 5]), q("links.weight.@sum == 9", [5]),
        q("ints.@sum == 6", [3]), q("ints.@sum == 0", [0, 6]), q("ints.@avg == 3", [3]), q("ints.@avg > 4", [4, 5]),
        q("ints.@min < 0", [5]), q("ints.@max >= 6", [5, 7]), q("ints.@max == nil", [0, 6]), q("ints.@min == ints.@max", [0, 1, 3, 4, 6]),
        q("ints.@sum > i", [0, 1, 2]), q("ints.@count == oi", [1, 2]), q("ints.@avg == 4.5", [5]),
        q("ints.@sum BETWEEN {5, 9}", [3, 4, 5]),
        q("oints.@sum == 0", [0, 1, 4, 5]), q("oints.@max == nil", [0, 1, 4, 5]), q("oints.@avg == 1", [2]), q("oints.@min == 3", [6]),
        q("doubles.@sum == 3", [2, 6, 7]), q("doubles.@avg == 1.5", [1, 2, 7]), q("doubles.@max == nil", [0, 5]),
        q("doubles.@min < 0", [4]), q("doubles.@sum > 100", []), q("links.@max.weight >= ints.@max", [0, 1, 2, 3, 6]),
        q("SUBQUERY(links, $t, $t.owner != nil).@count == links.@count", [0, 1, 2, 4, 6, 7]),
        q("SUBQUERY(links, $t, owner != nil).@count == links.@count", [0, 1, 2, 4, 6, 7]),
    ]

    static let subqueries: [QueryCase] = [
        q("SUBQUERY(links, $t, $t.weight > 1).@count == 2", [3]), q("SUBQUERY(links, $t, $t.weight > 1).@count > 0", [2, 3, 4, 5]),
        q("SUBQUERY(links, $t, $t.name BEGINSWITH[c] 'r' AND $t.weight > 1).@count == 1", [4, 5]),
        q("SUBQUERY(ints, $x, $x > 1).@count == 2", [3]), q("SUBQUERY(ints, $x, $x > 1 AND $x < 5).@count == ints.@count", [0, 3, 6]),
        q("SUBQUERY(links, $t, SUBQUERY($t.items, $x, $x.i > 25).@count > 0).@count == 1", [1, 4, 7]),
        q("SUBQUERY(links, $t, $t == %@).@count > 0", [3, 5], [tag(2)]), q("SUBQUERY(links, $t, $t.owner == nil).@count > 0", [3, 5]),
        q("SUBQUERY(children, $c, $c.b == true).@count == 1", [0, 1, 2, 6]),
        q("SUBQUERY(strings, $s, $s BEGINSWITH 'a').@count == 1", [1, 2, 4]),
        q("SUBQUERY(oints, $x, $x == nil).@count == 2", [5]), q("SUBQUERY(links, $t, TRUEPREDICATE).@count == links.@count", all8),
        q("SUBQUERY(links, $t, NOT $t.weight > 1).@count >= 1", [1, 2, 7]),
        q("SUBQUERY(children.links, $t, $t.weight == 3).@count == 2", [1]),
    ]

    static let backlinks: [QueryCase] = [
        q("items.@count == 2", [1, 3], table: "Tag"), q("items.@count == 3", [0, 2], table: "Tag"),
        q("ANY items.i > 25", [0, 1, 2, 3], table: "Tag"), q("ANY items.i < 0", [0], table: "Tag"),
        q("ALL items.i >= 0", [1, 2, 3], table: "Tag"), q("items.@sum.i == 50", [2, 3], table: "Tag"),
        q("items.@max.i == 50", [0], table: "Tag"), q("ANY items.s == 'beta'", [0, 1], table: "Tag"),
        q("SUBQUERY(items, $x, $x.i > 5).@count == 2", [3], table: "Tag"), q("%@ IN items", [0, 1], [item(2)], table: "Tag"),
        q("children.@count == 2", [0, 1]), q("children.@count == 0", [3, 4, 5, 7]), q("ANY children.i > 15", [1, 2, 6]),
        q("children.children.@count == 3", [0]), q("ANY children.children.i == 30", [0]), q("ANY children.link.name == 'red'", [1]),
        q("NONE children.b == false", [2, 3, 4, 5, 6, 7]), q("children.@avg.i == 15", [1]),
    ]

    static let mixed: [QueryCase] = [
        q("m == nil", [0]), q("m != nil", [1, 2, 3, 4, 5, 6, 7]), q("m == 1", [1, 2]), q("m == 1.0", [1, 2]), q("m == '1'", [3]),
        q("m == true", [4]), q("m > 1", [5]), q("m >= 1", [1, 2, 5]), q("m < 3", [1, 2, 5]), q("m BETWEEN {1, 2.5}", [1, 2, 5]),
        q("m == 2.5", [5]), q("m == %@", [6], [arg(EvaluationFixture.ts(100))]), q("m > %@", [6], [arg(EvaluationFixture.ts(0))]),
        q("m == %@", [7], [tag(0)]), q("m == %@", [], [tag(1)]), q("m IN {1, '1', nil}", [0, 1, 2, 3]), q("m BEGINSWITH '1'", [3]),
        q("m ==[c] '1'", [3]), q("m CONTAINS 'x'", []), q("m != 1", [0, 3, 4, 5, 6, 7]),
        q("m == %@", [1, 2], [arg(EvaluationFixture.dec("1"))]),
        q("m == m", all8), q("m LIKE '?'", [3]), q("m < %@", [1, 2], [arg(.float(2))]),
        q("mixedList == 1", [1]), q("ANY mixedList > 2", [2, 4]), q("ANY mixedList == nil", [3]), q("mixedList.@count == 2", [2, 4]),
        q("ANY mixedList BEGINSWITH 'a'", [2]), q("mixedList == %@", [7], [tag(1)]), q("ALL mixedList == 'x'", [0, 5, 6]),
    ]

    static let indexesAndLogic: [QueryCase] = [
        q("code == 'c1'", [1, 5]), q("code IN {'c0', 'c3'}", [0, 3, 4, 7]), q("code == 'c1' AND i > 0", [5]), q("id == 300", [3]),
        q("id IN {100, 700, 800}", [1, 7]), q("id == 300 OR i == 50", [3, 7]), q("code ==[c] 'C2'", [2, 6]),
        q("code != 'c0'", [1, 2, 3, 5, 6, 7]),
        q("id == 300 AND code == 'c0'", []), q("i > 0 AND code == 'c2'", [6]), q("code == %@", [3, 7], [arg(.string("c3"))]),
        q("late == nil", all8), q("late > 0", []), q("late != 5", all8), q("late == nil AND i > 25", [5, 6, 7]),
        q("TRUEPREDICATE", all8), q("FALSEPREDICATE", []), q("NOT TRUEPREDICATE", []), q("i > 0 OR FALSEPREDICATE", [3, 4, 5, 6, 7]),
        q("(i > 0 OR b == true) AND NOT s BEGINSWITH 'a'", [1, 3, 4, 5, 6, 7]), q("NOT (i > 0 AND b == true)", [0, 1, 2, 4, 6]),
        q("i < 0 OR i > 40 OR s == 'beta'", [0, 1, 2, 7]), q("NOT NOT i == 0", [2]),
        q("%K > %@", [5, 6, 7], [.keyPath("i"), arg(.int(25))]),
        q("%K BEGINSWITH %@", [2, 7], [arg(.string("s")), arg(.string("be"))]), q("i > 0 && b == true || oi == nil", [0, 3, 5, 6, 7]),
        q("!(oi == nil) AND ob != nil", [1, 2, 4, 5, 7]), q("ANY links.weight > 2 AND i < 25", [3, 4]),
        q("(d > 0 OR od > 0) AND NOT (ints.@count == 0)", [1, 3, 4, 5, 7]), q("TRUEPREDICATE AND i == 0", [2]),
    ]

    @Test(arguments: links + lists + setsAndMaps)
    func linksAndCollections(_ c: QueryCase) throws { try c.check() }

    @Test(arguments: aggregates + subqueries + backlinks)
    func aggregatesSubqueriesBacklinks(_ c: QueryCase) throws { try c.check() }

    @Test(arguments: mixed + indexesAndLogic)
    func mixedIndexesLogic(_ c: QueryCase) throws { try c.check() }

    @Test static func atLeastFourHundredCases() {
        let scalars = ints + bools + floats + doubles + strings + binaries + timestamps + identifiers + decimals
        let rest = links + lists + setsAndMaps + aggregates + subqueries + backlinks + mixed + indexesAndLogic
        #expect(scalars.count + rest.count >= 400, "\(scalars.count + rest.count) cases")
    }
}

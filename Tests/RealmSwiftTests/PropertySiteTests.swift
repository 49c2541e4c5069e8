import Foundation
import RealmTestSupport
import Testing

@testable import RealmSwift

/// Accessors find their property's index from where the property is declared, without a key
/// path; wrappers made away from their declaration fall back to `Mirror`. Either way every read
/// and write reaches its own property.
@Suite struct PropertySiteTests {
    func realm() throws -> (Realm, TempDir) {
        try makeRealm(types: [SiteDerived.self, SiteInitialized.self])
    }

    func values(_ o: SiteDerived) -> [Int] { [o.shared, o.base, o.echo, o.last] }

    /// Two properties declared at the same line and column of two files are told apart by the
    /// file; every property of the class hierarchy resolves to its own index.
    @Test func sameLineAndColumnInTwoFiles() throws {
        let info = ClassInfo.of(SiteDerived.self)
        let wrappers = ClassInfo.wrappers(of: SiteDerived())
        #expect(wrappers.map(\.0) == ["_shared", "_base", "_echo", "_last"])
        let shared = wrappers[0].1.site
        let echo = wrappers[2].1.site
        #expect(shared.line == echo.line && shared.column == echo.column && shared.file != echo.file)
        for (i, w) in wrappers.enumerated() { #expect(info.index(declaredAt: w.1.site) == i) }

        let (realm, _) = try realm()
        let o = SiteDerived()
        #expect(values(o) == [1, 2, 3, 4])
        o.echo = 30
        o.shared = 10
        #expect(values(o) == [10, 2, 30, 4])
        try realm.write { realm.add(o) }
        #expect(values(o) == [10, 2, 30, 4])
        try realm.write { o.last = 40 }
        let read = try #require(realm.objects(SiteDerived.self).first)
        #expect(values(read) == [10, 2, 30, 40])
    }

    /// Wrappers the compiler makes again (assignments before `super.init()`) carry their
    /// declaration's place; one made by hand elsewhere is found by marking it.
    @Test func wrappersMadeInInitializers() throws {
        let (realm, _) = try realm()
        let a = SiteInitialized(first: 1, second: 2)
        #expect(a.first == 1 && a.second == 2 && a.third == "")
        let b = SiteInitialized(third: "by hand")
        let info = ClassInfo.of(SiteInitialized.self)
        #expect(ClassInfo.wrappers(of: a).map { info.index(declaredAt: $0.1.site) } == [0, 1, 2])
        #expect(ClassInfo.wrappers(of: b).map { info.index(declaredAt: $0.1.site) } == [0, 1, -1])
        #expect(b.first == 0 && b.second == 0 && b.third == "by hand")
        b.third += "!"
        b.second = 5
        #expect(b.first == 0 && b.second == 5 && b.third == "by hand!")
        let unread = SiteInitialized(third: "never read before add")
        try realm.write { realm.add([a, b, unread]) }
        #expect(b.first == 0 && b.second == 5 && b.third == "by hand!")
        try realm.write {
            b.third = "managed"
            a.first = 7
        }
        let all = realm.objects(SiteInitialized.self).map { "\($0.first) \($0.second) \($0.third)" }
        #expect(all == ["7 2 ", "0 5 managed", "0 0 never read before add"])
    }

    /// Iteration moves one accessor from object to object: the index it keeps per property stays
    /// right for every object, in a class with a superclass too.
    @Test func reusedAccessorsKeepTheirIndexes() throws {
        let (realm, _) = try realm()
        try realm.write {
            for i in 0..<500 {
                let o = SiteDerived()
                (o.shared, o.base, o.echo, o.last) = (i, i * 2, i * 3, i * 4)
                realm.add(o)
            }
        }
        var n = 0
        for o in realm.objects(SiteDerived.self) {
            #expect(values(o) == [1, 2, 3, 4].map { $0 * o.shared })
            n += 1
        }
        #expect(n == 500)
        #expect(realm.objects(SiteDerived.self).where { $0.echo == 30 }.first?.last == 40)
    }
}

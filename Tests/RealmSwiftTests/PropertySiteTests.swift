import Foundation
import RealmTestSupport
import Synchronization
import Testing

@testable import RealmSwift

/// Accessors find their property's index from where the property is declared, without a key
/// path; wrappers made away from their declaration fall back to `Mirror`. Either way every read
/// and write reaches its own property.
@Suite struct PropertySiteTests {
    func realm() throws -> (Realm, TempDir) {
        try makeRealm(types: [SiteDerived.self, SiteInitialized.self, SiteHelped.self])
    }

    func values(_ o: SiteDerived) -> [Int] { [o.shared, o.base, o.echo, o.last] }

    /// Adds `count` `SiteDerived` objects whose properties are i, 2i, 3i and 4i (and, with
    /// `initialized`, as many `SiteInitialized` with a hand-made `third` of "t\(i)").
    func seed(_ realm: Realm, _ count: Int, initialized: Bool = false) throws {
        try realm.write {
            for i in 0..<count {
                let o = SiteDerived()
                (o.shared, o.base, o.echo, o.last) = (i, i * 2, i * 3, i * 4)
                realm.add(o)
                if initialized { realm.add(SiteInitialized(third: "t\(i)")) }
            }
        }
    }

    /// Two properties declared at the same line and column of two files are told apart by the
    /// file; every property of the class hierarchy resolves to its own index.
    @Test func sameLineAndColumnInTwoFiles() throws {
        let info = ClassInfo.of(SiteDerived.self)
        let wrappers = ClassInfo.wrappers(of: SiteDerived())
        #expect(wrappers.map(\.0) == ["_shared", "_base", "_echo", "_last"])
        let shared = wrappers[0].1.site
        let echo = wrappers[2].1.site
        #expect(shared.line == echo.line && shared.column == echo.column && shared.file != echo.file)
        for (i, w) in wrappers.enumerated() { #expect(info.index(declaredAt: w.1.site, type: ObjectIdentifier(w.1.valueType)) == i) }

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
        #expect(ClassInfo.wrappers(of: a).map { info.index(declaredAt: $0.1.site, type: ObjectIdentifier($0.1.valueType)) } == [0, 1, 2])
        #expect(ClassInfo.wrappers(of: b).map { info.index(declaredAt: $0.1.site, type: ObjectIdentifier($0.1.valueType)) } == [0, 1, -1])
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
        try seed(realm, 500)
        var n = 0
        for o in realm.objects(SiteDerived.self) {
            #expect(values(o) == [1, 2, 3, 4].map { $0 * o.shared })
            n += 1
        }
        #expect(n == 500)
        #expect(realm.objects(SiteDerived.self).where { $0.echo == 30 }.first?.last == 40)
    }

    /// A shared helper makes wrappers for properties of two types at one place: the class's table
    /// knows that place for the property the prototype made there, and a wrapper of the other
    /// type made there is not taken for it.
    @Test func wrappersMadeByAHelper() throws {
        let (realm, _) = try realm()
        let a = SiteHelped()
        let b = SiteHelped(text: "helped")
        #expect(a.number == 5 && a.text == "")
        #expect(b.number == 0 && b.text == "helped")
        b.text += "!"
        b.number = 9
        try realm.write { realm.add([a, b]) }
        let all = realm.objects(SiteHelped.self).map { "\($0.number) \($0.text)" }
        #expect(all == ["5 ", "9 helped!"])
    }

    /// Frozen objects read from many threads at once, each property's first read included (a
    /// frozen accessor keeps no index, and marking a wrapper is serialized).
    @Test func frozenObjectsReadFromManyThreads() throws {
        let (realm, _) = try realm()
        try seed(realm, 50, initialized: true)
        let frozen = realm.freeze()
        nonisolated(unsafe) let derived = Array(frozen.objects(SiteDerived.self))
        nonisolated(unsafe) let initialized = Array(frozen.objects(SiteInitialized.self))
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            for round in 0..<20 {
                for k in 0..<50 {
                    let i = (k + t * 7 + round) % 50
                    let o = derived[i]
                    let ok = [o.last, o.echo, o.base].map { $0 / max(o.shared, 1) } == (o.shared == 0 ? [0, 0, 0] : [4, 3, 2])
                    let third = initialized[i].third
                    if !ok || third != "t\(i)" { failures.withLock { $0 += 1 } }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
    }
}

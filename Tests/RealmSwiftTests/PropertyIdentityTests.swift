import Foundation
import RealmStorage
import RealmTestSupport
import Testing

@testable import RealmSwift

/// Accessors find their property's index from the storage key path of its wrapper, wherever the
/// wrapper was made (by the declaration, by hand, by a helper, copied from another property):
/// every read and write reaches its own property.
@Suite struct PropertyIdentityTests {
    func realm() throws -> (Realm, TempDir) {
        try makeRealm(types: [SiteDerived.self, SiteInitialized.self, SiteHelped.self, SiteCopied.self])
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

    /// Every property of a class hierarchy resolves to its own index, by its storage key path.
    @Test func everyPropertyOfAHierarchy() throws {
        #expect(ClassInfo.wrappers(of: SiteDerived()).map(\.0) == ["_shared", "_base", "_echo", "_last"])
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

    /// Wrappers the compiler makes again (assignments before `super.init()`) and one made by hand
    /// in an initializer reach their own properties.
    @Test func wrappersMadeInInitializers() throws {
        let (realm, _) = try realm()
        let a = SiteInitialized(first: 1, second: 2)
        #expect(a.first == 1 && a.second == 2 && a.third == "")
        let b = SiteInitialized(third: "by hand")
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

    /// Iteration gives each object its own accessor, in a class with a superclass too: an object
    /// kept after the loop moved on is still the same object, with its own values.
    @Test func iterationGivesEachObjectItsOwnAccessor() throws {
        let (realm, _) = try realm()
        try seed(realm, 500)
        var n = 0
        var kept: [SiteDerived] = []
        weak var weakly: SiteDerived?
        for o in realm.objects(SiteDerived.self) {
            #expect(values(o) == [1, 2, 3, 4].map { $0 * o.shared })
            if o.shared % 100 == 7 { kept.append(o) }
            if o.shared == 3 { weakly = o }
            n += 1
        }
        #expect(n == 500)
        #expect(kept.map(\.shared) == [7, 107, 207, 307, 407])
        #expect(kept.map(values) == kept.map { o in [1, 2, 3, 4].map { $0 * o.shared } })
        #expect(weakly == nil || weakly?.shared == 3)
        var iterator = realm.objects(SiteDerived.self).makeIterator()
        let first = iterator.next()
        let second = iterator.next()
        #expect(first !== second && first?.shared == 0 && second?.shared == 1)
        #expect(realm.objects(SiteDerived.self).where { $0.echo == 30 }.first?.last == 40)
    }

    /// A shared helper makes wrappers for properties of two types at one place: each reaches its
    /// own property.
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

    /// Frozen objects read from many threads at once, each property's first read included (the
    /// first lookup of a key path is serialized; the object itself is never written).
    @Test func frozenObjectsReadFromManyThreads() throws {
        let (realm, _) = try realm()
        try seed(realm, 50, initialized: true)
        let frozen = realm.freeze()
        nonisolated(unsafe) let derived = Array(frozen.objects(SiteDerived.self))
        nonisolated(unsafe) let initialized = Array(frozen.objects(SiteInitialized.self))
        let failures = Locked(0)
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

    /// A wrapper copied from another property (`_b = _a`) reads and writes its own column:
    /// unmanaged, once added, and managed.
    @Test func aCopiedWrapperKeepsItsOwnColumn() throws {
        let (realm, _) = try realm()
        let o = SiteCopied.copying(a: 7)
        // The copy carries `a`'s value as its own initial value; `b` is still its own property.
        #expect(o.a == 7)
        o.b = 9
        #expect(o.a == 7 && o.b == 9)
        try realm.write { realm.add(o) }
        #expect(o.a == 7 && o.b == 9)
        try realm.write {
            o.copyAToB()
            o.b = 11
        }
        #expect(o.a == 7 && o.b == 11)
        let read = try #require(realm.objects(SiteCopied.self).first)
        #expect(read.a == 7 && read.b == 11)
        #expect(realm.objects(SiteCopied.self).where { $0.b == 11 }.count == 1)
    }
}

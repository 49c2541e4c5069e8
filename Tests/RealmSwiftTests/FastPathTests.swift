import Foundation
import RealmStorage
import RealmSwift
import RealmTestSupport
import Testing

/// The fast paths (in-place int counts, column-scan aggregates, top-k prefixes) give exactly what
/// the general paths give.
@Suite struct FastPathTests {
    func seeded() throws -> (Realm, TempDir) {
        let (realm, dir) = try makeRealm()
        var rng = SplitMix(seed: 31)
        try realm.write {
            for i in 0..<5000 {
                let t = AllTypes()
                t.id = i
                t.int64 = Int64(rng.next() % 200) - 100
                t.double = Double(rng.next() % 1000) / 7
                t.float = Float(rng.next() % 1000) / 3
                if rng.next() % 3 != 0 { t.optInt = Int(rng.next() % 50) }
                if rng.next() % 4 != 0 { t.optDouble = Double(rng.next() % 100) / 4 }
                realm.add(t)
            }
        }
        return (realm, dir)
    }

    /// `add` keeps its column layout from one write to the next while the table's columns stay the
    /// same, and makes a new one when another store changed them in between (a column it does not
    /// know, placed before the class's last columns by position, holds its default).
    @Test func insertLayoutsFollowColumnsAddedBetweenWrites() throws {
        let (realm, dir) = try makeRealm()
        for i in 0..<3 { try realm.write { realm.add(Dog(value: ["name": "d\(i)", "age": i])) } }
        let other = try Store.open(at: dir.url().path, options: .init())
        let tx = try other.beginWrite()
        try tx.addColumn("Dog", ColumnSchema("tag", .string))
        _ = try tx.commit()
        realm.refresh()
        for i in 3..<6 { try realm.write { realm.add(Dog(value: ["name": "d\(i)", "age": i])) } }
        let dogs = realm.objects(Dog.self).sorted(byKeyPath: "age")
        #expect(dogs.map(\.name) == (0..<6).map { "d\($0)" })
        #expect(dogs.map(\.age) == Array(0..<6))
        let s = try other.snapshot()
        let keys = try s.objectKeys("Dog")
        #expect(keys.count == 6)
        for k in keys { #expect(try s.value("Dog", k, "tag") == .string("")) }
    }

    /// Property reads of a live Realm outside a write take the direct path (the located segment,
    /// typed reads); they agree with the general path (inside a write, frozen) for every scalar
    /// type the direct path serves, edge values included, after iteration and after a lookup.
    @Test func directPropertyReadsMatchTheGeneralPath() throws {
        let (realm, _) = try makeRealm()
        let strings = ["", "a", "ünïcödé ✓", String(repeating: "long", count: 100)]
        let doubles: [Double] = [.nan, -0.0, .infinity, -.greatestFiniteMagnitude, 1.5]
        try realm.write {
            for i in 0..<300 {
                let t = AllTypes()
                t.id = i
                t.bool = i % 3 == 0
                t.int8 = Int8(truncatingIfNeeded: i * 37)
                t.int16 = Int16(truncatingIfNeeded: i * 1_001)
                t.int32 = Int32(truncatingIfNeeded: i * 100_003)
                t.int64 = i % 7 == 0 ? .min : (i % 11 == 0 ? .max : Int64(i) * -3)
                t.float = Float(doubles[i % doubles.count])
                t.double = doubles[(i + 1) % doubles.count]
                t.string = strings[i % strings.count]
                realm.add(t)
            }
        }
        typealias Row = (Int, Bool, Int8, Int16, Int32, Int64, UInt32, UInt64, String)
        func row(_ t: AllTypes) -> Row {
            (t.id, t.bool, t.int8, t.int16, t.int32, t.int64, t.float.bitPattern, t.double.bitPattern, t.string)
        }
        let live = realm.objects(AllTypes.self).map(row)
        let frozen = realm.freeze().objects(AllTypes.self).map(row)
        let inWrite = try realm.write { realm.objects(AllTypes.self).map(row) }
        let looked = (0..<300).map { row(realm.object(ofType: AllTypes.self, forPrimaryKey: $0)!) }
        #expect(live.count == 300)
        for i in 0..<300 {
            for other in [frozen[i], inWrite[i], looked[i]] {
                #expect(live[i].0 == other.0 && live[i].1 == other.1 && live[i].2 == other.2 && live[i].3 == other.3)
                #expect(live[i].4 == other.4 && live[i].5 == other.5 && live[i].6 == other.6 && live[i].7 == other.7)
                #expect(live[i].8 == other.8)
            }
        }
        #expect(looked[7].5 == .min && looked[11].5 == .max && looked[1].8 == "a" && looked[2].8 == "ünïcödé ✓")
        // A write moves the Realm to a new version: objects read before re-locate themselves.
        let kept = realm.object(ofType: AllTypes.self, forPrimaryKey: 5)!
        #expect(kept.string == strings[1])
        try realm.write { realm.object(ofType: AllTypes.self, forPrimaryKey: 5)!.string = "changed" }
        #expect(kept.string == "changed")
        try realm.write {
            let t = AllTypes()
            t.id = 1_000
            realm.add(t)
        }
        #expect(kept.string == "changed" && kept.int64 == -15)
    }

    /// Lookups by an `Int` primary key reuse what the previous one of the same class used only
    /// while nothing changes: they see every write (inserts, updates, deletes), inside a write
    /// too, after `invalidate()` and across classes; and a version they read is not kept pinned
    /// once the Realm moved on and no object read from it remains.
    @Test func primaryKeyLookupsFollowEveryChange() throws {
        let (realm, _) = try makeRealm()
        try realm.write {
            for i in 0..<100 { realm.add(Person(value: ["id": i, "name": "p\(i)"])) }
            realm.add(AllTypes(value: ["id": 3, "string": "three"]))
        }
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 5)?.name == "p5")
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 100) == nil)
        try realm.write {
            realm.object(ofType: Person.self, forPrimaryKey: 5)!.name = "changed"
            realm.add(Person(value: ["id": 100, "name": "new"]))
            #expect(realm.object(ofType: Person.self, forPrimaryKey: 100)?.name == "new")
            realm.delete(realm.object(ofType: Person.self, forPrimaryKey: 6)!)
            #expect(realm.object(ofType: Person.self, forPrimaryKey: 6) == nil)
        }
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 5)?.name == "changed")
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 100)?.name == "new")
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 6) == nil)
        // Another class, then the first again.
        #expect(realm.object(ofType: AllTypes.self, forPrimaryKey: 3)?.string == "three")
        #expect(realm.object(ofType: AllTypes.self, forPrimaryKey: 5) == nil)
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 7)?.name == "p7")
        realm.invalidate()
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 8)?.name == "p8")
        // A write cancelled after a lookup inside it.
        realm.beginWrite()
        realm.object(ofType: Person.self, forPrimaryKey: 9)!.name = "cancelled"
        realm.cancelWrite()
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 9)?.name == "p9")
        // Lookups, then commits: no earlier version stays pinned by what the lookups used.
        let pinned = realm.numberOfActiveVersions
        for step in 0..<3 {
            #expect(realm.object(ofType: Person.self, forPrimaryKey: 10)?.name == "p10")
            #expect(realm.object(ofType: Person.self, forPrimaryKey: Int64(11))?.name == "p11")
            try realm.write { realm.add(Person(value: ["id": 200 + step, "name": "later"])) }
            #expect(realm.numberOfActiveVersions == pinned)
        }
    }

    @Test func intCountsMatchFiltering() throws {
        let (realm, _) = try seeded()
        let all = realm.objects(AllTypes.self)
        for column in ["int64", "optInt", "id"] {
            for q in ["== 7", "!= 7", "< 10", "<= 10", "> -3", ">= 40", "BETWEEN {-20, 20}", "== nil", "!= nil"] {
                let text = "\(column) \(q)"
                guard let filtered = try? all.filter(checking: text) else { continue }
                #expect(filtered.count == Array(filtered).count, "\(text)")
            }
        }
    }

    @Test func wholeTableAggregatesMatchKeyedOnes() throws {
        let (realm, _) = try seeded()
        let all = realm.objects(AllTypes.self)
        let keyed = all.filter("TRUEPREDICATE")
        #expect(all.sum(ofProperty: "int64") as Int64 == keyed.sum(ofProperty: "int64") as Int64)
        #expect(all.min(ofProperty: "int64") as Int64? == keyed.min(ofProperty: "int64") as Int64?)
        #expect(all.max(ofProperty: "int64") as Int64? == keyed.max(ofProperty: "int64") as Int64?)
        #expect(all.average(ofProperty: "int64") as Double? == keyed.average(ofProperty: "int64") as Double?)
        #expect(all.sum(ofProperty: "double") as Double == keyed.sum(ofProperty: "double") as Double)
        #expect(all.max(ofProperty: "double") as Double? == keyed.max(ofProperty: "double") as Double?)
        #expect(all.min(ofProperty: "float") as Float? == keyed.min(ofProperty: "float") as Float?)
        #expect(all.sum(ofProperty: "float") as Double == keyed.sum(ofProperty: "float") as Double)
        #expect(all.sum(ofProperty: "optInt") as Int == keyed.sum(ofProperty: "optInt") as Int)
        #expect(all.average(ofProperty: "optDouble") as Double? == keyed.average(ofProperty: "optDouble") as Double?)
        #expect(all.min(ofProperty: "optDouble") as Double? == keyed.min(ofProperty: "optDouble") as Double?)
        // Inside a write transaction the aggregates see its changes.
        realm.beginWrite()
        realm.add(AllTypes(value: ["id": 99_999, "int64": 1_000_000]))
        #expect(all.max(ofProperty: "int64") as Int64? == 1_000_000)
        realm.cancelWrite()
        #expect(all.max(ofProperty: "int64") as Int64? == keyed.max(ofProperty: "int64") as Int64?)
    }

    @Test func sortedPrefixIsTheTopK() throws {
        let (realm, _) = try seeded()
        let sorted = realm.objects(AllTypes.self).filter("optInt != nil").sorted(by: [
            SortDescriptor(keyPath: "double", ascending: false), SortDescriptor(keyPath: "id"),
        ])
        for k in [0, 1, 10, 100, 10_000] {
            let top = sorted.prefix(k).map(\.id)
            #expect(top == Array(Array(sorted).prefix(k)).map(\.id), "k = \(k)")
        }
        // Evaluated results answer from their cache.
        _ = sorted.count
        #expect(sorted.prefix(5).map(\.id) == Array(sorted)[0..<5].map(\.id))
    }

    /// Sorting by plain number columns (unboxed) orders as the evaluator's rules say: numerically,
    /// NaN before every number, ties by the earlier order; bools false first.
    @Test func typedSortsMatchASwiftModel() throws {
        let (realm, _) = try makeRealm()
        var rng = SplitMix(seed: 8)
        var model: [(id: Int, d: Double, b: Bool, i: Int64)] = []
        try realm.write {
            for id in 0..<3000 {
                let d = rng.next() % 10 == 0 ? Double.nan : Double(Int(rng.next() % 200) - 100) / 4
                let b = rng.next() % 2 == 0
                let i = Int64(rng.next() % 30)
                model.append((id, d, b, i))
                realm.add(AllTypes(value: ["id": id, "double": d, "bool": b, "int64": i]))
            }
        }
        func dOrder(_ a: Double, _ b: Double) -> Int {
            if a.isNaN { return b.isNaN ? 0 : -1 }
            if b.isNaN { return 1 }
            return a < b ? -1 : a > b ? 1 : 0
        }
        let all = realm.objects(AllTypes.self)
        let byDouble = all.sorted(by: [SortDescriptor(keyPath: "double"), SortDescriptor(keyPath: "bool", ascending: false)]).map(\.id)
        let expected = model.sorted { x, y in
            let o = dOrder(x.d, y.d)
            if o != 0 { return o < 0 }
            if x.b != y.b { return x.b }
            return x.id < y.id
        }.map(\.id)
        #expect(byDouble == expected)
        let top = all.sorted(by: [SortDescriptor(keyPath: "int64", ascending: false), SortDescriptor(keyPath: "double")]).prefix(50).map(
            \.id)
        let expectedTop = model.sorted { x, y in
            if x.i != y.i { return x.i > y.i }
            let o = dOrder(x.d, y.d)
            if o != 0 { return o < 0 }
            return x.id < y.id
        }.prefix(50).map(\.id)
        #expect(top == Array(expectedTop))
    }

    /// Iteration gives every object its own accessor: accessors the code still references —
    /// strongly or weakly — keep their object, copies of an iterator go on on their own, and a
    /// class with ignored properties keeps its ignored state per object.
    @Test func iterationGivesEveryObjectItsOwnAccessor() throws {
        let (realm, _) = try seeded()
        var sum = 0
        for t in realm.objects(AllTypes.self) { sum += t.id }
        #expect(sum == (0..<5000).reduce(0, +))

        final class WeakBox {
            weak var object: AllTypes?
            let id: Int
            init(_ o: AllTypes) {
                object = o
                id = o.id
            }
        }
        var boxes: [WeakBox] = []
        var kept: [AllTypes] = []
        for t in realm.objects(AllTypes.self) {
            boxes.append(WeakBox(t))
            if t.id % 100 == 0 { kept.append(t) }
        }
        #expect(kept.map(\.id) == Array(stride(from: 0, to: 5000, by: 100)))
        #expect(boxes.count == 5000 && boxes.map(\.id) == Array(0..<5000))
        for b in boxes { if let o = b.object { #expect(o.id == b.id) } }
        #expect(boxes.filter { $0.object != nil }.count >= kept.count)
        // A copy of an iterator goes on from the same place on its own.
        var original = realm.objects(AllTypes.self).makeIterator()
        _ = original.next()
        var copy = original
        #expect(original.next()?.id == 1 && original.next()?.id == 2 && copy.next()?.id == 1)
        // Two iterators over one Results, in step: each hands out its own objects.
        var a = realm.objects(AllTypes.self).makeIterator()
        var b = realm.objects(AllTypes.self).makeIterator()
        while let x = a.next(), let y = b.next() {
            #expect(x.id == y.id && x !== y)
            if x.id == 50 { break }
        }

        let (other, _) = try makeRealm(types: [Noted.self])
        try other.write { for i in 0..<20 { other.add(Noted(value: ["id": i])) } }
        var seen = 0
        for n in other.objects(Noted.self) {
            #expect(n.note == "" && n.id == seen)
            n.note = "read \(n.id)"
            seen += 1
        }
        #expect(seen == 20)
    }

    /// Iterating all objects of a class walks the version the iteration began in: objects added
    /// by a write during the loop are not visited, deleted ones are invalidated, and the visited
    /// objects are live (they read the newest values after the write).
    @Test func iterationWalksTheVersionItBeganIn() throws {
        let (realm, _) = try makeRealm()
        try realm.write { for i in 0..<10 { realm.add(Dog(value: ["name": "d\(i)", "age": i])) } }
        var ages: [Int] = []
        var first: Dog?
        for d in realm.objects(Dog.self) {
            if first == nil { first = d }
            if ages.count == 3 {
                try realm.write {
                    realm.add(Dog(value: ["name": "new", "age": 100]))
                    realm.objects(Dog.self).filter("age == 8").first!.age = 80
                    realm.delete(first!)
                }
            }
            ages.append(d.age)
        }
        #expect(ages == [0, 1, 2, 3, 4, 5, 6, 7, 80, 9])
        #expect(first!.isInvalidated)
        #expect(realm.objects(Dog.self).count == 10)
    }

    /// Model-based: random writes (adds, changes, deletes, cancelled writes), iterations (with
    /// writes in their loop bodies) and lookups that keep some accessors, `invalidate()` and
    /// frozen copies, checked after every step against a plain dictionary. Every read of a kept
    /// accessor (direct path or not, reused or not) must give the committed value, and a deleted
    /// object must read as invalidated.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func accessorsAgreeWithAModel(seed: UInt64) throws {
        let (realm, _) = try makeRealm()
        var rng = SplitMix(seed: seed)
        var model: [Int: (string: String, int64: Int64)] = [:]
        // Kept accessors with their ids (a deleted object's id cannot be read).
        var kept: [(id: Int, object: AllTypes)] = []
        var nextId = 0
        func check(_ o: AllTypes, _ step: Int) {
            guard let m = model[o.id] else {
                Issue.record("step \(step): object \(o.id) is not in the model")
                return
            }
            #expect(o.string == m.string && o.int64 == m.int64, "step \(step): object \(o.id)")
        }
        for step in 0..<400 {
            switch rng.below(10) {
            case 0, 1:
                try realm.write {
                    for _ in 0..<(1 + rng.below(40)) {
                        let v = (string: "s\(rng.below(1000))", int64: Int64(rng.below(100)) - 50)
                        realm.add(AllTypes(value: ["id": nextId, "string": v.string, "int64": v.int64]))
                        model[nextId] = v
                        nextId += 1
                    }
                }
            case 2:
                guard let id = model.keys.randomElement(using: &rng) else { continue }
                let v = (string: "changed \(step)", int64: Int64(step))
                try realm.write {
                    let o = realm.object(ofType: AllTypes.self, forPrimaryKey: id)!
                    o.string = v.string
                    o.int64 = v.int64
                }
                model[id] = v
            case 3:
                guard let id = model.keys.randomElement(using: &rng) else { continue }
                try realm.write { realm.delete(realm.object(ofType: AllTypes.self, forPrimaryKey: id)!) }
                model[id] = nil
            case 4:
                guard let id = model.keys.randomElement(using: &rng) else { continue }
                realm.beginWrite()
                realm.object(ofType: AllTypes.self, forPrimaryKey: id)!.string = "cancelled"
                realm.cancelWrite()
            case 5:
                var seen = 0
                for o in realm.objects(AllTypes.self) {
                    check(o, step)
                    seen += 1
                    switch rng.below(80) {
                    case 0:
                        // A cancelled write in the loop body (the accessor reads through the
                        // transaction meanwhile); the walk goes on with the same accessor.
                        realm.beginWrite()
                        o.string = "cancelled in the loop"
                        #expect(o.string == "cancelled in the loop")
                        realm.cancelWrite()
                        check(o, step)
                    case 1:
                        // A committed write to this object: it and the objects after it read right.
                        let v = (string: "loop \(step)", int64: Int64(-step))
                        try realm.write {
                            o.string = v.string
                            o.int64 = v.int64
                        }
                        model[o.id] = v
                        check(o, step)
                    default:
                        break
                    }
                    if rng.below(50) == 0 && kept.count < 40 { kept.append((o.id, o)) }
                }
                #expect(seen == model.count, "step \(step)")
            case 6:
                let id = rng.below(nextId + 1)
                let o = realm.object(ofType: AllTypes.self, forPrimaryKey: id)
                #expect((o == nil) == (model[id] == nil), "step \(step): lookup \(id)")
                if let o {
                    check(o, step)
                    if kept.count < 40 { kept.append((id, o)) }
                }
            case 7:
                if rng.below(4) == 0 {
                    realm.invalidate()
                    for k in kept { #expect(k.object.isInvalidated) }
                    kept.removeAll()
                } else {
                    let frozen = realm.freeze().objects(AllTypes.self)
                    #expect(frozen.count == model.count)
                    for o in frozen.prefix(20) { check(o, step) }
                }
            default:
                break
            }
            // Every kept accessor reads the committed values, or is invalidated when deleted.
            kept.removeAll { k in
                if model[k.id] == nil {
                    #expect(k.object.isInvalidated, "step \(step)")
                    return true
                }
                return false
            }
            for k in kept { check(k.object, step) }
        }
    }
}

/// A model with an ignored (not persisted) property.
final class Noted: Object {
    @Persisted(primaryKey: true) var id = 0
    var note = ""
}

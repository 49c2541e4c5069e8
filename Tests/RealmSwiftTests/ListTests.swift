import Foundation
import RealmSwift
import RealmTestSupport
import Testing

@Suite struct ListTests {
    /// Random list operations on a managed and an unmanaged list, checked against a Swift array.
    @Test(arguments: [1, 2, 3])
    func randomOperationsMatchAnArray(seed: UInt64) throws {
        let (realm, _) = try makeRealm()
        let managed = AllTypes(value: ["id": 1])
        try realm.write { realm.add(managed) }
        let unmanaged = AllTypes()
        var model: [Int] = []
        var rng = SplitMix(seed: seed)
        try realm.write {
            for step in 0..<300 {
                let op = rng.next() % 8
                let n = model.count
                let v = Int(rng.next() % 1000)
                for list in [managed.ints, unmanaged.ints] {
                    switch op {
                    case 0, 1: list.append(v)
                    case 2 where n > 0: list.insert(v, at: Int(rng.peek % UInt64(n + 1)))
                    case 3 where n > 0: list.remove(at: Int(rng.peek % UInt64(n)))
                    case 4 where n > 1: list.move(from: Int(rng.peek % UInt64(n)), to: Int((rng.peek / 7) % UInt64(n)))
                    case 5 where n > 1: list.swapAt(Int(rng.peek % UInt64(n)), Int((rng.peek / 7) % UInt64(n)))
                    case 6 where n > 0: list[Int(rng.peek % UInt64(n))] = v
                    case 7 where step % 50 == 0: list.removeAll()
                    default: break
                    }
                }
                switch op {
                case 0, 1: model.append(v)
                case 2 where n > 0: model.insert(v, at: Int(rng.peek % UInt64(n + 1)))
                case 3 where n > 0: model.remove(at: Int(rng.peek % UInt64(n)))
                case 4 where n > 1:
                    let e = model.remove(at: Int(rng.peek % UInt64(n)))
                    model.insert(e, at: Int((rng.peek / 7) % UInt64(n)))
                case 5 where n > 1: model.swapAt(Int(rng.peek % UInt64(n)), Int((rng.peek / 7) % UInt64(n)))
                case 6 where n > 0: model[Int(rng.peek % UInt64(n))] = v
                case 7 where step % 50 == 0: model.removeAll()
                default: break
                }
                _ = rng.next()
                #expect(Array(managed.ints) == model)
                #expect(Array(unmanaged.ints) == model)
            }
        }
        #expect(Array(realm.objects(AllTypes.self)[0].ints) == model)
    }

    @Test func listsOfObjects() throws {
        let (realm, _) = try makeRealm()
        let p = Person(value: ["id": 1, "dogs": [["name": "a"], ["name": "b"]]])
        #expect(p.dogs.count == 2)
        try realm.write { realm.add(p) }
        #expect(realm.objects(Dog.self).count == 2)
        try realm.write {
            p.dogs.append(Dog(value: ["name": "c"]))
            p.dogs.removeFirst()
            p.dogs.replace(index: 0, object: p.dogs[1])
        }
        #expect(p.dogs.map(\.name) == ["c", "c"])
        #expect(p.dogs.index(of: p.dogs[0]) == 0)
        #expect(realm.objects(Dog.self).count == 3)  // removing from a list keeps the object
    }
}

@Suite struct CollectionSurfaceTests {
    @Test func rangeOperationsOnManagedAndUnmanagedLists() throws {
        let (realm, _) = try makeRealm()
        let managed = AllTypes(value: ["id": 1])
        try realm.write { realm.add(managed) }
        let unmanaged = AllTypes()
        try realm.write {
            for l in [managed.ints, unmanaged.ints] {
                l.append(objectsIn: [1, 2, 3, 4, 5, 6])
                l.replaceSubrange(1..<3, with: [20, 30, 40])
                l.removeFirst(1)
                l.removeLast(2)
            }
        }
        #expect(Array(managed.ints) == [20, 30, 40, 4])
        #expect(Array(unmanaged.ints) == [20, 30, 40, 4])
    }

    @Test func mapMergeAndPairs() throws {
        let m = Map<String, Int>()
        m["a"] = 1
        m.merge([(key: "a", value: 2), (key: "b", value: 3)]) { $0 + $1 }
        #expect(m.asKeyValueSequence().map(\.key) == ["a", "b"] && m["a"] == 3 && m["b"] == 3)
    }
}

import Foundation
import RealmSwift
import RealmTestSupport
import Testing

final class Thing: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value: AnyRealmValue
    @Persisted var values: List<AnyRealmValue>
    @Persisted var tags: MutableSet<String>
    @Persisted var numbers: MutableSet<Double>
    @Persisted var dogs: MutableSet<Dog>
}

@Suite struct MixedAndSetTests {
    func realm(_ dir: TempDir) throws -> Realm {
        try Realm(configuration: .init(fileURL: dir.url(), objectTypes: [Thing.self, Dog.self, Person.self, Address.self]))
    }

    /// Unmanaged objects that reach each other through mixed values (and links) are added once
    /// each: mixed values are stored after their object, like links (a cycle of them recursed
    /// until the stack ran out).
    @Test func cyclesThroughMixedValuesAreAddedOnce() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let a = Thing()
        a.id = 1
        let b = Thing()
        b.id = 2
        a.value = .object(b)
        b.value = .object(a)
        b.values.append(.object(b))
        let p = Person()
        p.id = 7
        let d = Dog()
        a.values.append(.object(p))
        p.dog = d
        a.dogs.insert(d)
        try realm.write { realm.add(a) }
        #expect(realm.objects(Thing.self).count == 2 && realm.objects(Person.self).count == 1 && realm.objects(Dog.self).count == 1)
        let storedA = realm.object(ofType: Thing.self, forPrimaryKey: 1)!
        let storedB = realm.object(ofType: Thing.self, forPrimaryKey: 2)!
        #expect(storedA.value.object(Thing.self)?.id == 2 && storedB.value.object(Thing.self)?.id == 1)
        #expect(
            storedB.values.first?.object(Thing.self)?.id == 2
                && storedA.values.first?.object(Person.self)?.dog?.isSameObject(as: storedA.dogs.first) == true)
    }

    @Test func everyAnyRealmValueRoundTripsThroughAReopen() throws {
        let dir = TempDir()
        let oid = ObjectId.generate()
        let uuid = UUID()
        let date = Date(timeIntervalSince1970: 1_234_567.25)
        let cases: [AnyRealmValue] = [
            .none, .int(-7), .int(.max), .bool(true), .float(1.5), .double(-0.0), .string(""), .string("héllo"), .data(Data()),
            .data(Data([1, 2, 3])), .date(date), .objectId(oid), .decimal128(try Decimal128(string: "1.25")), .uuid(uuid),
        ]
        do {
            let realm = try realm(dir)
            try realm.write {
                for (i, v) in cases.enumerated() { realm.add(Thing(value: ["id": i, "value": v])) }
                let withLink = Thing(value: ["id": 100])
                withLink.value = .object(Dog(value: ["name": "Rex"]))
                withLink.values.append(contentsOf: [.int(1), .string("two"), .none, .object(Dog(value: ["name": "Fido"]))])
                realm.add(withLink)
            }
        }
        let realm = try realm(dir)
        for (i, v) in cases.enumerated() {
            #expect(realm.object(ofType: Thing.self, forPrimaryKey: i)?.value == v)
        }
        let t = realm.object(ofType: Thing.self, forPrimaryKey: 100)!
        #expect(t.value.object(Dog.self)?.name == "Rex")
        #expect(t.value.dynamicObject?["name"] as? String == "Rex")
        #expect(t.values.count == 4)
        #expect(t.values[0] == .int(1) && t.values[1] == .string("two") && t.values[2] == .none)
        #expect(t.values[3].object(Dog.self)?.name == "Fido")
        // Deleting the linked object clears the mixed value.
        try realm.write { realm.delete(t.value.object(Dog.self)!) }
        #expect(t.value == .none)
        #expect(realm.schema["Thing"]?["value"]?.type == .any)
    }

    @Test func createCoercesIntoAnyRealmValue() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        try realm.write {
            realm.create(Thing.self, value: ["id": 1, "value": 5, "tags": ["a", "b", "a"]])
            realm.create(Thing.self, value: ["id": 2, "value": "text"])
            realm.create(Thing.self, value: ["id": 3, "value": NSNull()])
        }
        #expect(realm.objects(Thing.self).map(\.value) == [.int(5), .string("text"), .none])
        #expect(Array(realm.objects(Thing.self)[0].tags) == ["a", "b"])
    }

    /// Random set operations on a managed and an unmanaged set, checked against Swift's Set.
    @Test(arguments: [7, 8])
    func setOperationsMatchSwiftSets(seed: UInt64) throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let managed = Thing(value: ["id": 1])
        try realm.write { realm.add(managed) }
        let unmanaged = Thing()
        var model = Set<String>()
        var rng = SplitMix(seed: seed)
        try realm.write {
            for _ in 0..<300 {
                let v = "v\(rng.next() % 20)"
                let other = ["v\(rng.next() % 20)", "v\(rng.next() % 20)"]
                let op = rng.next() % 6
                for s in [managed.tags, unmanaged.tags] {
                    switch op {
                    case 0, 1: s.insert(v)
                    case 2: s.remove(v)
                    case 3: s.insert(objectsIn: other)
                    case 4:
                        let o = MutableSet<String>()
                        o.insert(objectsIn: other + [v])
                        s.formIntersection(o)
                    default:
                        let o = MutableSet<String>()
                        o.insert(objectsIn: other)
                        s.subtract(o)
                    }
                }
                switch op {
                case 0, 1: model.insert(v)
                case 2: model.remove(v)
                case 3: model.formUnion(other)
                case 4: model.formIntersection(other + [v])
                default: model.subtract(other)
                }
                #expect(Set(managed.tags) == model && managed.tags.count == model.count)
                #expect(Set(unmanaged.tags) == model && unmanaged.tags.count == model.count)
                #expect(managed.tags.contains(v) == model.contains(v))
            }
        }
        #expect(Set(realm.objects(Thing.self)[0].tags) == model)
    }

    @Test func setsOfDoublesAndObjects() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let t = Thing(value: ["id": 1])
        let rex = Dog(value: ["name": "Rex"])
        try realm.write {
            realm.add(t)
            t.numbers.insert(objectsIn: [1.5, .nan, .nan, 1.5, -0.0, 0.0])
            t.dogs.insert(rex)
            t.dogs.insert(rex)
            t.dogs.insert(Dog(value: ["name": "Fido"]))
        }
        #expect(t.numbers.count == 4)  // 1.5, NaN, -0.0, 0.0: stored-form equality
        #expect(t.numbers.contains(.nan))
        #expect(t.dogs.count == 2 && t.dogs.contains(rex))
        let other = MutableSet<Dog>()
        other.insert(rex)
        #expect(other.isSubset(of: t.dogs) && t.dogs.intersects(other))
        try realm.write { realm.delete(rex) }
        #expect(t.dogs.map(\.name) == ["Fido"])
    }
}

/// Property names that collide with nothing the library keeps in an object.
final class Awkward: Object {
    @Persisted var key = ""
    @Persisted var values = 0
    @Persisted var info = 0.0
    @Persisted var location: String?
    @Persisted var reader = false
    @Persisted var description2 = ""
}

@Suite struct PropertyNameTests {
    @Test func commonNamesAreUsableAsProperties() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: .init(fileURL: dir.url(), objectTypes: [Awkward.self]))
        try realm.write { realm.add(Awkward(value: ["key": "k", "values": 3, "info": 1.5, "location": "here", "reader": true])) }
        let a = realm.objects(Awkward.self)[0]
        #expect(a.key == "k" && a.values == 3 && a.info == 1.5 && a.location == "here" && a.reader)
    }
}

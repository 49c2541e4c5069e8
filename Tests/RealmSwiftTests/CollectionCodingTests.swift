import Foundation
import RealmStorage
import RealmTestSupport
import Testing

@testable import RealmSwift

/// Key-value coding on collections (`value(forKey:)`, `value(forKeyPath:)`, `setValue(_:forKey:)`
/// and their throwing forms) and `Encodable`/`Decodable` collections and objects.
@Suite struct CollectionCodingTests {
    func seeded() throws -> (Realm, TempDir, Kennel) {
        let (realm, dir) = try makeKennelRealm()
        let kennel = Kennel(value: ["id": 1])
        try realm.write {
            let a = realm.create(Dog.self, value: ["name": "a", "age": 3])
            let b = realm.create(Dog.self, value: ["name": "b", "age": 5])
            let c = realm.create(Dog.self, value: ["name": "c", "age": 1])
            b.friend = a
            realm.add(kennel)
            kennel.dogs.append(objectsIn: [b, a, c, b])
            kennel.ints.append(objectsIn: [3, 1])
            kennel.optInts.append(objectsIn: [nil, 2])
            realm.add(Person(value: ["id": 1, "name": "Ann", "dogs": [a, b]]))
            realm.add(Person(value: ["id": 2, "name": "Bob", "dogs": [c]]))
        }
        return (realm, dir, kennel)
    }

    @Test func valueForKeyGivesEachElementsValue() throws {
        let (realm, _, kennel) = try seeded()
        #expect(kennel.dogs.value(forKey: "name") as? [String] == ["b", "a", "c", "b"])
        #expect(kennel.dogs.value(forKey: "age") as? [Int] == [5, 3, 1, 5])
        #expect((kennel.dogs.value(forKey: "self") as? [Dog])?.map(\.name) == ["b", "a", "c", "b"])
        // nil is NSNull, as in Foundation's key-value coding.
        let friends = kennel.dogs.value(forKeyPath: "friend.name") as! [Any]
        #expect(friends.count == 4 && friends[0] as? String == "a" && friends[1] is NSNull)
        // Through a collection: an array per element.
        let people = realm.objects(Person.self)
        #expect(people.value(forKeyPath: "dogs.name") as? [[String]] == [["a", "b"], ["c"]])
        #expect(people.value(forKey: "name") as? [String] == ["Ann", "Bob"])
        #expect(kennel.dogs.filter("age > 2").value(forKey: "name") as? [String] == ["b", "a", "b"])
        #expect(kennel.dogs[0].owners.value(forKey: "id") as? [Int] == [1])
        #expect(kennel.ints.value(forKey: "self") as? [Int] == [3, 1])
        #expect((kennel.optInts.value(forKey: "self") as! [Any])[0] is NSNull)
        let set = kennel.dogSet
        #expect((set.value(forKey: "name") as? [String])?.isEmpty == true)
    }

    @Test func collectionOperators() throws {
        let (realm, _, kennel) = try seeded()
        let dogs = kennel.dogs
        #expect(dogs.value(forKeyPath: "@count") as? Int == 4)
        #expect(dogs.value(forKeyPath: "@sum.age") as? Int == 14)
        #expect(dogs.value(forKeyPath: "@min.age") as? Int == 1 && dogs.value(forKeyPath: "@max.age") as? Int == 5)
        #expect(dogs.value(forKeyPath: "@avg.age") as? Double == 3.5)
        #expect(dogs.value(forKeyPath: "@max.friend.age") as? Int == 3)
        #expect(realm.objects(Person.self).value(forKeyPath: "@sum.dogs.age") as? Int == 9)
        #expect(dogs.filter("age > 100").value(forKeyPath: "@min.age") == nil)
        #expect(dogs.filter("age > 100").value(forKeyPath: "@sum.age") as? Int == 0)
        #expect(kennel.ints.value(forKeyPath: "@sum.self") as? Int == 4)
        #expect(throws: Realm.Error.self) { try dogs.checkedValue(forKeyPath: "@sum.name") }
        #expect(throws: Realm.Error.self) { try dogs.checkedValue(forKeyPath: "@median.age") }
        #expect(throws: Realm.Error.self) { try dogs.checkedValue(forKeyPath: "@sum") }
    }

    @Test func unknownKeysThrowInTheCheckedForms() throws {
        let (_, _, kennel) = try seeded()
        for bad in ["nope", "friend.nope", "name.count", ""] {
            do {
                _ = try kennel.dogs.checkedValue(forKeyPath: bad)
                Issue.record("no error for \(bad)")
            } catch let e as Realm.Error {
                #expect(e.code == .invalidProperty, "\(bad)")
            }
        }
        #expect(throws: Realm.Error.self) { try kennel.ints.checkedValue(forKeyPath: "count") }
        #expect(throws: Realm.Error.self) { try kennel.dogs.checkedSetValue(1, forKey: "nope") }
    }

    @Test func setValueSetsEveryElement() async throws {
        let (realm, _, kennel) = try seeded()
        try realm.write {
            kennel.dogs.setValue(7, forKey: "age")
            realm.objects(Person.self).filter("id == 2").setValue("Bo", forKey: "name")
            kennel.ints.setValue(0, forKey: "self")
        }
        #expect(realm.objects(Dog.self).map(\.age) == [7, 7, 7])
        #expect(realm.objects(Person.self).map(\.name) == ["Ann", "Bo"])
        #expect(Array(kennel.ints) == [0, 0])
        try realm.write {
            // Setting the property a filter reads still reaches every element it held.
            realm.objects(Dog.self).filter("age == 7").setValue(1, forKey: "age")
            #expect(throws: Realm.Error.self) { try kennel.dogs.checkedSetValue("x", forKey: "age") }
        }
        #expect(realm.objects(Dog.self).map(\.age) == [1, 1, 1])
        let unmanaged = List<Dog>()
        unmanaged.append(objectsIn: [Dog(), Dog()])
        unmanaged.setValue("u", forKey: "name")
        #expect(unmanaged.map(\.name) == ["u", "u"])
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, _, kennel) = try CollectionCodingTests().seeded()
            kennel.dogs.setValue(2, forKey: "age")
        }
        #expect(ConfinementTests.stderr(result).contains("write transaction"))
    }

    @Test func collectionsEncodeTheirElements() throws {
        let (realm, _, kennel) = try seeded()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func json<T: Encodable>(_ value: T) throws -> String { String(decoding: try encoder.encode(value), as: UTF8.self) }
        #expect(try json(kennel.ints) == "[3,1]")
        #expect(try json(kennel.optInts) == "[null,2]")
        try realm.write {
            kennel.scores["b"] = 2
            kennel.scores["a"] = 1
            kennel.stringSet.insert(objectsIn: ["y", "x"])
        }
        #expect(try json(kennel.scores) == #"{"a":1,"b":2}"#)
        #expect(try json(kennel.stringSet) == #"["y","x"]"#)
        #expect(try json(kennel.dogs.filter("age < 2")) == #"[{"age":1,"friend":null,"name":"c"}]"#)
        #expect(
            try json(realm.objects(Person.self).filter("id == 2"))
                == #"[{"address":null,"age":0,"dog":null,"dogs":[{"age":1,"friend":null,"name":"c"}],"id":2,"name":"Bob"}]"#)
        // Links nest; a cycle throws instead of recursing forever.
        #expect(try json(kennel.dogs.filter("name == 'b'").first!) == #"{"age":5,"friend":{"age":3,"friend":null,"name":"a"},"name":"b"}"#)
        try realm.write { kennel.dogs[1].friend = kennel.dogs[0] }
        #expect(throws: EncodingError.self) { try json(kennel.dogs) }
        #expect(try json(kennel.dogs[2].owners.map(\.id)) == "[2]")
        #expect(
            try json(kennel.dogs[2].owners)
                == #"[{"address":null,"age":0,"dog":null,"dogs":[{"age":1,"friend":null,"name":"c"}],"id":2,"name":"Bob"}]"#)
    }

    @Test func objectsOfEveryTypeEncode() throws {
        let (realm, _) = try makeKennelRealm()
        let all = AllTypes(value: ["id": 1, "string": "s", "optInt": 5, "kind": Kind.large, "ints": [1, 2]])
        try realm.write { realm.add(all) }
        for object in [all, AllTypes(value: ["id": 2])] {
            let data = try JSONEncoder().encode(object)
            let dict = try JSONSerialization.jsonObject(with: data) as! [String: Any]
            #expect(Set(dict.keys) == Set(object.objectSchema.properties.map(\.name)))
        }
        let dict = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(all)) as! [String: Any]
        #expect(dict["string"] as? String == "s" && dict["optInt"] as? Int == 5 && dict["kind"] as? Int == 1)
        #expect(dict["optString"] is NSNull && dict["ints"] as? [Int] == [1, 2])
        #expect(String(decoding: try JSONEncoder().encode([AnyRealmValue.int(3), .string("x"), .none]), as: UTF8.self) == #"[3,"x",null]"#)
    }

    @Test func collectionsDecodeUnmanaged() throws {
        let decoder = JSONDecoder()
        #expect(Array(try decoder.decode(List<Int>.self, from: Data("[3,1,3]".utf8))) == [3, 1, 3])
        #expect(Array(try decoder.decode(MutableSet<String>.self, from: Data(#"["a","b","a"]"#.utf8))) == ["a", "b"])
        let map = try decoder.decode(Map<String, Int?>.self, from: Data(#"{"x":1,"y":null}"#.utf8))
        #expect(map.keys == ["x", "y"] && map["x"] == .some(1) && map["y"] == .some(nil))
        #expect(throws: DecodingError.self) { try decoder.decode(List<Int>.self, from: Data(#"["a"]"#.utf8)) }
    }
}

import Foundation
import RealmSwift
import RealmTestSupport
import Testing

final class Player: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var scores: Map<String, Int>
    @Persisted var notes: Map<String, String?>
    @Persisted var pets: Map<String, Dog?>
    @Persisted var anything: Map<String, AnyRealmValue>
}

@Suite struct MapTests {
    func realm(_ dir: TempDir) throws -> Realm {
        try Realm(configuration: .init(fileURL: dir.url(), objectTypes: [Player.self, Dog.self, Person.self, Address.self]))
    }

    /// Random map operations on a managed and an unmanaged map, checked against a dictionary.
    @Test(arguments: [11, 12])
    func mapOperationsMatchADictionary(seed: UInt64) throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let managed = Player(value: ["id": 1])
        try realm.write { realm.add(managed) }
        let unmanaged = Player()
        var model: [String: Int] = [:]
        var rng = SplitMix(seed: seed)
        try realm.write {
            for _ in 0..<300 {
                let k = rng.next() % 5 == 0 ? "" : "k\(rng.next() % 15)"
                let v = Int(rng.next() % 100)
                let op = rng.next() % 5
                for m in [managed.scores, unmanaged.scores] {
                    switch op {
                    case 0, 1: m[k] = v
                    case 2: m[k] = nil
                    case 3: m.removeObject(for: k)
                    default: if rng.peek % 17 == 0 { m.removeAll() }
                    }
                }
                switch op {
                case 0, 1: model[k] = v
                case 2, 3: model[k] = nil
                default: if rng.peek % 17 == 0 { model.removeAll() }
                }
                _ = rng.next()
                for m in [managed.scores, unmanaged.scores] {
                    #expect(m.count == model.count)
                    #expect(m.keys == model.keys.sorted())
                    #expect(m[k] == model[k])
                }
            }
        }
        let reread = realm.objects(Player.self)[0].scores
        #expect(Dictionary(uniqueKeysWithValues: reread.map { ($0.key, $0.value) }) == model)
    }

    @Test func mapsOfOptionalsObjectsAndMixedThroughAReopen() throws {
        let dir = TempDir()
        do {
            let realm = try realm(dir)
            try realm.write {
                let p = Player(value: ["id": 1, "scores": ["a": 1, "b": 2]])
                p.notes["x"] = "hello"
                p.notes["y"] = .some(nil)
                p.pets["first"] = Dog(value: ["name": "Rex"])
                p.anything["n"] = .int(3)
                p.anything["s"] = .string("three")
                p.anything["d"] = .object(Dog(value: ["name": "Fido"]))
                realm.add(p)
            }
        }
        let realm = try realm(dir)
        let p = realm.objects(Player.self)[0]
        #expect(p.scores["a"] == 1 && p.scores["b"] == 2 && p.scores.count == 2)
        #expect(p.notes["x"] == .some("hello"))
        #expect(p.notes["y"] == .some(nil))
        #expect(p.notes.contains(key: "y") && !p.notes.contains(key: "z"))
        #expect(p.pets["first"]??.name == "Rex")
        #expect(p.anything["n"] == .int(3) && p.anything["s"] == .string("three"))
        #expect(p.anything["d"]?.object(Dog.self)?.name == "Fido")
        // Deleting a linked object leaves the key with a nil value.
        try realm.write { realm.delete(realm.objects(Dog.self).first { $0.name == "Rex" }!) }
        #expect(p.pets.contains(key: "first") && p.pets["first"] == .some(nil))
        #expect(realm.schema["Player"]?["scores"]?.isMap == true)
        let dynamic = try Realm(configuration: .init(fileURL: dir.url(), objectTypes: []))
        let scores = dynamic.dynamicObjects("Player")[0]["scores"] as? Map<String, Int>
        #expect(scores?["a"] == 1)
    }
}

@Suite struct SchemaReportTests {
    @Test func theFileSchemaDescribesCollections() throws {
        let dir = TempDir()
        _ = try Realm(
            configuration: .init(fileURL: dir.url(), objectTypes: [Thing.self, Player.self, Dog.self, Person.self, Address.self]))
        let schema = try Realm(configuration: .init(fileURL: dir.url(), objectTypes: [])).schema
        #expect(schema["Thing"]?["tags"]?.isSet == true)
        #expect(schema["Thing"]?["values"]?.isArray == true)
        #expect(schema["Thing"]?["value"]?.type == .any)
        #expect(schema["Player"]?["pets"]?.isMap == true)
        #expect(schema["Player"]?["pets"]?.objectClassName == "Dog")
        #expect(schema["Person"]?.primaryKeyProperty?.name == "id")
        #expect(schema["__RealmMetadata"] == nil)
    }
}

import Foundation
import RealmSwift
import RealmTestSupport
import Testing

/// A projection of `Person` in RealmSwift's spelling: passed through, renamed, flattened through
/// links, and a list mapped to one property of its elements.
final class PersonView: Projection<Person> {
    @Projected(\Person.name) var name
    @Projected(\Person.age) var years
    @Projected(\Person.address?.city) var city
    @Projected(\Person.name.localizedUppercase) var shout
    @Projected(\Person.dogs.projectTo.name) var dogNames: ProjectedCollection<String>
}

/// Projections (issue 29), as RealmSwift's ProjectionTests check them.
@Suite struct ProjectionTests {
    func seeded() throws -> (Realm, TempDir) {
        let (realm, dir) = try makeRealm()
        try realm.write {
            realm.add(
                Person(value: [
                    "id": 1, "name": "Ada", "age": 36, "address": ["city": "London"], "dogs": [["name": "Rex"], ["name": "Fido"]],
                ]))
            realm.add(Person(value: ["id": 2, "name": "Grace", "age": 45]))
        }
        return (realm, dir)
    }

    @Test func projectedPropertiesReadTheRoot() throws {
        let (realm, _) = try seeded()
        let people: Results<PersonView> = realm.objects(PersonView.self)
        #expect(people.count == 2)
        let ada = try #require(people.filter("name == 'Ada'").first)
        #expect(ada.name == "Ada" && ada.years == 36 && ada.city == "London" && ada.shout == "ADA")
        #expect(Array(ada.dogNames) == ["Rex", "Fido"])
        #expect(ada.rootObject.id == 1 && ada.realm === realm && !ada.isFrozen && !ada.isInvalidated)
        #expect(people.sorted(byKeyPath: "age", ascending: false).map(\.name) == ["Grace", "Ada"])
        #expect(people.index(of: ada) == 0)
        // Writing a projected property writes the root object.
        try realm.write { ada.years = 37 }
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 1)?.age == 37)
        // A projection of an unmanaged object.
        let unmanaged = PersonView(projecting: Person(value: ["name": "Lin"]))
        #expect(unmanaged.name == "Lin" && unmanaged.realm == nil && unmanaged.city == nil)
        #expect(ada == PersonView(projecting: realm.object(ofType: Person.self, forPrimaryKey: 1)!))
        #expect(ada != unmanaged)
        #expect(ada.description.contains("years = 37"))
    }

    @Test func projectionsObserveTheirPropertiesUnderTheirNames() throws {
        let (realm, _) = try seeded()
        let ada = try #require(realm.objects(PersonView.self).filter("id == 1").first)
        var changes: [[String]] = []
        var deleted = false
        let token = ada.observe { change in
            switch change {
            case .change(let view, let properties):
                #expect(view.rootObject.id == 1)
                changes.append(properties.map(\.name).sorted())
            case .deleted: deleted = true
            case .error: Issue.record("error")
            }
        }
        let onlyName = ada.observe(keyPaths: [\PersonView.name]) { change in
            if case .change(_, let properties) = change { changes.append(properties.map { "only:\($0.name)" }) }
        }
        try realm.write { ada.rootObject.age = 40 }
        realm.refresh()
        try realm.write { ada.rootObject.name = "Ada L." }
        realm.refresh()
        #expect(changes.contains(["years"]))
        #expect(changes.contains(["name", "shout"]) && changes.contains(["only:name"]))
        #expect(!changes.contains(["only:years"]))
        try realm.write { realm.delete(ada.rootObject) }
        realm.refresh()
        #expect(deleted)
        token.invalidate()
        onlyName.invalidate()
    }

    /// Observing a `projectTo` property observes the elements' property, as RealmSwift does: a
    /// dog's name, or the list itself; not the dogs' other properties.
    @Test func observingAProjectToPropertyObservesTheElementsProperty() throws {
        let (realm, _) = try seeded()
        let ada = try #require(realm.objects(PersonView.self).filter("id == 1").first)
        var changes: [[String]] = []
        let token = ada.observe(keyPaths: [\PersonView.dogNames]) { change in
            if case .change(_, let properties) = change { changes.append(properties.map(\.name)) }
        }
        realm.refresh()
        try realm.write { ada.rootObject.dogs[0].age = 9 }
        realm.refresh()
        #expect(changes.isEmpty)
        try realm.write { ada.rootObject.dogs[0].name = "Rexy" }
        realm.refresh()
        #expect(changes == [["dogNames"]])
        try realm.write { ada.rootObject.dogs.append(Dog(value: ["name": "Bolt"])) }
        realm.refresh()
        #expect(changes == [["dogNames"], ["dogNames"]])
        #expect(Array(ada.dogNames) == ["Rexy", "Fido", "Bolt"])
        token.invalidate()
    }

    @Test func projectionsFreezeThawAndSection() throws {
        let (realm, _) = try seeded()
        let people = realm.objects(PersonView.self)
        let ada = try #require(people.filter("id == 1").first)
        let frozen = ada.freeze()
        #expect(frozen.isFrozen && frozen.name == "Ada" && frozen != ada)
        #expect(frozen.freeze() == frozen && frozen.freeze() === frozen)
        try realm.write { ada.name = "Changed" }
        #expect(frozen.name == "Ada")
        #expect(frozen.thaw()?.name == "Changed")
        let frozenResults = people.freeze()
        #expect(frozenResults.isFrozen && frozenResults.count == 2)
        let sections = people.sectioned(by: \.years, ascending: false)
        #expect(sections.allKeys == [45, 36] && sections[1].first?.name == "Changed")
        // Sectioned by a block, sorted by a root property; live like the projections.
        let byAge = people.sectioned(by: { $0.years >= 40 ? "older" : "younger" }, sortDescriptors: [SortDescriptor(keyPath: "age")])
        #expect(byAge.allKeys == ["younger", "older"] && byAge[0].map(\.name) == ["Changed"])
        let trailing = people.sectioned(sortDescriptors: [SortDescriptor(keyPath: "age", ascending: false)]) { $0.years >= 40 }
        #expect(trailing.allKeys == [true, false])
        try realm.write { ada.name = "Ada" }
        #expect(byAge[0].first?.name == "Ada")
        var initial = 0
        let token = people.observe { change in if case .initial(let r) = change { initial = r.count } }
        realm.refresh()
        #expect(initial == 2)
        token.invalidate()
    }

    @Test func projectedCollectionsObserveFreezeAndWrite() throws {
        let (realm, _) = try seeded()
        let ada = try #require(realm.objects(PersonView.self).filter("id == 1").first)
        let names = ada.dogNames
        #expect(names.realm === realm && !names.isFrozen && names.index(of: "Fido") == 1)
        let frozen = names.freeze()
        #expect(frozen.isFrozen && Array(frozen) == ["Rex", "Fido"])
        try realm.write { names[0] = "Max" }
        #expect(Array(names) == ["Max", "Fido"] && Array(frozen) == ["Rex", "Fido"])
        #expect(frozen.thaw().map(Array.init) == ["Max", "Fido"])
        var updates: [(insertions: [Int], modifications: [Int])] = []
        var initial: [String] = []
        let token = names.observe { change in
            switch change {
            case .initial(let c): initial = Array(c)
            case .update(_, _, let insertions, let modifications): updates.append((insertions, modifications))
            case .error: Issue.record("error")
            }
        }
        realm.refresh()
        #expect(initial == ["Max", "Fido"])
        try realm.write { ada.rootObject.dogs[1].name = "Fido II" }
        realm.refresh()
        try realm.write { ada.rootObject.dogs[1].age = 9 }  // not the projected property
        realm.refresh()
        try realm.write { ada.rootObject.dogs.append(Dog(value: ["name": "Spot"])) }
        realm.refresh()
        #expect(updates.count == 2)
        #expect(updates.first?.modifications == [1] && updates.last?.insertions == [2])
        token.invalidate()
    }
}

import Foundation
import RealmSwift
import RealmSwiftSync
import Testing

extension SyncServerTests {
    /// Links to objects outside a client's view (Spec/SYNC.md §7.3): hidden while the objects are
    /// out of it, there again when they come into it by a download (the linking objects unchanged),
    /// removed as RealmSwift removes links to a deleted object when they leave it, and the hidden
    /// elements kept on the server through the client's own changes of the list.
    @Test func linksToObjectsOutsideTheViewAppearWhenTheyComeIntoIt() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let types: [ObjectBase.Type] = [ClientNote.self, ClientDog.self, ClientOwner.self, ClientAddress.self, ClientGeo.self]
        let a = try await TestClient(notes: server)
        // `b` sees notes, dogs of 10 or older, and owners in Oslo.
        let b = try await TestClient(server, objectTypes: types) {
            $0.append(QuerySubscription<ClientNote>(name: "notes"))
            $0.append(QuerySubscription<ClientDog>(name: "old dogs") { $0.age >= 10 })
            $0.append(QuerySubscription<ClientOwner>(name: "Oslo") { $0.city == "Oslo" })
        }
        try a.write { realm in
            let owner = realm.create(ClientOwner.self, value: ["_id": "o1", "city": "Bergen"])
            let pup = realm.create(ClientDog.self, value: ["name": "Pup", "age": 5])
            let old = realm.create(ClientDog.self, value: ["name": "Old", "age": 20])
            old.owner = owner
            let note = realm.create(ClientNote.self, value: ["_id": 1])
            note.dogs.append(objectsIn: [pup, old, pup])
            note.friends.insert(objectsIn: [pup, old])
            note.byName["p"] = pup
            note.byName["o"] = old
            note.anything = .object(pup)
        }
        try await bounded(60) { try await a.sync() }
        _ = try b.notes()
        try await bounded(60) { try await b.sync() }
        func seen() throws -> String {
            let realm = try Realm(configuration: b.configuration)
            realm.refresh()
            guard let n = realm.object(ofType: ClientNote.self, forPrimaryKey: 1) else { return "no note" }
            let anything: String =
                switch n.anything {
                case .object(let o): (o as? ClientDog)?.name ?? "?"
                default: "\(n.anything)"
                }
            let owner = realm.objects(ClientDog.self).filter("name == 'Old'").first?.owner?.city ?? "nil"
            return [
                "dogs=\(n.dogs.map(\.name))", "friends=\(n.friends.map(\.name).sorted())",
                "byName=\(n.byName.keys.sorted().map { "\($0):\(n.byName[$0].flatMap { $0 }?.name ?? "nil")" })",
                "anything=\(anything)", "owner=\(owner)",
            ].joined(separator: " ")
        }
        let hidden = #"dogs=["Old"] friends=["Old"] byName=["o:Old", "p:nil"] anything=none owner=nil"#
        #expect(try seen() == hidden, "\((try? seen()) ?? "")")

        // Pup and the owner come into `b`'s view; the note and Old do not change.
        try a.write { realm in
            realm.objects(ClientDog.self).filter("name == 'Pup'").first?.age = 12
            realm.object(ofType: ClientOwner.self, forPrimaryKey: "o1")?.city = "Oslo"
        }
        try await settle(a, b)
        let whole = #"dogs=["Pup", "Old", "Pup"] friends=["Old", "Pup"] byName=["o:Old", "p:Pup"] anything=Pup owner=Oslo"#
        #expect(try seen() == whole, "\((try? seen()) ?? "")")

        // Pup leaves it again: the links go as they go for a deleted object, nothing is uploaded
        // for them (`a` keeps them), and they come back with Pup.
        try a.write { realm in realm.objects(ClientDog.self).filter("name == 'Pup'").first?.age = 1 }
        try await settle(a, b)
        #expect(try seen() == #"dogs=["Old"] friends=["Old"] byName=["o:Old", "p:nil"] anything=none owner=Oslo"#, "\((try? seen()) ?? "")")
        #expect(try a.notes().first?.contains(#"dogs=["Pup", "Old", "Pup"]"#) == true, "\((try? a.notes()) ?? [])")

        // `b` adds Old to the list while Pup is hidden: the server's list keeps Pup's elements
        // (the new one goes after the element it follows in `b`'s list).
        try b.write { realm in
            let old = realm.objects(ClientDog.self).filter("name == 'Old'").first!
            realm.object(ofType: ClientNote.self, forPrimaryKey: 1)?.dogs.append(old)
        }
        try await bounded(60) { try await b.sync() }
        try await bounded(60) { try await a.sync() }
        #expect(try a.notes().first?.contains(#"dogs=["Pup", "Old", "Old", "Pup"]"#) == true, "\((try? a.notes()) ?? [])")
        #expect(try seen().hasPrefix(#"dogs=["Old", "Old"]"#), "\((try? seen()) ?? "")")

        try a.write { realm in realm.objects(ClientDog.self).filter("name == 'Pup'").first?.age = 30 }
        try await settle(a, b)
        #expect(
            try seen() == #"dogs=["Pup", "Old", "Old", "Pup"] friends=["Old", "Pup"] byName=["o:Old", "p:Pup"] anything=Pup owner=Oslo"#,
            "\((try? seen()) ?? "")")
        await a.close()
        await b.close()
    }

    /// A download's erasure of an object removes the links to it from the client's objects, as
    /// RealmSwift's delete does: no link is left pointing at nothing.
    @Test func anErasedObjectLeavesNoLinkBehind() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let a = try await TestClient(notes: server)
        let b = try await TestClient(notes: server)
        try a.write { realm in
            let rex = realm.create(ClientDog.self, value: ["name": "Rex", "age": 3])
            let note = realm.create(ClientNote.self, value: ["_id": 7])
            note.dogs.append(objectsIn: [rex, rex])
            note.byName["r"] = rex
            note.anyList.append(.object(rex))
        }
        try await bounded(60) { try await a.sync() }
        _ = try b.notes()
        try await bounded(60) { try await b.sync() }
        try a.write { realm in realm.delete(realm.objects(ClientDog.self)) }
        try await settle(a, b)
        let realm = try Realm(configuration: b.configuration)
        realm.refresh()
        let note = try #require(realm.object(ofType: ClientNote.self, forPrimaryKey: 7))
        #expect(realm.objects(ClientDog.self).isEmpty)
        #expect(note.dogs.isEmpty)
        #expect(note.byName["r"] == .some(nil))
        #expect(note.anyList.map { $0 } == [.none])
        #expect(try b.notes() == a.notes())
        await a.close()
        await b.close()
    }
}

/// Each client in turn uploads what it has and downloads what the server has (bounded).
func settle(_ clients: TestClient...) async throws {
    for c in clients { try await bounded(60) { try await c.sync() } }
}

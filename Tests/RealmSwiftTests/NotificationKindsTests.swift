import Foundation
import RealmStorage
import RealmSwift
import RealmTestSupport
import Testing

/// Replays a collection change on the previous contents.
func replay<T>(_ previous: [T], _ now: [T], deletions: [Int], insertions: [Int]) -> [T] {
    var out = previous
    for i in deletions.reversed() { out.remove(at: i) }
    for i in insertions { out.insert(now[i], at: i) }
    return out
}

/// Notifications of objects, lists, sets, maps, linking objects, sectioned results and Realms.
@Suite struct NotificationKindsTests {
    func realm(_ dir: TempDir) throws -> Realm {
        try Realm(configuration: .init(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self, Thing.self, Player.self]))
    }

    @Test func objectChangesWithOldAndNewValuesThenDeleted() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let p = Person(value: ["id": 1, "name": "a", "age": 3])
        try realm.write { realm.add(p) }
        var all: [String] = []
        var named: [String] = []
        let t1 = p.observe { change in
            switch change {
            case .change(let o, let props):
                all.append("\(o.id):" + props.map { "\($0.name) \($0.oldValue ?? "nil")→\($0.newValue ?? "nil")" }.joined(separator: ","))
            case .deleted: all.append("deleted")
            case .error(let e): all.append("error \(e)")
            }
        }
        let t2 = p.observe(keyPaths: ["name"]) { change in
            if case .change(_, let props) = change { named.append(props.map(\.name).joined()) }
            if case .deleted = change { named.append("deleted") }
        }
        realm.refresh()
        #expect(all.isEmpty)  // no initial call
        try realm.write { p.age = 4 }
        realm.refresh()
        try realm.write {
            p.name = "b"
            p.age = 5
        }
        realm.refresh()
        // A write of the value a property already has is a change, as in RealmSwift.
        try realm.write { p.age = 5 }
        realm.refresh()
        try realm.write { p.name = "b" }
        realm.refresh()
        try realm.write { realm.delete(p) }
        realm.refresh()
        #expect(all == ["1:age 3→4", "1:name a→b,age 4→5", "1:age 5→5", "1:name b→b", "deleted"])
        #expect(named == ["name", "name", "deleted"])
        t1.invalidate()
        t2.invalidate()
    }

    @Test func objectNestedKeyPathAndQueueDelivery() async throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let p = Person(value: ["id": 1, "dog": ["name": "rex"]])
        try realm.write { realm.add(p) }
        let seen = Recorder<String>()
        let queue = DispatchQueue(label: "object")
        let token = p.observe(keyPaths: ["dog.name"], on: queue) { change in
            if case .change(let o, let props) = change {
                seen.append(props.map(\.name).joined() + "=" + (o.dog?.name ?? "-"))
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        // After an await the test may run on another thread: write through a Realm opened here.
        let writer = try self.realm(dir)
        let dog = writer.objects(Person.self)[0].dog!
        try writer.write { dog.age = 9 }
        try writer.write { dog.name = "max" }
        let got = try await seen.wait(for: 1)
        #expect(got == ["dog=max"])
        #expect(try await seen.settle() == ["dog=max"])
        token.invalidate()
    }

    @Test(arguments: [5, 6])
    func listChangesReplay(seed: UInt64) throws {
        let dir = TempDir()
        let realm = try realm(dir)
        var rng = SplitMix(seed: seed)
        let p = Person(value: ["id": 1])
        try realm.write { realm.add(p) }
        var previous: [String] = []
        var failures: [String] = []
        var calls = 0
        let token = p.dogs.observe(keyPaths: ["age"]) { change in
            calls += 1
            switch change {
            case .initial(let l): previous = l.map(\.name)
            case .update(let l, let d, let i, let m):
                let now = l.map(\.name)
                if replay(previous, now, deletions: d, insertions: i) != now { failures.append("\(previous) → \(now): \(d) \(i)") }
                if m.contains(where: { d.contains($0) }) { failures.append("modified and deleted") }
                previous = now
            case .error(let e): failures.append("\(e)")
            }
        }
        realm.refresh()
        var n = 0
        for _ in 0..<80 {
            try realm.write {
                let dogs = p.dogs
                switch rng.next() % 6 {
                case 0, 1:
                    n += 1
                    dogs.insert(Dog(value: ["name": "d\(n)"]), at: Int(rng.next() % UInt64(dogs.count + 1)))
                case 2 where !dogs.isEmpty: dogs.remove(at: Int(rng.next() % UInt64(dogs.count)))
                case 3 where dogs.count > 1: dogs.move(from: Int(rng.next() % UInt64(dogs.count)), to: Int(rng.next() % UInt64(dogs.count)))
                case 4 where !dogs.isEmpty: dogs.append(dogs[Int(rng.next() % UInt64(dogs.count))])  // a duplicate
                default: if !dogs.isEmpty { dogs[Int(rng.next() % UInt64(dogs.count))].age += 1 }
                }
            }
            realm.refresh()
            #expect(previous == p.dogs.map(\.name))
        }
        #expect(failures.isEmpty)
        #expect(calls > 40)
        token.invalidate()
    }

    @Test func listReportsModifiedElementsAndParentDeletion() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let p = Person(value: ["id": 1, "dogs": [["name": "a"], ["name": "b"]]])
        try realm.write { realm.add(p) }
        var seen: [String] = []
        let token = p.dogs.observe { change in
            if case .update(_, let d, let i, let m) = change { seen.append("\(d) \(i) \(m)") }
        }
        realm.refresh()
        try realm.write { p.dogs[1].age = 3 }
        realm.refresh()
        try realm.write { p.name = "unrelated" }
        realm.refresh()
        try realm.write { realm.delete(p) }
        realm.refresh()
        #expect(seen == ["[] [] [1]", "[0, 1] [] []"])
        token.invalidate()
    }

    @Test func setChangesReplay() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        var rng = SplitMix(seed: 9)
        let t = Thing(value: ["id": 1])
        try realm.write { realm.add(t) }
        var previous: [String] = []
        var failures = 0
        let token = t.tags.observe { change in
            switch change {
            case .initial(let s): previous = Array(s)
            case .update(let s, let d, let i, _):
                let now = Array(s)
                if replay(previous, now, deletions: d, insertions: i) != now { failures += 1 }
                previous = now
            case .error: failures += 1
            }
        }
        realm.refresh()
        for _ in 0..<60 {
            try realm.write {
                let tag = "t\(rng.next() % 12)"
                if rng.next() % 3 == 0 { t.tags.remove(tag) } else { t.tags.insert(tag) }
            }
            realm.refresh()
            #expect(previous == Array(t.tags))
        }
        #expect(failures == 0)
        token.invalidate()
    }

    @Test func mapChangesByKey() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        var rng = SplitMix(seed: 4)
        let player = Player(value: ["id": 1])
        try realm.write { realm.add(player) }
        var model: [String: Int] = [:]
        var failures = 0
        let token = player.scores.observe { change in
            switch change {
            case .initial(let m): model = Dictionary(uniqueKeysWithValues: m.map { ($0.key, $0.value) })
            case .update(let m, let deletions, let insertions, let modifications):
                for k in deletions { model[k] = nil }
                for k in insertions + modifications { model[k] = m[k] }
                if model != Dictionary(uniqueKeysWithValues: m.map { ($0.key, $0.value) }) { failures += 1 }
                if Set(deletions).intersection(insertions + modifications).count > 0 { failures += 1 }
            case .error: failures += 1
            }
        }
        realm.refresh()
        for _ in 0..<60 {
            try realm.write {
                let k = "k\(rng.next() % 8)"
                if rng.next() % 3 == 0 { player.scores.removeObject(for: k) } else { player.scores[k] = Int(rng.next() % 4) }
            }
            realm.refresh()
        }
        #expect(failures == 0)
        #expect(model == Dictionary(uniqueKeysWithValues: player.scores.map { ($0.key, $0.value) }))
        token.invalidate()
    }

    @Test func linkingObjectsChangesReplay() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        var rng = SplitMix(seed: 12)
        let dog = Dog(value: ["name": "shared"])
        try realm.write {
            realm.add(dog)
            for i in 0..<10 { realm.add(Person(value: ["id": i])) }
        }
        var previous: [Int] = []
        var failures = 0
        let token = dog.owners.observe { change in
            switch change {
            case .initial(let o): previous = o.map(\.id)
            case .update(let o, let d, let i, _):
                let now = o.map(\.id)
                if replay(previous, now, deletions: d, insertions: i) != now { failures += 1 }
                previous = now
            case .error: failures += 1
            }
        }
        realm.refresh()
        for _ in 0..<40 {
            try realm.write {
                let p = realm.objects(Person.self)[Int(rng.next() % 10)]
                if let i = p.dogs.firstIndex(where: { $0.name == "shared" }) { p.dogs.remove(at: i) } else { p.dogs.append(dog) }
            }
            realm.refresh()
            #expect(previous == dog.owners.map(\.id))
        }
        #expect(failures == 0)
        token.invalidate()
    }

    /// Sectioned results: applying row and section changes gives the new sections.
    @Test func sectionedResultsChangesReplay() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        var rng = SplitMix(seed: 21)
        try realm.write { for i in 0..<20 { realm.add(Person(value: ["id": i, "age": i % 4])) } }
        let sections = realm.objects(Person.self).sectioned(by: \.age, sortDescriptors: [SortDescriptor(keyPath: "age"), "id"])
        var previous: [[Int]] = []
        var failures = 0
        let token = sections.observe { change in
            switch change {
            case .initial(let s): previous = s.map { $0.map(\.id) }
            case .update(let s, let deletions, let insertions, _, let sectionsToInsert, let sectionsToDelete):
                let now = s.map { $0.map(\.id) }
                var out = previous
                for ip in deletions.sorted(by: >) { out[ip.section].remove(at: ip.item) }
                for sec in sectionsToDelete.reversed() { out.remove(at: sec) }
                // Inserted sections come empty: their rows are among the insertions.
                for sec in sectionsToInsert { out.insert([], at: sec) }
                for ip in insertions.sorted() { out[ip.section].insert(now[ip.section][ip.item], at: ip.item) }
                if out != now { failures += 1 }
                previous = now
            }
        }
        realm.refresh()
        var next = 100
        for _ in 0..<50 {
            try realm.write {
                let all = realm.objects(Person.self)
                switch rng.next() % 3 {
                case 0:
                    realm.add(Person(value: ["id": next, "age": Int(rng.next() % 6)]))
                    next += 1
                case 1 where !all.isEmpty: realm.delete(all[Int(rng.next() % UInt64(all.count))])
                default: if !all.isEmpty { all[Int(rng.next() % UInt64(all.count))].age = Int(rng.next() % 6) }
                }
            }
            realm.refresh()
            #expect(previous == sections.map { $0.map(\.id) })
        }
        #expect(failures == 0)
        token.invalidate()
    }

    @Test func sectionObservation() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        try realm.write { for i in 0..<4 { realm.add(Person(value: ["id": i, "age": i % 2])) } }
        let sections = realm.objects(Person.self).sectioned(by: \.age)
        let odd = sections[1]
        var seen: [String] = []
        let token = odd.observe { change in
            switch change {
            case .initial(let s): seen.append("initial \(s.map(\.id))")
            case .update(let s, let d, let i, let m, _, _):
                seen.append("\(s.map(\.id)) d\(d.map(\.item)) i\(i.map(\.item)) m\(m.map(\.item))")
            }
        }
        realm.refresh()
        try realm.write { realm.add(Person(value: ["id": 10, "age": 0])) }  // another section
        realm.refresh()
        try realm.write { realm.add(Person(value: ["id": 11, "age": 1])) }
        realm.refresh()
        #expect(seen == ["initial [1, 3]", "[1, 3, 11] d[] i[2] m[]"])
        token.invalidate()
    }

    @Test func realmObserveDidChange() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        var seen: [Realm.Notification] = []
        let token = realm.observe { n, r in
            #expect(r === realm)
            seen.append(n)
        }
        try realm.write { realm.add(Person(value: ["id": 1])) }
        #expect(seen == [.didChange])
        try onAnotherThread {
            let other = try self.realm(dir)
            try other.write { other.add(Person(value: ["id": 2])) }
        }
        #expect(realm.refresh())
        #expect(seen == [.didChange, .didChange])
        token.invalidate()
        try realm.write { realm.add(Person(value: ["id": 3])) }
        #expect(seen.count == 2)
    }

    /// A thread running its run loop gets results changes and Realm notifications without calling
    /// refresh(): autorefresh advances it; with autorefresh off it is told a refresh is required.
    @Test func runLoopDelivery() async throws {
        let dir = TempDir()
        let config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self])
        let seen = Recorder<String>()
        let stop = runLoopThread(config, seen) { realm in
            let t1 = realm.objects(Person.self).observe { change in
                if case .initial = change { seen.append("initial") }
                if case .update(let r, _, let i, _) = change { seen.append("update \(r.count) \(i)") }
            }
            let t2 = realm.observe { n, _ in seen.append("\(n)") }
            return [t1, t2]
        }
        // The initial evaluation is delivered by the run loop too; write after it.
        try await seen.wait(for: 2)
        let writer = try Realm(configuration: config)
        try writer.write { writer.add(Person(value: ["id": 1])) }
        let got = try await seen.wait(for: 4)
        stop.set()
        #expect(got.contains("initial"))
        #expect(got.contains("update 1 [0]"))
        #expect(got.contains("didChange"))
    }

    /// With autorefresh off, the run loop only says a refresh is required; refresh() then
    /// delivers.
    @Test func refreshRequiredWithoutAutorefresh() async throws {
        let dir = TempDir()
        let config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self])
        let seen = Recorder<String>()
        let stop = runLoopThread(config, seen) { realm in
            realm.autorefresh = false
            return [
                realm.observe { n, r in
                    seen.append("\(n) \(r.objects(Person.self).count)")
                    if n == .refreshRequired { r.refresh() }
                }
            ]
        }
        try await seen.wait(for: 1)
        let writer = try Realm(configuration: config)
        try writer.write { writer.add(Person(value: ["id": 1])) }
        let got = try await seen.wait(for: 3)
        stop.set()
        #expect(got == ["ready", "refreshRequired 0", "didChange 1"])
    }

    @Test func sequencesOfSectionsAndRealmVersions() async throws {
        let dir = TempDir()
        let realm = try realm(dir)
        try realm.write { realm.add(Person(value: ["id": 1, "age": 1])) }
        let sections = UncheckedBox(realm.objects(Person.self).sectioned(by: \.age).changes())
        let versions = UncheckedBox(realm.changes())
        let seen = Recorder<String>()
        let consumer = Task {
            for await change in sections.value {
                switch change {
                case .initial(let s): seen.append("initial \(s.allKeys) frozen \(s.isFrozen)")
                case .update(let s, _, _, _, let inserted, _): seen.append("update \(s.allKeys) \(Array(inserted))")
                }
                if seen.all.count >= 2 { break }
            }
        }
        try await seen.wait(for: 1)
        let versionConsumer = Task {
            for await n in versions.value {
                seen.append("version \(n)")
                break
            }
        }
        let writer = try self.realm(dir)
        try writer.write { writer.add(Person(value: ["id": 2, "age": 2])) }
        await consumer.value
        await versionConsumer.value
        #expect(Set(seen.all) == ["initial [1] frozen true", "update [1, 2] [1]", "version didChange"])
    }

    @Test func swiftKeyPaths() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let p = Person(value: ["id": 1, "dog": ["name": "rex"]])
        try realm.write { realm.add(p) }
        var results: [[Int]] = []
        var object: [String] = []
        let t1 = realm.objects(Person.self).observe(keyPaths: [\Person.dog?.name]) { change in
            if case .update(_, _, _, let m) = change { results.append(m) }
        }
        let t2 = p.observe(keyPaths: [\Person.name]) { change in
            if case .change(_, let props) = change { object += props.map(\.name) }
        }
        realm.refresh()
        try realm.write { p.age = 3 }
        realm.refresh()
        try realm.write { p.dog!.name = "max" }
        realm.refresh()
        try realm.write { p.name = "x" }
        realm.refresh()
        #expect(results == [[0]])
        #expect(object == ["name"])
        t1.invalidate()
        t2.invalidate()
    }
}

/// Set once to stop a run-loop thread.
final class StopFlag: Sendable {
    private let flag = Locked(false)
    var isSet: Bool { flag.withLock { $0 } }
    func set() { flag.withLock { $0 = true } }
}

/// Starts a thread that opens a Realm, registers observers with `setUp`, appends "ready" and runs
/// its run loop until the returned flag is set.
func runLoopThread(
    _ config: Realm.Configuration, _ seen: Recorder<String>, _ setUp: @escaping @Sendable (Realm) -> [NotificationToken]
) -> StopFlag {
    let stop = StopFlag()
    let thread = Thread {
        do {
            let realm = try Realm(configuration: config)
            let tokens = setUp(realm)
            seen.append("ready")
            while !stop.isSet { RunLoop.current.run(until: Date().addingTimeInterval(0.01)) }
            for t in tokens { t.invalidate() }
        } catch {
            seen.append("error \(error)")
        }
    }
    thread.start()
    return stop
}

/// `Item` of the format-5 golden file `Spec/vectors/v5-patches.realm`.
final class Item: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var count: Int?
}

@Suite struct SameValueWriteTests {
    /// A key-path observer hears a write of the value a property already has (RealmSwift reports
    /// it), and not a write of another property.
    @Test func aSameValueWriteIsReportedToKeyPathObservers() throws {
        let (realm, dir) = try makeRealm()
        try realm.write { for i in 0..<3 { realm.add(Person(value: ["id": i, "name": "p\(i)", "age": i])) } }
        let people = realm.objects(Person.self).sorted(byKeyPath: "id")
        var modified: [[Int]] = []
        let token = people.observe(keyPaths: ["name"]) { change in
            if case .update(_, _, _, let m) = change { modified.append(m) }
        }
        realm.refresh()
        try realm.write { people[1].name = "p1" }
        realm.refresh()
        try realm.write { people[2].age = 7 }
        realm.refresh()
        try realm.write { realm.create(Person.self, value: ["id": 0, "name": "p0", "age": 0], update: .all) }
        realm.refresh()
        try realm.write { realm.create(Person.self, value: ["id": 0, "name": "p0", "age": 9], update: .modified) }
        realm.refresh()
        // `.all` sets every property; `.modified` sets only the ones that differ (here `age`).
        #expect(modified == [[1], [0]])
        token.invalidate()
        _ = dir
    }

    /// A file of format 5 records only which columns a commit set, not on which object: there a
    /// key-path observer hears a property whose value differs, as before format 6.
    @Test func aFormat5FileReportsPropertiesWhoseValueDiffers() throws {
        let dir = TempDir()
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Spec/vectors/v5-patches.realm")
        try FileManager.default.copyItem(at: source, to: dir.url())
        let realm = try Realm(configuration: .init(fileURL: dir.url(), objectTypes: [Item.self]))
        let item = try #require(realm.object(ofType: Item.self, forPrimaryKey: 1))
        var seen: [String] = []
        let token = item.observe(keyPaths: ["count"]) { change in
            if case .change(_, let props) = change { seen.append(props.map(\.name).joined()) }
        }
        try realm.write {
            item.count = 3  // the value it has
            realm.object(ofType: Item.self, forPrimaryKey: 2)!.count = 100
        }
        realm.refresh()
        try realm.write { item.count = 4 }
        realm.refresh()
        #expect(seen == ["count"])
        token.invalidate()
    }
}

import Foundation
import RealmStorage
import RealmSwift
import RealmTestSupport
import Testing

/// What a collection notification block saw, in a form tests compare.
enum Seen: Equatable, Sendable {
    case initial([Int])
    case update([Int], deletions: [Int], insertions: [Int], modifications: [Int])
    case error(String)

    init(_ change: RealmCollectionChange<Results<Person>>) {
        switch change {
        case .initial(let r): self = .initial(r.map(\.id))
        case .update(let r, let d, let i, let m): self = .update(r.map(\.id), deletions: d, insertions: i, modifications: m)
        case .error(let e): self = .error("\(e)")
        }
    }
}

/// Collects what a block is called with, from any thread, and waits for it.
final class Recorder<T: Sendable>: Sendable {
    private let items = Locked<[T]>([])

    func append(_ t: T) { items.withLock { $0.append(t) } }
    var all: [T] { items.withLock { $0 } }

    /// Waits (up to 10 s) until at least `n` items arrived; returns them.
    @discardableResult
    func wait(for n: Int, timeout: Double = 10) async throws -> [T] {
        let deadline = Date().addingTimeInterval(timeout)
        while all.count < n && Date() < deadline { try await Task.sleep(for: .milliseconds(2)) }
        return all
    }

    /// Waits a little and returns what arrived (to check that nothing more came).
    func settle() async throws -> [T] {
        try await Task.sleep(for: .milliseconds(150))
        return all
    }
}

@Suite struct NotificationTests {
    func realm(_ dir: TempDir) throws -> Realm {
        try Realm(configuration: .init(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self, Thing.self, Player.self]))
    }

    func add(_ realm: Realm, _ ids: [Int], age: Int = 1) throws {
        try realm.write { for i in ids { realm.add(Person(value: ["id": i, "name": "p\(i)", "age": age])) } }
    }

    /// Writes through a Realm opened on the current thread (async tests resume on any thread, and
    /// live Realms are thread-confined).
    func write(_ dir: TempDir, _ body: (Realm) -> Void) throws {
        let r = try realm(dir)
        try r.write { body(r) }
    }

    @Test func deliveredOnAQueue() async throws {
        let dir = TempDir()
        let realm = try realm(dir)
        try add(realm, [1, 2, 3])
        let seen = Recorder<Seen>()
        let queue = DispatchQueue(label: "observer")
        let token = realm.objects(Person.self).sorted(byKeyPath: "id").observe(on: queue) { change in
            dispatchPrecondition(condition: .onQueue(queue))
            seen.append(Seen(change))
        }
        try await seen.wait(for: 1)
        try write(dir) { r in r.add(Person(value: ["id": 4, "name": "p4", "age": 1])) }
        try await seen.wait(for: 2)
        try write(dir) { r in r.objects(Person.self).filter("id == 2").first!.name = "two" }
        try await seen.wait(for: 3)
        try write(dir) { r in r.delete(r.objects(Person.self).filter("id == 1")) }
        let all = try await seen.wait(for: 4)
        #expect(
            all == [
                .initial([1, 2, 3]),
                .update([1, 2, 3, 4], deletions: [], insertions: [3], modifications: []),
                .update([1, 2, 3, 4], deletions: [], insertions: [], modifications: [1]),
                .update([2, 3, 4], deletions: [0], insertions: [], modifications: []),
            ])
        token.invalidate()
        try write(dir) { r in r.add(Person(value: ["id": 5])) }
        #expect(try await seen.settle().count == 4)
    }

    /// Without a queue, blocks run on the Realm's thread: on refresh() and before a write begins;
    /// commits between two deliveries coalesce.
    @Test func deliveredOnTheRealmsThreadAndCoalesced() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        try add(realm, [1, 2])
        var seen: [Seen] = []
        let token = realm.objects(Person.self).observe { seen.append(Seen($0)) }
        realm.refresh()
        #expect(seen == [.initial([1, 2])])
        try add(realm, [3])
        try realm.write { realm.delete(realm.objects(Person.self).filter("id == 1")) }
        // The second write's beginWrite delivered the first write's change.
        #expect(seen.count == 2)
        realm.refresh()
        #expect(seen.last == .update([2, 3], deletions: [0], insertions: [], modifications: []))
        // Two commits by another thread, one delivery.
        try onAnotherThread {
            let other = try self.realm(dir)
            try self.add(other, [4])
            try self.add(other, [5])
        }
        realm.refresh()
        #expect(seen.count == 4)
        #expect(seen.last == .update([2, 3, 4, 5], deletions: [], insertions: [2, 3], modifications: []))
        realm.refresh()
        #expect(seen.count == 4)
        token.invalidate()
    }

    @Test func keyPathsFilterModifications() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        try realm.write {
            realm.add(Person(value: ["id": 1, "name": "a", "dog": ["name": "rex", "age": 1]]))
            realm.add(Person(value: ["id": 2, "name": "b"]))
        }
        let people = realm.objects(Person.self)
        var byName: [Seen] = []
        var byDogName: [Seen] = []
        var byDog: [Seen] = []
        var all: [Seen] = []
        let t1 = people.observe(keyPaths: ["name"]) { byName.append(Seen($0)) }
        let t2 = people.observe(keyPaths: ["dog.name"]) { byDogName.append(Seen($0)) }
        let t3 = people.observe(keyPaths: ["dog"]) { byDog.append(Seen($0)) }
        let t4 = people.observe { all.append(Seen($0)) }
        realm.refresh()
        let dog = people[0].dog!
        try realm.write { people[0].age = 5 }
        realm.refresh()
        #expect(byName.count == 1 && byDogName.count == 1 && byDog.count == 1)
        #expect(all.last == .update([1, 2], deletions: [], insertions: [], modifications: [0]))
        try realm.write { dog.age = 2 }
        realm.refresh()
        #expect(byName.count == 1 && byDogName.count == 1 && byDog.count == 1)
        #expect(all.count == 3 && all.last == .update([1, 2], deletions: [], insertions: [], modifications: [0]))
        try realm.write { dog.name = "max" }
        realm.refresh()
        #expect(byName.count == 1 && byDog.count == 1)
        #expect(byDogName.last == .update([1, 2], deletions: [], insertions: [], modifications: [0]))
        try realm.write { people[1].name = "bb" }
        realm.refresh()
        #expect(byName.last == .update([1, 2], deletions: [], insertions: [], modifications: [1]))
        try realm.write { people[1].dog = Dog(value: ["name": "new"]) }
        realm.refresh()
        #expect(byDog.last == .update([1, 2], deletions: [], insertions: [], modifications: [1]))
        #expect(byDogName.last == .update([1, 2], deletions: [], insertions: [], modifications: [1]))
        // Insertions are reported whatever the key paths.
        try add(realm, [3])
        realm.refresh()
        #expect(byName.last == .update([1, 2, 3], deletions: [], insertions: [2], modifications: []))
        for t in [t1, t2, t3, t4] { t.invalidate() }
    }

    @Test func unrelatedWritesAndWithoutNotifying() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        try add(realm, [1])
        var seen: [Seen] = []
        let token = realm.objects(Person.self).observe { seen.append(Seen($0)) }
        realm.refresh()
        try realm.write { realm.add(Thing(value: ["id": 1])) }
        realm.refresh()
        #expect(seen.count == 1)
        try realm.write(withoutNotifying: [token]) { realm.add(Person(value: ["id": 2])) }
        realm.refresh()
        #expect(seen.count == 1)
        try add(realm, [3])
        realm.refresh()
        #expect(seen.last == .update([1, 2, 3], deletions: [], insertions: [2], modifications: []))
        token.invalidate()
        try add(realm, [4])
        realm.refresh()
        #expect(seen.count == 2)
    }

    @Test func observingInAWriteTransactionStops() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try makeRealm()
            try realm.write { _ = realm.objects(Person.self).observe { _ in } }
        }
        #expect(ConfinementTests.stderr(result).contains("Cannot register a notification block inside a write transaction"))
    }

    /// Random writes; each delivered change, applied to the previous contents, gives the new ones,
    /// and the modifications are exactly the surviving objects whose name changed.
    @Test(arguments: [(1, true), (2, true), (3, true), (4, false), (5, false)])
    func propertyChangesReplayToTheNewContents(seed: UInt64, sorted: Bool) throws {
        let dir = TempDir()
        let realm = try realm(dir)
        var rng = SplitMix(seed: seed)
        // Enough objects that small writes take the incremental paths (sorted and ascending).
        try add(realm, Array(0..<120))
        let filtered = realm.objects(Person.self).filter("age < 60")
        let results = sorted ? filtered.sorted(byKeyPath: "name") : filtered
        var previous: [Int] = []
        var renamed: Set<Int> = []
        var failures = 0
        let token = results.observe(keyPaths: ["name"]) { change in
            switch change {
            case .initial(let r):
                previous = r.map(\.id)
            case .update(let r, let deletions, let insertions, let modifications):
                let now = r.map(\.id)
                let present = Set(now)
                var replay = previous
                for i in deletions.reversed() { replay.remove(at: i) }
                for i in insertions { replay.insert(now[i], at: i) }
                if replay != now {
                    failures += 1
                    print("replay \(replay) != \(now)")
                }
                // Objects whose name was set (to a new name or the same one, as in RealmSwift)
                // still in the results, except moved ones (deletion + insertion).
                let expected = Set(
                    previous.enumerated().filter { i, id in
                        renamed.contains(id) && present.contains(id) && !deletions.contains(i)
                    }.map(\.element))
                let modifiedIDs = Set(modifications.map { previous[$0] })
                if modifiedIDs != expected {
                    failures += 1
                    print("modified \(modifiedIDs) != \(expected)")
                }
                previous = now
            case .error: failures += 1
            }
        }
        realm.refresh()
        var nextID = 1000
        for _ in 0..<60 {
            renamed = []
            try realm.write {
                for _ in 0..<Int(rng.next() % 5) + 1 {
                    let all = realm.objects(Person.self)
                    switch rng.next() % 4 {
                    case 0:
                        realm.add(Person(value: ["id": nextID, "name": "n\(rng.next() % 50)", "age": Int(rng.next() % 100)]))
                        nextID += 1
                    case 1 where !all.isEmpty: realm.delete(all[Int(rng.next() % UInt64(all.count))])
                    case 2 where !all.isEmpty:
                        let p = all[Int(rng.next() % UInt64(all.count))]
                        p.name = "n\(rng.next() % 50)"
                        renamed.insert(p.id)
                    default:
                        if !all.isEmpty { all[Int(rng.next() % UInt64(all.count))].age = Int(rng.next() % 100) }
                    }
                }
            }
            realm.refresh()
            #expect(previous == results.map(\.id))
        }
        #expect(failures == 0)
        token.invalidate()
    }

    @Test func deliveredOnAnActor() async throws {
        let dir = TempDir()
        let config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self])
        let seen = Recorder<Seen>()
        let observer = Observer()
        let token = try await observer.start(config, seen)
        try await seen.wait(for: 1)
        let writer = try Realm(configuration: config)
        try add(writer, [7])
        let all = try await seen.wait(for: 2)
        #expect(all == [.initial([]), .update([7], deletions: [], insertions: [0], modifications: [])])
        token.invalidate()
    }

    @Test func asyncSequenceOfFrozenResults() async throws {
        let dir = TempDir()
        let config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self])
        let realm = try Realm(configuration: config)
        try add(realm, [1])
        let stream = UncheckedBox(realm.objects(Person.self).changes())
        let seen = Recorder<Seen>()
        let consumer = Task {
            for await change in stream.value {
                if case .initial(let r) = change { #expect(r.isFrozen) }
                seen.append(Seen(change))
                if seen.all.count == 2 { break }
            }
        }
        try await seen.wait(for: 1)
        try write(dir) { r in r.add(Person(value: ["id": 2, "name": "p2"])) }
        await consumer.value
        #expect(seen.all == [.initial([1]), .update([1, 2], deletions: [], insertions: [1], modifications: [])])
    }

    /// A commit by another process is delivered (the header is polled while anything is observed).
    @Test func commitByAnotherProcessIsDelivered() async throws {
        let dir = TempDir()
        let realm = try realm(dir)
        try add(realm, [1])
        let seen = Recorder<Seen>()
        let token = realm.objects(Person.self).observe(on: DispatchQueue(label: "observer")) { seen.append(Seen($0)) }
        try await seen.wait(for: 1)
        let path = dir.url().path
        await #expect(processExitsWith: .success) { [path = path as String] in
            let child = try Realm(
                configuration: .init(
                    fileURL: URL(fileURLWithPath: path), objectTypes: [Person.self, Dog.self, Address.self, Thing.self, Player.self]))
            try child.write { child.add(Person(value: ["id": 2])) }
        }
        let all = try await seen.wait(for: 2)
        #expect(all.last == .update([1, 2], deletions: [], insertions: [1], modifications: []))
        token.invalidate()
    }
}

/// An actor observing results; the block runs isolated to it.
actor Observer {
    var count = 0
    func start(_ config: Realm.Configuration, _ seen: Recorder<Seen>) async throws -> NotificationToken {
        let realm = try await Realm(configuration: config, actor: self)
        return await realm.objects(Person.self).observe(on: self) { actor, change in
            actor.count += 1
            seen.append(Seen(change))
        }
    }
}

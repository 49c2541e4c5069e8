import Foundation
import RealmSwift
import RealmTestSupport
import Testing

/// A Realm that compacts itself while open: notifications, live and frozen objects go on across
/// the switch to the compacted file.
@Suite struct CompactionPolicyTests {
    func configuration(_ dir: TempDir, _ policy: Realm.CompactionPolicy) -> Realm.Configuration {
        var config = Realm.Configuration(fileURL: dir.url(), objectTypes: [Person.self, Dog.self, Address.self, Thing.self, Player.self])
        config.compactionPolicy = policy
        return config
    }

    func inode(_ path: String) -> UInt64 {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber]) as? NSNumber)?.uint64Value ?? 0
    }

    @Test func notificationsAndFrozenObjectsGoOnAcrossAutomaticCompactions() async throws {
        let dir = TempDir()
        let config = configuration(dir, .custom { usage in usage.deadBytes > 0 })
        let realm = try Realm(configuration: config)
        try realm.write { for i in 1...3 { realm.add(Person(value: ["id": i, "name": "p\(i)", "age": 1])) } }
        let frozen = realm.objects(Person.self).sorted(byKeyPath: "id").freeze()
        let seen = Recorder<Seen>()
        let queue = DispatchQueue(label: "observer")
        let token = realm.objects(Person.self).sorted(byKeyPath: "id").observe(on: queue) { seen.append(Seen($0)) }
        try await seen.wait(for: 1)
        let path = dir.url().path
        var expected: [Seen] = [.initial([1, 2, 3])]
        var ids = [1, 2, 3]
        var switches = 0
        for i in 4...12 {
            let before = inode(path)
            let writer = try Realm(configuration: config)
            try writer.write { writer.add(Person(value: ["id": i, "name": "p\(i)", "age": 1])) }
            ids.append(i)
            expected.append(.update(ids, deletions: [], insertions: [ids.count - 1], modifications: []))
            try await seen.wait(for: expected.count)
            // Give the background compaction a moment to switch files.
            for _ in 0..<200 where inode(path) == before { try await Task.sleep(for: .milliseconds(5)) }
            if inode(path) != before { switches += 1 }
        }
        let writer = try Realm(configuration: config)
        try writer.write { writer.objects(Person.self).filter("id == 2").first!.name = "two" }
        expected.append(.update(ids, deletions: [], insertions: [], modifications: [1]))
        let all = try await seen.wait(for: expected.count)
        #expect(switches > 0, "no compaction switched files")
        #expect(all == expected)
        token.invalidate()
        // The frozen results still read the version they were frozen at.
        #expect(frozen.map(\.id) == [1, 2, 3])
        #expect(frozen.map(\.name) == ["p1", "p2", "p3"])
        // A live Realm sees everything. After an await this task may run on a thread that has a
        // cached instance at an earlier version: as in RealmSwift, an instance on a thread without
        // a run loop advances on refresh().
        let fresh = try Realm(configuration: config)
        fresh.refresh()
        #expect(fresh.objects(Person.self).count == 12)
        #expect(fresh.objects(Person.self).filter("id == 2").first?.name == "two")
    }

    @Test func offNeverCompactsAndTheDefaultIsAutomatic() throws {
        let dir = TempDir()
        #expect(Realm.Configuration().compactionPolicy.shouldCompact(Realm.SpaceUsage(fileSize: 100 << 20, liveBytes: 10 << 20)))
        #expect(!Realm.Configuration().compactionPolicy.shouldCompact(Realm.SpaceUsage(fileSize: 5 << 20, liveBytes: 4 << 20)))
        let realm = try Realm(configuration: configuration(dir, .off))
        let before = inode(dir.url().path)
        for i in 0..<50 { try realm.write { realm.add(Person(value: ["id": i, "name": String(repeating: "x", count: 2000)])) } }
        Thread.sleep(forTimeInterval: 0.1)
        #expect(inode(dir.url().path) == before)
    }
}

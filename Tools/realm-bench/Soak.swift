import Foundation
import RealmStorage
import RealmSwift

/// A string-keyed row that half of the soak's commits insert (with a counter update), the shape that
/// wrote the most bytes per commit (issue 27).
final class Hit: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var n = 0
}

/// One counter object the soak's string-keyed commits increment.
final class Counter: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
}

/// What the soak's second process commits now and then.
final class ChildNote: Object {
    @Persisted(primaryKey: true) var seq = 0
}

/// `realm-bench soak [N] [COMMITS]`: a process that stays open and commits steadily (issue 27). It
/// inserts N `Person`s (the workloads' model; default 1,000,000), then makes COMMITS durable
/// one-object commits (default 200,000): even ones insert a `Person`, odd ones insert a
/// string-keyed `Hit` and increment a `Counter`; every 20,000 commits a W8-style bulk update
/// (`age += 1` on every 10th object). Meanwhile a child process (`realm-bench soak-child FILE`)
/// refreshes, holds frozen results for two seconds at a time and commits a `ChildNote` now and
/// then. Every 1,000 commits the file's size and live bytes are sampled. The last line is
/// `soak: C commits, max file/live R, bytes/commit B, p99 commit X ms, max commit Y ms, lost L`.
enum Soak {
    static func configuration(_ url: URL) -> Realm.Configuration {
        var config = Realm.Configuration(fileURL: url, objectTypes: [Person.self, Hit.self, Counter.self, ChildNote.self])
        // REALM_SOAK_COMPACTION=off: the same run without automatic compaction (to compare commit rates).
        if ProcessInfo.processInfo.environment["REALM_SOAK_COMPACTION"] == "off" { config.compactionPolicy = .off }
        return config
    }

    static func inode(_ path: String) -> UInt64 {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber]) as? NSNumber)?.uint64Value ?? 0
    }

    static func run(_ arguments: [String]) throws {
        let n = arguments.count > 0 ? Int(arguments[0]) ?? 1_000_000 : 1_000_000
        let commits = arguments.count > 1 ? Int(arguments[1]) ?? 200_000 : 200_000
        let url = URL(fileURLWithPath: NSTemporaryDirectory() + "realm-soak.realm")
        let config = configuration(url)
        _ = try? Realm.deleteFiles(for: config)
        try? FileManager.default.removeItem(atPath: url.path + ".stop")
        let realm = try Realm(configuration: config)
        try realm.write {
            Person.addWorkloadObjects(n, to: realm)
            realm.add(Counter())
        }
        let store = try Store.open(at: url.path, options: .init(readOnly: true))
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        child.arguments = ["soak-child", url.path]
        let childOut = Pipe()
        child.standardOutput = childOut
        try child.run()
        let counter = realm.object(ofType: Counter.self, forPrimaryKey: 0)!
        var times: [Double] = []
        times.reserveCapacity(commits)
        var appended = 0
        // One-object commits whose bytes were measured: not those during which a compaction
        // switched files (their "before" and "after" lengths are of two files).
        var measured = 0
        var compactions = 0
        // The longest commit during which a compaction switched files (it waited for its last step).
        var maxAcrossSwitch = 0.0
        var oneObjectTime = 0.0
        var maxRatio = 0.0
        var hits = 0
        let start = Date()
        for i in 0..<commits {
            if i > 0 && i % 20_000 == 0 {
                try realm.write { for p in realm.objects(Person.self) where p.id % 10 == 0 { p.age += 1 } }
            }
            let before = try store.snapshot().fileLength
            let fileBefore = inode(url.path)
            let t = DispatchTime.now().uptimeNanoseconds
            if i % 2 == 0 {
                try realm.write {
                    let p = Person()
                    p.id = n + i
                    p.name = "soak-\(i)"
                    realm.add(p)
                }
            } else {
                try realm.write {
                    let h = Hit()
                    h.id = "hit-\(i)"
                    h.n = i
                    realm.add(h)
                    counter.value += 1
                }
                hits += 1
            }
            times.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
            oneObjectTime += times[times.count - 1]
            let after = try store.snapshot()
            if inode(url.path) == fileBefore {
                appended += max(0, after.fileLength - before)
                measured += 1
            } else {
                compactions += 1
                maxAcrossSwitch = max(maxAcrossSwitch, times[times.count - 1])
            }
            if i % 1000 == 999 {
                let size = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
                maxRatio = max(maxRatio, Double(size) / Double(max(1, after.liveBytes)))
                if i % 20_000 == 19_999 {
                    print(
                        String(
                            format: "  %d commits, %.0f s: file %.1f MB, live %.1f MB, %.0f bytes/commit", i + 1,
                            Date().timeIntervalSince(start), Double(size) / 1e6, Double(after.liveBytes) / 1e6,
                            Double(appended) / Double(max(1, measured))))
                    fflush(nil)
                }
            }
        }
        // Stop the child, then count what either process acknowledged and the file lacks.
        _ = FileManager.default.createFile(atPath: url.path + ".stop", contents: nil)
        let acks = String(decoding: childOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n").compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil }
        child.waitUntilExit()
        // `Realm(configuration:)` returns this thread's instance, still at the version of the last
        // commit made here: the child's last commits (made after it saw the stop file) are newer.
        let reopened = try Realm(configuration: config)
        reopened.refresh()
        var lost = 0
        for i in 0..<commits {
            let found =
                i % 2 == 0
                ? reopened.object(ofType: Person.self, forPrimaryKey: n + i) != nil
                : reopened.object(ofType: Hit.self, forPrimaryKey: "hit-\(i)") != nil
            if !found { lost += 1 }
        }
        lost += abs((reopened.object(ofType: Counter.self, forPrimaryKey: 0)?.value ?? 0) - hits)
        for seq in acks where reopened.object(ofType: ChildNote.self, forPrimaryKey: seq) == nil { lost += 1 }
        times.sort()
        let p99 = times.isEmpty ? 0 : times[min(times.count - 1, times.count * 99 / 100)]
        print("  the child process acknowledged \(acks.count) commits")
        print(
            String(
                format: "  %.0f one-object commits/s (time in commit only), %d compactions switched files during a commit "
                    + "(the longest such commit: %.2f ms)", Double(commits) / max(1e-9, oneObjectTime / 1000), compactions, maxAcrossSwitch)
        )
        print(
            String(
                format: "soak: %d commits, max file/live %.2f, bytes/commit %.0f, p99 commit %.2f ms, max commit %.2f ms, lost %d",
                commits, maxRatio, Double(appended) / Double(max(1, measured)), p99, times.last ?? 0, lost))
        // Only a real loss fails the run: an acknowledged commit missing from the newest version.
        if lost > 0 {
            FileHandle.standardError.write(Data("soak: \(lost) acknowledged commits are missing\n".utf8))
            exit(1)
        }
    }

    /// The soak's second process: refreshes, holds frozen results for two seconds at a time, and
    /// every third round commits a `ChildNote`, printing `ack SEQ` once the commit returned; stops
    /// when `FILE.stop` exists.
    static func child(_ path: String) throws {
        let realm = try Realm(configuration: configuration(URL(fileURLWithPath: path)))
        var seq = 0
        while !FileManager.default.fileExists(atPath: path + ".stop") {
            realm.refresh()
            let frozen = realm.objects(Person.self).freeze()
            _ = frozen.count
            for _ in 0..<20 where !FileManager.default.fileExists(atPath: path + ".stop") { usleep(100_000) }
            withExtendedLifetime(frozen) {}
            if seq % 3 == 0 {
                try realm.write { realm.add(ChildNote(value: ["seq": seq])) }
                print("ack \(seq)")
                fflush(nil)
            }
            seq += 1
        }
    }
}

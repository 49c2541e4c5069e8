import Foundation
import RealmStorage
import RealmSwift

final class Person: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var score = 0.0
    @Persisted var active = false

    /// Adds persons 0..<n of Tools/Benchmarks/results/NOTES.md, "Workloads" (inside a write transaction).
    static func addWorkloadObjects(_ n: Int, to realm: Realm) {
        for i in 0..<n {
            let p = Person()
            p.id = i
            p.name = "name-\(i % 10_000)"
            p.age = (i * 7) % 100
            p.score = Double(i % 1000) / 10
            p.active = i % 3 == 0
            realm.add(p)
        }
    }
}

/// The object-API workloads of Tools/Benchmarks/results/NOTES.md, "Workloads" (W1–W6, W8, W10; W7 only when named in REALM_BENCH_ONLY), and issue 5's
/// notification workloads (N1, N2), through the public RealmSwift API. `realm-bench [N]` (default 1,000,000). The SQLite comparison is issue 7's
/// benchmark package.
@main
struct RealmBench {
    static func main() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "soak" { return try Soak.run(Array(arguments.dropFirst())) }
        if arguments.first == "soak-child", arguments.count > 1 { return try Soak.child(arguments[1]) }
        let n = Int(arguments.first ?? "") ?? 1_000_000
        let url = URL(fileURLWithPath: NSTemporaryDirectory() + "realm-bench.realm")
        let config = Realm.Configuration(fileURL: url, objectTypes: [Person.self])
        _ = try? Realm.deleteFiles(for: config)
        let realm = try Realm(configuration: config)

        let t = Date()
        try realm.write { Person.addWorkloadObjects(n, to: realm) }
        let w1 = Date().timeIntervalSince(t)
        let size = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
        print(String(format: "W1  insert %d objects, one durable write: %.3f s, file %.1f MB", n, w1, Double(size) / 1e6))

        let people = realm.objects(Person.self)
        // REALM_BENCH_ONLY=W2,W10 runs only those (after W1, which builds the file); each read
        // workload runs REALM_BENCH_REPEAT times (default 5) and prints the median and the range.
        let only = ProcessInfo.processInfo.environment["REALM_BENCH_ONLY"].map { Set($0.split(separator: ",").map(String.init)) }
        let repeats = max(1, Int(ProcessInfo.processInfo.environment["REALM_BENCH_REPEAT"] ?? "") ?? 5)
        func run<T>(_ id: String, _ body: () -> T, _ report: (T, String) -> String) {
            guard only?.contains(id) ?? true else { return }
            var times: [Double] = []
            var result: T?
            for _ in 0..<repeats {
                let s = Date()
                result = body()
                times.append(Date().timeIntervalSince(s) * 1000)
            }
            times.sort()
            let median = times[times.count / 2]
            print(
                report(result!, String(format: "%.2f ms (%.2f–%.2f)", median, times.first!, times.last!))
                    + (id == "W10" ? String(format: " = %.2f M objects/s", Double(n) / median / 1000) : ""))
        }
        run("W2", { people.filter("age > 50").count }) { "W2  count age > 50: \($0) in \($1)" }
        run("W3", { people.filter("age BETWEEN {20, 30} AND name BEGINSWITH 'name-1'").count }) {
            "W3  count age BETWEEN {20, 30} AND name BEGINSWITH 'name-1': \($0) in \($1)"
        }
        run(
            "W4",
            { () -> String in
                let sum: Double = people.sum(ofProperty: "score")
                let avg: Double? = people.average(ofProperty: "age")
                let minAge: Int? = people.min(ofProperty: "age")
                let maxScore: Double? = people.max(ofProperty: "score")
                return "\(sum) / \(avg ?? -1) / \(minAge ?? -1) / \(maxScore ?? -1)"
            }
        ) { "W4  sum(score), avg(age), min(age), max(score) = \($0) in \($1)" }
        run("W5", { people.sorted(byKeyPath: "score", ascending: false).prefix(100).reduce(0) { $0 + $1.id } }) {
            "W5  sorted by score descending, first 100 ids sum to \($0) in \($1)"
        }
        let lookups = min(100_000, n)
        run(
            "W6",
            { () -> Int in
                var found = 0
                var rng = UInt64(42)
                for _ in 0..<lookups {
                    rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    if let p = realm.object(ofType: Person.self, forPrimaryKey: Int(rng >> 33) % n) { found += p.name.utf8.count }
                }
                return found
            }
        ) { "W6  \(lookups) primary-key lookups reading name (\($0) bytes read): \($1)" }
        run("W10", { iterate(realm) }) { "W10 iterate reading name and age (checksum \($0)): \($1)" }
        if only?.contains("W7") ?? false {
            let s = Date()
            for i in n..<(n + 10_000) {
                let p = Person()
                p.id = i
                p.name = "name-\(i % 10_000)"
                try realm.write { realm.add(p) }
            }
            print(String(format: "W7  10,000 durable one-insert transactions: %.0f commits/s", 10_000 / Date().timeIntervalSince(s)))
        }
        if only?.contains("W8") ?? true {
            let s = Date()
            try realm.write {
                for i in stride(from: 0, to: n, by: 10) {
                    if let p = realm.object(ofType: Person.self, forPrimaryKey: i) { p.age += 1 }
                }
            }
            print(String(format: "W8  one transaction: age += 1 on every 10th object: %.1f ms", Date().timeIntervalSince(s) * 1000))
        }
        guard only == nil || only!.contains("N1") || only!.contains("N2") else {
            _ = try? Realm.deleteFiles(for: config)
            return
        }
        try notificationWorkloads(realm, n)
        _ = try? Realm.deleteFiles(for: config)
    }

    /// W10's loop, kept out of line so a profiler can collect just it.
    @inline(never)
    static func iterate(_ realm: Realm) -> String {
        var ages = 0
        var bytes = 0
        for p in realm.objects(Person.self) {
            ages += p.age
            bytes += p.name.utf8.count
        }
        return "\(ages)/\(bytes)"
    }

    /// Issue 5's notification workloads: N1, commit-to-delivery latency on another thread for all
    /// N objects with one changed; N2, the change set of a sorted N-object Results after 1% of
    /// it changed (commit to delivery).
    static func notificationWorkloads(_ realm: Realm, _ n: Int) throws {
        let queue = DispatchQueue(label: "bench-observer")
        let delivered = DispatchSemaphore(value: 0)
        let deliveredAt = Locked<Date>(Date())
        let sizes = Locked<[Int]>([])
        func observe(_ results: Results<Person>) -> NotificationToken {
            results.observe(on: queue) { change in
                deliveredAt.withLock { $0 = Date() }
                if case .update(_, let d, let i, let m) = change { sizes.withLock { $0.append(d.count + i.count + m.count) } }
                delivered.signal()
            }
        }
        var token = observe(realm.objects(Person.self))
        delivered.wait()
        var latencies: [Double] = []
        for i in 0..<21 {
            // From the start of the commit (delivery may come before commitWrite returns).
            realm.beginWrite()
            realm.object(ofType: Person.self, forPrimaryKey: i * 17 % n)!.age += 1
            let t0 = Date()
            try realm.commitWrite()
            delivered.wait()
            latencies.append(deliveredAt.withLock { $0 }.timeIntervalSince(t0) * 1000)
        }
        latencies.sort()
        print(
            String(
                format: "N1  commit-to-delivery, %d objects, one changed: median %.2f ms (min %.2f, max %.2f)", n, latencies[10],
                latencies[0], latencies[20]))
        token.invalidate()

        token = observe(realm.objects(Person.self).sorted(byKeyPath: "score"))
        delivered.wait()
        var times: [Double] = []
        var rng = UInt64(7)
        for round in 0..<5 {
            realm.beginWrite()
            for _ in 0..<(n / 100) {
                rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                realm.object(ofType: Person.self, forPrimaryKey: Int(rng >> 33) % n)!.score =
                    Double(round * 1000 + Int(rng >> 40) % 1000) / 10
            }
            let t0 = Date()
            try realm.commitWrite()
            delivered.wait()
            times.append(deliveredAt.withLock { $0 }.timeIntervalSince(t0) * 1000)
        }
        times.sort()
        print(
            String(
                format:
                    "N2  sorted %d objects, 1%% changed, commit to delivery: median %.1f ms (min %.1f, max %.1f; last change %d indices)",
                n, times[2], times[0], times[4], sizes.withLock { $0.last ?? 0 }))
        token.invalidate()
    }
}

import Foundation
import RealmStorage
import RealmTestSupport
import Testing

/// `realm-dump --changes` and `Snapshot.history(since:)` (issue 30): the change feed of a
/// model-based run of random commits is exactly what the model says each commit did.
@Suite struct ChangeFeedTests {
    /// What one commit did, by the model: change and key → the object's values after it.
    typealias Expected = [String: [Int64: [String: Int64]?]]

    /// Random commits of inserts, updates and deletes (some of an object inserted in the same
    /// commit), with what each should report.
    static func run(_ path: String, commits: Int, seed: UInt64) throws -> (from: UInt64, versions: [(UInt64, Expected)]) {
        let store = try Store.open(at: path, options: .init(create: true))
        let setup = try store.beginWrite()
        try setup.createTable("Item", primaryKey: nil)
        try setup.addColumn("Item", ColumnSchema("n", .int))
        let from = try setup.commit().version
        var rng = SplitMix(seed: seed)
        var live: [Int64: Int64] = [:]
        var out: [(UInt64, Expected)] = []
        for _ in 0..<commits {
            let tx = try store.beginWrite()
            let before = live
            var inserted = Set<Int64>()
            var modified = Set<Int64>()
            var deleted = Set<Int64>()
            for _ in 0..<(1 + rng.below(6)) {
                switch rng.below(3) {
                case 0,
                    _ where live.isEmpty:
                    let n = Int64(rng.below(1000))
                    let k = try tx.insert("Item", ["n": .int(n)]).rawValue
                    live[k] = n
                    inserted.insert(k)
                case 1:
                    let k = live.keys.sorted()[rng.below(live.count)]
                    let n = Int64(rng.below(1000))
                    try tx.set("Item", ObjectKey(k), "n", .int(n))
                    live[k] = n
                    if before[k] != nil { modified.insert(k) }
                default:
                    let k = live.keys.sorted()[rng.below(live.count)]
                    try tx.delete("Item", ObjectKey(k))
                    live[k] = nil
                    if inserted.remove(k) == nil { deleted.insert(k) }
                    modified.remove(k)
                }
            }
            let v = try tx.commit().version
            var e: Expected = ["insert": [:], "modify": [:], "delete": [:]]
            for k in inserted { e["insert"]![k] = ["n": live[k]!] }
            for k in modified { e["modify"]![k] = ["n": live[k]!] }
            for k in deleted { e["delete"]![k] = .some(nil) }
            out.append((v, e))
        }
        return (from, out)
    }

    /// The feed's lines grouped as the model groups them.
    static func parse(_ lines: [String]) throws -> [UInt64: Expected] {
        var out: [UInt64: Expected] = [:]
        for line in lines where !line.isEmpty {
            let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            let v = UInt64(o["version"] as! Int)
            #expect(o["committed"] is String)
            guard let change = o["change"] as? String, change != "schema" else { continue }
            #expect(o["table"] as? String == "Item")
            let key = Int64(o["key"] as! Int)
            // A modification names the properties the commit set (format 6): here always `n`.
            #expect((o["set"] as? [String]) == (change == "modify" ? ["n"] : nil), "\(line)")
            let values = (o["values"] as? [String: Any]).map { $0.mapValues { Int64($0 as! Int) } }
            out[v, default: ["insert": [:], "modify": [:], "delete": [:]]][change]![key] = .some(values)
        }
        return out
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func theFeedIsWhatTheModelSays(seed: UInt64) throws {
        let dir = TempDir()
        let (from, versions) = try Self.run(dir.file("feed.realm"), commits: 40, seed: seed)
        // The engine API.
        let store = try Store.open(at: dir.file("feed.realm"), options: .init())
        let history = try store.snapshot().history(since: from)
        #expect(history.map(\.version) == versions.map(\.0))
        // The tool, over the whole range and over a part of it.
        let run = try Tools.dump(["feed.realm", "--changes", "\(from)"], in: dir.path)
        #expect(run.code == 0, "\(run.stderr)")
        let got = try Self.parse(run.stdout.components(separatedBy: "\n"))
        for (v, expected) in versions {
            let g = got[v] ?? ["insert": [:], "modify": [:], "delete": [:]]
            #expect(g == expected, "version \(v)")
        }
        let mid = versions[10].0
        let part = try Tools.dump(["feed.realm", "--changes", "\(mid)..\(mid + 5)"], in: dir.path)
        #expect(Set(try Self.parse(part.stdout.components(separatedBy: "\n")).keys).isSubset(of: Set((mid + 1)...(mid + 5))))
        // Lines come in commit order.
        let order = run.stdout.components(separatedBy: "\n").filter { !$0.isEmpty }.map {
            (try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any])["version"] as! Int
        }
        #expect(order == order.sorted())
    }

    @Test func aCompactedVersionIsSaidToBeGone() throws {
        let dir = TempDir()
        let (from, versions) = try Self.run(dir.file("feed.realm"), commits: 5, seed: 9)
        let compacted = try Tools.compact(["feed.realm"], in: dir.path)
        #expect(compacted.code == 0, "\(compacted.stderr)")
        let run = try Tools.dump(["feed.realm", "--changes", "\(from)"], in: dir.path)
        #expect(run.code == 1)
        #expect(run.stderr.contains("no longer in the file"), "\(run.stderr)")
        let store = try Store.open(at: dir.file("feed.realm"), options: .init())
        #expect(throws: StorageError.self) { try store.snapshot().history(since: from) }
        #expect(try store.snapshot().history(since: versions.last!.0).isEmpty)
        // Bad ranges are usage errors.
        for arg in ["x", "5..2", "1..2..3"] {
            #expect(try Tools.dump(["feed.realm", "--changes", arg], in: dir.path).code == 1)
        }
        #expect(try Tools.dump(["feed.realm", "--changes", "\(versions.last!.0)..\(versions.last!.0 + 9)"], in: dir.path).code == 1)
    }
}

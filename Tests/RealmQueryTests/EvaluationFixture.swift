import Foundation
import RealmQuery
import RealmStorage
import RealmTestSupport

/// The data the evaluator tests query, built by real write transactions. Every column type, every
/// collection kind, links both ways. Objects are named by index: `Item` 0–7 and `Tag` 0–3.
///
/// | column | values of Item 0…7 |
/// |---|---|
/// | `id` (primary key) | 0, 100, …, 700 |
/// | `i` / `oi` | -20 -10 0 10 20 30 40 50 / nil 1 2 nil 4 5 nil 7 |
/// | `b` / `ob` | F T F T F T F T / nil T F nil T F nil T |
/// | `f` / `of` (float) | -1.5 -0.5 0 0.5 1.5 2.5 3.5 4.5 / nil .25 nil -.25 nil 1 nil 2 |
/// | `d` / `od` | -2 … 5 / nil 1 NaN -0.0 2 nil 0 3.5 |
/// | `s` / `os` | alpha Alpha beta Béta gamma "" ALPHA be / nil x xy nil "" yx nil X |
/// | `bin` / `obin` | [0,1] [1,2,3] [] [0] [1] [2,1] [1,2] [3] / nil [1] nil [1,1] [] [2] nil [0,1] |
/// | `t` / `ot` | -100 0 100.5 200 … 600 / nil 50 nil -1.5 0 nil 10 50 (seconds) |
/// | `oid` / `ooid` | 12 × k / odd k only |
/// | `u` / `ou` | …00k / even k only |
/// | `dec` / `odec` | -1 0 0.5 1.00 2.5 100 1 -0.5 / nil 1 nil NaN 3 nil 1.0 2 |
/// | `m` (mixed) | nil, 1, 1.0, "1", true, 2.5 (decimal), @100, Tag 0 |
/// | `link` → Tag | 0 1 nil 0 2 nil 3 1 |
/// | `links` [Tag] | [] [0] [0,1] [2,2] [3] [1,2,3] [] [0] |
/// | `ints` [int] | [] [1] [1,2] [3,3] [5] [-1,10] [] [2,4,6] |
/// | `oints` [int?] | [] [nil] [1,nil] [2] [] [nil,nil] [3] [4] |
/// | `doubles` [double] | [] [1.5] [.5,2.5] [NaN] [-1] [] [3] [1,2] |
/// | `strings` [string] | [] [a] [a,b] [B] [abc] ["",x] [] [é] |
/// | `intSet` set<int> | [] [1] [1,2] [3] [5,6] [] [7] [2,4] |
/// | `strSet` set<string> | [] [a] [b] [A,c] [] [x] [a,b] [é] |
/// | `intMap` | [:] a:1 a:2,b:3 x:10 [:] a:1,b:1 c:-5 z:0 |
/// | `strMap` (string?) | [:] k:v k:nil a:x,b:y [:] k:V n:nil,m:q k:"" |
/// | `linkMap` → Tag | [:] a:0 a:1,b:2 [:] a:nil x:3 [:] a:0,b:0 |
/// | `mixedList` | [] [1] ["a",2.5] [nil] [true,3] [] ["x"] [Tag 1] |
/// | `parent` → Item | nil 0 0 1 1 2 nil 6 |
/// | `code` (indexed) | c0 c1 c2 c3 c0 c1 c2 c3 |
/// | `late` (int?, added after the first commit) | all nil |
///
/// `Tag`: `name` red green blue Red, `weight` 1 2 3 4, `score` (double?) nil 1.5 2.5 nil,
/// `owner` → Item 0 1 nil 1. LinkingObjects: `Tag.items` (origin `Item.links`), `Item.children`
/// (origin `Item.parent`).
enum EvaluationFixture {
    static let linkingObjects = [
        LinkingObjectsProperty(table: "Tag", name: "items", originTable: "Item", originColumn: "links"),
        LinkingObjectsProperty(table: "Item", name: "children", originTable: "Item", originColumn: "parent"),
    ]

    static func ts(_ seconds: Int64, _ nanoseconds: Int32 = 0) -> StorageValue { .timestamp(seconds: seconds, nanoseconds: nanoseconds) }
    static func dec(_ text: String) -> StorageValue {
        let d = try! Decimal128(string: text)
        return .decimal128(low: d.low, high: d.high)
    }
    static func oid(_ k: Int) -> StorageValue { .objectId([UInt8](repeating: UInt8(k), count: 12)) }
    static func uuid(_ k: Int) -> UUID { UUID(uuidString: "00000000-0000-0000-0000-00000000000\(k)")! }
    static func list(_ values: [StorageValue]) -> StorageValue { .list(values) }

    /// A store holding the committed data (row groups of 3 objects, so scans cross groups), and the
    /// snapshot of it.
    final class Committed: @unchecked Sendable {  // immutable after init; Snapshot and Store are thread-safe
        let dir = TempDir()
        let store: Store
        let snapshot: Snapshot
        init() {
            store = try! Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 3))
            let tx = try! store.beginWrite()
            try! EvaluationFixture.populate(tx)
            _ = try! tx.commit()
            let late = try! store.beginWrite()
            try! late.addColumn("Item", ColumnSchema("late", .int, nullable: true))
            snapshot = try! late.commit()
        }
    }

    static let committed = Committed()

    /// Runs `body` with a write transaction that holds all the data uncommitted (then cancels it).
    static func withTransaction<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 3))
        let tx = try store.beginWrite()
        defer { tx.cancel() }
        try populate(tx)
        try tx.addColumn("Item", ColumnSchema("late", .int, nullable: true))
        return try body(tx)
    }

    /// Creates the schema and inserts the objects.
    static func populate(_ tx: WriteTransaction) throws {
        try tx.createTable("Tag")
        try tx.createTable("Item", primaryKey: ColumnSchema("id", .int))
        let item: [ColumnSchema] = [
            .init("i", .int), .init("oi", .int, nullable: true), .init("b", .bool), .init("ob", .bool, nullable: true),
            .init("f", .float), .init("of", .float, nullable: true), .init("d", .double), .init("od", .double, nullable: true),
            .init("s", .string), .init("os", .string, nullable: true), .init("bin", .binary), .init("obin", .binary, nullable: true),
            .init("t", .timestamp), .init("ot", .timestamp, nullable: true), .init("oid", .objectId),
            .init("ooid", .objectId, nullable: true), .init("u", .uuid), .init("ou", .uuid, nullable: true), .init("dec", .decimal128),
            .init("odec", .decimal128, nullable: true), .init("m", .mixed, nullable: true),
            .init("link", .link, nullable: true, linkTarget: "Tag"), .init("links", .link, list: true, linkTarget: "Tag"),
            .init("ints", .int, list: true), .init("oints", .int, nullable: true, list: true), .init("doubles", .double, list: true),
            .init("strings", .string, list: true), .init("intSet", .int, set: true), .init("strSet", .string, set: true),
            .init("intMap", .int, map: true), .init("strMap", .string, nullable: true, map: true),
            .init("linkMap", .link, nullable: true, map: true, linkTarget: "Tag"), .init("mixedList", .mixed, nullable: true, list: true),
            .init("parent", .link, nullable: true, linkTarget: "Item"), .init("code", .string, indexed: true),
        ]
        try tx.addColumn("Tag", ColumnSchema("name", .string))
        try tx.addColumn("Tag", ColumnSchema("weight", .int))
        try tx.addColumn("Tag", ColumnSchema("score", .double, nullable: true))
        for c in item { try tx.addColumn("Item", c) }
        try tx.addColumn("Tag", ColumnSchema("owner", .link, nullable: true, linkTarget: "Item"))
        let tagTable = tx.catalog.table("Tag")!.id
        var tags: [ObjectKey] = []
        for (k, name) in ["red", "green", "blue", "Red"].enumerated() {
            let score: StorageValue = [nil, 1.5, 2.5, nil][k].map { .double($0) } ?? .null
            tags.append(try tx.insert("Tag", ["name": .string(name), "weight": .int(Int64(k + 1)), "score": score]))
        }
        func tag(_ k: Int?) -> StorageValue { k.map { .link(tags[$0]) } ?? .null }
        var items: [ObjectKey] = []
        for k in 0..<8 {
            var v = values(k, tagTable: tagTable, tags: tags)
            v["parent"] = [nil, 0, 0, 1, 1, 2, nil, 6][k].map { .link(items[$0]) } ?? .null
            items.append(try tx.insert("Item", v))
        }
        for (k, owner) in [0, 1, nil, 1].enumerated() {
            try tx.set("Tag", tags[k], "owner", owner.map { .link(items[$0]) } ?? .null)
        }
    }

    // swift-format-ignore
    private static func values(_ k: Int, tagTable: UInt32, tags: [ObjectKey]) -> [String: StorageValue] {
        func opt<T>(_ values: [T?], _ make: (T) -> StorageValue) -> StorageValue { values[k].map(make) ?? .null }
        func tag(_ k: Int?) -> StorageValue { k.map { .link(tags[$0]) } ?? .null }
        let nan = Double.nan
        let mixed: [StorageValue] = [.null, .int(1), .double(1), .string("1"), .bool(true), dec("2.5"), ts(100), .typedLink(table: tagTable, key: tags[0])]
        let mixedLists: [[StorageValue]] = [[], [.int(1)], [.string("a"), .double(2.5)], [.null], [.bool(true), .int(3)], [], [.string("x")], [.typedLink(table: tagTable, key: tags[1])]]
        return [
            "id": .int(Int64(k * 100)),
            "i": .int(Int64(k * 10 - 20)), "oi": opt([nil, 1, 2, nil, 4, 5, nil, 7]) { .int($0) },
            "b": .bool(k % 2 == 1), "ob": opt([nil, true, false, nil, true, false, nil, true]) { .bool($0) },
            "f": .float(([-1.5, -0.5, 0, 0.5, 1.5, 2.5, 3.5, 4.5] as [Float])[k]), "of": opt([nil, 0.25, nil, -0.25, nil, 1, nil, 2] as [Float?]) { .float($0) },
            "d": .double(Double(k - 2)), "od": opt([nil, 1, nan, -0.0, 2, nil, 0, 3.5]) { .double($0) },
            "s": .string(["alpha", "Alpha", "beta", "B\u{E9}ta", "gamma", "", "ALPHA", "be"][k]),
            "os": opt([nil, "x", "xy", nil, "", "yx", nil, "X"]) { .string($0) },
            "bin": .binary([[0, 1], [1, 2, 3], [], [0], [1], [2, 1], [1, 2], [3]][k]),
            "obin": opt([nil, [1], nil, [1, 1], [], [2], nil, [0, 1]] as [[UInt8]?]) { .binary($0) },
            "t": k == 2 ? ts(100, 500_000_000) : ts(Int64(k * 100 - 100)),
            "ot": [.null, ts(50), .null, ts(-1, -500_000_000), ts(0), .null, ts(10), ts(50)][k],
            "oid": oid(k), "ooid": k % 2 == 1 ? oid(k) : .null,
            "u": .uuid(uuid(k)), "ou": k % 2 == 0 ? .uuid(uuid(k)) : .null,
            "dec": dec(["-1", "0", "0.5", "1.00", "2.5", "100", "1", "-0.5"][k]),
            "odec": opt([nil, "1", nil, "NaN", "3", nil, "1.0", "2"]) { dec($0) },
            "m": mixed[k],
            "link": tag([0, 1, nil, 0, 2, nil, 3, 1][k]),
            "links": list(([[], [0], [0, 1], [2, 2], [3], [1, 2, 3], [], [0]] as [[Int]])[k].map { tag($0) }),
            "ints": list(([[], [1], [1, 2], [3, 3], [5], [-1, 10], [], [2, 4, 6]] as [[Int64]])[k].map { .int($0) }),
            "oints": list(([[], [nil], [1, nil], [2], [], [nil, nil], [3], [4]] as [[Int64?]])[k].map { $0.map { .int($0) } ?? .null }),
            "doubles": list(([[], [1.5], [0.5, 2.5], [nan], [-1], [], [3], [1, 2]] as [[Double]])[k].map { .double($0) }),
            "strings": list(([[], ["a"], ["a", "b"], ["B"], ["abc"], ["", "x"], [], ["\u{E9}"]] as [[String]])[k].map { .string($0) }),
            "intSet": list(([[], [1], [1, 2], [3], [5, 6], [], [7], [2, 4]] as [[Int64]])[k].map { .int($0) }),
            "strSet": list(([[], ["a"], ["b"], ["A", "c"], [], ["x"], ["a", "b"], ["\u{E9}"]] as [[String]])[k].map { .string($0) }),
            "intMap": .map(([[:], ["a": 1], ["a": 2, "b": 3], ["x": 10], [:], ["a": 1, "b": 1], ["c": -5], ["z": 0]] as [[String: Int64]])[k].mapValues { .int($0) }),
            "strMap": .map(([[:], ["k": "v"], ["k": nil], ["a": "x", "b": "y"], [:], ["k": "V"], ["n": nil, "m": "q"], ["k": ""]] as [[String: String?]])[k].mapValues { $0.map { .string($0) } ?? .null }),
            "linkMap": .map(([[:], ["a": 0], ["a": 1, "b": 2], [:], ["a": nil], ["x": 3], [:], ["a": 0, "b": 0]] as [[String: Int?]])[k].mapValues { tag($0) }),
            "mixedList": list(mixedLists[k]),
            "code": .string("c\(k % 4)"),
        ]
    }
}
